"""Metrics with several held-out items per user, exact and estimated from sampled ranks.

Let user u have P_u relevant (held-out) items; for each, R_ui is its rank among the non-relevant
candidates (1 + the number of non-relevant items scored above it). Sorting a user's positives by
R_ui, the j-th (0-based) sits at position R_u(j) + j in the full ranking, since the j positives
before it are above it as well. The metrics follow RecBole (``recbole/evaluator/metrics.py``):

- ``recall``: Recall@K = |top-K ∩ relevant| / P_u;
- ``ndcg``: NDCG@K = Σ_{hits at position i ≤ K} 1/log2(i+1) / Σ_{i=1}^{min(P_u,K)} 1/log2(i+1);
- ``hit``: HR@K = 1{|top-K ∩ relevant| > 0};

and RecPack (``recpack/metrics/recall.py``, ``CalibratedRecallK``):

- ``calibrated_recall``: |top-K ∩ relevant| / min(K, P_u).

RecPack's ``RecallK`` is RecBole's ``recall``; its ``NDCGK`` normalises by the same ideal DCG.
Each metric is averaged over users (not over positives).

Estimates: each positive's sampled rank r_ui (among its own n-1 negatives — RecBole's "N
negatives per positive" — or among negatives shared by the user's positives, other positives
excluded) gives R̂_ui = 1 + (N-1)(r_ui-1)/(n-1) (KDD'20 eq. 20; or a Horvitz–Thompson rank,
:mod:`itemsampling.nonuniform`), and the metrics are computed at R̂_ui.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["MULTI_METRICS", "estimate_multi_positive", "multi_positive_metrics", "positions"]

MULTI_METRICS = ("recall", "ndcg", "hit", "calibrated_recall")


def positions(negative_ranks: ArrayLike, users: ArrayLike) -> np.ndarray:
    """Full-ranking position of each positive: R_i + #(positives of the same user placed before i
    when sorted by R, ties in input order)."""
    ranks = np.asarray(negative_ranks, dtype=float)
    users = np.asarray(users)
    if ranks.shape != users.shape or ranks.ndim != 1:
        raise ValueError("negative_ranks and users must be 1-D arrays of the same length")
    if np.any(ranks < 1):
        raise ValueError("ranks are 1-based: every rank must be >= 1")
    _, uid = np.unique(users, return_inverse=True)
    order = np.lexsort((np.arange(ranks.size), ranks, uid))
    starts = np.r_[0, np.flatnonzero(np.diff(uid[order])) + 1]
    within = np.arange(ranks.size) - np.repeat(starts, np.diff(np.r_[starts, ranks.size]))
    pos = np.empty(ranks.size)
    pos[order] = ranks[order] + within
    return pos


def multi_positive_metrics(negative_ranks: ArrayLike, users: ArrayLike, metrics: Sequence[str] | str = MULTI_METRICS,
                           ks: Iterable[int] | int = (1, 5, 10, 20, 50)) -> pd.DataFrame:
    """Exact user-averaged metrics@K with several relevant items (RecBole / RecPack definitions).

    Parameters
    ----------
    negative_ranks : array_like, shape (P,)
        R_i per positive: 1-based rank among the non-relevant candidates (may be a non-integer
        rank estimate; a position is a hit when it is <= K).
    users : array_like, shape (P,)
        User of each positive.
    metrics : str or sequence of str
        Any of :data:`MULTI_METRICS`.
    ks : int or iterable of int
        Cut-offs K.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``value``.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    bad = sorted(set(metrics) - set(MULTI_METRICS))
    if bad:
        raise ValueError(f"unknown metric(s) {bad}; choose from {', '.join(MULTI_METRICS)}")
    ks = [ks] if isinstance(ks, int) else list(ks)
    pos = positions(negative_ranks, users)
    _, uid = np.unique(np.asarray(users), return_inverse=True)
    n_users = uid.max() + 1
    p_u = np.bincount(uid, minlength=n_users)
    rows = []
    for k in ks:
        hit = pos <= k
        hits_u = np.bincount(uid, weights=hit, minlength=n_users)
        gain = np.where(hit, 1 / np.log2(np.floor(pos) + 1), 0.0)
        dcg_u = np.bincount(uid, weights=gain, minlength=n_users)
        ideal = np.cumsum(1 / np.log2(np.arange(2, k + 2)))[np.minimum(p_u, k) - 1]
        per_user = {
            "recall": hits_u / p_u,
            "ndcg": dcg_u / ideal,
            "hit": (hits_u > 0).astype(float),
            "calibrated_recall": hits_u / np.minimum(p_u, k),
        }
        rows += [{"metric": m, "k": k, "value": per_user[m].mean()} for m in metrics]
    return pd.DataFrame(rows)


def estimate_multi_positive(sampled_ranks: ArrayLike, users: ArrayLike, n_items: int | ArrayLike, sample_size: int,
                            metrics: Sequence[str] | str = MULTI_METRICS,
                            ks: Iterable[int] | int = (1, 5, 10, 20, 50)) -> pd.DataFrame:
    """Estimate the metrics of :func:`multi_positive_metrics` from each positive's sampled rank.

    R̂_i = 1 + (N-1)(r_i-1)/(n-1) (KDD'20 eq. 20, unbiased for R_i under uniform sampling with or
    without replacement), then the metrics at R̂_i. ``n_items`` is N, the positive plus its
    non-relevant candidates (one number, or one per positive: N_u - P_u + 1); ``sample_size`` is n, the positive plus its n-1 negatives (per
    positive, or shared by the user's positives with the other positives left out of the ranking).
    Returns columns ``metric``, ``k``, ``estimate``.
    """
    r = np.asarray(sampled_ranks)
    if np.any(r < 1) or np.any(r > sample_size):
        raise ValueError(f"sampled ranks must lie in 1..{sample_size}")
    n_items = np.asarray(n_items)
    if n_items.ndim and n_items.shape != r.shape:
        raise ValueError("n_items must be one number or one per sampled rank")
    rhat = 1 + (n_items - 1) * (r - 1) / (sample_size - 1)
    table = multi_positive_metrics(rhat, users, metrics, ks)
    return table.rename(columns={"value": "estimate"})
