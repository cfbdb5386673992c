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

Estimates (:func:`estimate_multi_positive`): each positive's sampled rank r_ui (among its own
n-1 negatives — RecBole's "N negatives per positive" — or among negatives shared by the user's
positives, other positives excluded) has the one-positive kernel P(r | R), and every metric
above is a weighted sum over positives of functions of R_ui alone, so each estimator of
:func:`itemsampling.estimate` carries over. One more, ``posterior_mle``, keeps every positive's
own n (RecBole's shared negatives give a user with many positives many candidates): the mean of
f under each positive's posterior, with the prior fitted by MLE to all positives at their own n.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import corrections, distributions
from ._validation import check_choice, check_positive_integer, check_ranks
from .batch import DIRECT_METHODS, METHODS, Batch, Estimator, method_options
from .candidates import DEFAULT_N_GROUPS
from .intervals import em_fit_influence, interval_spec
from .kernels import KernelCache
from .simulation import subsample_ranks

__all__ = ["MULTI_METHODS", "MULTI_METRICS", "NOT_CARRIED_METHODS", "OWN_SIZE_METHODS", "estimate_multi_positive",
           "multi_positive_metrics", "multi_positive_terms", "multi_positive_values", "positions"]

MULTI_METRICS = ("recall", "ndcg", "hit", "calibrated_recall")
#: methods of :func:`itemsampling.estimate` that do not carry over to several positives
NOT_CARRIED_METHODS = ("sampled", "cls", "adaptive_mle")
#: the estimators of several positives: those of :func:`itemsampling.estimate` that carry over,
#: and the posterior mean under the MLE fitted at every positive's own n
MULTI_METHODS = (*(m for m in METHODS if m not in NOT_CARRIED_METHODS), "posterior_mle")
#: methods that keep every positive's own n (the others bring all positives to the smallest)
OWN_SIZE_METHODS = ("posterior_mle",)


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
                           ks: Iterable[int] | int = (1, 5, 10, 20, 50), *,
                           interval: float | None = None) -> pd.DataFrame:
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
    interval : float, optional
        Confidence level: adds ``se``, ``lower``, ``upper``, the mean ± z·sd/√M of the users'
        values (CLT over users; for metrics at rank estimates, such as Hansen–Hurwitz ranks).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``value`` (and ``se``, ``lower``, ``upper``).
    """
    pairs, values = multi_positive_values(negative_ranks, users, metrics, ks)
    table = pd.DataFrame({"metric": [m for m, _ in pairs], "k": [k for _, k in pairs], "value": values.mean(axis=0)})
    return table if interval is None else _with_interval(table, "value", values, interval_spec(interval).z)


def multi_positive_values(negative_ranks: ArrayLike, users: ArrayLike, metrics: Sequence[str] | str = MULTI_METRICS,
                          ks: Iterable[int] | int = (1, 5, 10, 20, 50)) -> tuple[list[tuple[str, int]], np.ndarray]:
    """Each user's metrics@K of :func:`multi_positive_metrics`: the (metric, K) pairs (K outer) and
    the values, shape (M, pairs), users in sorted order of their ids."""
    metrics, ks = _checked_targets(metrics, ks)
    pos = positions(negative_ranks, users)
    _, uid = np.unique(np.asarray(users), return_inverse=True)
    uid = uid.reshape(-1)
    n_users = uid.max() + 1
    p_u = np.bincount(uid, minlength=n_users)
    pairs, columns = [], []
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
        pairs += [(m, k) for m in metrics]
        columns += [per_user[m] for m in metrics]
    return pairs, np.column_stack(columns)


def _with_interval(table: pd.DataFrame, column: str, values: np.ndarray, z: float) -> pd.DataFrame:
    """``table`` with ``se``, ``lower``, ``upper``: the users' CLT for the means of ``values``, ± ``z`` se."""
    table = table.copy()
    table["se"] = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0]) if values.shape[0] > 1 else np.nan
    table["lower"], table["upper"] = table[column] - z * table["se"], table[column] + z * table["se"]
    return table


def estimate_multi_positive(sampled_ranks: ArrayLike, users: ArrayLike, n_items: int | ArrayLike,
                            sample_size: int | ArrayLike, metrics: Sequence[str] | str = MULTI_METRICS,
                            ks: Iterable[int] | int = (1, 5, 10, 20, 50), *, method: str = "mn_mes",
                            interval: float | None = None, interval_method: str = "analytic",
                            n_bootstrap: int = 200, order: ArrayLike | None = None,
                            scheme: str = "hypergeometric", n_groups: int | str | None = "auto",
                            grid: str = "auto", seed: int = 0, **options) -> pd.DataFrame:
    """Estimate the metrics of :func:`multi_positive_metrics` from each positive's sampled rank.

    Positive i of user u is ranked among its n - 1 sampled negatives (its own, RecBole's "N
    negatives per positive", or shared by the user's positives with the other positives left out
    of its rank): r_i in 1..n, with the one-positive kernel P(r | R; n, N), N = N_u - P_u + 1
    (the positive and the user's negatives). Ordering the user's positives by score, the j-th
    (from 0) sits at position R_i + j of the full ranking, so each metric is a sum over positives
    of a function f_i of R_i alone, with a known shift j_i and a per-user weight a_u:

    - ``recall``: f_i(R) = 1{R <= K - j_i}, a_u = 1/P_u; ``calibrated_recall``: a_u = 1/min(K, P_u);
    - ``hit``: the same f_i for the first positive only (j_i = 0), a_u = 1;
    - ``ndcg``: f_i(R) = 1{R <= K - j_i} / log2(R + j_i + 1), a_u = 1/Σ_{i=1}^{min(P_u, K)} 1/log2(i + 1).

    Each f is a column of metric weights, estimated as :func:`itemsampling.estimate` estimates a
    metric: the methods that fit P̂(R) (``mle``, ``wmle``, ``mes``) give Σ_R P̂(R) f(R) (AAAI'21
    eq. 1) for every positive; the linear corrections give M̂_f(r_i) at the positive's own sampled
    rank: ``rank_estimate`` f at R̂_i = 1 + ⌊(N - 1)(r_i - 1)/(n - 1)⌋ (KDD'20 eq. 20, unbiased for
    R_i), ``bv`` and ``mn`` and their fitted-prior variants (W f)(r_i) (KDD'20 eq. 24; AAAI'23
    eq. 11). The estimate is θ̂ = (1/M) Σ_u a_u Σ_i M̂_{f_i}(r_i), with P̂(R) fitted to the
    sampled ranks of all positives.

    ``posterior_mle`` takes M̂_{f_i}(r_i) = E_P̂[f_i(R) | r_i] = Σ_R P̂(R) P(r_i | R; n_i, N_i)
    f_i(R) / Σ_R P̂(R) P(r_i | R; n_i, N_i), the mean of f_i under positive i's posterior, with
    P̂(R) the MLE of all positives at their own n_i (AAAI'23 eq. 12, App. G: the EM of
    ``adaptive_mle``). With one positive per user its estimate is the MLE's Σ_R P̂(R) f(R) at
    the EM's fixed point, where the users' mean posterior is P̂ (AAAI'21 eq. 22); with several,
    a positive's own rank says where in the user's list it sits. It keeps every negative: with
    negatives shared by a user's positives (RecBole's ``uniN`` draws N per positive), a user
    with many positives has many candidates.

    The other methods need one n: positives with different n are first brought to the smallest n
    by a seeded uniform subsample of their negatives (:func:`itemsampling.simulation.subsample_ranks`,
    exact), after their order is read.

    Parameters
    ----------
    sampled_ranks : array_like, shape (P,)
        r_i: 1-based rank of each positive among itself and its sampled negatives.
    users : array_like, shape (P,)
        User of each positive.
    n_items : int or array_like
        N, the positive plus its non-relevant candidates: one number, or one per positive
        (N_u - P_u + 1).
    sample_size : int or array_like
        n, the positive plus its sampled negatives: one number, or one per positive.
    metrics : str or sequence of str
        Any of :data:`MULTI_METRICS`.
    ks : int or iterable of int
        Cut-offs K.
    method : str
        One of :data:`MULTI_METHODS`: a method of :func:`itemsampling.estimate` but ``sampled``
        (the uncorrected metrics are :func:`multi_positive_metrics` of the sampled ranks), ``cls``
        and ``adaptive_mle``, or ``posterior_mle`` (above).
    interval : float, optional
        Confidence level: adds ``se``, ``lower``, ``upper``.
    interval_method : {"analytic", "bootstrap"}
        ``analytic``: θ̂ ± z·sd/√M of the users' terms a_u Σ_i M̂_{f_i}(r_i) (CLT over users),
        with P̂(R) held fixed, so for a method that fits it the interval leaves out the fit's
        own uncertainty, except ``posterior_mle``, whose users' influence values add the
        derivative through the EM steps of its fit (:func:`itemsampling.intervals.em_fit_influence`);
        ``bootstrap``: the percentile interval of ``n_bootstrap`` refits on users resampled with
        all their positives (``se``: the refits' sd), which includes it.
    n_bootstrap : int
        Bootstrap refits (default 200).
    order : array_like of int, shape (P,), optional
        j_i: each positive's 0-based place among its user's positives by score (0: the highest).
        By default the order of the sampled ranks, ties in input order: exact with negatives
        shared by the user's positives, where the order of r is the order of the scores. With
        negatives per positive it is not (a positive may meet weaker negatives than another
        above it), and pairing shifts with ranks out of order raises recall; pass the order of
        the scores there.
    scheme : {"hypergeometric", "binomial"}
        Negatives drawn without or with replacement.
    n_groups : int, None or "auto"
        Groups of positives by N, as in :func:`itemsampling.estimate`; ``"auto"``:
        :data:`~itemsampling.candidates.DEFAULT_N_GROUPS` groups, and one group per distinct N for
        ``posterior_mle``, whose n can come close to N (a group's mean N may be below a member's n).
    grid, **options
        As in :func:`itemsampling.estimate` (``posterior_mle``: the options of ``adaptive_mle``).
    seed : int
        Seed of the subsample that equalises n and of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``estimate`` (and ``se``, ``lower``, ``upper``).
    """
    interval_method = check_choice("interval_method", interval_method, ("analytic", "bootstrap"))
    n_bootstrap = check_positive_integer("n_bootstrap", n_bootstrap)
    spec = None if interval is None else interval_spec(interval)  # the level, checked once, and its z
    fit = _Fit.build(method, metrics, ks, scheme, n_groups, grid, options)
    positives = _Positives.build(sampled_ranks, users, n_items, sample_size, order, seed, fit.posterior)
    pairs, terms, influences = fit.terms(positives, influences=spec is not None and interval_method == "analytic")
    table = pd.DataFrame({"metric": [m for m, _ in pairs], "k": [k for _, k in pairs], "estimate": terms.mean(axis=0)})
    if spec is not None and interval_method == "analytic":
        table = _with_interval(table, "estimate", influences, spec.z)
    elif spec is not None:
        gen, cache = np.random.default_rng(seed), KernelCache.for_one_call(positives.sample_size)
        refits = np.vstack([fit.terms(positives.take(gen.integers(0, positives.n_users, positives.n_users)), cache)[1]
                            .mean(axis=0) for _ in range(n_bootstrap)])
        table["se"] = refits.std(axis=0, ddof=1)
        table["lower"], table["upper"] = np.quantile(refits, [(1 - interval) / 2, (1 + interval) / 2], axis=0)
    table["k"] = table["k"].astype("Int64")
    return table


def multi_positive_terms(sampled_ranks: ArrayLike, users: ArrayLike, n_items: int | ArrayLike,
                         sample_size: int | ArrayLike, metrics: Sequence[str] | str = MULTI_METRICS,
                         ks: Iterable[int] | int = (1, 5, 10, 20, 50), *, method: str = "mn_mes",
                         order: ArrayLike | None = None, scheme: str = "hypergeometric",
                         n_groups: int | str | None = "auto", grid: str = "auto", seed: int = 0,
                         influences: bool = False, **options) -> tuple:
    """The users' terms a_u Σ_i M̂_{f_i}(r_i) of :func:`estimate_multi_positive`, whose mean over
    users is the estimate: for paired comparisons of two models on the same users.

    With ``influences``, also the users' influence values of its analytic interval: the terms,
    plus the part through the fit for ``posterior_mle`` (whose mean over users is zero).

    Returns
    -------
    (list of (str, int), numpy.ndarray[, numpy.ndarray])
        The (metric, K) pairs, K outer, and the terms, shape (M, pairs), users in sorted order of
        their ids (and the influence values, same shape).
    """
    fit = _Fit.build(method, metrics, ks, scheme, n_groups, grid, options)
    out = fit.terms(_Positives.build(sampled_ranks, users, n_items, sample_size, order, seed, fit.posterior),
                    influences=influences)
    return out if influences else out[:2]


@dataclass(frozen=True)
class _Positives:
    """Checked positives: sampled ranks, user index 0..M - 1, N, n (one, or one per positive)
    and shift j per positive."""

    ranks: np.ndarray
    uid: np.ndarray
    n_items: int | np.ndarray
    sample_size: int | np.ndarray
    shift: np.ndarray

    @classmethod
    def build(cls, sampled_ranks, users, n_items, sample_size, order, seed, own_sizes: bool) -> _Positives:
        """Checked, their order read, then brought to the smallest n
        (:func:`itemsampling.simulation.subsample_ranks`) unless ``own_sizes``."""
        ranks, users, n_items, sizes = _checked_positives(sampled_ranks, users, n_items, sample_size)
        uid = np.unique(users, return_inverse=True)[1].reshape(-1)
        p_u = np.bincount(uid)
        shift = positions(ranks, users).astype(np.int64) - ranks if order is None else _checked_order(order, uid, p_u)
        if own_sizes:
            return cls(ranks, uid, n_items, sizes, shift)
        ranks, n = subsample_ranks(ranks, sizes, int(sizes.min()), seed)
        return cls(ranks, uid, n_items, n, shift)

    @property
    def n_users(self) -> int:
        return int(self.uid.max()) + 1

    @cached_property
    def rows_of_users(self) -> list[np.ndarray]:
        """The rows of each user's positives."""
        return np.split(np.argsort(self.uid, kind="stable"), np.cumsum(np.bincount(self.uid))[:-1])

    def take(self, users: np.ndarray) -> _Positives:
        """The positives of ``users`` (indices, with repeats: each draw a user of its own)."""
        rows_of = self.rows_of_users
        rows = np.concatenate([rows_of[u] for u in users])
        uid = np.repeat(np.arange(users.size), [rows_of[u].size for u in users])
        n_items = self.n_items if np.ndim(self.n_items) == 0 else self.n_items[rows]
        sizes = self.sample_size if np.ndim(self.sample_size) == 0 else self.sample_size[rows]
        return _Positives(self.ranks[rows], uid, n_items, sizes, self.shift[rows])


@dataclass(frozen=True)
class _Fit:
    """One estimator of the metrics@K of several positives (``posterior``: ``posterior_mle``,
    whose ``est`` is the fit of its prior, ``adaptive_mle``)."""

    est: Estimator
    metrics: list[str]
    ks: list[int]
    scheme: str
    n_groups: int | None
    grid: str
    posterior: bool = False  # posterior_mle: the positives keep their own n (:data:`OWN_SIZE_METHODS`)

    @classmethod
    def build(cls, method, metrics, ks, scheme, n_groups, grid, options) -> _Fit:
        metrics, ks = _checked_targets(metrics, ks)
        if isinstance(n_groups, str) and n_groups == "auto":
            n_groups = None if method in OWN_SIZE_METHODS else DEFAULT_N_GROUPS
        elif isinstance(n_groups, str):
            raise ValueError(f"n_groups must be a positive integer, None or 'auto', got {n_groups!r}")
        elif n_groups is not None:
            n_groups = check_positive_integer("n_groups", n_groups)
        if method in NOT_CARRIED_METHODS:
            raise ValueError(f"method {method!r} does not estimate metrics with several positives; the "
                             "uncorrected metrics are multi_positive_metrics of the sampled ranks; use one of "
                             f"{', '.join(MULTI_METHODS)}")
        method = check_choice("method", method, MULTI_METHODS)
        if method == "posterior_mle":
            allowed = method_options("adaptive_mle")
            unknown = sorted(set(options) - set(allowed))
            if unknown:
                raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for method 'posterior_mle'; "
                                 f"allowed: {', '.join(o for o in allowed if o not in ('scheme', 'n_groups', 'grid'))}")
            return cls(Estimator("adaptive_mle", options), metrics, ks, scheme, n_groups, grid, posterior=True)
        return cls(Estimator(method, options), metrics, ks, scheme, n_groups, grid)  # Estimator checks options

    def terms(self, positives: _Positives, cache: KernelCache | None = None,
              influences: bool = False) -> tuple[list[tuple[str, int]], np.ndarray, np.ndarray | None]:
        """The (metric, K) pairs, the users' terms (M, pairs) and, with ``influences``, the users'
        influence values for the analytic interval (the terms, plus the part through the fit
        for ``posterior_mle``); ``cache`` shares the kernels between calls on the same n (a
        bootstrap's refits)."""
        top, n, shift, uid = max(self.ks), positives.sample_size, positives.shift, positives.uid
        batch = Batch.build(positives.ranks, positives.n_items, n, self.scheme, self.n_groups,
                            KernelCache.for_one_call(n) if cache is None else cache, per_user_sizes=self.posterior,
                            grid=self.grid, top=top)
        p_u = np.bincount(uid)
        targets = _Targets(self.ks, int(min(top, p_u.max())))
        if self.posterior:
            posterior = _Posterior.fit(batch, self.est, targets, record=influences)
            values = posterior.values  # (P, T): E[f(R) | r_i] per positive
        else:
            batch.fit_priors([self.est])
            per_rank = _corrected_targets(batch, self.est, targets)  # (G, n, T): M̂_f(r) per group
            values = per_rank[batch.groups.index, positives.ranks - 1]  # (P, T)
        pairs, columns, chosen, weights = [], [], [], []  # chosen, weights: the fit's part of the influences
        for k in self.ks:
            for metric in self.metrics:
                live = shift < k if metric != "hit" else shift == 0
                target = np.full(shift.size, -1)
                target[live] = targets.index(metric, k, shift[live])
                weight = _user_weight(metric, k, p_u)
                term = np.zeros(shift.size)
                term[live] = values[live, target[live]]
                pairs.append((metric, k))
                columns.append(np.bincount(uid, weights=term, minlength=p_u.size) * weight)
                if influences and self.posterior:
                    chosen.append(target)
                    weights.append(weight[uid] / p_u.size)
        terms = np.column_stack(columns)
        if not influences:
            return pairs, terms, None
        return pairs, terms, terms + posterior.fit_influences(chosen, weights, uid) if self.posterior else terms


def _checked_targets(metrics, ks) -> tuple[list[str], list[int]]:
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    bad = sorted(set(metrics) - set(MULTI_METRICS))
    if bad or not metrics:
        raise ValueError(f"unknown metric(s) {bad}; choose from {', '.join(MULTI_METRICS)}")
    ks = [ks] if np.isscalar(ks) else list(ks)
    if not ks or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in ks):
        raise ValueError(f"cut-offs ks must be positive integers, got {ks!r}")
    return metrics, [int(k) for k in ks]


def _checked_positives(sampled_ranks, users, n_items, sample_size):
    """The sampled ranks, users, N (one or per positive) and n per positive, checked."""
    users = np.asarray(users)
    sizes_in = np.asarray(sample_size)
    items_in = np.asarray(n_items)
    ranks = check_ranks(sampled_ranks, np.iinfo(np.int64).max, name="sampled_ranks")
    for name, arr in (("users", users), ("sample_size", sizes_in), ("n_items", items_in)):
        if arr.ndim and arr.shape != ranks.shape:
            raise ValueError(f"{name} must be one value or one per sampled rank ({ranks.size}), got shape {arr.shape}")
    if users.ndim != 1:
        raise ValueError("users must give the user of each sampled rank")
    n_items_p = check_ranks(np.broadcast_to(items_in, ranks.shape), np.iinfo(np.int64).max, name="n_items")
    sizes = check_ranks(np.broadcast_to(sizes_in, ranks.shape), n_items_p, name="sample_size (n <= N)")
    if sizes.min() < 2:
        raise ValueError("sample_size must be >= 2: with n = 1 every sampled rank is 1 and carries no information")
    check_ranks(ranks, sizes, name="sampled_ranks")
    return ranks, users, (n_items_p if items_in.ndim else int(items_in)), sizes


def _checked_order(order, uid: np.ndarray, p_u: np.ndarray) -> np.ndarray:
    """The places j_i, checked to number each user's positives 0..P_u - 1."""
    order = check_ranks(np.asarray(order) + 1, np.iinfo(np.int64).max, name="order + 1") - 1
    if order.shape != uid.shape:
        raise ValueError(f"order must give one place per sampled rank ({uid.size}), got {order.size}")
    slot = np.cumsum(np.r_[0, p_u[:-1]])[uid] + order  # the user's block, then its place
    if np.any(order >= p_u[uid]) or np.unique(slot).size != slot.size:
        raise ValueError("order must number each user's positives 0, 1, ..., P_u - 1 (their places by score)")
    return order


class _Targets:
    """The functions f of R that the metrics at the cut-offs ``ks`` need (shifts j < ``depth``):
    1{R <= c} for c = 1..max K (recall, hit, calibrated recall: c = K - j), then
    1{R <= K - j} / log2(R + j + 1) per (K, j) (NDCG)."""

    def __init__(self, ks: Sequence[int], depth: int):
        top = max(ks)
        self.top = top
        self._ndcg = {}
        for k in ks:
            for j in range(min(k, depth)):
                self._ndcg.setdefault((k, j), top + len(self._ndcg))
        self._ndcg_table = {k: np.array([self._ndcg[(k, j)] for j in range(min(k, depth))]) for k in ks}

    @property
    def size(self) -> int:
        """T, the number of targets."""
        return self.top + len(self._ndcg)

    def weights(self, ranks: np.ndarray) -> np.ndarray:
        """(L, T) target weights at the global ranks ``ranks`` (1..L)."""
        r = ranks[:, None].astype(float)
        cut = np.arange(1, self.top + 1)
        columns = [(r <= cut).astype(float)]
        if self._ndcg:
            k, j = np.array(list(self._ndcg)).T
            columns.append(np.where(r <= k - j, 1.0 / np.log2(r + j + 1), 0.0))
        return np.hstack(columns)

    def index(self, metric: str, k: int, shift: np.ndarray) -> np.ndarray:
        """The column of each positive's f (its shift ``shift`` < k)."""
        return self._ndcg_table[k][shift] if metric == "ndcg" else k - shift - 1


def _corrected_targets(batch: Batch, est: Estimator, targets: _Targets) -> np.ndarray:
    """(G, n, T): M̂_f(r) of every target f at every sampled rank, per candidate group (the
    rows of the targets: the global ranks 1..min(max K, N_g), exact on every grid)."""
    n = batch.sizes
    out = []
    for g in range(batch.groups.n_groups):
        n_g = int(batch.groups.n_items[g])
        w = targets.weights(np.arange(1, min(targets.top, n_g) + 1))
        if est.method in DIRECT_METHODS:
            out.append(np.broadcast_to(batch.prior_fit(est)[: w.shape[0]] @ w, (n, w.shape[1])))
        elif est.method == "rank_estimate":
            out.append(corrections.rank_estimate(w, n_g, n))
        else:
            out.append(batch.operator(est, g)[0].apply(w))
    return np.stack(out)


@dataclass(frozen=True)
class _Posterior:
    """E_P̂[f(R) | r_i; n_i, N_i] of every target f for every positive (``values``, (P, T)),
    with P̂ the EM fit of all positives at their own n_i (AAAI'23 eq. 12): for kernel column c
    (N_g, n, r) of :class:`~itemsampling.observations.Observations`,
    g_c(f) = Σ_R P̂(R) K(R, c) f(R) / q_c, q_c = Σ_R P̂(R) K(R, c)."""

    trace: distributions.EMTrace
    prior: np.ndarray  # P̂ on the kernel's rows: the ranks 1..max N_g, or a grid's nodes (exact up to top)
    weights: np.ndarray  # (rows, T) f at the rows (zero beyond the largest cut-off)
    mixture: np.ndarray  # (d,) q_c
    by_column: np.ndarray  # (d, T) g_c(f)

    @classmethod
    def fit(cls, batch: Batch, fit: Estimator, targets: _Targets, record: bool) -> _Posterior:
        """The fit (with its EM steps when ``record``, for :meth:`fit_influences`) and the posteriors."""
        trace = distributions.em_fits_of_checked(batch.checked, distributions.check_fits([(fit.method, dict(fit.options))]),
                                                 batch.scheme, batch.cache, record=record,
                                                 observations=batch.observations)[0]
        prior = trace.result.weights
        top = min(targets.top, batch.groups.max_items)
        nodes = batch.cache.nodes(top)
        weights = np.zeros((prior.size, targets.size))
        weights[: batch.cache.n_rows(top)] = targets.weights(np.arange(1, top + 1) if nodes is None else nodes)
        mixture = trace.kernel.rmatvec(prior)
        return cls(trace, prior, weights, mixture, trace.kernel.rmatmat(prior[:, None] * weights) / mixture[:, None])

    @property
    def values(self) -> np.ndarray:
        """(P, T): g_c(f) at each positive's column."""
        return self.by_column[self.trace.column_of_user]

    def fit_influences(self, targets: list[np.ndarray], weights: list[np.ndarray], uid: np.ndarray) -> np.ndarray:
        """``(M, m)``: the part through the fit of each user's influence value on each of m
        θ = Σ_i w_i g_{c_i}(f_{t_i}) (positive i's target in ``targets`` (-1: none) and weight in
        ``weights``, a_u/M). The derivative ∂θ/∂π = Σ_i w_i K(·, c_i) (f_{t_i} − g_{c_i}(f_{t_i})) / q_{c_i}
        of every θ is pushed through the EM steps in one reverse pass
        (:func:`itemsampling.intervals.em_fit_influence`, per positive), summed over each user's
        positives and scaled from positives to users."""
        kernel, column, q = self.trace.kernel, self.trace.column_of_user, self.mixture
        adjoints = []
        for target, weight in zip(targets, weights, strict=True):
            live = target >= 0
            used, slot = np.unique(target[live], return_inverse=True)  # the targets this θ takes
            mass = np.zeros((q.size, used.size))  # Σ_{i in c, t_i = t} w_i
            np.add.at(mass, (column[live], slot.reshape(-1)), weight[live])
            spread = kernel.matmat(mass / q[:, None])  # (rows, targets)
            adjoints.append((spread * self.weights[:, used]).sum(axis=1)
                            - kernel.matvec((mass * self.by_column[:, used]).sum(axis=1) / q))
        per_positive = em_fit_influence(self.trace, np.column_stack(adjoints))[column]  # P ∂θ/∂c_c, P positives
        n_users = int(uid.max()) + 1
        out = np.zeros((n_users, per_positive.shape[1]))
        np.add.at(out, uid, per_positive)
        return out * n_users / uid.size


def _user_weight(metric: str, k: int, p_u: np.ndarray) -> np.ndarray:
    """a_u of ``metric@k`` for every user."""
    if metric == "recall":
        return 1.0 / p_u
    if metric == "calibrated_recall":
        return 1.0 / np.minimum(p_u, k)
    if metric == "hit":
        return np.ones(p_u.size)
    ideal = np.cumsum(1 / np.log2(np.arange(2, k + 2)))
    return 1.0 / ideal[np.minimum(p_u, k) - 1]
