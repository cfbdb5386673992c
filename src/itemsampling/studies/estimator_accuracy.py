"""Notebook 04: how well the estimators recover global metrics (Jin et al., AAAI 2021; Li et al.,
AAAI 2023), on the papers' four datasets and five models.

**Runs.** The configuration (section ``estimator_accuracy``) is expanded into *parts*
(:func:`parts`), each a set of draws of sampled ranks and the estimators run on every draw:

* ``n<n>`` — the papers' runs: for every sample set size n of ``sample_sizes`` (n = 100 and 500:
  the held-out item and n - 1 items sampled with replacement), its own list of estimators, on
  every dataset and model, under the papers' ``protocol`` (``all``: rank among all items);
* ``pooled_n<n>`` — BV and MN with a prior fitted *once to the ranks of all repeats together*
  (:func:`pooled_estimators`), what the AAAI 2023 authors' code did (it averaged the MES estimates
  of the 100 repeats), against our default, a prior fitted to each repeat's own ranks;
* ``per_user_n<n>`` and ``common_n<n>`` — under the ``unseen`` protocol user u has N_u candidates:
  the estimators given N_u (``n_item_groups`` groups of users by N_u) against the same estimators
  given one common N (one group, the mean N_u), on the same draws;
* ``<scheme>_n<n>`` — items drawn without replacement (``actual``: as a toolkit samples items;
  the estimators still assume sampling with replacement) against the binomial draws of ``n<n>``;
* ``interval_n<n>`` — the same draws as ``n<n>`` with a confidence interval around every
  estimate (:mod:`itemsampling.intervals`, section ``intervals``: level, method, cut-offs
  ``ks``), to measure how often it covers the exact value.

A chunk of the workflow is one part of one (dataset, model): :func:`chunks`, :func:`chunk_table`.
Draws are seeded by (dataset, model, protocol, scheme, n, repeat) and not by the part, so the parts
of a comparison see the same sampled ranks wherever their settings agree.

**Targets.** Recall, NDCG and AP at K = 1..``max_k`` for every estimator; for the models of the
P(R) figures also Recall@K for K up to ``rank_distribution.max_rank``: the estimated Recall@K of an
estimator that defines P(R) is its CDF at K (AAAI'21 eq. 14), so the learned pmf and CDF are read
from these targets (:func:`rank_distribution_table`).

**Tables** (:func:`study_tables`): ``metrics_at_k`` (AAAI'21 Tables 2-3, 6-7), ``winners`` and
``true_winners`` (AAAI'21 Tables 4, 8-10; AAAI'23 Tables 3, 8), ``rank_distribution`` (AAAI'21
Figs. 2-3), ``relative_error`` (AAAI'23 Tables 1, 6, 9, 10), ``pooled_prior``, ``candidates`` and
``schemes`` (the comparisons above, as average relative errors), ``interval_coverage``
(:func:`interval_coverage_table`), ``metric_levels`` (:func:`metric_levels`: the level of every model's
metrics under both protocols, read from the global ranks, to compare with the papers' levels) and
``chunk_times`` (wall time of every chunk; the only table that differs between reruns).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..estimators import RANK_DISTRIBUTION_METHODS, Estimator, rank_distribution
from ..experiments import relative_error, winner_counts
from ..intervals import interval_coverage
from ..metrics import global_metrics
from ..ranks import PROTOCOLS
from ..simulation import expected_sampled_metric
from .engine import SCHEMES, draw_sampled_ranks, repeat_estimates
from .paper import PAPER_DATASETS, SAME_DATA, paper_merge
from .tables import ranks_path, read_model_ranks

__all__ = [
    "CATEGORICAL_RUNS",
    "METRICS",
    "PRIOR_ESTIMATORS",
    "bias_comparison",
    "cdf_error",
    "chunk_table",
    "chunk_times",
    "chunks",
    "comparison_tables",
    "estimator",
    "estimator_label",
    "inputs",
    "interval_coverage_table",
    "level_comparison",
    "li2020kdd_hit_ratios",
    "metric_levels",
    "metrics_at_k",
    "metrics_at_k_layout",
    "min_sampled_hit_ratio",
    "parts",
    "pooled_estimators",
    "rank_distribution_table",
    "relative_error_comparison",
    "relative_error_layout",
    "relative_errors",
    "sample_sizes",
    "study_config",
    "study_tables",
    "targets",
    "true_winners",
    "variant_comparison",
    "winner_comparison",
    "winners",
    "winners_layout",
]

#: metrics of the papers' tables
METRICS = ("recall", "ndcg", "ap")
#: the tables step reads the runs (about 12 million rows in the full study) with text columns as
#: categoricals; every function below gives the same tables for text or categorical columns
CATEGORICAL_RUNS = True
#: estimators whose prior is fitted to the sampled ranks (AAAI'23 §3, App. I)
PRIOR_ESTIMATORS = ("bv_mle", "bv_mes", "mn_mle", "mn_mes")
_NAMED = ("sampled", "cls", "mle", "wmle", "mes", *PRIOR_ESTIMATORS)
#: MES of the AAAI'23 code: n times the squared error of AAAI'21 eq. 25 with η = 0.01, i.e. eq. 26
#: with η/n (the package's ``eta_scale="code"``)
CODE_MES = {"eta": 0.01, "eta_scale": "code"}
#: keys that identify one setting of the runs (everything but the repeat and the values)
_SETTING = ["dataset", "model", "protocol", "scheme", "sample_size", "part", "estimator"]


# ----------------------------------------------------------------------------- configuration


def estimator(name: str) -> Estimator:
    """The estimator a configuration names, with the papers' options (the package defaults).

    ``sampled``, ``cls``, ``mle``, ``wmle`` (weight NDCG, C = 10), ``mes`` (η = 0.001 in AAAI'21
    eq. 26), ``bv_mle``, ``bv_mes`` (γ = 0.01), ``mn_mle``, ``mn_mes``; ``mes_code``,
    ``bv_mes_code`` and ``mn_mes_code``: the same with MES as the AAAI'23 code solves it
    (:data:`CODE_MES`: n times the squared error and η = 0.01, i.e. η = 0.01/n in eq. 26); and
    ``bv_<γ>``: BV with a uniform prior and γ (KDD'20 eq. 24-26; the BV of AAAI'23 is
    ``bv_0.01``).
    """
    if name in _NAMED:
        return Estimator(name)
    base = name.removesuffix("_code")
    if base != name and base in ("mes", "bv_mes", "mn_mes"):
        return Estimator(base, CODE_MES, name=name)
    family, _, gamma = name.partition("_")
    try:
        value = float(gamma)
    except ValueError:
        value = -1.0
    if family != "bv" or not value >= 0 or name != f"bv_{value:g}":
        raise ValueError(f"unknown estimator {name!r}: use one of {', '.join(_NAMED)}, mes_code, bv_mes_code, "
                         "mn_mes_code or bv_<γ> (e.g. bv_0.01, written as Python's %g writes γ)")
    return Estimator("bv", {"gamma": value}, name=name)


def _part(role: str, protocol: str, scheme: str, n: int, names: Sequence[str], n_groups: int,
          datasets: Sequence[str]) -> dict:
    for name in names:
        estimator(name)
    return {"role": role, "protocol": protocol, "scheme": scheme, "sample_size": int(n),
            "estimators": list(names), "n_item_groups": int(n_groups), "datasets": list(datasets)}


def parts(config: Mapping) -> dict[str, dict]:
    """Every part of the study (see the module docstring), by name.

    Each part has a ``role`` (``paper``, ``pooled``, ``per_user``, ``common``, ``scheme`` or
    ``interval``), a ``protocol``, a ``scheme`` (a key of
    :data:`~itemsampling.studies.engine.SCHEMES`), one ``sample_size``, its ``estimators`` (names
    of :func:`estimator`), ``n_item_groups`` and the ``datasets`` it runs on (every model of
    ``models``); the ``interval`` part also has the ``level``, ``method`` and cut-offs ``ks`` of
    its intervals. Raises ValueError when a comparison lacks its counterpart among the papers'
    runs.
    """
    protocol, groups, datasets = config["protocol"], config["n_item_groups"], config["datasets"]
    paper = {int(run["sample_size"]): list(run["estimators"]) for run in config["sample_sizes"]}
    out = {f"n{n}": _part("paper", protocol, "binomial", n, names, groups, datasets) for n, names in paper.items()}
    pooled, cand, schemes = config["pooled_prior"], config["candidates"], config["schemes"]
    intervals = config["intervals"]
    for key, section in (("pooled_prior", pooled), ("candidates", cand), ("schemes", schemes),
                         ("intervals", intervals)):
        extra = sorted(set(section["datasets"]) - set(datasets))
        if extra:
            raise ValueError(f"{key}.datasets {extra} are not among the study's datasets {list(datasets)}")
    for n in pooled["sample_sizes"]:
        _counterpart("pooled_prior", paper, n, pooled["estimators"])
        bad = sorted(set(pooled["estimators"]) - set(PRIOR_ESTIMATORS))
        if bad:
            raise ValueError(f"pooled_prior.estimators {bad} have no fitted prior; use {', '.join(PRIOR_ESTIMATORS)}")
        out[f"pooled_n{n}"] = _part("pooled", protocol, "binomial", n, pooled["estimators"], groups,
                                    pooled["datasets"])
    n = int(cand["sample_size"])
    out[f"per_user_n{n}"] = _part("per_user", "unseen", "binomial", n, cand["estimators"], cand["n_item_groups"],
                                  cand["datasets"])
    out[f"common_n{n}"] = _part("common", "unseen", "binomial", n, cand["estimators"], 1, cand["datasets"])
    for n in schemes["sample_sizes"]:
        _counterpart("schemes", paper, n, schemes["estimators"])
        out[f"{schemes['scheme']}_n{n}"] = _part("scheme", protocol, schemes["scheme"], n, schemes["estimators"],
                                                 groups, schemes["datasets"])
    n = int(intervals["sample_size"])
    _counterpart("intervals", paper, n, intervals["estimators"])
    bad = sorted(set(intervals["ks"]) - set(range(1, config["max_k"] + 1)))
    if bad:
        raise ValueError(f"intervals.ks {bad} must lie in 1..max_k = {config['max_k']}")
    out[f"interval_n{n}"] = {**_part("interval", protocol, "binomial", n, intervals["estimators"], groups,
                                     intervals["datasets"]),
                             **{key: intervals[key] for key in ("level", "method", "ks")}}
    return out


def _counterpart(key: str, paper: Mapping[int, list], n: int, names: Sequence[str]) -> None:
    """A comparison at n needs the papers' run at n with the same estimators."""
    if int(n) not in paper:
        raise ValueError(f"{key}: sample size {n} has no run in sample_sizes ({sorted(paper)}) to compare with")
    missing = sorted(set(names) - set(paper[int(n)]))
    if missing:
        raise ValueError(f"{key}: estimators {missing} are not run at n = {n} in sample_sizes")


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``estimator_accuracy`` section."""
    return dict(config["estimator_accuracy"])


def chunks(config: Mapping) -> list[dict]:
    """One chunk per part and (dataset, model): its dataset, model, protocol and part."""
    return [{"dataset": dataset, "model": model, "protocol": spec["protocol"], "part": name}
            for name, spec in parts(config).items() for dataset in spec["datasets"]
            for model in config["models"].values()]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest n drawn from the ranks of each (dataset, protocol) (checked by the workflow)."""
    out: dict[tuple[str, str], int] = {}
    for spec in parts(config).values():
        for dataset in spec["datasets"]:
            key = (dataset, spec["protocol"])
            out[key] = max(out.get(key, 0), spec["sample_size"])
    return out


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from besides the chunks (whose runs carry the exact values):
    the global ranks of every dataset and model under every protocol, for :func:`metric_levels`."""
    return [str(ranks_path(dataset, model, protocol)) for dataset in config["datasets"]
            for model in config["models"].values() for protocol in PROTOCOLS]


def _figure_models(config: Mapping) -> set[tuple[str, str]]:
    """(dataset, model) pairs of the P(R) figures."""
    rd = config["rank_distribution"]
    pairs = {(rd["by_model"]["dataset"], m) for m in rd["by_model"]["models"]}
    return pairs | {(rd["by_sample_size"]["dataset"], rd["by_sample_size"]["model"])}


def targets(config: Mapping, dataset: str, model: str, role: str = "paper") -> list[tuple[str, int]]:
    """Recall, NDCG and AP at K = 1..max_k; in the papers' runs of a model of the P(R) figures,
    Recall also at K = max_k + 1 .. ``rank_distribution.max_rank``; in the ``interval`` part, the
    three metrics at the cut-offs ``intervals.ks``."""
    if role == "interval":
        return [(metric, int(k)) for metric in METRICS for k in config["intervals"]["ks"]]
    top = config["max_k"]
    if role == "paper" and (dataset, model) in _figure_models(config):
        top = max(top, config["rank_distribution"]["max_rank"])
    return [("recall", k) for k in range(1, top + 1)] + [(m, k) for m in METRICS[1:] for k in range(1, config["max_k"] + 1)]


# ----------------------------------------------------------------------------- runs


def pooled_estimators(names: Sequence[str], global_ranks, n_items, sample_size: int, *, seed: int,
                      labels: Mapping[str, str], scheme: str, repeats: int, n_groups: int) -> list[Estimator]:
    """BV and MN with a prior fitted once to the sampled ranks of all ``repeats`` repeats together.

    The draws are those of :func:`~itemsampling.studies.engine.repeat_estimates` with the same
    seed, labels, scheme and n; their ranks are pooled (each user once per repeat, with its N_u)
    and MLE or MES (AAAI'21 eq. 19-21, 24-27) is fitted once. ``bv_mle`` ... ``mn_mes`` then become
    BV (KDD'20 eq. 24-26, γ = 0.01) and MN (AAAI'23 eq. 10-11) with that fixed prior. This uses the
    other repeats' ranks in every repeat (the AAAI'23 authors' code averaged the MES estimates of
    all repeats, which shares the same information): it shows how much pooling flatters them.
    """
    bad = [name for name in names if name not in PRIOR_ESTIMATORS]
    if bad:
        raise ValueError(f"{bad} have no fitted prior to pool; use {', '.join(PRIOR_ESTIMATORS)}")
    draws = [draw_sampled_ranks(global_ranks, n_items, sample_size, seed=seed, labels=labels, scheme=scheme,
                                repeat=i) for i in range(repeats)]
    pooled, pooled_items = np.concatenate(draws), np.tile(n_items, repeats) if np.ndim(n_items) else n_items
    priors = {method: rank_distribution(pooled, pooled_items, sample_size, method, scheme=SCHEMES[scheme][1],
                                        n_groups=n_groups)
              for method in sorted({name.partition("_")[2] for name in names})}
    return [Estimator(name.partition("_")[0], {"prior": priors[name.partition("_")[2]]}, name=name)
            for name in names]


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Every run of one part of one (dataset, model): ``repeats`` draws, every estimator of the part.

    The engine's table (:data:`~itemsampling.studies.engine.RUN_COLUMNS` and ``seconds``, the
    wall time of each draw; in the ``interval`` part also ``level``, ``se``, ``lower`` and
    ``upper``) with the ``part`` and ``setup_seconds`` (fitting pooled priors).
    """
    spec = parts(config)[labels["part"]]
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    start = time.perf_counter()
    if spec["role"] == "pooled":
        ests = pooled_estimators(spec["estimators"], R, N, spec["sample_size"], seed=seed, labels=labels,
                                 scheme=spec["scheme"], repeats=config["repeats"], n_groups=spec["n_item_groups"])
    else:
        ests = [estimator(name) for name in spec["estimators"]]
    setup = time.perf_counter() - start
    table = repeat_estimates(
        R, N, estimators=ests, targets=targets(config, labels["dataset"], labels["model"], spec["role"]),
        sample_sizes=[spec["sample_size"]], seed=seed, labels=labels, schemes=[spec["scheme"]],
        repeats=config["repeats"], n_groups=spec["n_item_groups"], timing=True,
        interval=spec.get("level"), interval_method=spec.get("method"),
    )
    return table.assign(part=labels["part"], setup_seconds=setup)


# ----------------------------------------------------------------------------- aggregation


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
    Table 8): :func:`~itemsampling.experiments.winner_counts` at every K of ``ks``.

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
    (:func:`~itemsampling.experiments.relative_error`). A cut-off whose exact value is 0 has no
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
    """Every table of notebook 04 from the runs of all chunks (see the module docstring).

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


# ----------------------------------------------------------------------------- against the papers


def bias_comparison(table: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and estimator, the relative bias |mean − exact| / exact and the relative
    standard deviation std / exact of metric@K, averaged over models and metrics: ours (``table``
    of :func:`metrics_at_k`) and the paper's (``jin2021aaai_metrics_at_10``).

    Returns
    -------
    pandas.DataFrame
        ``dataset, sample_size, estimator, bias, spread, paper_bias, paper_spread`` (fractions;
        NaN where the paper has no such column).
    """
    ours = table.assign(bias=(table["mean"] - table["exact"]).abs() / table["exact"],
                        spread=table["std"] / table["exact"])
    ours = ours.groupby(["dataset", "sample_size", "estimator"], sort=False)[["bias", "spread"]].mean().reset_index()
    exact = paper[paper["method"] == "exact"][["dataset", "model", "metric", "paper_percent"]]
    theirs = paper[paper["method"] != "exact"].merge(exact, on=["dataset", "model", "metric"],
                                                     suffixes=("", "_exact"))
    theirs = theirs.assign(paper_bias=(theirs["paper_percent"] - theirs["paper_percent_exact"]).abs()
                           / theirs["paper_percent_exact"],
                           paper_spread=theirs["paper_std_percent"] / theirs["paper_percent_exact"])
    theirs = theirs.groupby(["dataset", "method"], sort=False)[["paper_bias", "paper_spread"]].mean().reset_index()
    return paper_merge(ours, theirs.rename(columns={"method": "estimator"}), ["dataset", "estimator"],
                       scope={"dataset": sorted(set(ours["dataset"]))}, how="left")


def min_sampled_hit_ratio(recall_at_k, k, n_items, sample_size):
    """The smallest expected sampled hit ratio at 1 of any global ranks with the given Recall@K.

    Under binomial sampling P(r = 1 | R) = (1 − θ_R)^(n − 1), θ_R = (R − 1)/(N − 1) (Krichene &
    Rendle KDD 2020 eq. 13 at r = 1), which does not increase with R. A user with R ≤ K therefore
    adds at least (1 − θ_K)^(n − 1) to E[SHR@1] and any other user at least 0, so

        E[SHR@1] ≥ Recall@K · (1 − (K − 1)/(N − 1))^(n − 1),

    with equality when the users within the top K all sit at R = K and the others at R = N.

    Parameters
    ----------
    recall_at_k : float or array_like
        Global Recall@K, a fraction in [0, 1].
    k : int or array_like
        The cut-off K (1 ≤ K ≤ N).
    n_items : int or array_like
        N, the number of items ranked.
    sample_size : int or array_like
        n, the size of the sample set (the held-out item and n − 1 sampled items).
    """
    recall, k, n_items, n = (np.asarray(v, dtype=float) for v in (recall_at_k, k, n_items, sample_size))
    if np.any(~np.isfinite(recall)) or np.any((recall < 0) | (recall > 1)):
        raise ValueError("recall_at_k must be fractions in [0, 1], not percent")
    if np.any(n_items < 2) or np.any(k < 1) or np.any(k > n_items) or np.any(n < 1):
        raise ValueError(f"need 1 <= k <= N, N >= 2 and n >= 1; got k={k}, N={n_items}, n={n}")
    return recall * (1 - (k - 1) / (n_items - 1)) ** (n - 1)


def level_comparison(levels: pd.DataFrame, paper_at_k: pd.DataFrame, paper_hit_ratios: pd.DataFrame) -> pd.DataFrame:
    """Can the paper's exact Recall@K come from global ranks like ours?

    For every (dataset, model) of :data:`~itemsampling.studies.paper.SAME_DATA` with an exact
    Recall@K in the paper (``jin2021aaai_metrics_at_10``, protocol ``all``): our exact Recall@K and E[SHR@1] under both
    protocols (``levels`` of :func:`metric_levels`), the paper's exact Recall@K, the smallest E[SHR@1] that any ranks with
    that Recall@K over our N items give (:func:`min_sampled_hit_ratio`), and a sampled hit ratio
    at 1 measured in another paper on the same dataset and model (``paper_hit_ratios`` of
    :func:`li2020kdd_hit_ratios`; NaN where there is none).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, k, sample_size, exact_all, exact_unseen, hit_ratio_all,
        hit_ratio_unseen, paper_exact, paper_min_hit_ratio, paper_hit_ratio, paper_hit_protocol``
        (fractions).
    """
    wide = levels.pivot(index=["dataset", "model", "k", "sample_size"], columns="protocol",
                        values=["exact_recall", "sampled_hit_ratio", "n_items"])
    wide.columns = [f"{value}_{protocol}" for value, protocol in wide.columns]
    wide = wide.reset_index().rename(columns={"exact_recall_all": "exact_all", "exact_recall_unseen": "exact_unseen",
                                              "sampled_hit_ratio_all": "hit_ratio_all",
                                              "sampled_hit_ratio_unseen": "hit_ratio_unseen"})
    exact = paper_at_k[(paper_at_k["method"] == "exact") & (paper_at_k["metric"] == "recall")]
    same = wide[wide["dataset"].isin(SAME_DATA)]
    out = paper_merge(same, exact[["dataset", "model", "k", "paper_percent"]], ["dataset", "model", "k"],
                      scope={"dataset": sorted(set(same["dataset"])), "model": sorted(set(same["model"])),
                             "k": sorted(set(same["k"]))})
    out = out.assign(paper_exact=out["paper_percent"] / 100)
    out["paper_min_hit_ratio"] = min_sampled_hit_ratio(out["paper_exact"], out["k"], out["n_items_all"],
                                                       out["sample_size"])
    hits = paper_hit_ratios.rename(columns={"protocol": "paper_hit_protocol"})
    hits = hits[hits["model"].isin(set(out["model"]))]  # KDD'20 measured models we may not have run
    out = paper_merge(out, hits[["dataset", "model", "paper_hit_protocol", "paper_hit_ratio"]], ["dataset", "model"],
                      scope={"dataset": sorted(set(out["dataset"]))}, how="left")
    out = levels[["dataset", "model"]].drop_duplicates().merge(out, on=["dataset", "model"])  # in the order of levels
    return out[["dataset", "model", "k", "sample_size", "exact_all", "exact_unseen", "hit_ratio_all",
                "hit_ratio_unseen", "paper_exact", "paper_min_hit_ratio", "paper_hit_ratio",
                "paper_hit_protocol"]].reset_index(drop=True)


def li2020kdd_hit_ratios(table3: pd.DataFrame, table5: pd.DataFrame, sample_size: int = 100) -> pd.DataFrame:
    """The sampled hit ratio at 1 that Li et al. (KDD 2020) measured with n = 100, per dataset
    (our names) and model: Table 5's ``binomial`` column for MultiVAE on ml-1m (all items ranked),
    Table 3 for the others. Table 3 does not name its protocol; its ml-1m MultiVAE value equals
    Table 5's ``actual`` column (unseen items), so it is read as ``unseen``. A model that ranks
    its users' training items above most unseen ones has the higher hit ratio over the unseen
    items (Table 5: 0.2101 against 0.1031; so do all our models, :func:`metric_levels`), so
    comparing a bound of the ``all`` protocol with an ``unseen`` value favours the paper. This is
    an observation, not a theorem: a model that ranked training items last would have it the
    other way round.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, protocol, paper_hit_ratio`` (one row per dataset and model).
    """
    ours = {paper: dataset for dataset, paper in PAPER_DATASETS.items()}
    t3 = table3[(table3["k"] == 1) & (table3["mapping"] == "sampled")]
    t3 = pd.DataFrame({"dataset": t3["paper_dataset"].map(ours), "model": t3["model"], "protocol": "unseen",
                       "paper_hit_ratio": t3["paper_value"]})
    t5 = table5[(table5["k"] == 1) & (table5["mapping"] == "sampled") & (table5["scheme"] == "binomial")
                & (table5["sample_size"] == sample_size)]
    t5 = pd.DataFrame({"dataset": "ml-1m", "model": "multivae", "protocol": t5["protocol"],
                       "paper_hit_ratio": t5["paper_value"]})
    both = pd.concat([t5, t3], ignore_index=True)
    return both.drop_duplicates(["dataset", "model"]).reset_index(drop=True)


def winner_comparison(table: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, n and estimator: the share of (metric, K, repeat) with the right winner, ours
    (over all our (metric, K), and over those the paper reports) and the paper's.

    Returns
    -------
    pandas.DataFrame
        ``dataset, sample_size, estimator, correct, correct_where_reported, paper_correct``
        (fractions; NaN where the paper has no such column).
    """
    keys = ["dataset", "sample_size", "estimator"]
    theirs = paper.rename(columns={"method": "estimator"})[[*keys, "metric", "k", "paper_correct"]]
    merged = paper_merge(table, theirs, [*keys, "metric", "k"], how="left",
                         scope={"dataset": sorted(set(table["dataset"])), "sample_size": sorted(set(table["sample_size"]))})
    reported = merged["paper_correct"].notna()
    sums = merged.assign(reported_correct=merged["correct"].where(reported, 0),
                         reported_repeats=merged["repeats"].where(reported, 0),
                         paper_repeats=np.where(reported, 100, 0)).groupby(keys, sort=False)[
        ["correct", "repeats", "reported_correct", "reported_repeats", "paper_correct", "paper_repeats"]].sum()
    out = pd.DataFrame({"correct": sums["correct"] / sums["repeats"],
                        "correct_where_reported": sums["reported_correct"] / sums["reported_repeats"],
                        "paper_correct": sums["paper_correct"] / sums["paper_repeats"]})
    return out.reset_index()


def relative_error_comparison(table: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, metric, n and estimator of the AAAI'23 tables (those named in ``paper``,
    ``li2023aaai_relative_error``): the average relative error averaged over the models, and in
    how many models' rows the estimator is among the two most accurate of these estimators (as
    the paper marks them in bold); ours, and the paper's where it has the dataset.

    Returns
    -------
    pandas.DataFrame
        ``dataset, metric, sample_size, estimator, mean, best_two, models, paper_mean,
        paper_best_two`` (errors as fractions).
    """
    keys = ["dataset", "metric", "sample_size"]
    theirs = paper.rename(columns={"method": "estimator"}).assign(paper_mean=lambda t: t["paper_percent"] / 100)
    ours = table[table["estimator"].isin(set(theirs["estimator"]))]

    def best_two(frame: pd.DataFrame, value: str) -> pd.DataFrame:
        return frame.assign(best_two=frame.groupby([*keys, "model"])[value].rank(method="min") <= 2)

    ours = best_two(ours, "mean").groupby([*keys, "estimator"], sort=False).agg(
        mean=("mean", "mean"), best_two=("best_two", "sum"), models=("model", "nunique")).reset_index()
    theirs = best_two(theirs, "paper_mean").groupby([*keys, "estimator"], sort=False).agg(
        paper_mean=("paper_mean", "mean"), paper_best_two=("best_two", "sum")).reset_index()
    return paper_merge(ours, theirs, [*keys, "estimator"], how="left", scope={
        "dataset": sorted(set(ours["dataset"])), "sample_size": sorted(set(ours["sample_size"])),
        "metric": sorted(set(ours["metric"]))})


def cdf_error(table: pd.DataFrame) -> pd.DataFrame:
    """How far the averaged learned CDF is from the empirical one: the largest and the mean
    |CDF̂(R) − CDF(R)| over R = 1..max_rank, per setting of :func:`rank_distribution_table`."""
    keys = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator"]
    gap = table.assign(gap=(table["cdf"] - table["exact_cdf"]).abs())
    return gap.groupby(keys, sort=False)["gap"].agg(max_gap="max", mean_gap="mean").reset_index()


def variant_comparison(table: pd.DataFrame, variant: str, base: str, other: str) -> pd.DataFrame:
    """One comparison table (``pooled_prior``, ``candidates``, ``schemes``) side by side: per
    dataset and n, the relative error under ``base`` and ``other`` averaged over models,
    estimators and metrics, their ratio, and the share of settings where ``other`` is lower.

    Returns
    -------
    pandas.DataFrame
        ``dataset, sample_size, base, other, ratio, other_lower, settings``.
    """
    keys = ["dataset", "model", "sample_size", "estimator", "metric"]
    wide = table.pivot_table(index=keys, columns=variant, values="mean", aggfunc="first")
    if base not in wide or other not in wide:
        return pd.DataFrame(columns=["dataset", "sample_size", "base", "other", "ratio", "other_lower", "settings"])
    wide = wide[[base, other]].dropna().rename(columns={base: "base", other: "other"}).reset_index()
    wide["other_lower"] = wide["other"] < wide["base"]
    out = wide.groupby(["dataset", "sample_size"], sort=False).agg(
        base=("base", "mean"), other=("other", "mean"), other_lower=("other_lower", "mean"),
        settings=("other", "size")).reset_index()
    out.insert(4, "ratio", out["other"] / out["base"])
    return out



# ----------------------------------------------------------------------------- layouts


def estimator_label(name: str) -> str:
    """How the papers print an estimator: ``bv_0.1`` -> ``BV 0.1``, ``mn_mes`` -> ``MN_MES``."""
    if name == "sampled":
        return name
    if name.startswith("bv_") and name[3:4].isdigit():
        return f"BV {name[3:]}"
    base = name.removesuffix("_code")
    return base.upper() + (" (code)" if base != name else "")


def _cells(mean: pd.Series, std: pd.Series, digits: int) -> list[str]:
    return [f"{100 * m:.{digits}f} ± {100 * s:.{digits}f}" for m, s in zip(mean, std, strict=True)]


def _ordered(frame: pd.DataFrame, column: str, labels: Mapping[str, str] | None) -> pd.DataFrame:
    """``frame`` with ``column`` renamed by ``labels`` (in their order) and kept only for them."""
    if labels is None:
        return frame
    order = {name: i for i, name in enumerate(labels)}
    frame = frame[frame[column].isin(list(labels))]
    return frame.sort_values(column, key=lambda s: s.map(order), kind="stable").assign(
        **{column: lambda t: t[column].map(labels)})


def metrics_at_k_layout(table: pd.DataFrame, dataset: str, sample_size: int,
                        models: Mapping[str, str] | None = None, digits: int = 2) -> pd.DataFrame:
    """AAAI'21 Tables 2-3, 6-7: rows (model, metric), the exact value and one ``mean ± std``
    column per estimator, in percent. ``models`` maps model names to the labels shown."""
    t = table[(table["dataset"] == dataset) & (table["sample_size"] == sample_size)]
    t = _ordered(t.assign(cell=_cells(t["mean"], t["std"], digits)), "model", models)
    wide = t.pivot(index=["model", "metric"], columns="estimator", values="cell")
    wide = wide[list(dict.fromkeys(t["estimator"]))]
    exact = t.drop_duplicates(["model", "metric"]).set_index(["model", "metric"])["exact"]
    wide.insert(0, "exact", [f"{100 * v:.{digits}f}" for v in exact.reindex(wide.index)])
    rows = list(dict.fromkeys(zip(t["model"], t["metric"], strict=True)))
    return wide.loc[rows].rename(columns=estimator_label)


def winners_layout(table: pd.DataFrame, dataset: str, sample_size: int) -> pd.DataFrame:
    """AAAI'21 Tables 4, 8-10, AAAI'23 Table 8: rows (K, metric), the number of repeats in which
    each estimator picks the true winner."""
    t = table[(table["dataset"] == dataset) & (table["sample_size"] == sample_size)]
    wide = t.pivot(index=["k", "metric"], columns="estimator", values="correct")
    wide = wide[list(dict.fromkeys(t["estimator"]))]
    order = {m: i for i, m in enumerate(METRICS)}
    rows = sorted(wide.index, key=lambda i: (i[0], order.get(i[1], len(order))))
    return wide.loc[rows].rename(columns=estimator_label)


def relative_error_layout(table: pd.DataFrame, metric: str, sample_size: int, estimators: Sequence[str],
                          models: Mapping[str, str] | None = None, digits: int = 2) -> pd.DataFrame:
    """AAAI'23 Tables 1, 6, 9, 10: rows (dataset, model), one ``mean ± std`` column (percent) per
    estimator of ``estimators`` that was run."""
    t = table[(table["metric"] == metric) & (table["sample_size"] == sample_size)
              & table["estimator"].isin(list(estimators))]
    t = _ordered(t.assign(cell=_cells(t["mean"], t["std"], digits)), "model", models)
    wide = t.pivot(index=["dataset", "model"], columns="estimator", values="cell")
    wide = wide[[e for e in estimators if e in wide.columns]]
    rows = list(dict.fromkeys(zip(t["dataset"], t["model"], strict=True)))
    return wide.loc[rows].rename(columns=estimator_label)
