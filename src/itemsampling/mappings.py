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
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln

from ._validation import check_choice, check_n_items, check_ranks, check_sample_size
from .candidates import CandidateGroups
from .kernels import SCHEMES
from .simulation import sampled_rank_pmf

__all__ = ["MAPPINGS", "expected_sampled_hit_ratio", "fit_beta", "mapping"]

MAPPINGS = ("linear", "bound", "beta")


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


def mapping(ks, n_items: int, sample_size: int, kind: str = "linear", a: float | None = None) -> np.ndarray:
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
    kind = check_choice("mapping kind", kind, MAPPINGS)
    k = check_ranks(np.atleast_1d(ks), sample_size, name="ks").astype(np.float64)
    scale = (n_items - 1) / (sample_size - 1)
    if kind == "linear":
        if a is not None:
            raise ValueError("a is a parameter of the beta mapping only")
        return (k - 1.0) * scale + 1.0
    if kind == "bound":
        if a is not None:
            raise ValueError("a is a parameter of the beta mapping only")
        return np.floor((k - 0.5) * scale + 0.5)
    a = _check_a(a)
    log_cdf = _log_a_cdf(a, sample_size, int(k.max()))
    return 1.0 + (n_items - 1) * np.exp(log_cdf[k.astype(np.int64) - 1] / a)


def fit_beta(sampled_ranks, n_items, sample_size: int, xtol: float = 1e-12) -> float:
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
    return float(np.exp(brentq(excess, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)))


def expected_sampled_hit_ratio(rank_distribution, n_items: int, sample_size: int, ks,
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
