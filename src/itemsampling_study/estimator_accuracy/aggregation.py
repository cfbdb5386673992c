"""Notebook 04's tables, aggregated from the runs of all chunks (:func:`study_tables`) and, for
:func:`metric_levels`, from the global ranks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.estimators import RANK_DISTRIBUTION_METHODS
from itemsampling.intervals import interval_coverage
from itemsampling.metrics import global_metrics
from itemsampling.ranks import PROTOCOLS
from itemsampling.simulation import expected_sampled_metric

from ..experiments import relative_error, winner_counts
from ..tables import read_model_ranks
from .parts import METRICS, estimator, parts

__all__ = ["CATEGORICAL_RUNS", "chunk_times", "comparison_tables", "interval_coverage_table", "metric_levels",
           "metrics_at_k", "rank_distribution_table", "relative_errors", "study_tables", "true_winners", "winners"]

#: the tables step reads the runs (about 12 million rows in the full study) with text columns as
#: categoricals; every function below gives the same tables for text or categorical columns
CATEGORICAL_RUNS = True
#: keys that identify one setting of the runs (everything but the repeat and the values)
_SETTING = ["dataset", "model", "protocol", "scheme", "sample_size", "part", "estimator"]


def _role_mask(runs: pd.DataFrame, config: Mapping, role: str) -> pd.Series:
    """Which runs belong to the parts with ``role``."""
    return runs["part"].isin([name for name, spec in parts(config).items() if spec["role"] == role])


def _role(runs: pd.DataFrame, config: Mapping, role: str, rows=None) -> pd.DataFrame:
    """The runs of the parts with ``role`` (among ``rows``, a boolean mask, if given)."""
    mask = _role_mask(runs, config, role)
    return runs[mask if rows is None else mask & rows]


def metrics_at_k(runs: pd.DataFrame, k: int) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1) over the repeats of every metric@``k`` (AAAI'21
    Tables 2-3, 6-7), next to the exact value.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, scheme, sample_size, estimator, metric, k, exact, mean, std,
        repeats``.
    """
    sel = runs[runs["k"] == k]
    keys = [c for c in _SETTING if c != "part"] + ["metric", "k", "exact"]
    return sel.groupby(keys, sort=False)["estimate"].agg(mean="mean", std="std", repeats="size").reset_index()


def true_winners(runs: pd.DataFrame, ks: Iterable[int]) -> pd.DataFrame:
    """The best model by the exact metric at each K, and the runner-up.

    Returns
    -------
    pandas.DataFrame
        ``dataset, protocol, metric, k, winner, exact, runner_up, runner_up_exact, gap`` (gap:
        (exact − runner-up) / exact, how far the winner is ahead).
    """
    exact = runs[runs["k"].isin(list(ks))].drop_duplicates(["dataset", "protocol", "model", "metric", "k"])
    rows = []
    for (dataset, protocol, metric, k), part in exact.groupby(["dataset", "protocol", "metric", "k"], sort=True):
        best = part.sort_values(["exact", "model"], ascending=[False, True], kind="stable")
        first, second = best.iloc[0], best.iloc[1] if len(best) > 1 else best.iloc[0]
        rows.append({"dataset": dataset, "protocol": protocol, "metric": metric, "k": int(k),
                     "winner": first["model"], "exact": first["exact"], "runner_up": second["model"],
                     "runner_up_exact": second["exact"],
                     "gap": (first["exact"] - second["exact"]) / first["exact"] if first["exact"] > 0 else 0.0})
    return pd.DataFrame(rows, columns=["dataset", "protocol", "metric", "k", "winner", "exact", "runner_up",
                                       "runner_up_exact", "gap"])


def winners(runs: pd.DataFrame, ks: Iterable[int]) -> pd.DataFrame:
    """How often each estimator picks the true winner among the models (AAAI'21 Table 4; AAAI'23
    Table 8): :func:`~itemsampling_study.experiments.winner_counts` at every K of ``ks``.

    Returns
    -------
    pandas.DataFrame
        ``dataset, protocol, scheme, sample_size, estimator, metric, k, correct, repeats``.
    """
    sel = runs[runs["k"].isin(list(ks))]
    settings = ["dataset", "protocol", "scheme", "sample_size", "estimator"]
    truth = sel.drop_duplicates(["dataset", "protocol", "model", "metric", "k"])[
        ["dataset", "protocol", "model", "metric", "k", "exact"]].rename(columns={"exact": "value"})
    estimates = sel[[*settings, "model", "repeat", "metric", "k", "estimate"]]
    out = winner_counts(estimates, truth)
    return out[[*settings, "metric", "k", "correct", "repeats"]]


def relative_errors(runs: pd.DataFrame, max_k: int, rows=None) -> pd.DataFrame:
    """Average relative error over K = 1..``max_k`` of every repeat, then its mean and standard
    deviation (ddof = 1) over the repeats (AAAI'23 §5, Tables 1, 6, 9, 10; as fractions).

    (1/|K|) Σ_K |estimate@K − exact@K| / exact@K per repeat
    (:func:`~itemsampling_study.experiments.relative_error`). A cut-off whose exact value is 0 has no
    relative error and is left out of the average (the AAAI'23 code counts it as 0); with real
    data and K >= 1 this does not happen. ``rows`` (a boolean mask) restricts the runs used.

    Returns
    -------
    pandas.DataFrame
        The setting (``dataset, model, protocol, scheme, sample_size, part, estimator``),
        ``metric``, ``mean``, ``std`` and ``repeats``.
    """
    keys = [*_SETTING, "metric", "repeat"]
    cut = (runs["k"] <= max_k).to_numpy(dtype=bool)
    if rows is not None:
        cut &= np.asarray(rows, dtype=bool)
    exact = runs["exact"].to_numpy()[cut]
    error = np.where(exact != 0, relative_error(runs["estimate"].to_numpy()[cut], exact), np.nan)
    per_repeat = pd.Series(error).groupby([runs[key].iloc[cut].reset_index(drop=True) for key in keys],
                                          sort=False).agg(["mean", "size"])
    if (per_repeat["size"] != max_k).any():
        raise ValueError(f"the runs lack some of the cut-offs K = 1..{max_k} for the relative error")
    out = per_repeat["mean"].groupby(level=keys[:-1], sort=False).agg(mean="mean", std="std", repeats="size")
    return out.reset_index()


def rank_distribution_table(runs: pd.DataFrame, max_rank: int, estimators: Sequence[str]) -> pd.DataFrame:
    """The learned P(R) for R = 1..``max_rank``, averaged over the repeats, next to the empirical one
    (AAAI'21 Figs. 2-3).

    For an estimator that defines P̂(R), estimated Recall@K = Σ_{R ≤ K} P̂(R) (AAAI'21 eq. 14;
    eq. 15 for BV and MN, whose Recall@K is linear in the same P̂), so its CDF at R is its
    Recall@R and its pmf the difference of consecutive Recall@R; the exact Recall@R is the
    empirical CDF. Only settings with Recall at every K = 1..max_rank are kept.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, scheme, sample_size, estimator, rank, pmf, cdf, exact_pmf,
        exact_cdf, repeats``.
    """
    bad = [e for e in estimators if estimator(e).method not in RANK_DISTRIBUTION_METHODS]
    if bad:
        raise ValueError(f"{bad} do not define a rank distribution P(R)")
    sel = runs[(runs["metric"] == "recall") & (runs["k"] <= max_rank) & runs["estimator"].isin(list(estimators))]
    keys = [c for c in _SETTING if c != "part"]
    mean = sel.groupby([*keys, "k"], sort=True).agg(cdf=("estimate", "mean"), exact_cdf=("exact", "first"),
                                                    repeats=("estimate", "size")).reset_index()
    complete = mean.groupby(keys)["k"].transform("size") == max_rank
    out = mean[complete].rename(columns={"k": "rank"})
    out["rank"] = out["rank"].astype(np.int64)
    for column in ("cdf", "exact_cdf"):
        out[column.replace("cdf", "pmf")] = out.groupby(keys, sort=False)[column].diff().fillna(out[column])
    columns = [*keys, "rank", "pmf", "cdf", "exact_pmf", "exact_cdf", "repeats"]
    return out[columns].reset_index(drop=True)


_COMPARED = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator", "metric"]


def _stack(sides: Mapping[str, pd.DataFrame], variant: str | None) -> pd.DataFrame:
    """Relative errors of the two sides of a comparison, one above the other (the side's label in
    column ``variant``, when given)."""
    frames = [side.assign(**({variant: label} if variant else {})) for label, side in sides.items()]
    columns = [*_COMPARED, *([variant] if variant else []), "mean", "std", "repeats"]
    out = pd.concat(frames, ignore_index=True)[columns]
    return out.sort_values(columns[: -3], kind="stable").reset_index(drop=True)


def comparison_tables(errors: pd.DataFrame, config: Mapping) -> dict[str, pd.DataFrame]:
    """The comparisons beyond the papers, as average relative errors (rows of
    :func:`relative_errors`): ``pooled_prior`` (column ``prior``: ``own``, fitted to each repeat
    in the papers' runs, or ``pooled``), ``candidates`` (column ``n_items``: ``per_user`` N_u or
    one ``common`` N) and ``schemes`` (the ``scheme`` column: binomial, from the papers' runs, or
    the other scheme), each on the settings its parts ran."""
    def own(like: pd.DataFrame) -> pd.DataFrame:
        """The papers' runs of the same dataset, model, n and estimator as ``like``."""
        keys = ["dataset", "model", "sample_size", "estimator"]
        return _role(errors, config, "paper").merge(like[keys].drop_duplicates(), on=keys, how="inner")

    pooled, other = _role(errors, config, "pooled"), _role(errors, config, "scheme")
    return {
        "pooled_prior": _stack({"own": own(pooled), "pooled": pooled}, "prior"),
        "candidates": _stack({"per_user": _role(errors, config, "per_user"), "common": _role(errors, config, "common")},
                             "n_items"),
        "schemes": _stack({"paper": own(other), "other": other}, None),
    }


def interval_coverage_table(runs: pd.DataFrame) -> pd.DataFrame:
    """How often the intervals cover the exact value over the repeats, and why they miss.

    :func:`itemsampling.intervals.interval_coverage` (``coverage``: share of repeats with
    lower <= exact <= upper; ``mean_width``: mean of upper − lower) of every setting, with the
    two sources of a miss as fractions of the exact value: ``bias`` (mean estimate − exact) and
    ``spread`` (standard deviation of the estimate over the repeats, ddof = 1), and ``mean_se``
    (the mean standard error the intervals are built from): an interval of level 1 − α covers
    about as often as its level when |bias| is small against ``mean_se`` and ``spread`` is close
    to it.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, scheme, sample_size, estimator, metric, k, level, repeats,
        coverage, mean_width, exact, bias, spread, mean_se``.
    """
    keys = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator", "metric", "k", "level"]
    columns = [*keys, "repeats", "coverage", "mean_width", "exact", "bias", "spread", "mean_se"]
    if runs.empty:  # no interval part among the chunks
        return pd.DataFrame(columns=columns)
    out = interval_coverage(runs[[*keys, "lower", "upper", "exact"]])
    stats = runs.groupby(keys, sort=False).agg(exact=("exact", "first"), mean=("estimate", "mean"),
                                                std=("estimate", "std"), mean_se=("se", "mean")).reset_index()
    out = out.merge(stats, on=keys, how="left", validate="one_to_one")
    out["bias"] = (out["mean"] - out["exact"]) / out["exact"]
    out["spread"] = out["std"] / out["exact"]
    out["mean_se"] = out["mean_se"] / out["exact"]
    return out[columns]


def metric_levels(config: Mapping, root: str | Path = ".") -> pd.DataFrame:
    """The level of every model's metrics, from its global ranks under each protocol.

    Per dataset, model and protocol: the exact Recall@``table_k`` (1/M) Σ_u 1{R_u ≤ K}, and the
    expected sampled hit ratio at 1 at the smallest n of ``sample_sizes`` under binomial sampling,
    E[SHR@1] = (1/M) Σ_u (1 − θ_u)^(n − 1) with θ_u = (R_u − 1)/(N_u − 1) (Krichene & Rendle
    KDD 2020 eq. 16 with the Recall@1 of the sampled rank; Li et al. KDD 2020 eq. 2). Together
    with :func:`min_sampled_hit_ratio` they test whether a paper's exact metrics can come from
    ranks like ours (:func:`level_comparison`).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, scheme, sample_size, k, users, n_items, exact_recall,
        sampled_hit_ratio``; ``n_items`` is N (``all``) or the largest N_u (``unseen``).
    """
    n = min(run["sample_size"] for run in config["sample_sizes"])
    k = int(config["table_k"])
    rows = []
    for dataset in config["datasets"]:
        for model in config["models"].values():
            for protocol in PROTOCOLS:
                ranks = read_model_ranks(dataset, model, protocol, root)
                global_ranks, n_items = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
                rows.append({
                    "dataset": dataset, "model": model, "protocol": protocol, "scheme": "binomial",
                    "sample_size": n, "k": k, "users": len(ranks), "n_items": int(n_items.max()),
                    "exact_recall": float(global_metrics(global_ranks, n_items, "recall", k)["value"].iloc[0]),
                    "sampled_hit_ratio": expected_sampled_metric(global_ranks, n_items, n, "recall", 1),
                })
    return pd.DataFrame(rows)


def chunk_times(runs: pd.DataFrame) -> pd.DataFrame:
    """Wall time of every chunk: setup (pooled priors) plus its draws (sampling and estimation).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, part, scheme, sample_size, estimators, draws, setup_seconds,
        draw_seconds, seconds, seconds_per_draw``.
    """
    keys = ["dataset", "model", "protocol", "part", "scheme", "sample_size"]
    estimators = runs.groupby(keys, sort=False)["estimator"].nunique().rename("estimators")
    per_draw = runs.groupby([*keys, "repeat"], sort=False)[["seconds", "setup_seconds"]].first()
    draws = per_draw.groupby(level=keys, sort=False).agg(
        draws=("seconds", "size"), setup_seconds=("setup_seconds", "first"), draw_seconds=("seconds", "sum"))
    out = estimators.to_frame().join(draws).reset_index()
    out["seconds"] = out["setup_seconds"] + out["draw_seconds"]
    out["seconds_per_draw"] = out["draw_seconds"] / out["draws"]
    return out


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 04 from the runs of all chunks (listed in
    :mod:`itemsampling_study.estimator_accuracy`).

    Parameters
    ----------
    config : mapping
        The ``estimator_accuracy`` section of the configuration.
    seed : int
        Study seed (unused: the runs carry every random draw).
    runs : pandas.DataFrame
        The chunks of :func:`chunk_table`, concatenated (any order).
    root : str or Path
        Repository root (the global ranks of :func:`metric_levels`; the runs carry the exact
        values of everything else).
    """
    with_interval = _role_mask(runs, config, "interval").to_numpy(dtype=bool)
    errors = relative_errors(runs, config["max_k"], rows=~with_interval)
    paper_errors = _role(errors, config, "paper")
    rd = config["rank_distribution"]
    at_winner_ks = _role(runs, config, "paper", runs["k"].isin(config["winner_ks"]))
    tables = {
        "metrics_at_k": metrics_at_k(_role(runs, config, "paper", runs["k"] == config["table_k"]), config["table_k"]),
        "winners": winners(at_winner_ks, config["winner_ks"]),
        "true_winners": true_winners(at_winner_ks, config["winner_ks"]),
        "rank_distribution": rank_distribution_table(
            _role(runs, config, "paper", (runs["metric"] == "recall") & runs["estimator"].isin(rd["estimators"])),
            rd["max_rank"], rd["estimators"]),
        "relative_error": paper_errors[[*_COMPARED, "mean", "std", "repeats"]].reset_index(drop=True),
        **comparison_tables(errors, config),
        "interval_coverage": interval_coverage_table(runs[with_interval]),
        "metric_levels": metric_levels(config, root),
        "chunk_times": chunk_times(runs),
    }
    return {name: _in_order(frame, config) for name, frame in tables.items()}


def _in_order(frame: pd.DataFrame, config: Mapping) -> pd.DataFrame:
    """Rows in the order of the configuration (datasets, models, parts, estimators as listed;
    metrics recall, NDCG, AP; the rest sorted), whatever the order of the chunks."""
    spec = parts(config)
    listed = {
        "dataset": config["datasets"], "model": list(config["models"].values()), "part": list(spec),
        "estimator": list(dict.fromkeys(name for s in spec.values() for name in s["estimators"])),
        "metric": list(METRICS),
    }
    columns = [c for c in ("dataset", "model", "protocol", "part", "scheme", "sample_size", "estimator", "metric",
                           "k", "level", "prior", "n_items", "rank") if c in frame.columns]

    def key(column: pd.Series) -> pd.Series:
        if column.name in listed:
            order = {value: i for i, value in enumerate(listed[column.name])}
            return column.astype(object).map(lambda v: order.get(v, len(order)))
        return column.astype(object) if isinstance(column.dtype, pd.CategoricalDtype) else column

    return frame.sort_values(columns, key=key, kind="stable").reset_index(drop=True)
