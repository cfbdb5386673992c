"""Mapping functions f with SHR@k ≈ HR@f(k) (Li, Jin, Gao & Liu, KDD 2020).

The sampled hit ratio at k (SHR@k, the hit ratio among a sample set of n items) approximates
the global hit ratio HR@K at the location K = f(k). Three mapping functions are offered:

* ``linear`` — the baseline of eq. 9, f(k) = (k - 1)(N - 1)/(n - 1) + 1;
* ``bound`` — the boundary-condition approximation of eq. 13,
  f(k) = ⌊(k - 1/2)(N - 1)/(n - 1) + 1/2⌋;
* ``beta`` — the Beta(a, 1) recurrence of eq. 16–17, which has the closed form
  f(k; a) = 1 + (N - 1) (a S_k(a))^{1/a}, S_k(a) = Σ_{i<k} C(n-1, i) B(a + i, n - i),
  obtained by summing eq. 15 from f(1) (eq. 17). It is evaluated in log space, so that
  n = 1000 and N = 10^5 give neither overflow nor NaN. a = 1 gives eq. 18,
  f(k; 1) = k (N - 1)/n + 1, and f(n; a) = N for every a (Lemma 3.1).

:func:`fit_beta` finds the algorithm-specific parameter a of §4.1 (eq. 19), and
:func:`expected_sampled_hit_ratio` computes E[SHR@k] for a rank distribution (eq. 4).

To compare the sampled and the global view on real ranks:

* :func:`mapped_hit_ratio` — HR@f(k) (eq. 1 at K = f(k)), each user's cut-off mapped with
  the user's own number of candidates N_u;
* :func:`scaled_hit_ratio` — HR@K on a grid of K, with K scaled to each user's N_u;
* :func:`mapping_errors` — the errors |HR@f(k) - SHR@k| of §A (Table 7);
* :func:`fit_beta_global` and :func:`beta_hit_ratio` — the Beta(a, 1) model of the global
  ranks themselves (§3.2, Fig. 3), fitted by maximum likelihood.

**Per-user candidates.** Under the ``unseen`` protocol user u has N_u candidates, and its
sampled rank depends on R_u only through (R_u - 1)/(N_u - 1) (eq. 6). A global cut-off K
among N items is therefore read, for user u, as K_u = 1 + (K - 1)(N_u - 1)/(N - 1): the same
fraction of the user's candidates. With one N for every user (the ``all`` protocol) K_u = K
and everything is the paper's definition. For ``linear`` and ``beta``, f(k; N_u) is exactly
the scaled f(k; N), so :func:`mapped_hit_ratio` and :func:`scaled_hit_ratio` at K = f(k; N) agree.
A real cut-off K counts the ranks R <= K (R <= ⌊K⌋), up to a relative rounding tolerance of
1e-10, so that f(n) = N computed in floating point still counts rank N.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from ._validation import check_choice, check_n_items, check_ranks, check_sample_size, check_users
from .candidates import CandidateGroups
from .kernels import SCHEMES
from .simulation import sampled_rank_pmf

__all__ = [
    "MAPPINGS",
    "MAPPING_ERRORS",
    "beta_hit_ratio",
    "expected_sampled_hit_ratio",
    "fit_beta",
    "fit_beta_global",
    "mapped_hit_ratio",
    "mapping",
    "mapping_errors",
    "scaled_hit_ratio",
]

MAPPINGS = ("linear", "bound", "beta")
#: the errors of Li et al. KDD 2020 Table 7, in its order
MAPPING_ERRORS = ("abs", "rel", "abs@1", "rel@1", "abs@2-10", "rel@2-10")
#: relative tolerance of a real cut-off K: R <= K counts when R <= K (1 + tolerance)
_CUTOFF_RTOL = 1e-10


def _check_sizes(n_items, sample_size) -> tuple[int, int]:
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    if sample_size < 2:
        raise ValueError("the mapping functions need a sample set of n >= 2 items")
    return n_items, sample_size


def _check_a(a) -> float:
    if a is None or isinstance(a, bool) or not np.isscalar(a) or not np.isfinite(a) or a <= 0:
        raise ValueError(f"the beta mapping needs a finite parameter a > 0, got {a!r}")
    return float(a)


def _log_a_cdf(a: float, sample_size: int, k_max: int) -> np.ndarray:
    """log(a S_k(a)) for k = 1..k_max (Li et al. KDD 2020 eq. 15–17, summed).

    a S_k(a) = Σ_{i<k} a C(n-1, i) B(a + i, n - i) is the probability that the sampled rank is
    at most k when (R - 1)/(N - 1) ~ Beta(a, 1); its log terms are
    log a + log Γ(n) - log Γ(n + a) + log Γ(a + i) - log Γ(i + 1).
    """
    i = np.arange(k_max, dtype=np.float64)
    log_terms = np.log(a) + gammaln(sample_size) - gammaln(sample_size + a) + gammaln(a + i) - gammaln(i + 1.0)
    return np.logaddexp.accumulate(log_terms)


def mapping(ks: int | ArrayLike, n_items: int, sample_size: int, kind: str = "linear",
            a: float | None = None) -> np.ndarray:
    """Mapping function f(k): the global cut-off K whose HR@K the sampled SHR@k approximates.

    Li, Jin, Gao & Liu, KDD 2020: ``linear`` is eq. 9, ``bound`` eq. 13, ``beta`` the
    recurrence eq. 16 with start eq. 17, evaluated through its closed form (see the module
    docstring) in log space.

    Parameters
    ----------
    ks : int or array_like of int
        Sampled cut-offs k in 1..n.
    n_items : int
        Number of items N.
    sample_size : int
        Sample set size n (>= 2).
    kind : {"linear", "bound", "beta"}
        Which mapping function.
    a : float, optional
        Parameter a > 0 of the Beta(a, 1) rank distribution; required for ``beta``.

    Returns
    -------
    numpy.ndarray
        float64 f(k), one per k (1-D). ``linear`` and ``beta`` give f(n) = N. ``bound`` is
        integer-valued and, as printed in the paper, exceeds N for k close to n
        (f(n) ≈ N + (N - 1)/(2(n - 1))); clip with ``np.minimum(f, N)`` to use it as a cut-off.

    Examples
    --------
    >>> mapping([1, 100], 10_000, 100, "beta", a=1.0)
    array([  100.99, 10000.  ])
    """
    n_items, sample_size = _check_sizes(n_items, sample_size)
    slope, intercept = _location(ks, sample_size, kind, a)
    f = intercept + (n_items - 1) * slope
    return np.floor(f) if kind == "bound" else f


def _location(ks, sample_size: int, kind: str, a) -> tuple[np.ndarray, float]:
    """f(k) = intercept + (N - 1) · slope_k: every mapping is affine in N - 1 before the floor of
    ``bound`` — slope (k - 1)/(n - 1) and intercept 1 for ``linear`` (eq. 9), (k - 1/2)/(n - 1)
    and 1/2 for ``bound`` (eq. 13), (a S_k(a))^{1/a} and 1 for ``beta`` (module docstring)."""
    kind = check_choice("mapping kind", kind, MAPPINGS)
    k = check_ranks(np.atleast_1d(ks), sample_size, name="ks").astype(np.float64)
    if kind != "beta" and a is not None:
        raise ValueError("a is a parameter of the beta mapping only")
    if kind == "linear":
        return (k - 1.0) / (sample_size - 1), 1.0
    if kind == "bound":
        return (k - 0.5) / (sample_size - 1), 0.5
    a = _check_a(a)
    log_cdf = _log_a_cdf(a, sample_size, int(k.max()))
    return np.exp(log_cdf[k.astype(np.int64) - 1] / a), 1.0


def fit_beta(sampled_ranks: ArrayLike, n_items: int | ArrayLike, sample_size: int, xtol: float = 1e-12) -> float:
    """Algorithm-specific Beta@P parameter a (Li, Jin, Gao & Liu, KDD 2020 §4.1, eq. 19).

    Eq. 19 iterates a ← -M / Σ_u ln((f(r_u; a) - 1)/(N - 1)), the Beta(a, 1) maximum-likelihood
    update with the global ranks replaced by their mapped locations f(r_u; a). Its fixed point
    is what this function returns. Because ln((f(r; a) - 1)/(N - 1)) = ln(a S_r(a)) / a (module
    docstring), the fixed point equation is equivalently

        (1/M) Σ_u ln(a S_{r_u}(a)) = -1,

    whose left side decreases strictly from 0 (a → 0) to -∞ (a → ∞) as soon as one r_u < n, so
    the root is unique; it is found by Brent's method on log a (the paper's plain iteration
    reaches the same point, usually in a few steps).

    Parameters
    ----------
    sampled_ranks : array_like of int
        Sampled ranks r_u in 1..n.
    n_items : int or array_like of int
        Number of items N, or the number of candidates N_u of each user (``unseen``
        protocol). The fixed point does not depend on N: ln((f(r; a) - 1)/(N - 1)) =
        ln(a S_r(a)) / a for every N, so per-user N_u give the same a; they are only checked
        (n <= min N_u).
    sample_size : int
        Sample set size n (>= 2).
    xtol : float
        Absolute tolerance on log a.

    Returns
    -------
    float
        The fitted a > 0.

    Raises
    ------
    ValueError
        If every sampled rank equals n (the likelihood then grows without bound in a).
    """
    if np.ndim(n_items):
        CandidateGroups.build(n_items, np.size(sampled_ranks), n_groups=1)  # checks the N_u
        n_items = int(np.min(n_items))
    n_items, sample_size = _check_sizes(n_items, sample_size)
    r = check_ranks(sampled_ranks, sample_size, name="sampled_ranks")
    if (r == sample_size).all():
        raise ValueError(f"every sampled rank equals n = {sample_size}; the Beta parameter a is unbounded")
    values, counts = np.unique(r, return_counts=True)
    weights = counts / r.size

    def excess(log_a: float) -> float:
        return float(weights @ _log_a_cdf(np.exp(log_a), sample_size, int(values[-1]))[values - 1]) + 1.0

    lo, hi = -5.0, 5.0
    while excess(lo) <= 0:
        lo -= 5.0
        if lo < -60:
            raise ValueError("could not bracket the Beta parameter: a < 1e-26")
    while excess(hi) >= 0:
        hi += 5.0
        if hi > 60:
            raise ValueError("could not bracket the Beta parameter: a > 1e26")
    # imported here: scipy.optimize adds 0.1 s to the start of every process that imports the package
    from scipy.optimize import brentq

    return float(np.exp(brentq(excess, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)))


def expected_sampled_hit_ratio(rank_distribution: ArrayLike, n_items: int, sample_size: int, ks: int | ArrayLike,
                               scheme: str = "binomial") -> np.ndarray:
    """Expected sampled hit ratio E[SHR@k] = Σ_R W_R Pr(r^R <= k) (Li et al. KDD 2020 eq. 4).

    Parameters
    ----------
    rank_distribution : array_like of float
        W_R = P(R) for R = 1..N (eq. 2), summing to one.
    n_items, sample_size : int
        N and n.
    ks : int or array_like of int
        Sampled cut-offs k in 1..n.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement (the two cases of §2.2).

    Returns
    -------
    numpy.ndarray
        E[SHR@k], one per k (1-D).
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    k = check_ranks(np.atleast_1d(ks), sample_size, name="ks")
    pmf = sampled_rank_pmf(rank_distribution, n_items, sample_size, scheme)
    return np.minimum(np.cumsum(pmf), 1.0)[k - 1]


def _cutoff(K: np.ndarray) -> np.ndarray:
    """The largest rank R counted by a real cut-off K (R <= K), absorbing rounding."""
    return np.floor(K * (1.0 + _CUTOFF_RTOL))


def _hits(R: np.ndarray, N: np.ndarray, slope: np.ndarray, intercept: float) -> np.ndarray:
    """Σ_u 1{R_u <= intercept + (N_u - 1) · slope} for each entry of ``slope`` (one pass per N_u)."""
    hits = np.zeros(slope.size)
    for N_value in np.unique(N):
        ranks = np.sort(R[N == N_value])
        hits += np.searchsorted(ranks, _cutoff(intercept + (N_value - 1.0) * slope), side="right")
    return hits


def mapped_hit_ratio(global_ranks, n_items, sample_size: int, ks, kind: str = "linear",
                     a: float | None = None) -> np.ndarray:
    """Global hit ratio at the mapped cut-off, HR@f(k) = (1/M) Σ_u 1{R_u <= f(k; N_u)}.

    Li, Jin, Gao & Liu, KDD 2020 eq. 1 evaluated at K = f(k) (eq. 9, 13, 16–17): the value that
    SHR@k is taken to approximate. Each user's cut-off uses the user's own N_u (module
    docstring); with one N it is the paper's HR@f(k).

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    sample_size : int
        Sample set size n (2 <= n <= min N_u).
    ks : int or array_like of int
        Sampled cut-offs k in 1..n.
    kind, a
        The mapping function, as in :func:`mapping`.

    Returns
    -------
    numpy.ndarray
        HR@f(k), one per k.
    """
    R, N = check_users(global_ranks, n_items)
    _, sample_size = _check_sizes(int(N.min()), sample_size)
    slope, intercept = _location(ks, sample_size, kind, a)
    return _hits(R, N, slope, intercept) / R.size


def _check_reference(N: np.ndarray, n_total) -> int:
    n_total = int(N.max()) if n_total is None else check_n_items(n_total)
    if n_total < N.max():
        raise ValueError(f"n_total = {n_total} is smaller than the largest N_u = {int(N.max())}")
    return n_total


def _check_cutoffs(cutoffs) -> np.ndarray:
    K = np.atleast_1d(np.asarray(cutoffs, dtype=np.float64))
    if K.ndim != 1 or not np.all(np.isfinite(K)) or np.any(K < 1):
        raise ValueError("cutoffs must be a 1-D array of finite cut-offs K >= 1")
    return K


def scaled_hit_ratio(global_ranks, n_items, cutoffs, n_total: int | None = None) -> np.ndarray:
    """Global hit ratio HR@K (Li et al. KDD 2020 eq. 1) for each cut-off K, scaled per user.

    User u counts if R_u <= K_u = 1 + (K - 1)(N_u - 1)/(N - 1), the same fraction of the user's
    N_u candidates as K is of all N items (module docstring); with one N, K_u = K.

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    cutoffs : array_like of float
        Cut-offs K >= 1 among N items (real values count the ranks R <= K).
    n_total : int, optional
        N, the number of items the cut-offs refer to (default: the largest N_u); at least max N_u.

    Returns
    -------
    numpy.ndarray
        HR@K, one per cut-off.
    """
    R, N = check_users(global_ranks, n_items)
    n_total = _check_reference(N, n_total)
    K = _check_cutoffs(cutoffs)
    return _hits(R, N, (K - 1.0) / (n_total - 1), 1.0) / R.size


def beta_hit_ratio(n_items, cutoffs, a: float, n_total: int | None = None) -> np.ndarray:
    """HR@K of the Beta(a, 1) rank model: (1/M) Σ_u (⌊K_u⌋ / N_u)^a (Li et al. KDD 2020 §3.2).

    The model draws X_u ~ Beta(a, 1) and puts the held-out item at R_u = ⌈N_u X_u⌉, so that
    P(R_u <= K) = (K / N_u)^a for K = 0..N_u — a proper distribution on 1..N_u whose
    continuous limit is the paper's W_R ∝ ((R - 1)/(N - 1))^{a-1}. Cut-offs are scaled per user
    as in :func:`scaled_hit_ratio`, so the two are comparable.

    Parameters
    ----------
    n_items : int or array_like of int
        N, or N_u per user (one entry per user: the mean is over users).
    cutoffs : array_like of float
        Cut-offs K >= 1 among N items.
    a : float
        Parameter a > 0.
    n_total : int, optional
        As in :func:`scaled_hit_ratio`.

    Returns
    -------
    numpy.ndarray
        The model's HR@K, one per cut-off.
    """
    a = _check_a(a)
    N = np.atleast_1d(np.asarray(n_items))
    if N.ndim != 1 or not np.issubdtype(N.dtype, np.integer) or N.min() < 2:
        raise ValueError("n_items must be one integer N >= 2 or one such N_u per user")
    n_total = _check_reference(N, n_total)
    K = _check_cutoffs(cutoffs)
    slope = (K - 1.0) / (n_total - 1)
    values, counts = np.unique(N, return_counts=True)
    total = sum(c * (np.minimum(_cutoff(1.0 + (v - 1.0) * slope), v) / v) ** a
                for v, c in zip(values.tolist(), counts.tolist(), strict=True))
    return total / N.size


def _beta_score(a: float, log_x: np.ndarray, gap: np.ndarray, weights: np.ndarray) -> float:
    """d/da of Σ_u w_u log[(R_u/N_u)^a - ((R_u - 1)/N_u)^a]; ``gap`` = log(R/(R - 1)), inf at R = 1."""
    with np.errstate(over="ignore"):
        tail = np.where(np.isinf(gap), 0.0, gap / np.expm1(a * np.where(np.isinf(gap), 1.0, gap)))
    return float(weights @ (log_x + tail))


def fit_beta_global(global_ranks, n_items, xtol: float = 1e-12) -> float:
    """Maximum-likelihood a of the Beta(a, 1) model of the global ranks (Li et al. KDD 2020 §3.2).

    The model of :func:`beta_hit_ratio`: P(R_u = R) = (R/N_u)^a - ((R - 1)/N_u)^a. Its
    log-likelihood ℓ(a) = Σ_u a log x_u + log(1 - (y_u/x_u)^a), with x_u = R_u/N_u and
    y_u = (R_u - 1)/N_u, is concave in a (a linear term plus log of the concave
    1 - e^{-a t}), so the root of

        ℓ'(a) = Σ_u log x_u + t_u / (e^{a t_u} - 1),   t_u = log(R_u / (R_u - 1))

    (the second term is absent when R_u = 1) is the unique maximum. It is found by Brent's
    method on log a. This fits the global ranks directly, where eq. 19 (:func:`fit_beta`)
    fits sampled ranks through the mapping f(r; a).

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R_u.
    n_items : int or array_like of int
        N, or N_u per user.
    xtol : float
        Absolute tolerance on log a.

    Returns
    -------
    float
        The fitted a > 0.

    Raises
    ------
    ValueError
        If every R_u = 1 (the likelihood grows as a -> 0) or every R_u = N_u (as a -> ∞).
    """
    R, N = check_users(global_ranks, n_items)
    if np.all(R == 1):
        raise ValueError("every global rank is 1; the Beta parameter a tends to 0")
    if np.all(R == N):
        raise ValueError("every global rank is the last one (R_u = N_u); the Beta parameter a is unbounded")
    pairs, counts = np.unique(np.stack([R, N]), axis=1, return_counts=True)
    r, n = pairs.astype(np.float64)
    log_x = np.log(r / n)
    with np.errstate(divide="ignore"):
        gap = np.log(r) - np.log(r - 1.0)

    def score(log_a: float) -> float:
        return _beta_score(np.exp(log_a), log_x, gap, counts.astype(np.float64))

    lo, hi = -5.0, 5.0
    while score(lo) <= 0:
        lo -= 5.0
        if lo < -60:
            raise ValueError("could not bracket the Beta parameter: a < 1e-26")
    while score(hi) >= 0:
        hi += 5.0
        if hi > 60:
            raise ValueError("could not bracket the Beta parameter: a > 1e26")
    # imported here: scipy.optimize adds 0.1 s to the start of every process that imports the package
    from scipy.optimize import brentq

    return float(np.exp(brentq(score, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)))


def mapping_errors(sampled_hit_ratio, mapped_hit_ratio) -> dict[str, float]:
    """Errors between SHR@k and HR@f(k) for k = 1..n (Li et al. KDD 2020 §A, Table 7).

    With e_k = |HR@f(k) - SHR@k|: ``abs`` = (1/n) Σ_{k=1}^n e_k, ``rel`` = (1/n) Σ_k e_k /
    SHR@k, ``abs@1`` = e_1, ``rel@1`` = e_1 / SHR@1, and ``abs@2-10``, ``rel@2-10`` the means
    over k = 2..min(10, n). A relative error where SHR@k = 0 is undefined (NaN), and so is
    any mean that includes it.

    Parameters
    ----------
    sampled_hit_ratio, mapped_hit_ratio : array_like of float
        SHR@k and HR@f(k) for k = 1..n (the same length n >= 2).

    Returns
    -------
    dict
        The errors of :data:`MAPPING_ERRORS`, in that order.
    """
    shr = np.asarray(sampled_hit_ratio, dtype=np.float64)
    hr = np.asarray(mapped_hit_ratio, dtype=np.float64)
    if shr.ndim != 1 or shr.shape != hr.shape or shr.size < 2:
        raise ValueError("sampled_hit_ratio and mapped_hit_ratio must be 1-D, of the same length n >= 2 "
                         "(k = 1..n)")
    if not (np.all(np.isfinite(shr)) and np.all(np.isfinite(hr))):
        raise ValueError("hit ratios must be finite")
    error = np.abs(hr - shr)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(shr > 0, error / shr, np.nan)
    return {"abs": float(error.mean()), "rel": float(relative.mean()),
            "abs@1": float(error[0]), "rel@1": float(relative[0]),
            "abs@2-10": float(error[1:10].mean()), "rel@2-10": float(relative[1:10].mean())}
