"""Global and sampled hit ratio curves and the sampling theorem (Li, Jin, Gao & Liu, KDD 2020 §2).

The global hit ratio HR@K (eq. 1) is the empirical CDF of the global ranks R_u (eq. 7). The
sampled hit ratio SHR@k (eq. 3) counts the users whose held-out item is among the top k of a
sample set of n items; user u is a hit with probability p^u(k) = P(r_u <= k | R_u, N_u), so

    E[SHR@k] = (1/M) Σ_u p^u(k)                    (eq. 4)
    Var[SHR@k] = (1/M²) Σ_u p^u(k) (1 - p^u(k))     (eq. 5)

for fixed global ranks; the randomness is that of the sampled items only.

**Sampling window.** With one N for all users, summing eq. 4 by parts gives

    E[SHR@k] = Σ_{K=1}^{N} w_K(k) HR@K,   w_K(k) = p^K(k) - p^{K+1}(k) >= 0,  p^{N+1} := 0,

because p^R(k) decreases in R (one more item above the target can only lower its sampled
rank's chance to be <= k). The weights sum to p^1(k) = 1: E[SHR@k] is the global HR curve
averaged over a random cut-off K ~ w(k), concentrated around the mapped location f(k). This is
Theorem 2.1 in one line: if HR_1@K >= HR_2@K for every K, every term of the difference is
>= 0. When N_u differs between users (``unseen`` protocol) the identity holds within each
group of equal N_u only, and dominance of the pooled HR curves no longer implies the order of
E[SHR@k] (see :func:`sampled_hit_ratio_moments`).

=================================================== ==============================================
``hit_ratio_curve(global_ranks, n_items)``           HR@K for K = 1..max N_u (eq. 1)
``hit_probabilities(ranks, n_items, n, scheme)``     p^R(k) = P(r <= k | R) for k = 1..n (§2.2)
``sampled_hit_ratio_moments(ranks, n_items, n)``     E[SHR@k] and Var[SHR@k] (eq. 4–5)
``sampling_window(n_items, n, ks, scheme)``          w_K(k), with E[SHR@k] = Σ_K w_K(k) HR@K
``dominance(hr_a, hr_b)``                            does one curve dominate the other? (Thm 2.1)
``sign_changes(values)``                             where a difference changes sign
``hoeffding_bound(n_users, t)``                      P(|SHR@k - E[SHR@k]| >= t) <= 2 exp(-2Mt²)
``hoeffding_radius(n_users, delta)``                 the t at which that bound equals δ
=================================================== ==============================================
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    check_choice,
    check_n_items,
    check_positive_integer,
    check_ranks,
    check_sample_size,
    check_users,
    check_users_and_size,
)
from .kernels import SCHEMES, log_kernel_block

__all__ = [
    "dominance",
    "hit_probabilities",
    "hit_ratio_curve",
    "hoeffding_bound",
    "hoeffding_radius",
    "sampled_hit_ratio_moments",
    "sampling_window",
    "sign_changes",
]

#: Entries of P(r | R) evaluated at once (bounds the temporary memory to ~100 MB).
_BLOCK_ENTRIES = 2**22


def hit_ratio_curve(global_ranks, n_items) -> np.ndarray:
    """Global hit ratio HR@K for every K = 1..max N_u (Li et al. KDD 2020 eq. 1).

    The cumulative sum of the rank counts: HR@K = (1/M) Σ_u 1{R_u <= K}, the empirical CDF of
    the global ranks (eq. 7); :func:`itemsampling.global_metrics` gives the same values for a
    few cut-offs.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.

    Returns
    -------
    numpy.ndarray
        float64, entry K - 1 is HR@K; the last entry is 1.
    """
    R, N = check_users(global_ranks, n_items)
    return np.cumsum(np.bincount(R, minlength=int(N.max()) + 1)[1:]) / R.size


def _hit_rows(R: np.ndarray, N, sample_size: int, scheme: str) -> np.ndarray:
    """P(r <= k | R, N) for k = 1..n, one row per R (checked inputs; N scalar or one per R)."""
    r = np.arange(1, sample_size + 1)
    out = np.empty((R.size, sample_size))
    step = max(1, _BLOCK_ENTRIES // sample_size)
    for start in range(0, R.size, step):
        rows = slice(start, start + step)
        logp = log_kernel_block(R[rows], r, N if np.ndim(N) == 0 else N[rows], sample_size, scheme)
        cdf = np.cumsum(np.exp(logp - logp.max(axis=1, keepdims=True)), axis=1)
        out[rows] = cdf / cdf[:, -1:]
    return out


def hit_probabilities(global_ranks, n_items: int, sample_size: int, scheme: str = "binomial") -> np.ndarray:
    """p^R(k) = P(r <= k | R) for every given R and k = 1..n (Li et al. KDD 2020 §2.2).

    The binomial CDF of eq. 6 (sampling with replacement) or the hypergeometric CDF (without),
    evaluated in log space (:func:`itemsampling.kernels.log_kernel_block`) with each row
    renormalised to sum to one, as :func:`itemsampling.kernels.rank_kernel` does.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R (1 <= R <= N).
    n_items : int
        Number of candidate items N.
    sample_size : int
        Sample set size n (the target plus n - 1 sampled items).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(global_ranks), n)``; entry (i, k - 1) is P(r <= k | R_i), non-increasing in
        R and non-decreasing in k, with P(r <= n | R) = 1.
    """
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    return _hit_rows(check_ranks(global_ranks, n_items, name="global_ranks"), n_items, sample_size, scheme)


def sampled_hit_ratio_moments(global_ranks, n_items, sample_size: int,
                              scheme: str = "binomial") -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of SHR@k for k = 1..n, given the global ranks (Li et al. KDD 2020 eq. 4–5).

    E[SHR@k] = (1/M) Σ_u p^u(k) and Var[SHR@k] = (1/M²) Σ_u p^u(k)(1 - p^u(k)), with
    p^u(k) = P(r_u <= k | R_u, N_u). The paper writes both with one N (p^u depends on R_u only);
    with per-user N_u (``unseen`` protocol) p^u depends on (R_u, N_u), and users with equal
    (R_u, N_u) share one row of :func:`hit_probabilities`.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    sample_size : int
        Sample set size n (<= min N_u).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    mean, variance : numpy.ndarray
        Shape ``(n,)`` each; entry k - 1 is E[SHR@k], resp. Var[SHR@k].
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    R, N, n = check_users_and_size(global_ranks, n_items, sample_size, "the moments of SHR@k")
    base = int(R.max()) + 1
    pairs, counts = np.unique(N * base + R, return_counts=True)  # distinct (N_u, R_u)
    mean, second = np.zeros(n), np.zeros(n)
    step = max(1, _BLOCK_ENTRIES // n)
    for start in range(0, pairs.size, step):
        block, weight = pairs[start : start + step], counts[start : start + step]
        p = _hit_rows(block % base, block // base, n, scheme)
        mean += weight @ p
        second += weight @ (p * (1.0 - p))
    return mean / R.size, second / R.size**2


def sampling_window(n_items: int, sample_size: int, ks, scheme: str = "binomial") -> np.ndarray:
    """Weights w_K(k) = p^K(k) - p^{K+1}(k) with E[SHR@k] = Σ_K w_K(k) HR@K (module docstring).

    Eq. 4 summed by parts, for one N: W_R = HR@R - HR@(R-1) gives
    Σ_R W_R p^R(k) = Σ_K HR@K (p^K(k) - p^{K+1}(k)), with p^{N+1}(k) := 0. Each column is a
    probability distribution over the global cut-off K (non-negative, summing to one).

    Parameters
    ----------
    n_items, sample_size : int
        N and n.
    ks : int or array_like of int
        Sampled cut-offs k in 1..n.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        Shape ``(N, len(ks))``; entry (K - 1, j) is w_K(ks[j]).
    """
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    k = check_ranks(np.atleast_1d(ks), sample_size, name="ks")
    p = hit_probabilities(np.arange(1, n_items + 1), n_items, sample_size, scheme)[:, k - 1]
    return np.maximum(p - np.vstack([p[1:], np.zeros((1, k.size))]), 0.0)


def _curve(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a non-empty 1-D array of finite numbers, got shape {arr.shape}")
    return arr


def dominance(hr_a, hr_b, atol: float = 0.0) -> str:
    """Whether one hit ratio curve dominates the other (the premise of Theorem 2.1).

    Parameters
    ----------
    hr_a, hr_b : array_like of float
        HR@K of two recommenders on the same cut-offs K.
    atol : float
        Differences within ``atol`` count as ties.

    Returns
    -------
    str
        ``"equal"`` (every |HR_a - HR_b| <= atol), ``"a"`` (HR_a@K >= HR_b@K - atol for every
        K), ``"b"`` (the reverse) or ``"cross"`` (each curve is above the other somewhere).
    """
    a, b = _curve(hr_a, "hr_a"), _curve(hr_b, "hr_b")
    if a.shape != b.shape:
        raise ValueError(f"hr_a and hr_b must have the same length, got {a.size} and {b.size}")
    if not atol >= 0:
        raise ValueError(f"atol must be >= 0, got {atol!r}")
    diff = a - b
    above, below = (diff > atol).any(), (diff < -atol).any()
    return "cross" if above and below else "a" if above else "b" if below else "equal"


def sign_changes(values, atol: float = 0.0) -> np.ndarray:
    """Positions where a sequence changes sign, ignoring entries within ``atol`` of zero.

    Returns
    -------
    numpy.ndarray
        int64 0-based index of each entry whose sign differs from that of the previous entry
        outside ``[-atol, atol]`` (the first entry of the new sign); empty if there is none.

    Examples
    --------
    >>> sign_changes([0.2, 0.0, -0.1, -0.3, 0.4])
    array([2, 4])
    """
    arr = _curve(values, "values")
    if not atol >= 0:
        raise ValueError(f"atol must be >= 0, got {atol!r}")
    idx = np.flatnonzero(np.abs(arr) > atol)
    signs = np.sign(arr[idx])
    return idx[1:][signs[1:] != signs[:-1]].astype(np.int64)


def hoeffding_bound(n_users, t) -> np.ndarray:
    """Hoeffding's bound P(|SHR@k - E[SHR@k]| >= t) <= 2 exp(-2 M t²) (Li et al. KDD 2020 §2.4).

    SHR@k is a mean of M independent Bernoulli variables (eq. 3). The bound is capped at 1.

    Parameters
    ----------
    n_users : int or array_like of int
        Number of users M (>= 1).
    t : float or array_like of float
        Deviation t > 0.

    Returns
    -------
    numpy.ndarray
        The bound, broadcast over ``n_users`` and ``t``.
    """
    M, t = _users(n_users), np.asarray(t, dtype=np.float64)
    if not (np.isfinite(t).all() and (t > 0).all()):
        raise ValueError(f"the deviation t must be finite and > 0, got {t!r}")
    return np.minimum(2.0 * np.exp(-2.0 * M * t**2), 1.0)


def hoeffding_radius(n_users, delta) -> np.ndarray:
    """The deviation t at which Hoeffding's bound equals δ: t = sqrt(ln(2/δ) / (2M)).

    With probability at least 1 - δ, |SHR@k - E[SHR@k]| < t (Li et al. KDD 2020 §2.4).

    Parameters
    ----------
    n_users : int or array_like of int
        Number of users M (>= 1).
    delta : float or array_like of float
        Level δ in (0, 1).

    Returns
    -------
    numpy.ndarray
        The radius t, broadcast over ``n_users`` and ``delta``.
    """
    M, delta = _users(n_users), np.asarray(delta, dtype=np.float64)
    if not (np.isfinite(delta).all() and ((delta > 0) & (delta < 1)).all()):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return np.sqrt(np.log(2.0 / delta) / (2.0 * M))


def _users(n_users) -> np.ndarray:
    M = np.asarray(n_users)
    if M.ndim == 0:
        return np.asarray(check_positive_integer("n_users", M.item()), dtype=np.float64)
    if not np.issubdtype(M.dtype, np.integer) or (M < 1).any():
        raise ValueError(f"n_users must be positive integers, got {M!r}")
    return M.astype(np.float64)
