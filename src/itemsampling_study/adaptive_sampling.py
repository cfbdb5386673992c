"""Notebook 06: the blind spot of fixed-size sampling and adaptive sampling (Li et al., AAAI 2023 §4).

Every table of the notebook, computed from the global ranks of the models and the runs of the
study engine (:func:`~itemsampling_study.engine.repeat_estimates` for fixed sample sizes,
:func:`~itemsampling_study.engine.repeat_adaptive_estimates` for Algorithm 1 and the
adaptive MLE of eq. 12 / App. G):

* ``blind_spot_sampled_ranks`` (Fig. 1, top): the expected distribution of the sampled rank r_u
  with n = ``blind_spot_sample_size`` items, (1/M) Σ_u P(r | R_u; N_u, n), exactly
  (:func:`~itemsampling.simulation.expected_sampled_rank_pmf`);
* ``relative_error_by_k`` (Fig. 1, bottom): the relative error of MLE (fixed n) and of the
  adaptive MLE at every cut-off K, mean and std over the repeats;
* ``adaptive_sizes``: the average sample set size n_u of adaptive sampling per terminal size
  n_max, simulated and expected, and the share of users left at n_max;
* ``sampling_cost`` (Fig. 2, eq. 13): the expected sampling cost C_j of every size level from
  n_0 up to (nearly) all items, exactly (:func:`~itemsampling.simulation.expected_sampling_cost`);
* ``fixed_vs_adaptive`` (Tables 2, 7, 11): the average relative error over K = 1..``max_k`` of
  BV_MES, BV_MLE, MN_MES, MN_MLE with a fixed n and of the adaptive MLE, with the average
  number of items per user;
* ``winners`` (Tables 3, 8): how often each method picks the model with the best exact metric;
* ``frontier``: relative error against items scored per user, fixed-size MLE for several n and
  adaptive sampling for several n_max.

The fixed-size estimators of the datasets listed in ``fixed_reused`` are not recomputed: their
rows are read from the tables ``relative_error`` and ``winners`` of notebook 04
(:data:`FIXED_SOURCE`), selected by protocol, scheme, n and estimator, and checked to be complete
(notebook 04 computes them with the same engine and the same definitions: relative errors of
cut-offs with a non-zero exact value, standard deviations with ddof = 1).

Configuration: the ``adaptive_sampling`` section of ``config/config.yaml`` (see the schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling._validation import check_choice, check_positive_integer
from itemsampling.estimators import Estimator
from itemsampling.kernels import KernelCache
from itemsampling.simulation import expected_sampled_rank_pmf, expected_sampling_cost

from .engine import STUDY_SCHEMES, repeat_adaptive_estimates, repeat_estimates
from .experiments import relative_error, winner_counts
from .tables import ranks_path, read_model_ranks, read_table, table_path

__all__ = [
    "FIXED_SOURCE",
    "adaptive_sizes",
    "chunk_table",
    "chunks",
    "cost_curve",
    "fixed_vs_adaptive",
    "fixed_vs_adaptive_layout",
    "frontier",
    "frontier_savings",
    "inputs",
    "most_accurate",
    "relative_error_by_k",
    "repeat_errors",
    "sample_sizes",
    "study_config",
    "study_tables",
    "summarize_errors",
    "targets",
    "winners",
    "winners_layout",
]

#: notebook whose tables ``relative_error`` and ``winners`` hold the reused fixed-size runs
FIXED_SOURCE = "04_estimators"
#: columns of ``fixed_vs_adaptive`` (errors as fractions)
FIXED_VS_ADAPTIVE_COLUMNS = ("dataset", "model", "protocol", "method", "metric", "mean_sample_size", "mean",
                             "std", "repeats")
#: columns of ``winners``
WINNER_COLUMNS = ("dataset", "protocol", "scheme", "method", "sample_size", "metric", "k", "correct", "repeats")
_DRAW = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator", "repeat"]
_SETTING = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator", "metric"]


# ----------------------------------------------------------------------------- configuration


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``adaptive_sampling`` section, without its ``sensitivity``
    subsection (the parameters of rule ``adaptive_sensitivity``, :mod:`.adaptive_sensitivity`)."""
    return {key: value for key, value in config["adaptive_sampling"].items() if key != "sensitivity"}


def _checked(config: Mapping) -> Mapping:
    """``config`` after the cross-field checks that the schema cannot express."""
    datasets = config["datasets"]
    check_choice("scheme", config["scheme"], STUDY_SCHEMES)
    n0 = check_positive_integer("n0", config["n0"])
    if n0 < 2:
        raise ValueError("n0 must be >= 2: a sample set of one item carries no information")
    for key in ("n_max", "fixed_sample_size"):
        missing = sorted(set(datasets) - set(config[key]))
        if missing:
            raise ValueError(f"adaptive_sampling.{key} names no size for the dataset(s) {missing}")
    small = {d: config["n_max"][d] for d in datasets if config["n_max"][d] < n0}
    if small:
        raise ValueError(f"adaptive_sampling.n_max must be at least n0 = {n0}; got {small}")
    unknown = sorted(set(config["fixed_reused"]) - set(datasets))
    if unknown:
        raise ValueError(f"adaptive_sampling.fixed_reused names datasets that are not studied: {unknown}")
    lacking = [d for d, models in datasets.items() if config["blind_spot_model"] not in models]
    if lacking:
        raise ValueError(f"blind_spot_model {config['blind_spot_model']!r} is not a model of {lacking}")
    return config


def chunks(config: Mapping) -> list[dict]:
    """One chunk of runs per (dataset, model): adaptive and fixed-size sampling of its ranks."""
    config = _checked(config)
    return [{"dataset": d, "model": m, "protocol": config["protocol"]}
            for d, models in config["datasets"].items() for m in models]


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from (besides the chunks): the ranks and, when some datasets
    reuse notebook 04's fixed-size runs, its tables ``relative_error`` and ``winners``."""
    out = [str(ranks_path(c["dataset"], c["model"], c["protocol"])) for c in chunks(config)]
    if config["fixed_reused"]:
        out += [str(table_path(FIXED_SOURCE, name)) for name in ("relative_error", "winners")]
    return out


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set size that must fit the candidates of each (dataset, protocol): the
    terminal size n_max, the fixed n when it is computed here, and the blind-spot n (the frontier
    leaves out its sizes above the smallest N_u)."""
    config = _checked(config)
    out = {}
    for dataset in config["datasets"]:
        sizes = [config["n_max"][dataset], config["blind_spot_sample_size"]]
        if dataset not in config["fixed_reused"]:
            sizes.append(config["fixed_sample_size"][dataset])
        out[(dataset, config["protocol"])] = int(max(sizes))
    return out


def targets(config: Mapping) -> list[tuple[str, int]]:
    """Every (metric, K) estimated: ``metrics`` at K = 1..``max_k`` and ``winner_metrics`` at
    ``winner_ks``."""
    out = [(m, k) for m in config["metrics"] for k in range(1, config["max_k"] + 1)]
    out += [(m, k) for m in config["winner_metrics"] for k in config["winner_ks"] if (m, k) not in out]
    return out


# ----------------------------------------------------------------------------- runs


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Every run of one (dataset, model): the columns of
    :data:`~itemsampling_study.engine.ADAPTIVE_COLUMNS`.

    * adaptive sampling from n_0 up to the dataset's n_max (``repeats`` draws) and up to each
      ``frontier_n_max`` (``frontier_repeats`` draws), estimated by the adaptive MLE;
    * fixed-size MLE at each ``frontier_sample_sizes`` and the ``blind_spot_sample_size``
      (``frontier_repeats`` draws);
    * unless the dataset is in ``fixed_reused``: the ``fixed_estimators`` at the dataset's
      ``fixed_sample_size`` (``repeats`` draws).

    Frontier sizes above the smallest N_u (and terminal sizes below n_0) are left out. ``mean_sample_size`` is the average
    number of items per user of the draw (n for fixed-size sampling).
    """
    config = _checked(config)
    dataset = labels["dataset"]
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    fits = int(N.min())
    common = {"targets": targets(config), "seed": seed, "labels": labels, "n_groups": config["n_item_groups"]}
    main = config["n_max"][dataset]
    frames = [repeat_adaptive_estimates(R, N, n0=config["n0"], n_max_values=[main], scheme=config["scheme"],
                                        repeats=config["repeats"], **common)]
    others = sorted({int(n) for n in config["frontier_n_max"] if config["n0"] <= n <= fits} - {main})
    if others:
        frames.append(repeat_adaptive_estimates(R, N, n0=config["n0"], n_max_values=others, scheme=config["scheme"],
                                                repeats=config["frontier_repeats"], **common))
    cache = KernelCache()  # fixed sample sizes: whole kernels, shared by the sizes' repeats
    sizes = sorted({int(n) for n in config["frontier_sample_sizes"] if 2 <= n <= fits}
                   | {int(config["blind_spot_sample_size"])})
    fixed = [([Estimator("mle")], sizes, config["frontier_repeats"])]
    if dataset not in config["fixed_reused"]:
        fixed.append(([Estimator(m) for m in config["fixed_estimators"]], [config["fixed_sample_size"][dataset]],
                      config["repeats"]))
    for estimators, ns, repeats in fixed:
        frame = repeat_estimates(R, N, estimators=estimators, sample_sizes=ns, schemes=[config["scheme"]],
                                 repeats=repeats, cache=cache, **common)
        frames.append(frame.assign(mean_sample_size=frame["sample_size"].astype(np.float64)))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- exact curves


def cost_curve(global_ranks, n_items, n0: int, scheme: str = "binomial") -> pd.DataFrame:
    """Expected sampling cost C_j (AAAI'23 eq. 13, Fig. 2) of every size level n0·2^j up to the
    smallest N_u (the last level is capped there), with ``fraction_of_items`` = n_j / mean N_u."""
    N = np.broadcast_to(np.asarray(n_items), np.shape(global_ranks))
    cost = expected_sampling_cost(global_ranks, N, n0, int(N.min()), scheme)
    return cost.assign(fraction_of_items=cost["sample_size"] / N.mean())


# ----------------------------------------------------------------------------- errors and winners


def repeat_errors(runs: pd.DataFrame, metrics, max_k: int) -> pd.DataFrame:
    """Per draw, the average relative error over K = 1..``max_k`` of each estimator and metric
    (AAAI'23 §5), with the draw's ``mean_sample_size``.

    (1/|K|) Σ_K |estimate@K − exact@K| / exact@K (:func:`~itemsampling_study.experiments.relative_error`).
    A cut-off whose exact value is 0 has no relative error and is left out of the average, as in
    notebook 04 (the AAAI'23 code counts it as 0); with real data and K >= 1 this does not happen.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, scheme, sample_size, estimator, repeat, metric,
        average_relative_error, mean_sample_size`` (errors as fractions).
    """
    sel = runs[runs["metric"].isin(list(metrics)) & runs["k"].between(1, max_k)]
    keys = [*_DRAW, "metric"]
    if (sel.groupby(keys, sort=False).size() != max_k).any():
        raise ValueError(f"the runs lack some of the cut-offs K = 1..{max_k} of {list(metrics)}")
    sel = sel[sel["exact"] != 0]
    errors = sel.assign(average_relative_error=relative_error(sel["estimate"], sel["exact"]))
    out = errors.groupby(keys, sort=False).agg(average_relative_error=("average_relative_error", "mean"),
                                               mean_sample_size=("mean_sample_size", "first"))
    return out.reset_index()


def summarize_errors(per_repeat: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1) over the repeats of the average relative error of
    each setting, the number of repeats and the mean number of items per user.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, scheme, sample_size, estimator, metric,
        mean_sample_size, mean, std, repeats``.
    """
    grouped = per_repeat.groupby(_SETTING, sort=False)
    return grouped.agg(mean_sample_size=("mean_sample_size", "mean"), mean=("average_relative_error", "mean"),
                       std=("average_relative_error", "std"), repeats=("repeat", "nunique")).reset_index()


def relative_error_by_k(runs: pd.DataFrame, config: Mapping) -> pd.DataFrame:
    """Relative error |estimate - exact| / exact at every K = 1..``max_k`` (AAAI'23 Fig. 1,
    bottom): fixed-size MLE with n = ``blind_spot_sample_size`` and the adaptive MLE at the
    dataset's n_max, mean and std (ddof = 1) over the repeats (cut-offs whose exact value is 0
    are left out)."""
    n_max = runs["dataset"].map(config["n_max"])
    chosen = (((runs["estimator"] == "mle") & (runs["sample_size"] == config["blind_spot_sample_size"]))
              | ((runs["estimator"] == "adaptive_mle") & (runs["sample_size"] == n_max)))
    sel = runs[chosen & runs["metric"].isin(config["metrics"]) & runs["k"].between(1, config["max_k"])
               & (runs["exact"] != 0)]
    sel = sel.assign(relative_error=relative_error(sel["estimate"], sel["exact"]))
    out = sel.groupby([*_SETTING, "k"], sort=False)["relative_error"].agg(
        mean="mean", std="std", repeats="count").reset_index()
    out.insert(4, "sampling", _sampling(out["estimator"]))
    return _ordered(out, config, ["sampling", "metric", "k"])


def winners(runs: pd.DataFrame, config: Mapping, reused: pd.DataFrame | None = None) -> pd.DataFrame:
    """How often each method picks the true winner among the models of a dataset (AAAI'23
    Tables 3, 8): the fixed-size estimators at the dataset's n and the adaptive MLE at its
    n_max, at ``winner_ks`` of ``winner_metrics``; ``reused`` rows (notebook 04) are appended."""
    fixed_n, n_max = runs["dataset"].map(config["fixed_sample_size"]), runs["dataset"].map(config["n_max"])
    chosen = ((runs["estimator"].isin(config["fixed_estimators"]) & (runs["sample_size"] == fixed_n))
              | ((runs["estimator"] == "adaptive_mle") & (runs["sample_size"] == n_max)))
    sel = runs[chosen & runs["metric"].isin(config["winner_metrics"]) & runs["k"].isin(config["winner_ks"])]
    truth = sel.drop_duplicates(["dataset", "protocol", "model", "metric", "k"])[
        ["dataset", "protocol", "model", "metric", "k", "exact"]].rename(columns={"exact": "value"})
    estimates = sel[["dataset", "protocol", "scheme", "sample_size", "estimator", "model", "repeat", "metric", "k",
                     "estimate"]]
    out = winner_counts(estimates, truth).rename(columns={"estimator": "method"})
    if reused is not None:
        out = pd.concat([out, reused], ignore_index=True)
    return _ordered(out[list(WINNER_COLUMNS)], config, ["metric", "k", "method"])


def fixed_vs_adaptive(summary: pd.DataFrame, config: Mapping, reused: pd.DataFrame | None = None) -> pd.DataFrame:
    """AAAI'23 Tables 2, 7, 11: the average relative error over K of the fixed-size estimators
    at the dataset's n and of the adaptive MLE at its n_max, with the items per user."""
    fixed_n, n_max = summary["dataset"].map(config["fixed_sample_size"]), summary["dataset"].map(config["n_max"])
    chosen = ((summary["estimator"].isin(config["fixed_estimators"]) & (summary["sample_size"] == fixed_n))
              | ((summary["estimator"] == "adaptive_mle") & (summary["sample_size"] == n_max)))
    out = summary[chosen & summary["metric"].isin(config["metrics"])].rename(columns={"estimator": "method"})
    if reused is not None:
        out = pd.concat([out, reused], ignore_index=True)
    return _ordered(out[list(FIXED_VS_ADAPTIVE_COLUMNS)], config, ["metric", "method"])


def frontier(summary: pd.DataFrame, mean_items: Mapping[str, float], config: Mapping) -> pd.DataFrame:
    """Relative error against items scored per user: fixed-size MLE at every n and adaptive
    sampling at every n_max (``fraction_of_items`` = items per user / mean N_u of the dataset)."""
    sel = summary[summary["estimator"].isin(["mle", "adaptive_mle"]) & summary["metric"].isin(config["metrics"])]
    out = sel.rename(columns={"mean_sample_size": "items_per_user"})
    out = out.assign(sampling=_sampling(out["estimator"]),
                     fraction_of_items=out["items_per_user"] / out["dataset"].map(mean_items))
    columns = ["dataset", "model", "protocol", "scheme", "sampling", "estimator", "sample_size", "metric",
               "items_per_user", "fraction_of_items", "mean", "std", "repeats"]
    return _ordered(out[columns], config, ["metric", "sampling", "sample_size"])


def adaptive_sizes(runs: pd.DataFrame, ranks: Mapping[tuple[str, str], pd.DataFrame], config: Mapping) -> pd.DataFrame:
    """Items per user of adaptive sampling for each n_max: the mean over the repeats of the
    average n_u (and its std), its exact expectation, and the expected share of users that stop
    at n_max (``at_ceiling``) and of those still at r = 1 there (``first_at_ceiling``)."""
    draws = runs[runs["estimator"] == "adaptive_mle"].drop_duplicates(_DRAW)
    keys = ["dataset", "model", "protocol", "scheme", "sample_size"]
    out = draws.groupby(keys, sort=False)["mean_sample_size"].agg(
        mean_sample_size="mean", std="std", repeats="count").reset_index()
    draw_scheme = STUDY_SCHEMES[config["scheme"]][0]
    rows = []
    for row in out.itertuples():
        frame = ranks[(row.dataset, row.model)]
        R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
        cost = expected_sampling_cost(R, N, config["n0"], int(row.sample_size), draw_scheme)
        rows.append({"expected_sample_size": float(cost["sample_size"] @ cost["stopped"]) / R.size,
                     "fraction_of_items": row.mean_sample_size / N.mean(),
                     "at_ceiling": cost["stopped"].iloc[-1] / R.size,
                     "first_at_ceiling": (cost["stopped"].iloc[-1] - cost["resolved"].iloc[-1]) / R.size})
    out = pd.concat([out.rename(columns={"sample_size": "n_max"}), pd.DataFrame(rows)], axis=1)
    out.insert(4, "n0", config["n0"])
    return _ordered(out, config, ["n_max"])


# ----------------------------------------------------------------------------- notebook layouts


def fixed_vs_adaptive_layout(table: pd.DataFrame, metric: str, digits: int = 2) -> pd.DataFrame:
    """Tables 2, 7, 11 as printed: rows (dataset, model), ``mean ± std`` in percent per method
    (in the order of ``table``) and the adaptive MLE's average items per user."""
    t = table[table["metric"] == metric]
    t = t.assign(cell=[f"{100 * m:.{digits}f} ± {100 * s:.{digits}f}" for m, s in zip(t["mean"], t["std"], strict=True)])
    index = ["dataset", "model"]
    wide = t.pivot(index=index, columns="method", values="cell")[list(dict.fromkeys(t["method"]))]
    sizes = t[t["method"] == "adaptive_mle"].set_index(index)["mean_sample_size"]
    wide.insert(wide.shape[1] - 1, "adaptive items per user", sizes.reindex(wide.index).round(1))
    return wide.loc[list(dict.fromkeys(zip(t["dataset"], t["model"], strict=True)))]


def most_accurate(table: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, metric): the method with the smallest mean error, the adaptive MLE's
    error and items per user, the best fixed-size error and its n, and their ratio (< 1: adaptive
    sampling is more accurate). Works on ``fixed_vs_adaptive`` and on the paper's table alike."""
    keys = ["dataset", "model", "metric"]
    adaptive = table[table["method"] == "adaptive_mle"].set_index(keys)
    fixed = table[table["method"] != "adaptive_mle"]
    best_fixed = fixed.loc[fixed.groupby(keys, sort=False)["mean"].idxmin()].set_index(keys)
    out = pd.DataFrame({
        "adaptive_error": adaptive["mean"],
        "adaptive_items": adaptive["mean_sample_size"],
        "best_fixed": best_fixed["method"],
        "best_fixed_error": best_fixed["mean"],
        "fixed_items": best_fixed["mean_sample_size"],
    }).dropna(subset=["adaptive_error", "best_fixed_error"])
    out["error_ratio"] = out["adaptive_error"] / out["best_fixed_error"]
    out["adaptive_best"] = out["adaptive_error"] < out["best_fixed_error"]
    return out.reset_index()


def winners_layout(table: pd.DataFrame) -> pd.DataFrame:
    """Tables 3, 8 as printed: rows (dataset, K, metric), the correct winners per method."""
    wide = table.pivot(index=["dataset", "k", "metric"], columns="method", values="correct")
    wide = wide[list(dict.fromkeys(table["method"]))]
    return wide.loc[list(dict.fromkeys(zip(table["dataset"], table["k"], table["metric"], strict=True)))]


def frontier_savings(table: pd.DataFrame, n_max: Mapping[str, int]) -> pd.DataFrame:
    """For each (dataset, model, metric): the adaptive MLE at the dataset's n_max (items per user
    and error) and the smallest fixed n whose MLE is at least as accurate (``<NA>`` if none of
    the frontier's sizes is), with ``items_ratio`` = that n / the adaptive items per user."""
    keys = ["dataset", "model", "metric"]
    adaptive = table[(table["sampling"] == "adaptive") & (table["sample_size"] == table["dataset"].map(n_max))]
    adaptive = adaptive[[*keys, "items_per_user", "mean"]].rename(
        columns={"items_per_user": "adaptive_items", "mean": "adaptive_error"})
    fixed = table[table["sampling"] == "fixed"].merge(adaptive, on=keys)
    matching = fixed[fixed["mean"] <= fixed["adaptive_error"]].groupby(keys, sort=False)["sample_size"].min()
    out = adaptive.merge(matching.rename("fixed_n_as_accurate").reset_index(), on=keys, how="left")
    out["fixed_n_as_accurate"] = out["fixed_n_as_accurate"].astype("Int64")
    out["items_ratio"] = out["fixed_n_as_accurate"].astype("Float64") / out["adaptive_items"]
    return out


# ----------------------------------------------------------------------------- notebook 04's runs


#: columns (besides the dataset) that identify one reused row of each table of notebook 04
_EXTRA = {"relative_error": ["model", "estimator", "metric"], "winners": ["estimator", "metric", "k"]}


def _reused(config: Mapping, root: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixed-size rows of the datasets in ``fixed_reused`` from notebook 04's tables, in the
    layouts of ``fixed_vs_adaptive`` and ``winners``; every expected row must be there once."""
    def select(frame, name, metrics, extra):
        frame = frame.assign(wanted=frame["dataset"].map(config["fixed_sample_size"]))
        sel = frame[frame["dataset"].isin(config["fixed_reused"]) & (frame["protocol"] == config["protocol"])
                    & (frame["scheme"] == config["scheme"]) & (frame["sample_size"] == frame["wanted"])
                    & frame["estimator"].isin(config["fixed_estimators"]) & frame["metric"].isin(metrics)]
        want = pd.MultiIndex.from_tuples(
            [(d, *rest) for d in config["fixed_reused"] for rest in extra(d)], names=["dataset", *_EXTRA[name]])
        have = sel.set_index(["dataset", *_EXTRA[name]]).index
        missing = want.difference(have)
        if len(missing) or have.duplicated().any():
            problem = f"lacks {len(missing)} rows, e.g. {list(missing[:3])}" if len(missing) else "has duplicate rows"
            raise ValueError(
                f"results/tables/{FIXED_SOURCE}/{name}.csv {problem} (protocol {config['protocol']}, scheme "
                f"{config['scheme']}, n = fixed_sample_size): run notebook 04 with these settings, or remove the "
                "datasets from adaptive_sampling.fixed_reused to compute their fixed-size runs here")
        return sel.rename(columns={"estimator": "method"})

    estimators, metrics = config["fixed_estimators"], config["metrics"]
    errors = select(read_table(FIXED_SOURCE, "relative_error", root), "relative_error", metrics,
                    lambda d: [(m, e, x) for m in config["datasets"][d] for e in estimators for x in metrics])
    wins = select(read_table(FIXED_SOURCE, "winners", root), "winners", config["winner_metrics"],
                  lambda d: [(e, x, k) for e in estimators for x in config["winner_metrics"] for k in config["winner_ks"]])
    wins = wins[wins["k"].isin(config["winner_ks"])]
    return errors.assign(mean_sample_size=errors["sample_size"].astype(np.float64)), wins


# ----------------------------------------------------------------------------- all tables


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 06 (see the module docstring) from the runs of all chunks, the
    global ranks and, for ``fixed_reused`` datasets, notebook 04's tables. Nothing here is
    random (``seed`` made the runs)."""
    config = _checked(config)
    ranks = {(c["dataset"], c["model"]): read_model_ranks(c["dataset"], c["model"], c["protocol"], root)
             for c in chunks(config)}
    draw_scheme = STUDY_SCHEMES[config["scheme"]][0]
    blind, costs = [], []
    for (dataset, model), frame in ranks.items():
        R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
        n = config["blind_spot_sample_size"]
        pmf = expected_sampled_rank_pmf(R, N, n, draw_scheme)
        blind.append(pd.DataFrame({"dataset": dataset, "model": model, "sampled_rank": np.arange(1, n + 1),
                                   "probability": pmf}))
        costs.append(cost_curve(R, N, config["n0"], draw_scheme).assign(dataset=dataset, model=model))
    mean_items = {d: float(np.mean([ranks[(d, m)]["n_candidates"].mean() for m in models]))
                  for d, models in config["datasets"].items()}
    summary = summarize_errors(repeat_errors(runs, config["metrics"], config["max_k"]))
    reused_errors, reused_winners = _reused(config, root) if config["fixed_reused"] else (None, None)
    setting = {"protocol": config["protocol"], "scheme": config["scheme"]}
    blind = pd.concat(blind, ignore_index=True)
    costs = pd.concat(costs, ignore_index=True)
    return {
        "blind_spot_sampled_ranks": _front(blind, {**setting, "sample_size": config["blind_spot_sample_size"]}),
        "relative_error_by_k": relative_error_by_k(runs, config),
        "adaptive_sizes": adaptive_sizes(runs, ranks, config),
        "sampling_cost": _front(costs, {**setting, "n0": config["n0"]}),
        "fixed_vs_adaptive": fixed_vs_adaptive(summary, config, reused_errors),
        "winners": winners(runs, config, reused_winners),
        "frontier": frontier(summary, mean_items, config),
    }


def _sampling(estimator: pd.Series) -> np.ndarray:
    return np.where(estimator == "adaptive_mle", "adaptive", "fixed")


def _front(frame: pd.DataFrame, keys: Mapping) -> pd.DataFrame:
    """``frame`` with dataset and model first, then the setting columns ``keys``."""
    out = frame[["dataset", "model", *[c for c in frame.columns if c not in ("dataset", "model")]]]
    for i, (name, value) in enumerate(keys.items()):
        out.insert(2 + i, name, value)
    return out


def _ordered(frame: pd.DataFrame, config: Mapping, columns: list[str]) -> pd.DataFrame:
    """Rows sorted by dataset and model in the order of the configuration, then by ``columns``
    (metrics and methods in their configured order)."""
    order = {"dataset": list(config["datasets"]),
             "model": list(dict.fromkeys(m for models in config["datasets"].values() for m in models)),
             "metric": list(dict.fromkeys([*config["metrics"], *config["winner_metrics"]])),
             "method": [*config["fixed_estimators"], "mle", "adaptive_mle"]}
    keys = [c for c in ("dataset", "model") if c in frame.columns] + columns

    def rank(series: pd.Series) -> pd.Series:
        if series.name in order:
            return series.map({v: i for i, v in enumerate(order[series.name])})
        return series

    return frame.sort_values(keys, key=rank, kind="stable").reset_index(drop=True)
