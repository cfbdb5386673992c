"""Maximal entropy with minimal distribution bias (MES; Jin et al. AAAI 2021, eq. 24–27).

MES estimates π = P(R) on the simplex by minimising (the negative of AAAI'21 eq. 26)

    f(π) = Σ_r P̃(r) (Σ_R P(r | R) π_R − P̃(r))² − η H(π),    H(π) = −Σ_R π_R log π_R,

a strongly convex problem (natural logarithm). Only the d sampled ranks with P̃(r) > 0 enter the
squared error, so with ``K`` the ``(N, d)`` kernel columns of those ranks and ``p = P̃`` on them,
``f(π) = Σ_j p_j ((Kᵀπ)_j − p_j)² − η H(π)``.

Solver: Newton's method on the Lagrange dual. Introducing y = Kᵀπ with multiplier λ ∈ R^d,
minimising the Lagrangian over π ∈ simplex gives the Gibbs form π(λ) ∝ exp(−Kλ/η) and over y a
quadratic, so the dual function is

    g(λ) = −η log Σ_R exp(−(Kλ)_R / η) − λ·p − Σ_j λ_j² / (4 p_j),

smooth and strongly concave in only d (≤ n) variables. Strong duality holds (the constraint is
linear and the entropy has interior points), so π(λ*) is the MES solution, and for every λ the
point π(λ) is feasible with f(π(λ)) − f* ≤ f(π(λ)) − g(λ): the duality gap certifies the accuracy
of the returned objective value. In the scaled variable ν = λ / (2√p) the dual Hessian is
2I + (1/η) Bᵀ(diag π − ππᵀ)B with B = K diag(2√p), whose eigenvalues lie in [2, 2 + 1/η], so
damped Newton (Cholesky of a d x d matrix, Armijo backtracking) converges globally and
quadratically near the optimum. Products with K use its band (:class:`~itemsampling.banded_kernel.BandedKernel`,
entries above 1e-20 of their row maximum), and the Hessian's Kᵀ diag(π) K is accumulated panel
by panel with symmetric rank-k updates, or, for a binomial kernel, taken from one product with
the kernel of set size 2n - 1 (:mod:`itemsampling.binomial_gram`), so a step costs far less than
the dense N x d² product. :func:`solve_mes_stacked` solves the problems of many draws of sampled
ranks on one kernel together: their Newton steps run in lockstep, so the products with K (and
with the kernel of the Gram matrix) are matrix–matrix products over all the draws.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import logsumexp

from .banded_kernel import BandedKernel

__all__ = ["DEFAULT_TOL", "MESResult", "mes_objective_value", "solve_mes", "solve_mes_stacked"]

#: default stopping threshold on the relative duality gap
DEFAULT_TOL = 1e-10
#: blocks of rows whose π_R are all below this are left out of the Newton Hessian: their
#: contribution is far under the rounding error (and only the step, not the gap, depends on it)
_HESSIAN_ROW_CUTOFF = 1e-20


@dataclass(frozen=True)
class MESResult:
    """Outcome of :func:`solve_mes`.

    Attributes
    ----------
    weights : numpy.ndarray
        ``(N,)`` minimiser π of the MES objective.
    objective : float
        f(π) at the returned π.
    duality_gap : float
        f(π) − g(λ) ≥ f(π) − f*, an upper bound on the objective error.
    n_iter : int
        Number of Newton steps.
    converged : bool
        Whether the gap fell below ``tol * max(|f|, 1e-300)``.
    """

    weights: np.ndarray
    objective: float
    duality_gap: float
    n_iter: int
    converged: bool


def mes_objective_value(weights, kernel, p_tilde, eta: float) -> float:
    """f(π) = Σ_j p_j ((Kᵀπ)_j − p_j)² − η H(π) (AAAI'21 eq. 25–26, to be minimised).

    Parameters
    ----------
    weights : array_like
        ``(N,)`` distribution π.
    kernel : numpy.ndarray
        ``(N, d)`` columns P(r_j | R) of the observed sampled ranks r_j.
    p_tilde : array_like
        ``(d,)`` empirical probabilities P̃(r_j).
    eta : float
        Weight η of the entropy.
    """
    pi = np.asarray(weights, dtype=np.float64)
    p = np.asarray(p_tilde, dtype=np.float64)
    resid = np.asarray(kernel).T @ pi - p
    positive = pi > 0
    neg_entropy = float(np.sum(pi[positive] * np.log(pi[positive])))
    return float(p @ resid**2) + eta * neg_entropy


class _ScaledDual:
    """φ(ν) = −g(2√p ⊙ ν), its gradient and Hessian, and the primal point π(ν)."""

    def __init__(self, kernel, p: np.ndarray, eta: float, gram=None):
        self.K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(np.asarray(kernel, dtype=np.float64))
        self.gram = gram
        self.p, self.eta = p, eta
        self.scale = 2.0 * np.sqrt(p)  # λ = scale * ν
        self.linear = self.scale * p  # λ·p = linear·ν

    def evaluate(self, nu: np.ndarray):
        """Return (φ(ν), π(ν), z − logsumexp(z)) with z = −Kλ/η."""
        return _gibbs_point(self.K.matvec(self.scale * nu) * (-1.0 / self.eta), self.eta, self.linear, nu)

    def primal(self, pi: np.ndarray, log_pi: np.ndarray) -> tuple[float, np.ndarray]:
        """f(π) and q = Kᵀπ, with log π taken from the Gibbs form (exact where π underflows)."""
        q = self.K.rmatvec(pi)
        return _primal_value(self.p, q, self.eta, pi, log_pi), q

    def gradient(self, nu: np.ndarray, q: np.ndarray) -> np.ndarray:
        return _gradient(self.scale, self.linear, nu, q)

    def hessian(self, pi: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Upper triangle of the Hessian of φ (the lower triangle may not be filled in)."""
        weighted = self.K.gram_upper(pi, skip_below=_HESSIAN_ROW_CUTOFF) if self.gram is None else self.gram(pi)
        return _hessian(weighted, q, self.scale, self.eta)


def _gibbs_point(z: np.ndarray, eta: float, linear: np.ndarray, nu: np.ndarray):
    """(φ(ν), π(ν), log π(ν)) from z = −Kλ/η: π is the Gibbs form exp(z) / Σ exp(z)."""
    lse = logsumexp(z)
    log_pi = z - lse
    return eta * lse + linear @ nu + nu @ nu, np.exp(log_pi), log_pi


def _primal_value(p: np.ndarray, q: np.ndarray, eta: float, pi: np.ndarray, log_pi: np.ndarray) -> float:
    """f(π) = Σ_j p_j (q_j − p_j)² + η Σ_R π_R log π_R with q = Kᵀπ."""
    return float(p @ (q - p) ** 2) + eta * float(pi @ log_pi)


def _gradient(scale: np.ndarray, linear: np.ndarray, nu: np.ndarray, q: np.ndarray) -> np.ndarray:
    """∇φ(ν) = −scale ⊙ q + linear + 2ν."""
    return -scale * q + linear + 2.0 * nu


def _hessian(weighted: np.ndarray, q: np.ndarray, scale: np.ndarray, eta: float) -> np.ndarray:
    """∇²φ(ν) = 2I + (1/η) diag(scale) (Kᵀ diag(π) K − qqᵀ) diag(scale) from ``weighted`` = Kᵀ diag(π) K."""
    hess = (weighted - np.outer(q, q)) * np.outer(scale, scale) * (1.0 / eta)
    hess[np.diag_indices_from(hess)] += 2.0
    return hess


def _newton_step(grad: np.ndarray, hess: np.ndarray) -> tuple[np.ndarray, float]:
    """The Newton direction −H⁻¹∇φ (Cholesky of the upper triangle) and its slope ∇φ·step."""
    step = -cho_solve(cho_factor(hess, lower=False), grad)
    return step, float(grad @ step)


def _within(gap: float, f: float, tol: float) -> bool:
    """Whether the duality gap is at most ``tol`` relative to |f|."""
    return gap <= tol * max(abs(f), 1e-300)


def _accepted(phi_t: float, phi: float, t: float, slope: float) -> bool:
    """Armijo's condition of the backtracking line search (or a step too short to halve)."""
    return phi_t <= phi + 0.25 * t * slope or t < 1e-12


def _warn_stopped(n_iter: int, gap: float, f: float, tol: float, which: str = "") -> None:
    """The RuntimeWarning of a solve that used up its steps (for the caller of the solver)."""
    warnings.warn(
        f"MES Newton solver stopped after {n_iter} steps with relative duality gap "
        f"{gap / max(abs(f), 1e-300):.2e} > tol={tol:g}{which}; increase max_iter or tol",
        RuntimeWarning,
        stacklevel=3,
    )


def solve_mes(
    kernel: np.ndarray | BandedKernel,
    p_tilde,
    eta: float,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 500,
    gram=None,
) -> MESResult:
    """Minimise the MES objective (AAAI'21 eq. 26–27) by damped Newton on its dual.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` columns P(r_j | R) of the observed sampled ranks (banded already, or banded
        here).
    p_tilde : array_like
        ``(d,)`` empirical probabilities P̃(r_j) > 0 (summing to 1).
    eta : float
        Entropy weight η > 0.
    tol : float
        Stop when the duality gap is at most ``tol * |f(π)|`` (a bound on the relative
        objective error).
    max_iter : int
        Maximum number of Newton steps; a ``RuntimeWarning`` is issued if they are used up.
    gram : callable, optional
        ``w ↦ Kᵀ diag(w) K`` (``(d, d)``, at least its upper triangle) for the Newton Hessian,
        e.g. ``BinomialGram(N, n).at(ranks).gram`` (:mod:`itemsampling.binomial_gram`); by
        default accumulated from the kernel's band.

    Returns
    -------
    MESResult
    """
    p = np.asarray(p_tilde, dtype=np.float64)
    dual = _ScaledDual(kernel, p, float(eta), gram)
    nu = np.zeros(p.size)
    phi, pi, log_pi = dual.evaluate(nu)
    f, q = dual.primal(pi, log_pi)
    n_iter, converged = 0, False
    while True:
        gap = f + phi  # f(π(ν)) − g(ν)
        if _within(gap, f, tol):
            converged = True
            break
        if n_iter == max_iter:
            break
        step, slope = _newton_step(dual.gradient(nu, q), dual.hessian(pi, q))
        if slope >= 0:  # the Newton direction is no longer a descent direction: rounding floor
            converged = _within(gap, f, 1e3 * tol)
            break
        t = 1.0
        while True:
            trial = nu + t * step
            phi_t, pi_t, log_pi_t = dual.evaluate(trial)
            if _accepted(phi_t, phi, t, slope):
                break
            t *= 0.5
        nu, phi, pi, log_pi = trial, phi_t, pi_t, log_pi_t
        f, q = dual.primal(pi, log_pi)
        n_iter += 1
    if not converged:
        _warn_stopped(n_iter, gap, f, tol)
    return MESResult(weights=pi, objective=f, duality_gap=float(gap), n_iter=n_iter, converged=converged)


@dataclass
class _Draw:
    """The Newton state of one problem of :func:`solve_mes_stacked`, in its own coordinates."""

    index: int
    observed: np.ndarray  # positions of its d_b observed ranks among the kernel's columns
    p: np.ndarray
    scale: np.ndarray = field(init=False)  # λ = scale ⊙ ν, as in _ScaledDual
    linear: np.ndarray = field(init=False)
    nu: np.ndarray = field(init=False)
    phi: float = 0.0
    pi: np.ndarray | None = None
    log_pi: np.ndarray | None = None
    f: float = 0.0
    q: np.ndarray | None = None
    n_iter: int = 0
    converged: bool = False
    done: bool = False
    gap: float = 0.0

    def __post_init__(self) -> None:
        self.scale = 2.0 * np.sqrt(self.p)
        self.linear = self.scale * self.p
        self.nu = np.zeros(self.p.size)


def solve_mes_stacked(
    kernel: np.ndarray | BandedKernel,
    p_tilde,
    eta: float,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 500,
    gram=None,
) -> list[MESResult]:
    """:func:`solve_mes` of B problems on the columns of one kernel, their Newton steps in lockstep.

    Problem b is the MES problem (AAAI'21 eq. 26–27) of the ranks it observed, the columns j
    with ``p_tilde[j, b] > 0``: exactly what :func:`solve_mes` solves with the kernel at those
    columns. Each takes the damped Newton steps of :func:`solve_mes` and stops by its rules;
    what the problems share is every product with the kernel: ``K Λ`` for the Gibbs points
    π_b ∝ exp(−K λ_b / η) of all the problems still going (their λ_b zero at the columns they
    did not observe) and ``Kᵀ Π`` are matrix–matrix products (and so is ``K₂ᵀ Π`` of the Gram
    matrices of the Newton Hessians with ``gram``). The results equal those of :func:`solve_mes`
    up to rounding: the products sum the same terms in another order.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` columns P(r_j | R) of every sampled rank observed in any problem.
    p_tilde : array_like
        ``(d, B)``: column b holds P̃ of problem b (summing to 1), 0 at the ranks it did not observe.
    eta, tol, max_iter
        As in :func:`solve_mes`, for every problem.
    gram : callable, optional
        ``(Π, problems) ↦`` the matrices Kᵀ diag(π_b) K at the observed columns of each problem
        (at least the upper triangles), in order, for the ``(N, m)`` current points Π of the
        problems ``problems`` (their indices b); an iterator, so that only one d_b x d_b matrix
        is held at a time. By default each is accumulated from the kernel's band.

    Returns
    -------
    list of MESResult
        One per column of ``p_tilde``, in order.
    """
    K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(np.asarray(kernel, dtype=np.float64))
    p_all = np.asarray(p_tilde, dtype=np.float64)
    if p_all.ndim != 2 or p_all.shape[0] != K.shape[1] or p_all.shape[1] == 0:
        raise ValueError(f"p_tilde must be a (d, B) matrix with d = {K.shape[1]} kernel columns and B >= 1, "
                         f"got shape {p_all.shape}")
    if not np.all(np.isfinite(p_all)) or np.any(p_all < 0) or np.any(p_all.max(axis=0) <= 0):
        raise ValueError("every column of p_tilde must be a distribution: finite, >= 0, with a positive entry")
    eta = float(eta)
    draws = [_Draw(b, observed, p_all[observed, b])
             for b, observed in enumerate(np.flatnonzero(column > 0) for column in p_all.T)]
    if gram is None:
        gram = _band_grams(K, draws)
    for draw, (phi, pi, log_pi) in zip(draws, _evaluate(K, draws, [d.nu for d in draws], eta), strict=True):
        draw.phi, draw.pi, draw.log_pi = phi, pi, log_pi
    _primal(K, draws, eta)
    active = draws
    while active:
        newton = []
        for draw in active:
            draw.gap = draw.f + draw.phi
            if _within(draw.gap, draw.f, tol):
                draw.converged = draw.done = True
            elif draw.n_iter == max_iter:
                draw.done = True
            else:
                newton.append(draw)
        searching = []
        if newton:
            grams = gram(np.column_stack([d.pi for d in newton]), [d.index for d in newton])
            for draw, weighted in zip(newton, grams, strict=True):
                step, slope = _newton_step(_gradient(draw.scale, draw.linear, draw.nu, draw.q),
                                           _hessian(weighted, draw.q, draw.scale, eta))
                if slope >= 0:  # rounding floor, as in solve_mes
                    draw.converged, draw.done = _within(draw.gap, draw.f, 1e3 * tol), True
                else:
                    searching.append((draw, step, slope))
        _line_search(K, searching, eta)
        if searching:
            _primal(K, [draw for draw, _, _ in searching], eta)
            for draw, _, _ in searching:
                draw.n_iter += 1
        active = [draw for draw in active if not draw.done]
    for draw in draws:
        if not draw.converged:
            _warn_stopped(draw.n_iter, draw.gap, draw.f, tol, f" (problem {draw.index})")
    return [MESResult(weights=d.pi, objective=d.f, duality_gap=float(d.gap), n_iter=d.n_iter,
                      converged=d.converged) for d in draws]


def _evaluate(K: BandedKernel, draws, nus, eta: float):
    """(φ, π, log π) of :meth:`_ScaledDual.evaluate` at ``nus`` of ``draws``, one product ``K Λ``."""
    lam = np.zeros((K.shape[1], len(draws)))
    for i, (draw, nu) in enumerate(zip(draws, nus, strict=True)):
        lam[draw.observed, i] = draw.scale * nu
    z_all = np.ascontiguousarray((K.matmat(lam) * (-1.0 / eta)).T)  # row i: z of draw i
    return [_gibbs_point(z, eta, draw.linear, nu) for draw, nu, z in zip(draws, nus, z_all, strict=True)]


def _primal(K: BandedKernel, draws, eta: float) -> None:
    """f(π) and q = Kᵀπ of :meth:`_ScaledDual.primal` for ``draws``, one product ``Kᵀ Π``."""
    q_all = K.rmatmat(np.column_stack([d.pi for d in draws]))
    for i, draw in enumerate(draws):
        draw.q = q_all[draw.observed, i]
        draw.f = _primal_value(draw.p, draw.q, eta, draw.pi, draw.log_pi)


def _line_search(K: BandedKernel, searching, eta: float) -> None:
    """Armijo backtracking of :func:`solve_mes` for every (draw, step, slope), trials in lockstep."""
    pending = [(draw, step, slope, 1.0) for draw, step, slope in searching]
    while pending:
        trials = [draw.nu + t * step for draw, step, _, t in pending]
        points = _evaluate(K, [draw for draw, *_ in pending], trials, eta)
        later = []
        for (draw, step, slope, t), trial, (phi_t, pi_t, log_pi_t) in zip(pending, trials, points, strict=True):
            if _accepted(phi_t, draw.phi, t, slope):
                draw.nu, draw.phi, draw.pi, draw.log_pi = trial, phi_t, pi_t, log_pi_t
            else:
                later.append((draw, step, slope, t * 0.5))
        pending = later


def _band_grams(K: BandedKernel, draws):
    """The default ``gram`` of :func:`solve_mes_stacked`: each problem's Gram matrix from the band."""

    def grams(pis: np.ndarray, which):
        return (K.gram_upper(pis[:, i], skip_below=_HESSIAN_ROW_CUTOFF)[np.ix_(draws[b].observed, draws[b].observed)]
                for i, b in enumerate(which))

    return grams
