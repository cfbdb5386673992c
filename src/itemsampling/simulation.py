"""Simulate item-sampled evaluation from global ranks, and its exact expectations.

One module past 500 lines, because the draws and their exact expectations use the same laws of
the sampled rank given the global rank, checked and evaluated by the same private helpers.

Given the global rank R_u of each user's held-out item among N_u candidates, the rank r_u of
that item among a sample set of n items (the target plus n - 1 sampled others) is

* ``binomial`` (sampling with replacement): r_u - 1 ~ Binom(n - 1, (R_u - 1)/(N_u - 1))
  (Krichene & Rendle KDD 2020 §4.3; Li et al. KDD 2020 eq. 6);
* ``hypergeometric`` (without replacement): r_u - 1 ~ Hypergeom(N_u - 1, R_u - 1, n - 1)
  (Li et al. KDD 2020 §2.2).

Functions
---------
sample_ranks
    One draw of the sampled ranks r_u for all users at once.
adaptive_sample_ranks
    Adaptive sampling (Li et al. AAAI 2023, Algorithm 1 and Appendix H): double the sample set
    while the target is still ranked first.
sampling_cost
    The sampling-cost curve C_j of adaptive sampling (Li et al. AAAI 2023 eq. 13).
expected_sampling_cost
    Its expectation for given global ranks: how many users stop at each size, exactly.
sampled_rank_pmf
    P̃(r) = Σ_R P(R) P(r | R), the distribution of the sampled rank for a rank distribution P(R).
expected_sampled_metric
    E[metric@k on the sample] for given global ranks (Krichene & Rendle KDD 2020 eq. 16).
expected_sampled_rank_pmf
    (1/M) Σ_u P(r | R_u; N_u, n): the expected distribution of the sampled ranks of given users;
    its cumulative sum is E[SHR@k] for every k (Li et al. KDD 2020 eq. 4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ._validation import (
    as_generator,
    check_choice,
    check_distribution,
    check_n_items,
    check_positive_integer,
    check_ranks,
    check_sample_size,
    check_users,
    check_users_and_size,
)
from .kernels import SCHEMES, log_kernel_block
from .metrics import canonical_metric, rank_weight

__all__ = [
    "adaptive_sample_ranks",
    "expected_sampled_metric",
    "expected_sampled_rank_pmf",
    "expected_sampling_cost",
    "sample_ranks",
    "sampled_rank_pmf",
    "sampling_cost",
    "subsample_ranks",
]

#: Entries of P(r | R) evaluated at once by the expectation functions (bounds memory to ~100 MB).
_BLOCK_ENTRIES = 2**22


def _per_user_sample_size(sample_size, n_items: np.ndarray) -> np.ndarray:
    """n as an int64 array of one entry per user, checked against 1 <= n <= N_u."""
    arr = np.asarray(sample_size)
    if arr.ndim == 0:
        n = check_sample_size(arr.item(), int(n_items.min()))
        return np.full(n_items.size, n, dtype=np.int64)
    if arr.ndim != 1 or arr.size != n_items.size:
        raise ValueError(
            f"sample_size must be one integer n or one n_u per user ({n_items.size} entries), "
            f"got an array of shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"sample_size must be integers, got dtype {arr.dtype}")
    bad = (arr < 1) | (arr > n_items)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_size must satisfy 1 <= n_u <= N_u; user {i} has n_u={int(arr[i])}, "
            f"N_u={int(n_items[i])}"
        )
    return arr.astype(np.int64)


def _count_outranking(gen: np.random.Generator, better, worse, draws, scheme: str) -> np.ndarray:
    """Number of sampled items that outrank the target, among ``draws`` sampled items.

    ``better``/``worse`` are the numbers of candidate items ranked above/below the target.
    """
    if scheme == "binomial":
        return gen.binomial(draws, better / (better + worse))
    return gen.hypergeometric(better, worse, draws)


def subsample_ranks(ranks: ArrayLike, sample_sizes: ArrayLike, sample_size: int,
                    rng: np.random.Generator | int | None = 0) -> tuple[np.ndarray, int]:
    """Sampled ranks among a uniform subset of n - 1 of each user's n_u - 1 negatives.

    The number of kept negatives that outrank the positive is hypergeometric,
    r' - 1 ~ Hypergeometric(n_u - 1 total, r_u - 1 successes, n - 1 draws), and a uniform
    subset of a uniform sample is a uniform sample, so the kernel P(r | R) of the smaller
    sample holds for r'. Users already at n keep their ranks (all their negatives are kept).

    Parameters
    ----------
    ranks : array_like of int
        r_u in 1..n_u.
    sample_sizes : array_like of int
        n_u, each >= ``sample_size``.
    sample_size : int
        n, the common sample size.
    rng : numpy.random.Generator, int or None
        Seed of the subsample.

    Returns
    -------
    (numpy.ndarray, int)
        The ranks r' and n.
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    sizes = np.broadcast_to(np.asarray(sample_sizes, dtype=np.int64), ranks.shape)
    if np.any(sizes < sample_size):
        raise ValueError(f"cannot subsample to n = {sample_size}: some users have fewer candidates")
    if np.all(sizes == sample_size):
        return ranks, int(sample_size)
    above = as_generator(rng).hypergeometric(ranks - 1, sizes - ranks, sample_size - 1)
    return above + 1, int(sample_size)


def sample_ranks(global_ranks: ArrayLike, n_items: int | ArrayLike, sample_size: int | ArrayLike,
                 rng: np.random.Generator | int | None = None, scheme: str = "binomial") -> np.ndarray:
    """Simulate the sampled rank r_u of each user's held-out item.

    r_u = 1 + X_u where X_u, the number of sampled items ranked above the target, is
    Binom(n - 1, (R_u - 1)/(N_u - 1)) with replacement (Li et al. KDD 2020 eq. 6; Krichene &
    Rendle KDD 2020 §4.3) or Hypergeom(N_u - 1 items, R_u - 1 successes, n - 1 draws) without
    replacement (Li et al. KDD 2020 §2.2). All users are drawn in one vectorized call.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u (1 <= R_u <= N_u).
    n_items : int or array_like of int
        Number of candidate items: one N for all users, or N_u per user (the ``unseen``
        protocol, where user u's training items are not candidates).
    sample_size : int or array_like of int
        Sample set size n (the target plus n - 1 sampled items), or one n_u per user;
        1 <= n_u <= N_u.
    rng : numpy.random.Generator, int or None
        Generator or seed (see :func:`itemsampling._validation.as_generator`).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        int64 sampled ranks r_u in 1..n_u, one per user.

    Examples
    --------
    >>> sample_ranks([1, 1, 1], 1000, 100, rng=0)
    array([1, 1, 1])
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    R, N = check_users(global_ranks, n_items)
    n = _per_user_sample_size(sample_size, N)
    gen = as_generator(rng)
    return 1 + _count_outranking(gen, R - 1, N - R, n - 1, scheme).astype(np.int64)


def adaptive_sample_ranks(
    global_ranks: ArrayLike, n_items: int | ArrayLike, n0: int, n_max: int,
    rng: np.random.Generator | int | None = None, scheme: str = "binomial"
) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive item sampling: grow the sample set while the target is still ranked first.

    Li et al. AAAI 2023, Algorithm 1 and Appendix H. Each user starts with a sample set of
    n_0 items (the target and n_0 - 1 sampled items). While r_u = 1 and n_u < n_max, n_u extra
    items are sampled, so the set doubles to 2 n_u, and r_u is recomputed on the union. If
    n_max is not of the form n_0·2^j, the last step is capped: the set grows to n_max (only
    n_max - n_u extra items), so sizes are n_0, 2n_0, 4n_0, ..., and finally n_max.

    The simulation is incremental and exact. Since r_u = 1 means that none of the n_u - 1
    items sampled so far outranks the target, the new rank is 1 + (number of the extra items
    that outrank it): with replacement that count is Binom(extra, (R_u - 1)/(N_u - 1));
    without replacement the extra items are drawn from the N_u - n_u candidates not yet
    sampled (R_u - 1 of them outrank the target), so the union is a uniform sample of the
    larger size, as in Algorithm 1. Users are processed together; the loop runs only over
    the doubling rounds (about log2(n_max / n_0) of them).

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user; n_max must not exceed any N_u.
    n0 : int
        Initial sample set size n_0 (>= 1).
    n_max : int
        Terminal sample set size (n_0 <= n_max <= min N_u).
    rng : numpy.random.Generator, int or None
        Generator or seed (see :func:`itemsampling._validation.as_generator`).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    ranks : numpy.ndarray
        int64 sampled rank r_u in the final sample set; r_u > 1 unless n_u = n_max.
    sizes : numpy.ndarray
        int64 final sample set size n_u of each user.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    R, N = check_users(global_ranks, n_items)
    n0, n_max = check_positive_integer("n0", n0), check_positive_integer("n_max", n_max)
    if n0 > n_max:
        raise ValueError(f"n0 = {n0} must not exceed n_max = {n_max}")
    if n_max > N.min():
        raise ValueError(
            f"n_max = {n_max} exceeds the number of candidate items of some user "
            f"(smallest N_u = {int(N.min())}); choose n_max <= {int(N.min())}"
        )
    gen = as_generator(rng)
    ranks = 1 + _count_outranking(gen, R - 1, N - R, n0 - 1, scheme).astype(np.int64)
    sizes = np.full(R.size, n0, dtype=np.int64)
    size = n0
    active = np.flatnonzero((ranks == 1) & (size < n_max))
    while active.size:
        new_size = min(2 * size, n_max)
        Ra, Na = R[active], N[active]
        # the size - 1 items sampled so far all rank below the target (r_u = 1)
        worse = Na - Ra if scheme == "binomial" else Na - Ra - (size - 1)
        hits = _count_outranking(gen, Ra - 1, worse, new_size - size, scheme).astype(np.int64)
        ranks[active] = 1 + hits
        sizes[active] = new_size
        size = new_size
        active = active[(hits == 0) & (size < n_max)]
    return ranks, sizes


def _size_ladder(n0: int, n_max: int) -> np.ndarray:
    """Sample set sizes n_0, 2 n_0, 4 n_0, ..., capped at n_max (the last entry is n_max)."""
    levels = [n0]
    while levels[-1] < n_max:
        levels.append(min(2 * levels[-1], n_max))
    return np.asarray(levels, dtype=np.int64)


def sampling_cost(sizes: ArrayLike, ranks: ArrayLike | None = None, n0: int | None = None,
                  n_max: int | None = None) -> pd.DataFrame:
    """Sampling-cost curve of adaptive sampling (Li et al. AAAI 2023 §4.3, eq. 13).

    With size levels n_0 < n_1 = 2 n_0 < ... < n_t = n_max and m_j users whose final sample
    set size is n_j, the average number of items sampled per user resolved at level j is

        C_0 = M n_0 / m_0,
        C_j = (M - Σ_{p<j} m_p)(n_j - n_{j-1}) / m_j,

    since at level j the n_j - n_{j-1} extra items are drawn for every user still unresolved.
    The paper defines C_j for j < t; at the last level the same formula is reported. When
    ``ranks`` are given, the denominator counts only the users resolved at level j (r_u > 1),
    which differs from m_j only at the last level (users can stop at n_max with r_u = 1).

    Parameters
    ----------
    sizes : array_like of int
        Final sample set size n_u of each user (from :func:`adaptive_sample_ranks`).
    ranks : array_like of int, optional
        Final sampled ranks r_u; must be > 1 for users that stopped before n_max.
    n0, n_max : int, optional
        Initial and terminal sizes; default to the smallest and largest observed size.

    Returns
    -------
    pandas.DataFrame
        One row per level j with columns ``level`` (j), ``sample_size`` (n_j), ``new_items``
        (n_j - n_{j-1}; n_0 at j = 0), ``users_sampled`` (M - Σ_{p<j} m_p), ``stopped`` (m_j),
        ``resolved`` (users stopping at j with r_u > 1; only when ``ranks`` are given),
        ``cumulative_fraction`` (Σ_{p<=j} m_p / M) and ``cost`` (C_j). A level where no user
        is resolved although some were sampled has infinite cost (all items sampled there
        were spent without resolving anyone); a level that no user reached has cost NaN.
    """
    sizes = check_ranks(sizes, np.iinfo(np.int64).max, name="sizes")
    n0 = int(sizes.min()) if n0 is None else int(n0)
    n_max = int(sizes.max()) if n_max is None else int(n_max)
    if not 1 <= n0 <= n_max:
        raise ValueError(f"need 1 <= n0 <= n_max, got n0={n0}, n_max={n_max}")
    levels = _size_ladder(n0, n_max)
    level_of = np.searchsorted(levels, sizes)
    off = (level_of >= levels.size) | (levels[np.minimum(level_of, levels.size - 1)] != sizes)
    if off.any():
        raise ValueError(
            f"sizes must be n0·2^j capped at n_max (allowed: {levels.tolist()}); "
            f"found {int(sizes[off][0])}"
        )
    M = sizes.size
    stopped = np.bincount(level_of, minlength=levels.size)
    users_sampled = M - np.concatenate(([0], np.cumsum(stopped)[:-1]))
    new_items = np.diff(levels, prepend=0)
    out = {
        "level": np.arange(levels.size),
        "sample_size": levels,
        "new_items": new_items,
        "users_sampled": users_sampled,
        "stopped": stopped,
    }
    denominator = stopped
    if ranks is not None:
        ranks = check_ranks(ranks, sizes, name="ranks")
        if np.any((ranks == 1) & (sizes < n_max)):
            raise ValueError("a user with r_u = 1 stopped before n_max; adaptive sampling continues while r_u = 1")
        denominator = np.bincount(level_of, weights=ranks > 1, minlength=levels.size).astype(np.int64)
        out["resolved"] = denominator
    out["cumulative_fraction"] = np.cumsum(stopped) / M
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = users_sampled * new_items / denominator.astype(np.float64)
    out["cost"] = np.where(users_sampled == 0, np.nan, cost)
    return pd.DataFrame(out)


def expected_sampling_cost(global_ranks, n_items, n0: int, n_max: int, scheme: str = "binomial") -> pd.DataFrame:
    """Expected sampling-cost curve of adaptive sampling for given global ranks (AAAI'23 eq. 13).

    Algorithm 1 takes user u past size level n_j exactly when its held-out item is still ranked
    first among the n_j - 1 items sampled so far. These form a uniform sample of n_j - 1 of the
    other candidates (with or without replacement, whatever the order in which they were drawn),
    so with q_j(u) = P(r = 1 | R_u; N_u, n_j), the first column of the rank kernel,

        binomial:        q_j(u) = ((N_u - R_u) / (N_u - 1))^(n_j - 1),
        hypergeometric:  q_j(u) = C(N_u - R_u, n_j - 1) / C(N_u - 1, n_j - 1),

    user u is sampled at level j with probability q_{j-1}(u) (q_{-1} = 1) and resolved there
    (stops with r_u > 1) with probability q_{j-1}(u) - q_j(u); at the last level every user
    still sampled stops. The columns of :func:`sampling_cost` are replaced by their expectations
    over the sampling, and the cost by the ratio of the expectations,

        C_j = E[users sampled at j] (n_j - n_{j-1}) / E[users resolved at j],

    which the cost of one run approaches when there are many users.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    n0, n_max : int
        Initial and terminal sample set sizes (1 <= n0 <= n_max <= min N_u); the levels are
        n0, 2 n0, 4 n0, ..., capped at n_max, as in :func:`adaptive_sample_ranks`.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    pandas.DataFrame
        One row per level with the columns of :func:`sampling_cost` (``level``,
        ``sample_size``, ``new_items``, ``users_sampled``, ``stopped``, ``resolved``,
        ``cumulative_fraction``, ``cost``), the counts being expected numbers of users (floats).
        The expected average sample set size is ``(sample_size * stopped).sum() / M``.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    R, N = check_users(global_ranks, n_items)
    n0, n_max = check_positive_integer("n0", n0), check_positive_integer("n_max", n_max)
    if n0 > n_max:
        raise ValueError(f"n0 = {n0} must not exceed n_max = {n_max}")
    if n_max > N.min():
        raise ValueError(f"n_max = {n_max} exceeds the smallest number of candidates N_u = {int(N.min())}")
    levels = _size_ladder(n0, n_max)
    # still_first[j] = Σ_u q_j(u): users with equal (R_u, N_u) share one kernel entry
    still_first = np.zeros(levels.size)
    for N_value in np.unique(N):
        values, counts = np.unique(R[N == N_value], return_counts=True)
        for j, size in enumerate(levels.tolist()):
            logq = log_kernel_block(values, [1], int(N_value), size, scheme)[:, 0]
            still_first[j] += counts @ np.exp(logq)
    M = R.size
    users_sampled = np.concatenate(([M], still_first[:-1])).astype(np.float64)
    resolved = users_sampled - still_first
    stopped = resolved.copy()
    stopped[-1] = users_sampled[-1]
    new_items = np.diff(levels, prepend=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = users_sampled * new_items / resolved
    return pd.DataFrame({
        "level": np.arange(levels.size),
        "sample_size": levels,
        "new_items": new_items,
        "users_sampled": users_sampled,
        "stopped": stopped,
        "resolved": resolved,
        "cumulative_fraction": np.cumsum(stopped) / M,
        "cost": cost,
    })


def _pmf_from_support(support, weights, n_items: int, sample_size: int, scheme: str,
                      n_ranks: int | None = None) -> np.ndarray:
    """Σ_R weights_R P(r | R) for r = 1..n_ranks (default n), R running over ``support``.

    Computed in row blocks. Whole rows (n_ranks = n) are renormalised to sum to one, as in
    :func:`rank_kernel`, which cancels the rounding of the shared log-normaliser and keeps
    expectations accurate to ~1e-13; a prefix of the rows is used as exact log probabilities.
    """
    n_ranks = sample_size if n_ranks is None else n_ranks
    r = np.arange(1, n_ranks + 1)
    step = max(1, _BLOCK_ENTRIES // n_ranks)
    out = np.zeros(n_ranks)
    for start in range(0, support.size, step):
        logp = log_kernel_block(support[start : start + step], r, n_items, sample_size, scheme)
        if n_ranks == sample_size:
            p = np.exp(logp - logp.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
        else:
            p = np.exp(logp)
        out += weights[start : start + step] @ p
    return out


def sampled_rank_pmf(rank_distribution, n_items: int, sample_size: int, scheme: str = "binomial") -> np.ndarray:
    """Distribution of the sampled rank, P̃(r) = Σ_R P(R) P(r | R), for r = 1..n.

    The mixture of rank kernels that links the global rank distribution to the sampled one
    (Jin et al. AAAI 2021, the likelihood behind eq. 19; Li et al. KDD 2020 eq. 4 is its
    cumulative sum). Only global ranks with P(R) > 0 are evaluated, in blocks, in log space.

    Parameters
    ----------
    rank_distribution : array_like of float
        P(R) for R = 1..N (sums to one).
    n_items, sample_size : int
        N and n.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; entry r - 1 is P̃(r).
    """
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    p = check_distribution(rank_distribution, n_items, name="rank_distribution")
    support = np.flatnonzero(p > 0) + 1
    return _pmf_from_support(support, p[support - 1], n_items, sample_size, scheme)


def expected_sampled_metric(
    global_ranks, n_items, sample_size: int, metric: str, k: int | None = None, scheme: str = "binomial"
) -> float:
    """Expected value of a sampled metric, E[(1/M) Σ_u M_k(r_u)], given the global ranks.

    Krichene & Rendle KDD 2020 eq. 16: E[M(r) | R] = Σ_{r=1}^n P(r | R) M(r), averaged over
    users. The metric is evaluated on the sample set of n items, so AUC uses n in place of N,
    AUC_n(r) = (n - r)/(n - 1) (K&R eq. 7). Users with equal (R_u, N_u) share one kernel row,
    and only the sampled ranks r <= k are evaluated, so the cost is (distinct R_u) x min(k, n).

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    sample_size : int
        Sample set size n (1 <= n <= min N_u).
    metric : str
        ``recall``, ``precision``, ``ndcg``, ``ap`` or ``auc`` (or an alias).
    k : int or None
        Cut-off applied to the sampled rank; ``None`` for the untruncated metric.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    float
        The expected sampled metric, averaged over users.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    metric = canonical_metric(metric)
    R, N, n = check_users_and_size(global_ranks, n_items, sample_size, "the expected sampled metric")
    if metric == "auc" and n < 2:
        raise ValueError("AUC on the sample needs n >= 2 (AUC_n(r) = (n - r)/(n - 1))")
    # only sampled ranks r <= k carry weight: the cost is (distinct R_u) x min(k, n)
    n_ranks = n if k is None else min(int(k), n)
    weights = rank_weight(metric, np.arange(1, n_ranks + 1), n, k)
    return float(_summed_pmf(R, N, n, scheme, n_ranks) @ weights) / R.size


def _summed_pmf(R: np.ndarray, N: np.ndarray, sample_size: int, scheme: str, n_ranks: int) -> np.ndarray:
    """Σ_u P(r | R_u; N_u, n) for r = 1..n_ranks; users with equal (R_u, N_u) share a row."""
    total = np.zeros(n_ranks)
    for N_value in np.unique(N):
        values, counts = np.unique(R[N == N_value], return_counts=True)
        total += _pmf_from_support(values, counts.astype(np.float64), int(N_value), sample_size, scheme, n_ranks)
    return total


def expected_sampled_rank_pmf(global_ranks, n_items, sample_size: int, scheme: str = "binomial") -> np.ndarray:
    """Expected distribution of the sampled ranks of given users, (1/M) Σ_u P(r | R_u; N_u, n).

    Entry r - 1 is the expected fraction of users whose held-out item is at sampled rank r; the
    cumulative sum is E[SHR@k] = (1/M) Σ_u Pr(r_u <= k) for k = 1..n (Li, Jin, Gao & Liu,
    KDD 2020 eq. 4), with each user's own N_u (the ``unseen`` protocol). With one N it equals
    :func:`sampled_rank_pmf` of the empirical rank distribution W_R (eq. 2). Users with equal
    (R_u, N_u) share one kernel row, evaluated in log space.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    sample_size : int
        Sample set size n (1 <= n <= min N_u).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``, summing to one.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    R, N, n = check_users_and_size(global_ranks, n_items, sample_size, "the expected sampled rank distribution")
    return _summed_pmf(R, N, n, scheme, n) / R.size
