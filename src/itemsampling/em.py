"""EM for the weights of a finite mixture with known components (Jin et al. AAAI 2021, App. B).

The sampled ranks are a mixture over the global rank R of the kernel P(r | R) with mixing
weights π_R = P(R) (AAAI'21 eq. 18). Users with the same observation (the same sampled rank r
and, for adaptive sampling, the same sample size n) contribute identical terms, so the data are
summarised by the ``d`` distinct observations: a kernel matrix ``K`` of shape ``(N, d)`` with
``K[R-1, j] = P(obs_j | R)`` and a weight ``c_j`` per observation (a user count, or a count times
the WMLE weight w(r)). With ``q = Kᵀπ`` the (weighted) log-likelihood is

    ℓ(π) = Σ_j c_j log q_j                                     (AAAI'21 eq. 19 and 22)

and one EM step is (AAAI'21 eq. 21 and 23; AAAI'23 eq. 21–22 in App. G)

    π_R ← π_R · Σ_j (c_j / Σ_i c_i) · K[R, j] / q_j,

two matrix–vector products of size N x d. EM never decreases ℓ, and its fixed points with
π > 0 satisfy the Karush–Kuhn–Tucker conditions of max ℓ over the simplex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_TOL", "EMResult", "em_mixture_weights", "mixture_log_likelihood"]

#: default number of EM steps: the AAAI'23 authors' code runs exactly 100 from the uniform start
DEFAULT_MAX_ITER = 100
#: default stopping threshold on the relative increase of the log-likelihood per step
DEFAULT_TOL = 1e-9


@dataclass(frozen=True)
class EMResult:
    """Outcome of :func:`em_mixture_weights`.

    Attributes
    ----------
    weights : numpy.ndarray
        ``(N,)`` estimated mixing weights π (a probability vector).
    log_likelihood : numpy.ndarray
        Trace of ℓ(π_t) for t = 0 (the start) .. ``n_iter``.
    n_iter : int
        Number of EM steps taken.
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    """

    weights: np.ndarray
    log_likelihood: np.ndarray
    n_iter: int
    converged: bool


def mixture_log_likelihood(weights, kernel, obs_weights) -> float:
    """ℓ(π) = Σ_j c_j log (Kᵀπ)_j (AAAI'21 eq. 19; eq. 22 when c carries the WMLE weights).

    Parameters
    ----------
    weights : array_like
        ``(N,)`` mixing weights π.
    kernel : numpy.ndarray
        ``(N, d)`` matrix ``K[R-1, j] = P(obs_j | R)``.
    obs_weights : array_like
        ``(d,)`` non-negative weight c_j of each distinct observation.

    Returns
    -------
    float
        The log-likelihood; ``-inf`` if an observation with positive weight has probability 0.
    """
    q = np.asarray(kernel).T @ np.asarray(weights, dtype=np.float64)
    c = np.asarray(obs_weights, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(c > 0, c * np.log(q), 0.0)))


def em_mixture_weights(
    kernel: np.ndarray,
    obs_weights,
    *,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    init=None,
    progress: bool = False,
) -> EMResult:
    """Maximise ℓ(π) over the simplex by EM (AAAI'21 eq. 21/23; AAAI'23 App. G eq. 21–22).

    Parameters
    ----------
    kernel : numpy.ndarray
        ``(N, d)`` non-negative matrix ``K[R-1, j] = P(obs_j | R)``.
    obs_weights : array_like
        ``(d,)`` positive weight of each distinct observation (user counts, optionally times
        WMLE weights). Only their proportions matter.
    max_iter : int
        Maximum number of EM steps.
    tol : float
        Stop after the first step whose log-likelihood increase is at most
        ``tol * |ℓ|`` (a relative change; ``ℓ`` grows with the number of users, so this is
        the same as an absolute threshold on the mean log-likelihood per unit weight).
        ``tol=0`` runs all ``max_iter`` steps unless ℓ stops changing exactly.
    init : array_like, optional
        Starting π (a probability vector); uniform by default (as in the papers). Entries
        that start at zero stay zero.
    progress : bool
        Show a progress bar.

    Returns
    -------
    EMResult
    """
    K = np.asarray(kernel)
    c = np.asarray(obs_weights, dtype=np.float64)
    frac = c / c.sum()
    n_rows = K.shape[0]
    pi = np.full(n_rows, 1.0 / n_rows) if init is None else np.array(init, dtype=np.float64)
    q = K.T @ pi
    if np.any(q[c > 0] <= 0):
        raise ValueError(
            "the starting distribution gives probability 0 to an observed sampled rank; "
            "use a starting distribution with more support (e.g. the uniform default)"
        )
    trace = [float(c @ np.log(q))]
    converged = False
    n_iter = 0
    with tqdm(total=max_iter, desc="EM", disable=not progress, leave=False) as bar:
        for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported after the loop
            pi = pi * (K @ (frac / q))
            pi /= pi.sum()  # only rounding error: the step preserves the total mass
            q = K.T @ pi
            trace.append(float(c @ np.log(q)))
            bar.update()
            if trace[-1] - trace[-2] <= tol * abs(trace[-1]):
                converged = True
                break
    return EMResult(weights=pi, log_likelihood=np.asarray(trace), n_iter=n_iter, converged=converged)
