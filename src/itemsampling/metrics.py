"""Top-K metrics of one held-out item as weight functions of its global rank.

With a single relevant item per user at global rank R among N items, every common top-K
metric is ``1{R <= K} * M(R)`` for a weight function ``M`` (Krichene & Rendle, KDD 2020, §2;
Jin et al., AAAI 2021, eq. 1):

========== ================================ ==================================
name        M(R)                             aliases
========== ================================ ==================================
recall      1                                ``hr``, ``hit_ratio``, ``hitrate``
precision   1 / K
ndcg        1 / log2(R + 1)
ap          1 / R  (reciprocal rank)         ``rr``, ``mrr``
auc         (N - R) / (N - 1)
========== ================================ ==================================

A metric of a recommender is the mean of the per-user value over the M test users.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ._validation import check_choice, check_n_items, check_ranks, check_user_items

__all__ = ["METRICS", "canonical_metric", "global_metrics", "metric_weights", "rank_weight"]

METRICS = ("recall", "precision", "ndcg", "ap", "auc")
_ALIASES = {"hr": "recall", "hit_ratio": "recall", "hitrate": "recall", "rr": "ap", "mrr": "ap"}


def canonical_metric(metric: str) -> str:
    """Return the canonical name of ``metric`` (``"hr"`` -> ``"recall"``, ``"mrr"`` -> ``"ap"``)."""
    name = metric.lower() if isinstance(metric, str) else metric
    name = _ALIASES.get(name, name)
    return check_choice("metric", name, METRICS)


def _check_cutoff(k) -> int | None:
    """Return the cut-off K as ``int`` (``None`` = no cut-off); anything else is a ValueError.

    Whole floats such as ``10.0`` are rejected too, with the same message as
    :func:`itemsampling.estimate`, so that a cut-off is never silently rounded.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"cut-offs k must be positive integers or None (no cut-off), got {k!r}")
    return None if k is None else int(k)


def _check_k(k, metric: str) -> int | None:
    if k is None and metric == "precision":
        raise ValueError("precision needs a cut-off k (precision@K = 1{R <= K} / K)")
    return _check_cutoff(k)


def _cutoff_list(ks) -> list[int | None]:
    """One cut-off or an iterable of them, checked, as a non-empty list."""
    ks = [ks] if ks is None or np.isscalar(ks) else list(ks)
    if not ks:
        raise ValueError("metrics and ks must each name at least one value")
    return [_check_cutoff(k) for k in ks]


def rank_weight(metric: str, ranks, n_items, k: int | None = None) -> np.ndarray:
    """Value of ``metric@k`` for items at global ranks ``ranks`` (the weight ``1{R<=K} M(R)``).

    Parameters
    ----------
    metric : str
        One of :data:`METRICS` or an alias.
    ranks : array_like of int
        1-based global ranks R.
    n_items : int or array_like of int
        Number of candidate items N (scalar, or one per rank); used by AUC only.
    k : int or None
        Cut-off K; ``None`` means no cut-off.

    Returns
    -------
    numpy.ndarray
        float64 array shaped like ``ranks``.
    """
    metric = canonical_metric(metric)
    k = _check_k(k, metric)
    r = np.asarray(ranks, dtype=np.float64)
    if metric == "recall":
        w = np.ones_like(r)
    elif metric == "precision":
        w = np.full_like(r, 1.0 / k)
    elif metric == "ndcg":
        w = 1.0 / np.log2(r + 1.0)
    elif metric == "ap":
        w = 1.0 / r
    else:  # auc
        n = np.asarray(n_items, dtype=np.float64)
        w = (n - r) / (n - 1.0)
    if k is not None:
        w = np.where(r <= k, w, 0.0)
    return w


def metric_weights(metric: str, k: int | None, n_items: int) -> np.ndarray:
    """Weights ``1{R <= K} M(R)`` for every global rank R = 1..N.

    Parameters
    ----------
    metric : str
        One of ``recall`` (= hit ratio), ``precision``, ``ndcg``, ``ap`` (= reciprocal rank),
        ``auc``.
    k : int or None
        Cut-off K, a positive integer; ``None`` for the untruncated metric (not allowed for
        precision).
    n_items : int
        Number of items N.

    Returns
    -------
    numpy.ndarray
        Shape ``(N,)``; entry ``R - 1`` is the metric value of an item at global rank R.

    Examples
    --------
    >>> metric_weights("ndcg", 2, 4)
    array([1.        , 0.63092975, 0.        , 0.        ])
    """
    n_items = check_n_items(n_items)
    return rank_weight(metric, np.arange(1, n_items + 1), n_items, k)


def global_metrics(
    global_ranks: ArrayLike,
    n_items: int | ArrayLike,
    metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
    ks: Iterable[int | None] | int | None = range(1, 51),
) -> pd.DataFrame:
    """Exact metrics from global ranks, for many metrics and every cut-off at once.

    ``value(metric, K) = (1/M) Σ_u 1{R_u <= K} M(R_u)``. All cut-offs are read from one
    cumulative sum over ranks, so a whole range of K costs one pass over the users.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global rank R_u of each user's held-out item.
    n_items : int or array_like of int
        Number of candidate items: one N for all users, or N_u per user, as many as ranks
        (the ``unseen`` protocol ranks among the user's unseen items only).
    metrics : str or sequence of str
        Metric names (see :func:`metric_weights`).
    ks : int, None or iterable
        Cut-offs: positive integers (a whole float such as ``10.0`` is rejected, as by
        :func:`itemsampling.estimate`); ``None`` means no cut-off.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k`` (nullable integer; missing for no cut-off) and ``value``.
    """
    ranks = np.asarray(global_ranks)
    n_arr = check_user_items(n_items, ranks.size)
    ranks = check_ranks(ranks, n_arr, name="global_ranks")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise ValueError("metrics and ks must each name at least one value")
    ks = _cutoff_list(ks)
    kmax = max((k for k in ks if k is not None), default=0)
    rows = []
    for metric in metrics:
        name = canonical_metric(metric)
        for k in ks:
            _check_k(k, name)
        # untruncated per-user value; precision uses M(R) = 1 and divides by K below
        base = rank_weight("recall" if name == "precision" else name, ranks, n_arr, None)
        cum = np.cumsum(np.bincount(np.minimum(ranks, kmax + 1), weights=base, minlength=kmax + 2))
        total = base.sum()
        for k in ks:
            value = total if k is None else cum[k] / (k if name == "precision" else 1)
            rows.append((name, k, value / ranks.size))
    out = pd.DataFrame(rows, columns=["metric", "k", "value"])
    out["k"] = out["k"].astype("Int64")
    return out
