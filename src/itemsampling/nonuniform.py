"""Estimates of global metrics from negatives drawn with known, non-uniform inclusion probabilities.

Under a popularity sampler the sampled rank r_u no longer depends on the global rank R_u alone:
it depends on the sampling mass of the items that score above the target, so the kernel P(r | R)
and the estimators built on it (MLE, MES, BV, MN) do not carry over (``docs/estimators.md``,
"Non-uniform samplers"). What a practitioner knows is which negatives were drawn, whether each
scores above the target, and each one's inclusion probability. From these:

- Horvitz–Thompson (HT, samples without replacement, distinct items):
  R̂_u = 1 + Σ_{j drawn, above target} 1/π_j, with π_j = P(item j is in the sample);
  unbiased for R_u. Under uniform sampling without replacement π_j = (n-1)/(N-1) and R̂_u is
  K&R's rank estimate 1 + (N-1)(r_u-1)/(n-1) (KDD'20 eq. 20).
- Hansen–Hurwitz (HH, m draws with replacement, duplicates kept):
  R̂_u = 1 + (1/m) Σ_{draws d above target} 1/p_{j_d}, with p_j the per-draw probability;
  unbiased for R_u.

The corrected metric is the mean over users of M(R̂_u) (:func:`corrected_estimate`), with a
user-level CLT or bootstrap interval, in the table shape of :func:`itemsampling.estimate`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .metrics import metric_weights

__all__ = [
    "SAMPLED_METHODS",
    "SAMPLERS",
    "check_probabilities",
    "corrected_estimate",
    "draw_negatives",
    "estimate_sampled",
    "hansen_hurwitz_rank",
    "horvitz_thompson_rank",
    "inclusion_probabilities",
    "plug_in_ranks",
    "plug_in_values",
    "popularity_probabilities",
    "stratified_allocation",
]

#: samplers with known inclusion probabilities
SAMPLERS = ("uniform", "popularity", "stratified")
#: methods of :func:`estimate_sampled`
SAMPLED_METHODS = ("horvitz_thompson", "hansen_hurwitz", "sampled")
_PROB_TOL = 1e-6


def popularity_probabilities(counts: ArrayLike, alpha: float = 1.0) -> np.ndarray:
    """Per-draw probabilities p_j ∝ count_j^α of a popularity sampler (α = 0: uniform).

    Parameters
    ----------
    counts : array_like, shape (N,)
        Interaction count of each item (non-negative; an item with count 0 gets p_j = 0 if α > 0).
    alpha : float
        Exponent α >= 0 (BERT4Rec / RecBole ``popN``: α = 1).

    Returns
    -------
    numpy.ndarray
        Shape (N,), summing to one.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 1 or np.any(counts < 0) or not np.all(np.isfinite(counts)):
        raise ValueError("counts must be a 1-D array of finite non-negative numbers")
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    w = counts**alpha if alpha > 0 else np.ones_like(counts)
    if w.sum() <= 0:
        raise ValueError("counts are all zero: no item can be drawn")
    return w / w.sum()


def stratified_allocation(counts: ArrayLike, n_strata: int, n_draws: int) -> tuple[np.ndarray, np.ndarray]:
    """Popularity strata of (nearly) equal size and an equal share of the draws in each.

    Returns ``(stratum, per_stratum)``: stratum index of each item (0 = least popular) and the
    number of items drawn without replacement in each stratum (sums to ``n_draws``). The
    inclusion probability of item j in stratum h is n_h / N_h (:func:`inclusion_probabilities`).
    """
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(counts, kind="stable")
    stratum = np.empty(counts.size, dtype=np.int64)
    stratum[order] = np.arange(counts.size) * n_strata // counts.size
    per_stratum = np.full(n_strata, n_draws // n_strata)
    per_stratum[: n_draws % n_strata] += 1
    if np.any(per_stratum > np.bincount(stratum, minlength=n_strata)):
        raise ValueError("a stratum has fewer items than draws: use fewer strata or fewer draws")
    return stratum, per_stratum


def inclusion_probabilities(sampler: str, n_items: int, n_draws: int, *, probabilities: ArrayLike | None = None,
                            stratum: ArrayLike | None = None, per_stratum: ArrayLike | None = None,
                            replace: bool = False) -> np.ndarray:
    """Inclusion probability π_j of every item j in a sample of ``n_draws`` negatives.

    - ``uniform`` without replacement: π_j = m/N (m draws from N items), with replacement
      π_j = 1 - (1 - 1/N)^m;
    - ``popularity`` with replacement: π_j = 1 - (1 - p_j)^m (item j drawn at least once). Without
      replacement (successive draws) π_j has no closed form: an error says so; use draws with
      replacement (and :func:`hansen_hurwitz_rank`), or ``stratified``;
    - ``stratified`` (uniform without replacement within popularity strata): π_j = n_h/N_h.

    The target is not part of the population; pass the N negatives' population (N = catalogue
    minus the target, as the sampler sees it).
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")
    if sampler == "uniform":
        pi = n_draws / n_items if not replace else 1 - (1 - 1 / n_items) ** n_draws
        return np.full(n_items, pi)
    if sampler == "popularity":
        if probabilities is None:
            raise ValueError("the popularity sampler needs its per-draw probabilities")
        p = check_probabilities(probabilities, n_items)
        if not replace:
            raise ValueError("popularity sampling without replacement (successive draws) has no "
                             "closed-form inclusion probabilities; draw with replacement or use "
                             "the stratified sampler")
        return -np.expm1(n_draws * np.log1p(-np.minimum(p, 1 - 1e-16)))
    if stratum is None or per_stratum is None:
        raise ValueError("the stratified sampler needs stratum and per_stratum")
    stratum = np.asarray(stratum)
    sizes = np.bincount(stratum, minlength=len(per_stratum))
    return np.asarray(per_stratum, dtype=float)[stratum] / sizes[stratum]


def check_probabilities(probabilities: ArrayLike, n_items: int) -> np.ndarray:
    """Per-draw probabilities: N finite non-negative numbers summing to one (clear error else)."""
    p = np.asarray(probabilities, dtype=float)
    if p.shape != (n_items,):
        raise ValueError(f"expected {n_items} per-draw probabilities (one per item), got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("per-draw probabilities must be finite and non-negative")
    if abs(p.sum() - 1) > _PROB_TOL:
        raise ValueError(f"per-draw probabilities sum to {p.sum():.8g}, not 1: normalise them")
    return p


def draw_negatives(n_users: int, n_draws: int, rng: np.random.Generator | int | None, *,
                   probabilities: ArrayLike | None = None, replace: bool = True, stratum: ArrayLike | None = None,
                   per_stratum: ArrayLike | None = None, n_items: int | None = None) -> np.ndarray:
    """Draw item indices (0-based) of the negatives: (M, m) array.

    ``probabilities`` given: popularity draws with replacement (per-draw p_j); ``stratum`` given:
    stratified draws without replacement; else uniform on ``n_items`` (with or without replacement).
    """
    rng = np.random.default_rng(rng)
    if probabilities is not None:
        p = np.asarray(probabilities, dtype=float)
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        return np.minimum(np.searchsorted(cdf, rng.random((n_users, n_draws)), side="right"), p.size - 1)
    if stratum is not None:
        stratum = np.asarray(stratum)
        cols = []
        for h, n_h in enumerate(per_stratum):
            members = np.flatnonzero(stratum == h)
            keys = rng.random((n_users, members.size))
            cols.append(members[np.argpartition(keys, n_h - 1, axis=1)[:, :n_h]] if n_h else
                        np.empty((n_users, 0), dtype=np.int64))
        return np.hstack(cols)
    if n_items is None:
        raise ValueError("uniform draws need n_items")
    if replace:
        return rng.integers(0, n_items, (n_users, n_draws))
    keys = rng.random((n_users, n_items))
    return np.argpartition(keys, n_draws - 1, axis=1)[:, :n_draws]


def horvitz_thompson_rank(above: ArrayLike, inclusion: ArrayLike) -> np.ndarray:
    """Horvitz–Thompson estimate of the global rank: R̂_u = 1 + Σ_j above_uj / π_uj.

    Unbiased for R_u = 1 + #{negatives above the target} when every negative j has π_j > 0 and
    each drawn item appears once (sampling without replacement; with replacement pass each
    distinct item once with π_j = 1 - (1-p_j)^m). Var(R̂_u) = Σ_{i,j above} (π_ij - π_i π_j) /
    (π_i π_j) (``docs/estimators.md``).

    Parameters
    ----------
    above : array_like of bool, shape (M, m)
        Whether drawn negative j of user u scores above the target (ties: count as the caller's
        tie rule says; the package counts a tie as above, the pessimistic rule).
    inclusion : array_like, shape (M, m) or (m,)
        Inclusion probability π of each drawn negative, in (0, 1].
    """
    above = np.asarray(above, dtype=bool)
    pi = np.broadcast_to(np.asarray(inclusion, dtype=float), above.shape)
    if np.any(pi[above] <= 0) or np.any(pi > 1 + 1e-12):
        raise ValueError("inclusion probabilities must lie in (0, 1]")
    return 1 + np.where(above, 1 / np.where(above, pi, 1), 0).sum(axis=1)


def hansen_hurwitz_rank(above: ArrayLike, draw_probability: ArrayLike) -> np.ndarray:
    """Hansen–Hurwitz estimate of the global rank from m draws with replacement.

    R̂_u = 1 + (1/m) Σ_d above_ud / p_{j_d}: each draw's term has expectation Σ_{j above} p_j/p_j
    = R_u - 1, so R̂_u is unbiased; Var(R̂_u) = (Σ_{j above} 1/p_j - (R_u - 1)²)/m. Duplicated
    draws are kept (each is one draw).
    """
    above = np.asarray(above, dtype=bool)
    p = np.broadcast_to(np.asarray(draw_probability, dtype=float), above.shape)
    if np.any(p[above] <= 0):
        raise ValueError("a negative above the target has draw probability 0")
    return 1 + np.where(above, 1 / np.where(above, p, 1), 0).sum(axis=1) / above.shape[1]


def plug_in_ranks(rank_estimates: ArrayLike) -> np.ndarray:
    """⌊R̂⌋, the rank at which a rank estimate takes the metric (KDD'20 eq. 20's rule), as int64.

    Rounded down with a tolerance of 1e-9: Σ 1/π in floating point may land just below an integer.
    """
    return np.floor(np.asarray(rank_estimates, dtype=float) + 1e-9).astype(np.int64)


def plug_in_values(rank_estimates: ArrayLike, n_items: int, metric: str, k: int | None) -> np.ndarray:
    """Each user's metric at its rank estimate, M(⌊R̂_u⌋) (0 beyond N): the terms of
    :func:`corrected_estimate`'s mean, for paired comparisons of two models on the same users."""
    rank = plug_in_ranks(rank_estimates)
    return np.append(metric_weights(metric, k, n_items), 0.0)[np.minimum(rank, n_items + 1) - 1]


def corrected_estimate(rank_estimates: ArrayLike, n_items: int, metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
                       ks: Iterable[int | None] | int | None = range(1, 51), *,
                       interval: float | None = None, interval_method: str = "analytic",
                       n_bootstrap: int = 200, seed: np.random.Generator | int | None = 0) -> pd.DataFrame:
    """Global metrics at each user's rank estimate: θ̂ = (1/M) Σ_u M(⌊R̂_u⌋) (KDD'20 eq. 20's rule).

    The rank estimate is rounded down as in KDD'20 eq. 20 and clipped to 1..N. For a metric linear
    in R (AUC) θ̂ is unbiased; for the others the bias is E[M(R̂)] - M(R), which a test
    measures by Monte Carlo (``docs/estimators.md``, "Non-uniform samplers").

    Parameters
    ----------
    rank_estimates : array_like, shape (M,)
        R̂_u per user (:func:`horvitz_thompson_rank`, :func:`hansen_hurwitz_rank`).
    n_items : int
        N.
    metrics, ks
        As in :func:`itemsampling.estimate`.
    interval : float, optional
        Confidence level: adds ``se``, ``lower``, ``upper``. ``analytic``: the mean ± z·sd/√M of
        the per-user values (CLT, users independent); ``bootstrap``: percentile interval over
        ``n_bootstrap`` resamples of users.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``estimate`` (and ``se``, ``lower``, ``upper``), as
        :func:`itemsampling.estimate`.
    """
    from scipy.stats import norm

    rhat = np.asarray(rank_estimates, dtype=float)
    if rhat.ndim != 1 or rhat.size == 0 or np.any(~np.isfinite(rhat)) or np.any(rhat < 1):
        raise ValueError("rank_estimates must be a non-empty 1-D array of numbers >= 1")
    rank = plug_in_ranks(rhat)
    idx = np.minimum(rank, n_items + 1) - 1  # N+1 -> the weight-0 row
    counts = np.bincount(idx, minlength=n_items + 1)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    ks = [ks] if ks is None or isinstance(ks, int) else list(ks)
    rows = []
    if interval is not None and interval_method == "bootstrap":
        boot = np.random.default_rng(seed).multinomial(rhat.size, counts / rhat.size, size=n_bootstrap)
    for metric in metrics:
        for k in ks:
            w = np.append(metric_weights(metric, k, n_items), 0.0)
            est = counts @ w / rhat.size
            row = {"metric": metric, "k": k, "estimate": est}
            if interval is not None:
                sd = np.sqrt(max(counts @ (w - est) ** 2 / max(rhat.size - 1, 1), 0.0))
                row["se"] = sd / np.sqrt(rhat.size)
                if interval_method == "bootstrap":
                    vals = boot @ w / rhat.size
                    row["lower"], row["upper"] = np.quantile(vals, [(1 - interval) / 2, (1 + interval) / 2])
                elif interval_method == "analytic":
                    z = norm.ppf((1 + interval) / 2)
                    row["lower"], row["upper"] = est - z * row["se"], est + z * row["se"]
                else:
                    raise ValueError(f"interval_method must be 'analytic' or 'bootstrap', got {interval_method!r}")
            rows.append(row)
    table = pd.DataFrame(rows)
    table["k"] = table["k"].astype("Int64")
    if np.any(rank > n_items) and None in ks:  # with a cut-off K <= N the weight is 0 either way
        warnings.warn(f"{int(np.sum(rank > n_items))} rank estimates exceed N = {n_items} and are "
                      "counted at rank N + 1 with weight 0: the untruncated metrics (k = None; "
                      "AUC's linear unbiasedness) cannot honour them", stacklevel=2)
    return table


def estimate_sampled(users: ArrayLike, negatives: ArrayLike, above: ArrayLike, n_items: int, *,
                     method: str = "horvitz_thompson", probabilities: ArrayLike | None = None,
                     inclusion: ArrayLike | None = None, positives: ArrayLike | None = None,
                     metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
                     ks: Iterable[int | None] | int | None = range(1, 51), **interval_opts) -> pd.DataFrame:
    """Global metrics from negatives drawn with known probabilities, one row per drawn negative.

    The companion of :func:`itemsampling.estimate` for non-uniform samplers: it takes what a
    practitioner knows (which negatives were drawn, whether each scores at or above the target,
    and the sampler's probabilities) and returns the same table.

    Parameters
    ----------
    users : array_like, shape (D,)
        User of each drawn negative (a user's rows are its sample).
    negatives : array_like of int, shape (D,)
        0-based item index of each drawn negative, in 0..N-1.
    above : array_like of bool, shape (D,)
        Whether the negative scores at or above the user's target.
    n_items : int
        N, the catalogue size (global ranks 1..N).
    method : {"horvitz_thompson", "hansen_hurwitz", "sampled"}
        ``horvitz_thompson``: R̂ from the distinct drawn items and their inclusion probabilities
        ``inclusion`` (π_j per item); ``hansen_hurwitz``: R̂ from the draws with replacement
        (duplicates kept) and the per-draw ``probabilities`` (p_j per item, summing to one);
        ``sampled``: the uncorrected metric at the sampled rank 1 + #draws above, among the
        user's m + 1 items.
    probabilities, inclusion : array_like, shape (N,), optional
        Per-draw probabilities p_j (Hansen–Hurwitz) or inclusion probabilities π_j
        (Horvitz–Thompson) of every item.
    positives : array_like of int, shape (D,), optional
        The target of each row: checked never to be drawn as its own negative.
    metrics, ks, **interval_opts
        As in :func:`corrected_estimate`.
    """
    if method not in SAMPLED_METHODS:
        raise ValueError(f"method must be one of {', '.join(SAMPLED_METHODS)}, got {method!r}")
    users = np.asarray(users)
    neg = np.asarray(negatives)
    above = np.asarray(above, dtype=bool)
    if not (users.shape == neg.shape == above.shape) or neg.ndim != 1 or neg.size == 0:
        raise ValueError("users, negatives and above must be 1-D arrays of the same, non-zero length")
    if not np.issubdtype(neg.dtype, np.integer) or neg.min() < 0 or neg.max() >= n_items:
        bad = neg[(neg < 0) | (neg >= n_items)] if np.issubdtype(neg.dtype, np.number) else neg
        raise ValueError(f"negatives must be item indices in 0..{n_items - 1} (the catalogue); "
                         f"found {bad[:5].tolist()}")
    if positives is not None:
        own = np.asarray(positives) == neg
        if own.any():
            raise ValueError(f"{int(own.sum())} rows draw the user's positive as its own negative "
                             f"(first: user {users[own][0]}, item {neg[own][0]}); drop those draws")
    _, uid = np.unique(users, return_inverse=True)
    n_users = int(uid.max()) + 1
    draws = np.bincount(uid, minlength=n_users)
    if method == "hansen_hurwitz":
        if probabilities is None:
            raise ValueError("hansen_hurwitz needs the per-draw probabilities of every item")
        p = check_probabilities(probabilities, n_items)
        if np.any(p[neg[above]] <= 0):
            raise ValueError("a negative above the target has per-draw probability 0")
        terms = np.where(above, 1 / np.where(above, p[neg], 1), 0)
        rhat = 1 + np.bincount(uid, weights=terms, minlength=n_users) / draws
    elif method == "horvitz_thompson":
        if inclusion is None:
            raise ValueError("horvitz_thompson needs the inclusion probability of every item")
        pi = np.asarray(inclusion, dtype=float)
        if pi.shape != (n_items,) or np.any(~np.isfinite(pi)) or np.any(pi < 0) or np.any(pi > 1):
            raise ValueError(f"inclusion probabilities must be {n_items} numbers in [0, 1]")
        key = uid.astype(np.int64) * n_items + neg
        distinct = np.zeros(key.size, dtype=bool)
        distinct[np.unique(key, return_index=True)[1]] = True
        if not distinct.all():
            warnings.warn(f"{int((~distinct).sum())} duplicated draws counted once: Horvitz–Thompson "
                          "uses distinct items (pass π_j = 1 - (1 - p_j)^m for draws with "
                          "replacement, or use hansen_hurwitz)", stacklevel=2)
        use = distinct & above
        if np.any(pi[neg[use]] <= 0):
            raise ValueError("a negative above the target has inclusion probability 0")
        terms = np.where(use, 1 / np.where(use, pi[neg], 1), 0)
        rhat = 1 + np.bincount(uid, weights=terms, minlength=n_users)
    else:
        if np.unique(draws).size > 1:
            raise ValueError("the uncorrected sampled metric needs the same number of draws per user")
        sampled_rank = 1 + np.bincount(uid, weights=above, minlength=n_users)
        return corrected_estimate(sampled_rank, int(draws[0]) + 1, metrics, ks, **interval_opts)
    return corrected_estimate(rhat, n_items, metrics, ks, **interval_opts)
