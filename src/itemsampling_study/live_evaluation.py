"""Notebook 06, live model: adaptive evaluation of a trained model against its full ranking.

Li et al. (AAAI 2023, §4) run Algorithm 1 on simulated sampled ranks; here it runs against the
models themselves. For each model of ``adaptive_sampling.live`` on its dataset:

* the model is loaded as ``itemsampling train`` left it
  (:func:`~itemsampling.models.trained.load_trained`, the code path of ``itemsampling
  evaluate-adaptive --model-dir``: its saved state, or a refit with the hyper-parameters and
  seed of the committed ``train.json``), with ``fit_threads`` BLAS threads — those the training
  rule used: EASE's inverse changes in its last bits with the number of threads, and a few
  near-ties of its scores with it;
* **full ranking**: :func:`~itemsampling.ranks.global_ranks` scores every item for every test
  user (M × N scores) and ranks the held-out items under ``protocol``; the ranks must be the
  committed ``results/ranks/<dataset>/<model>/<protocol>.parquet`` within the rounding of other
  BLAS kernels (:mod:`itemsampling_study.refits`), else the study stops; the exact metrics
  follow (:func:`~itemsampling.metrics.global_metrics`). On a machine whose OpenBLAS picks other
  kernels the refit is the same model computed in other rounding, and the tables move by as much;
* **adaptive evaluation**: :func:`~itemsampling.adaptive_evaluation.evaluate_adaptive` runs
  Algorithm 1 from n_0 up to each ``n_max`` against ``Recommender.score_items``, asking the model
  only for the held-out and the sampled items, and estimates the metrics by adaptive MLE
  (eq. 12); ``repeats`` draws per n_max, each seeded by (seed, dataset, model, protocol, scheme,
  n_max, repeat) (:func:`~itemsampling_study.engine.derive_seed`).

Tables (written by the workflow rule ``live_evaluation`` to ``results/tables/06_adaptive_sampling/``):

* ``live_evaluation`` (deterministic): per model, method (``adaptive`` at each n_max, and
  ``full_ranking``) and metric, the items scored per user (mean over the repeats), their share
  of the M × N scores of a full ranking, and the average relative error over K = 1..``max_k``
  of the estimate against the exact metric of the full ranking (mean and standard deviation
  over the repeats; :func:`~itemsampling_study.adaptive_sampling.repeat_errors`). A full
  ranking is exact: its error is 0 by definition, in its one deterministic run.
* ``live_times``: the wall seconds of every adaptive evaluation (sampling, scoring and the
  estimate; ``scoring_seconds``: the part spent in the model's ``score_items``) and of
  ``repeats`` full rankings (scores, ranks and exact metrics) of each model, with one BLAS
  thread; the only table that differs between runs.

Configuration: ``adaptive_sampling.live`` of ``config/config.yaml``, with the section's
``metrics`` and ``max_k`` (see the schema).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from itemsampling._validation import check_choice
from itemsampling.adaptive_evaluation import evaluate_adaptive
from itemsampling.metrics import global_metrics
from itemsampling.ranks import global_ranks

from .adaptive_sampling import repeat_errors, summarize_errors
from .engine import derive_seed
from .refits import compare_refit_ranks
from .tables import ranks_path, read_model_ranks, train_record_path

__all__ = [
    "EVALUATION_COLUMNS",
    "REPLACEMENT",
    "TIMES_COLUMNS",
    "chunks",
    "compare_with_simulation",
    "evaluate_model",
    "full_ranking",
    "inputs",
    "labels_of",
    "live_summary",
    "load_model",
    "sample_sizes",
    "scores_single_items",
    "study_config",
    "study_tables",
    "train_record_path",
]

#: whether a live evaluation samples with replacement, by scheme (binomial kernel: with; hypergeometric: without)
REPLACEMENT = {"binomial": True, "hypergeometric": False}
#: columns of ``live_evaluation`` (errors as fractions)
EVALUATION_COLUMNS = ("dataset", "model", "protocol", "scheme", "method", "n0", "n_max", "repeats", "items_per_user",
                      "share_of_full_ranking", "metric", "mean", "std")
#: columns of ``live_times``
TIMES_COLUMNS = ("dataset", "model", "protocol", "scheme", "method", "n_max", "repeat", "seconds", "scoring_seconds")


# ----------------------------------------------------------------------------- configuration


def study_config(config: Mapping) -> dict:
    """The parameters of the live evaluation: ``adaptive_sampling.live`` with the section's
    ``metrics`` and ``max_k``."""
    section = config["adaptive_sampling"]
    return {**section["live"], "metrics": list(section["metrics"]), "max_k": section["max_k"]}


def _checked(config: Mapping) -> Mapping:
    """``config`` after the cross-field checks that the schema cannot express."""
    check_choice("scheme", config["scheme"], REPLACEMENT)
    if len(set(config["models"])) != len(config["models"]) or not config["models"]:
        raise ValueError(f"adaptive_sampling.live.models must name distinct models, got {config['models']}")
    small = sorted(n for n in config["n_max"] if n < config["n0"])
    if small:
        raise ValueError(f"adaptive_sampling.live.n_max must be at least n0 = {config['n0']}; got {small}")
    return config


def chunks(config: Mapping) -> list[dict]:
    """None: the live evaluation scores the models themselves, in one step (rule ``live_evaluation``)."""
    _checked(config)
    return []


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set size, which must fit the candidates of (dataset, protocol): the largest n_max."""
    config = _checked(config)
    return {(config["dataset"], config["protocol"]): int(max(config["n_max"]))}


def inputs(config: Mapping) -> list[str]:
    """The committed ``train.json`` (hyper-parameters and seed of the refit) and global ranks
    (the check of the full ranking) of every model."""
    config = _checked(config)
    out = []
    for model in config["models"]:
        out += [str(train_record_path(config["dataset"], model)),
                str(ranks_path(config["dataset"], model, config["protocol"]))]
    return out


# ----------------------------------------------------------------------------- one model


def load_model(dataset, model: str, root: str | Path = ".", fit_threads: int = 1):
    """The model ``itemsampling train`` fitted on ``dataset`` (a loaded
    :class:`~itemsampling.data.dataset.Dataset`) and its ``train.json`` record, loaded or refitted
    by :func:`~itemsampling.models.trained.load_trained` with ``fit_threads`` BLAS threads."""
    from itemsampling.models.trained import load_trained

    with threadpool_limits(fit_threads, user_api="blas"):
        return load_trained(train_record_path(dataset.name, model, root).parent, dataset, progress=False)


def full_ranking(model, dataset, protocol: str, tie_seed: int, metrics, max_k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Full-ranking evaluation: the global ranks of every test user under ``protocol`` (every
    item scored) and the exact metrics at K = 1..``max_k`` (columns ``metric, k, value``)."""
    ranks = global_ranks(model, dataset.test_items, protocols=[protocol], seed=tie_seed, progress=False)[protocol]
    exact = global_metrics(ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy(), metrics, range(1, max_k + 1))
    return ranks, exact


def _timed(function, *args, **kwargs):
    """``function(*args, **kwargs)`` and its wall seconds."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def labels_of(dataset: str, model: str, config: Mapping) -> dict:
    """The labels of a model's rows: dataset, model, protocol, scheme."""
    return {"dataset": dataset, "model": model, "protocol": config["protocol"], "scheme": config["scheme"]}


def evaluate_model(model, record: Mapping, dataset, config: Mapping, seed: int,
                   committed: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Full ranking and adaptive evaluation of one fitted model.

    Parameters
    ----------
    model : Recommender
        The fitted model (:func:`load_model`).
    record : mapping
        Its ``train.json`` record (``model``, ``tie_break_seed``).
    dataset : Dataset
        The loaded dataset it was fitted on.
    config : mapping
        The live parameters (:func:`study_config`).
    seed : int
        Study seed.
    committed : pandas.DataFrame
        The committed global ranks of the model (``read_model_ranks``), which the full ranking must equal.

    Returns
    -------
    runs, times : pandas.DataFrame
        ``runs``: one row per (n_max, repeat, metric, K) in the layout of the study engine
        (``dataset, model, protocol, scheme, sample_size`` (= n_max), ``estimator``
        (``adaptive_mle``), ``repeat, metric, k, estimate``, ``exact`` (the full ranking's
        value) and ``mean_sample_size`` (the items scored per user)); ``times``: the columns
        of :data:`TIMES_COLUMNS`.

    Raises
    ------
    ValueError
        If the full ranking's ranks differ from ``committed``.
    """
    labels = labels_of(dataset.name, record["model"], config)
    tie_seed, metrics, ks = record["tie_break_seed"], config["metrics"], range(1, config["max_k"] + 1)
    times = []
    for repeat in range(config["repeats"]):
        (ranks, exact), seconds = _timed(full_ranking, model, dataset, config["protocol"], tie_seed, metrics,
                                         config["max_k"])
        times.append({**labels, "method": "full_ranking", "n_max": pd.NA, "repeat": repeat, "seconds": seconds,
                      "scoring_seconds": np.nan})
    _check_same_ranks(ranks, committed, labels)
    truth = exact.set_index(["metric", "k"])["value"]
    exclude = dataset.train if config["protocol"] == "unseen" else None
    frames = []
    draws = [(n_max, repeat) for n_max in config["n_max"] for repeat in range(config["repeats"])]
    for n_max, repeat in tqdm(draws, desc=f"live {labels['dataset']} {labels['model']}", disable=None):
        rng = np.random.default_rng(derive_seed(seed, *labels.values(), n_max, repeat))
        scorer = _TimedScorer(model.score_items)
        live, seconds = _timed(evaluate_adaptive, scorer, dataset.test_items, dataset.n_items,
                               n0=config["n0"], n_max=n_max, exclude=exclude, metrics=metrics, ks=ks,
                               replace=REPLACEMENT[config["scheme"]], rng=rng, tie_seed=tie_seed, progress=False)
        times.append({**labels, "method": "adaptive", "n_max": n_max, "repeat": repeat, "seconds": seconds,
                      "scoring_seconds": scorer.seconds})
        estimates = live.estimates
        frames.append(estimates.assign(
            **labels, sample_size=n_max, estimator="adaptive_mle", repeat=repeat,
            exact=truth.reindex(pd.MultiIndex.from_frame(estimates[["metric", "k"]])).to_numpy(),
            mean_sample_size=live.cost.items_scored / live.cost.n_users))
    return pd.concat(frames, ignore_index=True), pd.DataFrame(times, columns=list(TIMES_COLUMNS))


class _TimedScorer:
    """A scorer that adds up the wall seconds spent in it."""

    def __init__(self, score) -> None:
        self.score = score
        self.seconds = 0.0

    def __call__(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        scores, seconds = _timed(self.score, users, items)
        self.seconds += seconds
        return scores


def _check_same_ranks(ranks: pd.DataFrame, committed: pd.DataFrame, labels: Mapping) -> None:
    """The full ranking must give the committed global ranks within rounding
    (:func:`~itemsampling_study.refits.compare_refit_ranks`); how far it landed goes to the log."""
    what = f"{labels['model']} on {labels['dataset']} ({labels['protocol']})"
    columns = ["user", "item", "rank", "n_candidates"]
    print(compare_refit_ranks(ranks[columns], committed[columns], what), file=sys.stderr)


# ----------------------------------------------------------------------------- all tables


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The tables ``live_evaluation`` and ``live_times`` (see the module docstring). ``runs`` is
    unused: the evaluation has no chunks."""
    from itemsampling.data import load_dataset

    config = _checked(config)
    dataset = load_dataset(config["dataset"])
    rows, times = [], []
    for name in config["models"]:
        model, record = load_model(dataset, name, root, config["fit_threads"])
        committed = read_model_ranks(config["dataset"], name, config["protocol"], root)
        model_runs, model_times = evaluate_model(model, record, dataset, config, seed, committed)
        summary = summarize_errors(repeat_errors(model_runs, config["metrics"], config["max_k"]))
        labels = labels_of(config["dataset"], name, config)
        rows += [_adaptive_rows(summary, config, dataset.n_items),
                 _full_ranking_rows(labels, config["metrics"], dataset.n_items)]
        times.append(model_times)
    return {"live_evaluation": pd.concat(rows, ignore_index=True), "live_times": pd.concat(times, ignore_index=True)}


def _adaptive_rows(summary: pd.DataFrame, config: Mapping, n_items: int) -> pd.DataFrame:
    """The summary of the adaptive runs (:func:`summarize_errors`) in the layout of ``live_evaluation``."""
    out = summary.rename(columns={"sample_size": "n_max", "mean_sample_size": "items_per_user"})
    out = out.assign(method="adaptive", n0=config["n0"], share_of_full_ranking=out["items_per_user"] / n_items)
    return out[list(EVALUATION_COLUMNS)].astype({"n0": "Int64", "n_max": "Int64"})


def _full_ranking_rows(labels: Mapping, metrics, n_items: int) -> pd.DataFrame:
    """One row per metric: every item scored for every user; exact, so an error of 0, in one run."""
    out = pd.DataFrame({**labels, "method": "full_ranking", "n0": pd.NA, "n_max": pd.NA, "repeats": 1,
                        "items_per_user": float(n_items), "share_of_full_ranking": 1.0, "metric": list(metrics),
                        "mean": 0.0, "std": 0.0}, index=range(len(metrics)))
    return out[list(EVALUATION_COLUMNS)].astype({"n0": "Int64", "n_max": "Int64"})


# ----------------------------------------------------------------------------- notebook layouts


def scores_single_items(model: str) -> bool:
    """Whether the registry model ``model`` computes the score of a single item on its own
    (overrides ``Recommender._score_items``, as EASE does) rather than scoring every item of the
    user and keeping the requested ones."""
    from itemsampling.models.base import Recommender
    from itemsampling.models.registry import model_class

    return model_class(model)._score_items is not Recommender._score_items


def live_summary(evaluation: pd.DataFrame, times: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, model, method, n_max): items scored per user and their share of
    M × N, the mean relative error of each metric (columns ``error_<metric>``), the median wall
    seconds over the repeats, ``time_ratio`` = that median / the model's median full-ranking
    seconds (< 1: faster than the full ranking) and ``scoring_share``, the median share of an
    adaptive evaluation's time spent in the model (empty for the full ranking)."""
    keys = ["dataset", "model", "protocol", "scheme", "method", "n_max"]
    errors = evaluation.pivot_table(index=keys, columns="metric", values="mean", sort=False, dropna=False)
    errors = errors.dropna(how="all")[list(dict.fromkeys(evaluation["metric"]))].add_prefix("error_")
    costs = evaluation.drop_duplicates(keys).set_index(keys)[["n0", "repeats", "items_per_user",
                                                              "share_of_full_ranking"]]
    grouped = times.assign(scoring_share=times["scoring_seconds"] / times["seconds"]).groupby(
        keys, sort=False, dropna=False)
    out = costs.join(errors).join(grouped[["seconds", "scoring_share"]].median()).reset_index()
    full = out[out["method"] == "full_ranking"].set_index(["dataset", "model"])["seconds"]
    reference = pd.MultiIndex.from_frame(out[["dataset", "model"]])
    out = out.assign(time_ratio=out["seconds"].to_numpy() / full.reindex(reference).to_numpy())
    return out.astype({"n0": "Int64", "n_max": "Int64"})


def compare_with_simulation(evaluation: pd.DataFrame, frontier: pd.DataFrame, n0: int) -> pd.DataFrame:
    """The live adaptive rows beside the simulated ones of the same setting (notebook 06's
    ``frontier``: dataset, model, protocol, scheme, metric and n_max, simulated with the section's
    ``n0``): items per user and mean (std) relative error of each, and ``z`` = the difference of
    the means over its standard error, sqrt(std_live² / repeats_live + std_sim² / repeats_sim).
    Both draw the sampled ranks from the same law (the live model's ranks are the committed ones),
    so ``z`` is a standard-normal-like draw where they agree. Empty without a common setting."""
    keys = ["dataset", "model", "protocol", "scheme", "metric", "n_max"]
    live = evaluation[(evaluation["method"] == "adaptive") & (evaluation["n0"] == n0)]
    simulated = frontier[frontier["sampling"] == "adaptive"].rename(columns={"sample_size": "n_max"})
    columns = ["items_per_user", "mean", "std", "repeats"]
    both = live[[*keys, *columns]].astype({"n_max": "int64"}).merge(
        simulated[[*keys, *columns]], on=keys, suffixes=("_live", "_simulated"))
    se = np.sqrt(both["std_live"] ** 2 / both["repeats_live"] + both["std_simulated"] ** 2 / both["repeats_simulated"])
    return both.assign(z=(both["mean_live"] - both["mean_simulated"]) / se)
