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


@dataclass
class _Draw:
    """The Newton state of one problem of :func:`_solve`, in its own coordinates: ν with λ =
    scale ⊙ ν, scale = 2√p (the scaled dual of the module docstring), the point π(ν) and q = Kᵀπ."""

    index: int
    observed: np.ndarray  # positions of its d_b observed ranks among the kernel's columns
    p: np.ndarray
    scale: np.ndarray = field(init=False)
    linear: np.ndarray = field(init=False)  # λ·p = linear·ν
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


def _gibbs_point(z: np.ndarray, eta: float, linear: np.ndarray, nu: np.ndarray, log_base=None):
    """(φ(ν), π(ν), log π(ν)) from z = −Kλ/η: π is the Gibbs form exp(z) / Σ exp(z), or
    w exp(z) / Σ w exp(z) with the base measure w of a grid's nodes (``log_base`` = log w)."""
    if log_base is not None:
        z = z + log_base
    lse = logsumexp(z)
    log_pi = z - lse
    return eta * lse + linear @ nu + nu @ nu, np.exp(log_pi), log_pi


def _primal_value(p: np.ndarray, q: np.ndarray, eta: float, pi: np.ndarray, log_pi: np.ndarray,
                  log_base=None) -> float:
    """f(π) = Σ_j p_j (q_j − p_j)² + η Σ_R π_R log π_R with q = Kᵀπ (η Σ_j π_j log(π_j / w_j)
    on a grid's nodes of weights w)."""
    if log_base is not None:
        return float(p @ (q - p) ** 2) + eta * float(pi @ (log_pi - log_base))
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
        stacklevel=4,
    )


def solve_mes(
    kernel: np.ndarray | BandedKernel,
    p_tilde,
    eta: float,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 500,
    gram=None,
    base=None,
) -> MESResult:
    """Minimise the MES objective (AAAI'21 eq. 26–27) by damped Newton on its dual.

    A batch of one problem of :func:`solve_mes_stacked`, with vector products.

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
    base : array_like, optional
        ``(N,)`` number of global ranks each row of the kernel stands for (the weights of a
        :class:`~itemsampling.rank_grid.RankGrid`'s nodes): the entropy is then that of P(R) on
        the ranks, −Σ_j π_j log(π_j / w_j), and π(λ) ∝ w exp(−Kλ/η). By default each row is
        one rank.

    Returns
    -------
    MESResult
    """
    p = np.asarray(p_tilde, dtype=np.float64)
    if p.ndim != 1 or np.any(p <= 0):
        raise ValueError("p_tilde must be a vector of positive probabilities P̃(r_j) of the observed ranks")
    return _solve(kernel, p[:, None], eta, tol, max_iter, "vector", [gram], base)[0]


def solve_mes_stacked(
    kernel: np.ndarray | BandedKernel,
    p_tilde,
    eta: float,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 500,
    gram=None,
    base=None,
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
    base : array_like, optional
        As in :func:`solve_mes`.

    Returns
    -------
    list of MESResult
        One per column of ``p_tilde``, in order.
    """
    return _solve(kernel, p_tilde, eta, tol, max_iter, "matrix", gram, base)


def _solve(kernel, p_tilde, eta: float, tol: float, max_iter: int, products: str, gram, base=None) -> list[MESResult]:
    """The one Newton loop of MES: every problem's damped Newton steps on the dual (module
    docstring), in lockstep, with the kernel products of ``products`` (:data:`_PRODUCTS`)."""
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
    log_base = None if base is None else np.log(np.asarray(base, dtype=np.float64))
    if log_base is not None and log_base.shape != (K.shape[0],):
        raise ValueError(f"base must give one weight per kernel row ({K.shape[0]}), got shape {log_base.shape}")
    kernel_products = _PRODUCTS[products](K, draws, eta, gram, log_base)
    for draw, (phi, pi, log_pi) in zip(draws, kernel_products.evaluate(draws, [d.nu for d in draws]), strict=True):
        draw.phi, draw.pi, draw.log_pi = phi, pi, log_pi
    kernel_products.primal(draws)
    active = draws
    while active:
        newton = []
        for draw in active:
            draw.gap = draw.f + draw.phi  # f(π(ν)) − g(ν)
            if _within(draw.gap, draw.f, tol):
                draw.converged = draw.done = True
            elif draw.n_iter == max_iter:
                draw.done = True
            else:
                newton.append(draw)
        searching = []
        for draw, weighted in zip(newton, kernel_products.grams(newton), strict=True):
            step, slope = _newton_step(_gradient(draw.scale, draw.linear, draw.nu, draw.q),
                                       _hessian(weighted, draw.q, draw.scale, eta))
            if slope >= 0:  # the Newton direction is no longer a descent direction: rounding floor
                draw.converged, draw.done = _within(draw.gap, draw.f, 1e3 * tol), True
            else:
                searching.append((draw, step, slope))
        _line_search(kernel_products, searching)
        if searching:
            kernel_products.primal([draw for draw, _, _ in searching])
            for draw, _, _ in searching:
                draw.n_iter += 1
        active = [draw for draw in active if not draw.done]
    for draw in draws:
        if not draw.converged:
            _warn_stopped(draw.n_iter, draw.gap, draw.f, tol, f" (problem {draw.index})" if len(draws) > 1 else "")
    return [MESResult(weights=d.pi, objective=d.f, duality_gap=float(d.gap), n_iter=d.n_iter,
                      converged=d.converged) for d in draws]


def _line_search(kernel_products, searching) -> None:
    """Armijo backtracking for every (draw, step, slope) from t = 1, halving t, trials in lockstep."""
    pending = [(draw, step, slope, 1.0) for draw, step, slope in searching]
    while pending:
        trials = [draw.nu + t * step for draw, step, _, t in pending]
        points = kernel_products.evaluate([draw for draw, *_ in pending], trials)
        later = []
        for (draw, step, slope, t), trial, (phi_t, pi_t, log_pi_t) in zip(pending, trials, points, strict=True):
            if _accepted(phi_t, draw.phi, t, slope):
                draw.nu, draw.phi, draw.pi, draw.log_pi = trial, phi_t, pi_t, log_pi_t
            else:
                later.append((draw, step, slope, t * 0.5))
        pending = later


class _VectorProducts:
    """The kernel products of each problem on its own, with the kernel at its observed columns:
    ``K_b λ_b`` and ``K_bᵀ π_b`` (matrix–vector), and its Gram matrix from ``grams[b]`` (``w ↦
    K_bᵀ diag(w) K_b``) or from the band of K_b."""

    def __init__(self, K: BandedKernel, draws, eta: float, grams, log_base=None):
        self.eta, self.log_base = eta, log_base  # log w of a grid's nodes, or None
        self.kernels = [K if draw.observed.size == K.shape[1] else K.select_columns(draw.observed) for draw in draws]
        self.gram_of = [gram or (lambda pi, kernel=kernel: kernel.gram_upper(pi, skip_below=_HESSIAN_ROW_CUTOFF))
                        for gram, kernel in zip(grams, self.kernels, strict=True)]

    def evaluate(self, draws, nus):
        """(φ(ν), π(ν), log π(ν)) of each draw at its ν."""
        return [_gibbs_point(self.kernels[d.index].matvec(d.scale * nu) * (-1.0 / self.eta), self.eta, d.linear, nu,
                             self.log_base) for d, nu in zip(draws, nus, strict=True)]

    def primal(self, draws) -> None:
        """f(π) and q = Kᵀπ of each draw, with log π from the Gibbs form (exact where π underflows)."""
        for draw in draws:
            draw.q = self.kernels[draw.index].rmatvec(draw.pi)
            draw.f = _primal_value(draw.p, draw.q, self.eta, draw.pi, draw.log_pi, self.log_base)

    def grams(self, draws):
        return (self.gram_of[d.index](d.pi) for d in draws)


class _MatrixProducts:
    """The kernel products of all the problems still going together: ``K Λ`` and ``Kᵀ Π``
    (matrix–matrix), and their Gram matrices from ``gram`` (``(Π, which) ↦`` an iterator) or
    from the band."""

    def __init__(self, K: BandedKernel, draws, eta: float, gram, log_base=None):
        self.K, self.eta, self.draws, self.log_base = K, eta, draws, log_base
        self.gram = gram or self._band_grams

    def evaluate(self, draws, nus):
        """(φ, π, log π) of ``draws`` at ``nus``, one product ``K Λ``."""
        lam = np.zeros((self.K.shape[1], len(draws)))
        for i, (draw, nu) in enumerate(zip(draws, nus, strict=True)):
            lam[draw.observed, i] = draw.scale * nu
        z_all = np.ascontiguousarray((self.K.matmat(lam) * (-1.0 / self.eta)).T)  # row i: z of draw i
        return [_gibbs_point(z, self.eta, draw.linear, nu, self.log_base)
                for draw, nu, z in zip(draws, nus, z_all, strict=True)]

    def primal(self, draws) -> None:
        """f(π) and q = Kᵀπ of ``draws``, one product ``Kᵀ Π``."""
        q_all = self.K.rmatmat(np.column_stack([d.pi for d in draws]))
        for i, draw in enumerate(draws):
            draw.q = q_all[draw.observed, i]
            draw.f = _primal_value(draw.p, draw.q, self.eta, draw.pi, draw.log_pi, self.log_base)

    def grams(self, draws):
        if not draws:
            return iter(())
        return self.gram(np.column_stack([d.pi for d in draws]), [d.index for d in draws])

    def _band_grams(self, pis: np.ndarray, which):
        """Each problem's Gram matrix from the band."""
        return (self.K.gram_upper(pis[:, i], skip_below=_HESSIAN_ROW_CUTOFF)[
            np.ix_(self.draws[b].observed, self.draws[b].observed)] for i, b in enumerate(which))


#: the two ways of taking the kernel products of the Newton steps (:func:`_solve`)
_PRODUCTS = {"vector": _VectorProducts, "matrix": _MatrixProducts}
