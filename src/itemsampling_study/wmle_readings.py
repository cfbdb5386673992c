"""Notebook 04: the readings of WMLE (Jin et al., AAAI 2021, eq. 22-23), rule ``wmle_readings``.

A cheap step on the committed global ranks and on simulated ranks, with few repeats; it writes
the table ``wmle_readings`` to notebook 04's folder and does not touch the runs of notebook 04
(:mod:`.estimator_accuracy`).

AAAI'21 maximises the weighted log-likelihood Σ_u w(r_u) log Σ_R π_R p(r_u | θ_R) (eq. 22) by
the EM step of eq. 23, with w(r) = M_NDCG(r/C), C = 10 ("C > 1 is a constant to help reduce the
decay rate"), and reports WMLE estimates 1-3 % above MLE (Tables 2-3). The text leaves three
things open, and each *reading* fixes them (:data:`READINGS`):

* the weight: M_NDCG(r/C) = 1/log2(1 + r/C) as printed (``as_printed``), the AP weight C/r that
  the paper also names (``ap_weight``), NDCG at the integer position ⌈r/C⌉ (``ceil``) or at
  max(1, r/C) (``at_least_one``: a metric function never exceeds its value at rank 1), and
  M_NDCG(C·r) (``times_c``: the reading under which a larger C does reduce the decay of
  w(r)/w(1) over r = 1..n; under r/C a larger C *increases* it);
* the normalisation of eq. 23: by Σ_r P̃(r) w(r) as printed, by Σ_{r=1}^n w(r) (``weight_sum``),
  or none (``unnormalised``). The posterior of the E-step is normalised by Σ_j π_j p(r | θ_j),
  so it does not change when π is scaled; every EM step therefore gives the printed iterate
  times the same constant (Σ_r P̃(r) w(r) / Σ_r w(r), or Σ_r P̃(r) w(r)), and so does the
  estimate of every metric;
* the number of EM steps: 100 from the uniform start (the package's default, that of the
  AAAI'23 code) or ``converged`` (up to ``converged_steps`` steps).

Every reading is compared with MLE (w = 1) on the same draws: ``gap`` = (mean WMLE − mean MLE)
/ exact per (dataset, model, metric@K), the quantity that the paper's Tables 2-3 show as 1-3 %.
Sources: ``ranks`` (the committed global ranks under ``all``, drawn as notebook 04 draws its
first repeats: same seed and labels), ``simulated_paper`` and ``simulated_ours``: M users with
global ranks R = ⌈N U^a⌉, U uniform, whose Recall@K = (K/N)^(1/a) is the paper's exact Recall@K
(AAAI'21 Tables 2-3) or ours, over our N and M. The simulated sources separate the level of the
metric from everything else about our models.

Configuration: ``repeats``, ``sample_size`` and ``wmle`` of section ``estimator_checks`` of
``config/config.yaml``, with the models of ``estimator_accuracy``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling._validation import check_choice
from itemsampling.distributions import DEFAULT_C
from itemsampling.em import DEFAULT_TOL, EMProblem, em_mixture_weights_many
from itemsampling.kernels import kernel_columns
from itemsampling.metrics import global_metrics, rank_weight

from .engine import derive_seed, draw_sampled_ranks
from .paper import paper_merge, paper_table
from .tables import ranks_path, read_model_ranks

__all__ = ["COLUMNS", "READINGS", "SOURCES", "Reading", "chunks", "inputs", "paper_gaps", "power_ranks",
           "reading_estimates", "reading_summary", "readings_of_draws", "sample_sizes", "study_config", "study_tables", "wmle_readings"]

METRICS = ("recall", "ndcg", "ap")
#: the sources of ranks
SOURCES = ("ranks", "simulated_paper", "simulated_ours")
COLUMNS = ("source", "dataset", "model", "reading", "metric", "k", "level", "exact", "mean", "std", "repeats",
           "mle_mean", "gap")


def _ndcg(x):
    return 1.0 / np.log2(1.0 + np.asarray(x, dtype=np.float64))


@dataclass(frozen=True)
class Reading:
    """One reading of AAAI'21 eq. 22-23: the weight w(r) of a sampled rank (given r, n and C),
    how eq. 23 is normalised, and the number of EM steps (None: the configured default)."""

    weight: Callable[[np.ndarray, int, float], np.ndarray]
    normalisation: str = "printed"
    steps: str = "default"
    text: str = ""


#: the readings, by name; ``mle`` is the baseline (w = 1)
READINGS: dict[str, Reading] = {
    "mle": Reading(lambda r, n, c: np.ones_like(r, dtype=np.float64), text="w(r) = 1 (MLE, eq. 19-21)"),
    "as_printed": Reading(lambda r, n, c: _ndcg(r / c), text="w(r) = 1/log2(1 + r/C), eq. 23 as printed"),
    "ap_weight": Reading(lambda r, n, c: c / np.asarray(r, dtype=np.float64), text="w(r) = M_AP(r/C) = C/r"),
    "ceil": Reading(lambda r, n, c: _ndcg(np.ceil(r / c)), text="w(r) = 1/log2(1 + ⌈r/C⌉)"),
    "at_least_one": Reading(lambda r, n, c: _ndcg(np.maximum(1.0, r / c)), text="w(r) = 1/log2(1 + max(1, r/C))"),
    "times_c": Reading(lambda r, n, c: _ndcg(c * np.asarray(r, dtype=np.float64)), text="w(r) = 1/log2(1 + C·r)"),
    "weight_sum": Reading(lambda r, n, c: _ndcg(r / c), normalisation="weight_sum",
                          text="printed w; eq. 23 divided by Σ_{r=1}^n w(r)"),
    "unnormalised": Reading(lambda r, n, c: _ndcg(r / c), normalisation="none",
                            text="printed w; eq. 23 without its denominator"),
    "converged": Reading(lambda r, n, c: _ndcg(r / c), steps="converged", text="printed w and eq. 23, EM run to convergence"),
}
_NORMALISATIONS = ("printed", "weight_sum", "none")


# ----------------------------------------------------------------------------- configuration


def study_config(config: Mapping) -> dict:
    """``repeats``, ``sample_size`` and ``wmle`` of section ``estimator_checks``, with the models
    of ``estimator_accuracy``."""
    section = config["estimator_checks"]
    return {"repeats": section["repeats"], "sample_size": section["sample_size"], **section["wmle"],
            "models": dict(config["estimator_accuracy"]["models"])}


def _checked(config: Mapping) -> Mapping:
    for name in config["readings"]:
        check_choice("WMLE reading", name, READINGS)
    for name in config["sources"]:
        check_choice("WMLE source", name, SOURCES)
    if "mle" not in config["readings"]:
        raise ValueError("estimator_checks.wmle.readings must include mle, the baseline of every gap")
    return config


def chunks(config: Mapping) -> list[dict]:
    """None: the readings are computed in one step (rule ``wmle_readings``)."""
    _checked(config)
    return []


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The sample size n, which must fit the candidates of every dataset (protocol ``all``)."""
    config = _checked(config)
    return {(d, "all"): int(config["sample_size"]) for d in config["datasets"]}


def inputs(config: Mapping) -> list[str]:
    """The committed global ranks (protocol ``all``) that the draws come from."""
    config = _checked(config)
    return [str(ranks_path(d, m, "all")) for d in config["datasets"] for m in config["models"].values()]


# ----------------------------------------------------------------------------- WMLE


def reading_estimates(sampled_ranks, n_items: int, sample_size: int, readings: Sequence[str], targets,
                      *, c: float = DEFAULT_C, max_iter: int = 100, converged_steps: int = 2000) -> np.ndarray:
    """Metric estimates Σ_R P̂(R) 1{R ≤ K} M(R) (AAAI'21 eq. 14) of WMLE under each reading.

    The EM runs of all readings share one kernel (the columns P(r | R) of the observed r,
    :func:`~itemsampling.kernels.kernel_columns`) and start from the uniform π; each runs eq. 23
    as printed with the reading's w, and the other normalisations scale the estimate (see the
    module docstring).

    Parameters
    ----------
    sampled_ranks : array_like of int
        Sampled ranks r_u in 1..n, one N for all users.
    n_items, sample_size : int
        N and n.
    readings : sequence of str
        Names of :data:`READINGS`.
    targets : sequence of (str, int)
        (metric, K) pairs.
    c : float
        The constant C of the weights.
    max_iter : int
        EM steps of every reading but ``converged``.
    converged_steps : int
        Largest number of EM steps of ``converged`` (it stops earlier at the package's tolerance).

    Returns
    -------
    numpy.ndarray
        ``(len(readings), len(targets))`` estimates.
    """
    return readings_of_draws([sampled_ranks], n_items, sample_size, readings, targets, c=c, max_iter=max_iter,
                             converged_steps=converged_steps)[0]


def readings_of_draws(draws: Sequence, n_items: int, sample_size: int, readings: Sequence[str], targets, *,
                      c: float = DEFAULT_C, max_iter: int = 100, converged_steps: int = 2000) -> np.ndarray:
    """:func:`reading_estimates` of several draws of sampled ranks, computed together: the EM
    runs of every (draw, reading) advance as the columns of one matrix on the kernel columns of
    the ranks observed in any draw (:func:`~itemsampling.em.em_mixture_weights_many` with matrix products; each
    equals its run alone up to rounding).

    Returns
    -------
    numpy.ndarray
        ``(len(draws), len(readings), len(targets))`` estimates.
    """
    draws = [np.asarray(draw, dtype=np.int64) for draw in draws]
    ranks = np.unique(np.concatenate(draws))
    kernel = kernel_columns(n_items, sample_size, ranks)
    all_ranks = np.arange(1, sample_size + 1, dtype=np.float64)
    problems, scales = [], []
    for draw in draws:
        counts = np.bincount(np.searchsorted(ranks, draw), minlength=ranks.size).astype(np.float64)
        p_tilde = counts / counts.sum()
        for name in readings:
            reading = READINGS[check_choice("WMLE reading", name, READINGS)]
            w = reading.weight(ranks.astype(np.float64), sample_size, c)
            mass = float(np.sum(p_tilde[counts > 0] * w[counts > 0]))
            norm = check_choice("normalisation", reading.normalisation, _NORMALISATIONS)
            scales.append({"printed": 1.0, "none": mass,
                           "weight_sum": mass / float(np.sum(reading.weight(all_ranks, sample_size, c)))}[norm])
            converged = reading.steps == "converged"
            problems.append(EMProblem(counts * w, max_iter=converged_steps if converged else max_iter,
                                      tol=1e-12 if converged else DEFAULT_TOL))
    fits = em_mixture_weights_many(kernel, problems, products="matrix")
    R = np.arange(1, n_items + 1)
    metric_weights = np.stack([rank_weight(metric, R, n_items, k) for metric, k in targets], axis=1)
    values = np.stack([scale * (fit.weights @ metric_weights) for fit, scale in zip(fits, scales, strict=True)])
    return values.reshape(len(draws), len(readings), len(targets))


def power_ranks(recall_at_k: float, k: int, n_items: int, n_users: int, rng: np.random.Generator) -> np.ndarray:
    """Global ranks R = ⌈N U^a⌉ of ``n_users`` users, U uniform on (0, 1], whose expected Recall@K
    is ``recall_at_k``: P(R ≤ K) = (K/N)^(1/a), so 1/a = log(recall) / log(K/N)."""
    if not 0 < recall_at_k < 1 or not 1 <= k < n_items:
        raise ValueError(f"need 0 < recall_at_k < 1 and 1 <= k < N, got {recall_at_k}, {k}, {n_items}")
    inv_a = np.log(recall_at_k) / np.log(k / n_items)
    u = 1.0 - rng.random(n_users)  # in (0, 1]
    return np.clip(np.ceil(n_items * u ** (1.0 / inv_a)), 1, n_items).astype(np.int64)


def _gaps(rows: pd.DataFrame) -> pd.DataFrame:
    keys = ["source", "dataset", "model", "reading", "metric", "k", "level"]
    out = rows.groupby(keys, sort=False).agg(exact=("exact", "first"), mean=("estimate", "mean"),
                                             std=("estimate", "std"), repeats=("estimate", "size")).reset_index()
    mle = out[out["reading"] == "mle"][["source", "dataset", "model", "metric", "k", "mean"]]
    out = out.merge(mle.rename(columns={"mean": "mle_mean"}), on=["source", "dataset", "model", "metric", "k"],
                    how="left", validate="many_to_one")
    out["gap"] = (out["mean"] - out["mle_mean"]) / out["exact"]
    return out[list(COLUMNS)]


def wmle_readings(config: Mapping, seed: int, root: str | Path = ".") -> pd.DataFrame:
    """The table ``wmle_readings`` (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`: per source, dataset, model, reading and metric@K, the exact value,
        the mean and standard deviation (ddof = 1) of the estimates over the repeats, MLE's mean
        and the gap (mean − MLE mean) / exact; ``level`` is the Recall@K the ranks were made
        with (the exact one for ``ranks``).
    """
    config = _checked(config)
    section, n, repeats = config, int(config["sample_size"]), int(config["repeats"])
    k = int(section["k"])
    targets = [(metric, k) for metric in METRICS]
    paper = paper_table("jin2021aaai_metrics_at_10")
    paper = paper[(paper["method"] == "exact") & (paper["metric"] == "recall") & (paper["k"] == k)]
    rows = []
    for dataset in section["datasets"]:
        for model in config["models"].values():
            ranks = read_model_ranks(dataset, model, "all", root)
            R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
            if (N != N[0]).any():
                raise ValueError(f"{dataset}/{model}: the readings need one N for all users (protocol all), got "
                                 f"N_u from {N.min()} to {N.max()}")
            n_items, n_users = int(N[0]), len(R)
            ours = float(np.mean(R <= k))
            theirs = paper[(paper["dataset"] == dataset) & (paper["model"] == model)]["paper_percent"]
            levels = {"ranks": ours, "simulated_ours": ours,
                      "simulated_paper": float(theirs.iloc[0]) / 100 if len(theirs) else np.nan}
            for source in section["sources"]:
                if not np.isfinite(levels[source]):
                    continue
                labels = {"dataset": dataset, "model": model, "protocol": "all"}
                if source == "ranks":
                    global_ranks = R
                else:
                    rng = np.random.default_rng(derive_seed(seed, "wmle", source, dataset, model))
                    global_ranks = power_ranks(levels[source], k, n_items, n_users, rng)
                exact = [float(global_metrics(global_ranks, n_items, metric, k)["value"].iloc[0])
                         for metric, _ in targets]
                draws = [draw_sampled_ranks(global_ranks, n_items, n, seed=seed,
                                            labels={**labels, "protocol": source if source != "ranks" else "all"},
                                            scheme="binomial", repeat=repeat) for repeat in range(repeats)]
                for values in readings_of_draws(draws, n_items, n, section["readings"], targets, c=section["c"],
                                                converged_steps=section["converged_steps"]):
                    for name, row in zip(section["readings"], values, strict=True):
                        for (metric, _), estimate, truth in zip(targets, row, exact, strict=True):
                            rows.append({"source": source, "dataset": dataset, "model": model, "reading": name,
                                         "metric": metric, "k": k, "level": levels[source], "exact": truth,
                                         "estimate": float(estimate)})
    return _gaps(pd.DataFrame(rows))


def paper_gaps(datasets: Sequence[str] | None = None) -> pd.DataFrame:
    """The paper's WMLE gap (WMLE − MLE) / exact at K = 10 per dataset, model and metric
    (AAAI'21 Tables 2-3, 6-7, ``jin2021aaai_metrics_at_10``)."""
    paper = paper_table("jin2021aaai_metrics_at_10")
    if datasets is not None:
        paper = paper[paper["dataset"].isin(list(datasets))]
    wide = paper.pivot_table(index=["dataset", "model", "metric", "k"], columns="method", values="paper_percent",
                             aggfunc="first").reindex(columns=["exact", "mle", "wmle"])
    out = ((wide["wmle"] - wide["mle"]) / wide["exact"]).rename("paper_gap").reset_index()
    return out.assign(k=out["k"].astype(np.int64))


def reading_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per source and reading: the mean gap over the datasets, models and metrics of
    ``wmle_readings``, next to the paper's mean gap over the same (dataset, model, metric), and
    their ratio.

    Returns
    -------
    pandas.DataFrame
        ``source, reading, gap, paper_gap, ratio, cases``.
    """
    rows = table[table["reading"] != "mle"]
    datasets = sorted(set(rows["dataset"]))
    joined = paper_merge(rows.assign(k=rows["k"].astype(np.int64)), paper_gaps(datasets),
                         ["dataset", "model", "metric", "k"], scope={"dataset": datasets}, how="left")
    out = joined.groupby(["source", "reading"], sort=False).agg(
        gap=("gap", "mean"), paper_gap=("paper_gap", "mean"), cases=("gap", "size")).reset_index()
    out.insert(4, "ratio", out["gap"] / out["paper_gap"])
    return out


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The table ``wmle_readings`` (``runs`` is unused: no chunks)."""
    return {"wmle_readings": wmle_readings(config, seed, root)}
