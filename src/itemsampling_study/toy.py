"""The toy example of Krichene & Rendle, KDD 2020 (§3.2, §4.2, Tables 1–2, Figure 2).

Three recommenders A, B and C rank the relevant item of five instances among N = 10,000
items. On the exact metrics C is best for the top-heavy metrics (AP, NDCG, Recall@10) and A for
AUC; on metrics sampled with 99 irrelevant items (a sample set of n = 100) the order changes,
except for AUC, whose sampled version is unbiased (K&R §4.4.1).

:func:`exact_table` reproduces Table 1, :func:`expected_sampled_table` the expectation behind
Table 2 (and, over a range of sample sizes, Figure 2), and :func:`simulated_sampled_table` the
Monte Carlo mean and standard deviation that Table 2 prints.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from itemsampling._validation import as_generator
from itemsampling.metrics import global_metrics, rank_weight
from itemsampling.simulation import expected_sampled_metric, sample_ranks

__all__ = [
    "TOY_METRICS",
    "TOY_N_ITEMS",
    "TOY_RANKS",
    "TOY_SAMPLE_SIZE",
    "exact_table",
    "expected_sampled_table",
    "simulated_sampled_table",
]

#: Number of items N of the toy example (K&R §3.2).
TOY_N_ITEMS = 10_000
#: Sample set size of §4.2: the relevant item plus m = 99 sampled irrelevant items.
TOY_SAMPLE_SIZE = 100
#: Global ranks of the relevant item on the five instances (K&R Table 1, "Predicted Ranks").
TOY_RANKS = {
    "A": (100, 100, 100, 100, 100),
    "B": (40, 40, 8437, 9266, 4482),
    "C": (212, 2, 743, 5342, 1548),
}
#: The (metric, cut-off) columns of Tables 1–2: untruncated AUC, AP and NDCG, and Recall@10.
TOY_METRICS = (("auc", None), ("ap", None), ("ndcg", None), ("recall", 10))


def _column(metric: str, k: int | None) -> str:
    return f"{metric}@{k}" if k is not None else metric


def _table(ranks: dict | None, value: Callable[[np.ndarray, str, int | None], float]) -> pd.DataFrame:
    """One row per recommender of ``ranks`` (default :data:`TOY_RANKS`), one column per metric of
    :data:`TOY_METRICS`, holding ``value(global ranks, metric, k)``."""
    ranks = TOY_RANKS if ranks is None else ranks
    rows = {name: {_column(metric, k): value(np.asarray(r), metric, k) for metric, k in TOY_METRICS}
            for name, r in ranks.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("recommender")


def exact_table(ranks: dict | None = None, n_items: int = TOY_N_ITEMS) -> pd.DataFrame:
    """Exact metrics of each recommender (K&R Table 1), computed with :func:`global_metrics`.

    Parameters
    ----------
    ranks : dict, optional
        Recommender name -> global ranks; defaults to :data:`TOY_RANKS`.
    n_items : int
        Number of items N.

    Returns
    -------
    pandas.DataFrame
        Index ``recommender``, one column per metric of :data:`TOY_METRICS`.
    """
    return _table(ranks, lambda r, metric, k: float(global_metrics(r, n_items, metric, k)["value"].iloc[0]))


def expected_sampled_table(sample_size: int = TOY_SAMPLE_SIZE, scheme: str = "binomial",
                           ranks: dict | None = None, n_items: int = TOY_N_ITEMS) -> pd.DataFrame:
    """Expected sampled metrics of each recommender (K&R eq. 16; the expectation of Table 2).

    Parameters
    ----------
    sample_size : int
        Sample set size n = m + 1.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    ranks : dict, optional
        Recommender name -> global ranks; defaults to :data:`TOY_RANKS`.
    n_items : int
        Number of items N.

    Returns
    -------
    pandas.DataFrame
        Index ``recommender``, one column per metric of :data:`TOY_METRICS`.
    """
    return _table(ranks, lambda r, metric, k: expected_sampled_metric(r, n_items, sample_size, metric, k, scheme))


def simulated_sampled_table(repeats: int = 1000, sample_size: int = TOY_SAMPLE_SIZE, rng=None,
                            scheme: str = "binomial", ranks: dict | None = None,
                            n_items: int = TOY_N_ITEMS) -> pd.DataFrame:
    """Monte Carlo sampled metrics, mean and standard deviation over repeats (K&R Table 2).

    In each repeat every instance gets a fresh sample (:func:`sample_ranks`) and the metric is
    computed on the sample set of n items (AUC with n in place of N), then averaged over the
    instances; the table reports the mean and the standard deviation of that average.

    Parameters
    ----------
    repeats : int
        Number of repetitions (1,000 in the paper).
    sample_size : int
        Sample set size n = m + 1.
    rng : numpy.random.Generator, int or None
        Generator or seed.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    ranks : dict, optional
        Recommender name -> global ranks; defaults to :data:`TOY_RANKS`.
    n_items : int
        Number of items N.

    Returns
    -------
    pandas.DataFrame
        Index ``recommender``; two column levels, (``mean`` | ``std``, metric).
    """
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 2:
        raise ValueError(f"repeats must be an integer >= 2, got {repeats!r}")
    ranks = TOY_RANKS if ranks is None else ranks
    gen = as_generator(rng)
    means, stds = {}, {}
    for name, r in ranks.items():
        r = np.asarray(r)
        sampled = sample_ranks(np.tile(r, repeats), n_items, sample_size, gen, scheme).reshape(repeats, r.size)
        means[name], stds[name] = {}, {}
        for metric, k in TOY_METRICS:
            per_repeat = rank_weight(metric, sampled, sample_size, k).mean(axis=1)
            means[name][_column(metric, k)] = per_repeat.mean()
            stds[name][_column(metric, k)] = per_repeat.std(ddof=1)
    return pd.concat(
        {
            "mean": pd.DataFrame.from_dict(means, orient="index"),
            "std": pd.DataFrame.from_dict(stds, orient="index"),
        },
        axis=1,
    ).rename_axis("recommender")
