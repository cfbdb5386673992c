"""Notebook 04: MN's M with per-user candidates (Li et al., AAAI 2023, eq. 10-11), rule ``mn_users``.

A cheap step on the committed global ranks, with few repeats; it writes the table ``mn_users``
to notebook 04's folder and does not touch the runs of notebook 04 (:mod:`.estimator_accuracy`).

Under the ``unseen`` protocol user u has N_u candidates and the estimators group the users by
N_u (:mod:`itemsampling.candidates`); MN minimises the bound of eq. 10 with M users, and is built
per group, with M = the group's M_g (``m_scope="group"``, the package default) or the whole M
(``"total"``; :func:`itemsampling.estimators.estimate` derives why the whole M is the bound of
the average over all users). For every number of groups of the section, on the same draws:
metric@``k`` (mean and standard deviation over the repeats) and the average relative error over
K = 1..``max_k``, of MN under both scopes and of estimators without M.

Why the whole M: the number of groups is an approximation of per-user kernels, not part of the
estimator. As the groups get finer (one per distinct N_u) each M_g shrinks to a few users, and
MN with M_g weighs its variance term ever more and tends to its prior. Notebook 04 (section
"MN's M") measures how far each scope moves with the number of groups, in standard deviations
over the repeats, and their average relative errors; the package keeps ``group`` as its default
(the committed runs use it) and offers ``total``.

Configuration: ``repeats``, ``sample_size`` and ``mn`` of section ``estimator_checks`` of
``config/config.yaml``, with the models of ``estimator_accuracy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.estimators import Estimator, estimate_draws
from itemsampling.metrics import global_metrics

from .engine import draw_sampled_ranks
from .tables import ranks_path, read_model_ranks

__all__ = ["COLUMNS", "chunks", "estimators", "group_shift", "inputs", "mn_users", "sample_sizes", "study_config",
           "study_tables"]

METRICS = ("recall", "ndcg", "ap")
COLUMNS = ("dataset", "model", "protocol", "sample_size", "estimator", "m_scope", "n_groups", "metric", "k",
           "exact", "mean", "std", "rel_error", "repeats")


# ----------------------------------------------------------------------------- configuration


def study_config(config: Mapping) -> dict:
    """``repeats``, ``sample_size`` and ``mn`` of section ``estimator_checks``, with the models of
    ``estimator_accuracy``."""
    section = config["estimator_checks"]
    return {"repeats": section["repeats"], "sample_size": section["sample_size"], **section["mn"],
            "models": dict(config["estimator_accuracy"]["models"])}


def estimators(names: Sequence[str]) -> list[Estimator]:
    """The estimators a configuration names: ``mn_mle`` etc. with each group's M_g (the package
    default), ``<name>_total`` with the whole M (``m_scope="total"``), any other method as is."""
    out = []
    for name in names:
        base = name.removesuffix("_total")
        if base != name and not base.startswith("mn"):
            raise ValueError(f"{name!r}: only MN (mn, mn_mle, mn_mes) has an M to take whole")
        out.append(Estimator(base, {"m_scope": "total"} if base != name else {}, name=name))
    return out


def chunks(config: Mapping) -> list[dict]:
    """None: the comparison runs in one step (rule ``mn_users``)."""
    estimators(config["estimators"])
    return []


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The sample size n, which must fit the candidates of every dataset under the protocol."""
    return {(d, config["protocol"]): int(config["sample_size"]) for d in config["datasets"]}


def inputs(config: Mapping) -> list[str]:
    """The committed global ranks that the draws come from."""
    return [str(ranks_path(d, m, config["protocol"])) for d in config["datasets"] for m in config["models"].values()]


# ----------------------------------------------------------------------------- MN's M


def mn_users(config: Mapping, seed: int, root: str | Path = ".") -> pd.DataFrame:
    """The table ``mn_users`` (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`: per dataset, model, estimator, ``m_scope`` (``group``, ``total``, or
        ``none`` for estimators without M) and number of groups, metric@``k`` (exact, mean and
        standard deviation over the repeats, ddof = 1) and the average relative error over
        K = 1..``max_k`` (mean over the repeats).
    """
    section, n, repeats = config, int(config["sample_size"]), int(config["repeats"])
    protocol, k, max_k = section["protocol"], int(section["k"]), int(section["max_k"])
    ests = estimators(section["estimators"])
    targets = [(metric, kk) for metric in METRICS for kk in range(1, max_k + 1)]
    rows = []
    for dataset in section["datasets"]:
        for model in config["models"].values():
            ranks = read_model_ranks(dataset, model, protocol, root)
            R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
            exact = {(m, kk): float(global_metrics(R, N, m, kk)["value"].iloc[0]) for m, kk in targets}
            labels = {"dataset": dataset, "model": model, "protocol": protocol}
            draws = [draw_sampled_ranks(R, N, n, seed=seed, labels=labels, scheme="binomial", repeat=repeat)
                     for repeat in range(repeats)]
            tables = {groups: estimate_draws(draws, N, n, ests, targets=targets, n_groups=int(groups))
                      for groups in section["n_item_groups"]}
            for repeat in range(repeats):
                for groups in section["n_item_groups"]:
                    for row in tables[groups][repeat].itertuples(index=False):
                        rows.append({"dataset": dataset, "model": model, "estimator": row.estimator,
                                     "n_groups": int(groups), "metric": row.metric, "k": int(row.k),
                                     "repeat": repeat, "estimate": float(row.estimate),
                                     "exact": exact[(row.metric, int(row.k))]})
    runs = pd.DataFrame(rows)
    runs["error"] = (runs["estimate"] - runs["exact"]).abs() / runs["exact"]
    keys = ["dataset", "model", "estimator", "n_groups", "metric"]
    error = runs.groupby([*keys, "repeat"], sort=False)["error"].mean().groupby(level=keys, sort=False).mean()
    at_k = runs[runs["k"] == k].groupby(keys, sort=False).agg(
        exact=("exact", "first"), mean=("estimate", "mean"), std=("estimate", "std"),
        repeats=("estimate", "size"))
    out = at_k.join(error.rename("rel_error")).reset_index()
    base = out["estimator"].str.removesuffix("_total")
    scope = np.where(out["estimator"].str.endswith("_total"), "total",
                     np.where(base.str.startswith("mn"), "group", "none"))
    out = out.assign(estimator=base, m_scope=scope, protocol=protocol, sample_size=n, k=k)
    return out[list(COLUMNS)]


def group_shift(table: pd.DataFrame) -> pd.DataFrame:
    """How far metric@K moves between the fewest and the most groups, in standard deviations
    over the repeats (the larger of the two settings' sd) and in percent of the exact value,
    per dataset, model, estimator, M scope and metric of ``mn_users``.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, estimator, m_scope, metric, shift_sd, shift_rel, error_few, error_many``
        (errors: average relative error over K at the fewest and at the most groups).
    """
    keys = ["dataset", "model", "estimator", "m_scope", "metric"]
    few, many = table["n_groups"].min(), table["n_groups"].max()
    a = table[table["n_groups"] == few].set_index(keys)
    b = table[table["n_groups"] == many].set_index(keys)
    sd = np.maximum(a["std"], b["std"])
    out = pd.DataFrame({"shift_sd": (b["mean"] - a["mean"]).abs() / sd,
                        "shift_rel": (b["mean"] - a["mean"]).abs() / a["exact"],
                        "error_few": a["rel_error"], "error_many": b["rel_error"]})
    return out.reset_index()


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The table ``mn_users`` (``runs`` is unused: no chunks)."""
    return {"mn_users": mn_users(config, seed, root)}
