"""Corrected sampled metrics M̂(r): a metric function on the sampled ranks r = 1..n.

A corrected metric replaces ``metric@K`` evaluated at the sampled rank by a function
M̂ : {1..n} -> R chosen so that the average ``(1/M) Σ_u M̂(r_u) = Σ_r P̃(r) M̂(r)`` estimates the
global metric ``Σ_R P(R) M(R)`` (Krichene & Rendle, KDD 2020, §5; Li et al., AAAI 2023, §3).

Metric targets are passed as a weight matrix ``weights`` of shape ``(L, m)``: column j holds the
target ``M_j(R) = 1{R <= K} M(R)`` for R = 1..L, and every rank beyond L has weight zero. A
top-K metric needs only its first K rows, so all metrics for K = 1..50 fit in a 50 x m matrix
even when N is a million.

- ``sampled``: the naive metric at the sampled rank, M̂(r) = metric@K(r; n) (KDD'20 §2).
- ``rank_estimate``: the metric at the unbiased rank estimate 1 + (N-1)(r-1)/(n-1)
  (KDD'20 eq. 20).
- ``cls``: least squares bias with a monotone constraint (KDD'20 eq. 21, §6.3).
- ``bv_operator``: bias² + γ variance, a linear operator M̂ = W M (KDD'20 eq. 24-26).
- ``mn_operator``: the MSE bound L1 + L2 with M users, a linear operator M̂ = W M
  (AAAI'23 eq. 7-11).

BV and MN are linear in the target: ``M̂ = W M`` with ``W = G⁻¹ Kᵀ diag(p)`` (n x N), where K is
the rank kernel P(r | R), p the prior P(R) and G an n x n positive definite matrix. A
:class:`LinearCorrection` factorizes G once (Cholesky) and corrects any number of metric columns
with one triangular solve; N x N matrices are never formed. Applied to indicator targets the same
operator gives the rank distribution estimate P̂(R) = Σ_r P̃(r) W[r, R] (Jin et al., AAAI 2021,
eq. 15).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from . import kernels
from ._validation import check_distribution, check_n_items, check_ranks, check_sample_size
from .banded_kernel import BandedKernel
from .kernels import rank_kernel
from .metrics import rank_weight

__all__ = [
    "LinearCorrection",
    "bv_operator",
    "cls",
    "mn_operator",
    "rank_estimate",
    "sampled",
    "sampled_rank_distribution",
    "variance_gram",
    "weighted_gram",
]


def sampled_rank_distribution(sampled_ranks, sample_size: int) -> np.ndarray:
    """Empirical sampled rank distribution P̃(r) = (1/M) Σ_u 1{r_u = r}, r = 1..n.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled ranks r_u in 1..n.
    sample_size : int
        Sample set size n.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``, non-negative, sums to one.
    """
    ranks = check_ranks(sampled_ranks, sample_size, name="sampled_ranks")
    return np.bincount(ranks - 1, minlength=sample_size) / ranks.size


def sampled(metric_ks: Sequence[tuple[str, int | None]], sample_size: int) -> np.ndarray:
    """The uncorrected sampled metric: ``metric@K`` evaluated on the sampled rank among n items.

    M̂(r) = 1{r <= K} M(r) with the metric's own definition on n items (e.g. AUC uses
    (n - r)/(n - 1)); Krichene & Rendle, KDD 2020, §2 and eq. (16); Li et al., AAAI 2023, eq. (4).

    Parameters
    ----------
    metric_ks : sequence of (metric, k)
        Metric names (see :mod:`itemsampling.metrics`) and cut-offs.
    sample_size : int
        Sample set size n (>= 2).

    Returns
    -------
    numpy.ndarray
        Shape ``(n, len(metric_ks))``.
    """
    r = np.arange(1, sample_size + 1)
    cols = [rank_weight(metric, r, sample_size, k) for metric, k in metric_ks]
    return np.column_stack(cols) if cols else np.empty((sample_size, 0))


def rank_estimate(weights, n_items: int, sample_size: int) -> np.ndarray:
    """The metric evaluated at an unbiased estimate of the global rank (KDD'20 eq. 20).

    M̂(r) = M(⌊1 + (N - 1)(r - 1)/(n - 1)⌋): since E[r - 1 | R] = (n - 1)(R - 1)/(N - 1) under
    sampling with and without replacement, the argument is an unbiased estimate of R; it is
    rounded down as in the paper (computed in exact integer arithmetic).

    Parameters
    ----------
    weights : array_like, shape (L,) or (L, m)
        Target metric weights M(R) for R = 1..L (zero beyond L), L <= N.
    n_items, sample_size : int
        N and n (n >= 2: with n = 1 no rank can be estimated).

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)`` or ``(n, m)``, like ``weights``.
    """
    n_items, sample_size, w = _check_problem(n_items, sample_size, weights)
    if sample_size < 2:
        raise ValueError("rank_estimate needs sample_size >= 2: with n = 1 every sampled rank is 1")
    r = np.arange(1, sample_size + 1, dtype=np.int64)
    global_rank = 1 + ((n_items - 1) * (r - 1)) // (sample_size - 1)
    padded = np.vstack([w, np.zeros((1, w.shape[1]))])  # index L -> weight 0 beyond L
    out = padded[np.minimum(global_rank, w.shape[0] + 1) - 1]
    return out[:, 0] if np.ndim(weights) == 1 else out


def cls(weights, n_items: int, sample_size: int, *, prior=None, scheme: str = "binomial",
        kernel=None) -> np.ndarray:
    """Constrained least squares correction (KDD'20 eq. 21 with the monotone constraint, §6.3).

    Solves, for each target column,

        min_x Σ_R p(R) (Σ_r P(r | R) x_r - M(R))²   subject to   x_1 >= x_2 >= ... >= x_n,

    exactly: with ``A = diag(√p) K = Q R`` (thin QR, n x n triangular R) the objective is
    ``‖R x - Qᵀ √p M‖²`` up to a constant, and writing ``x = T d`` with T upper triangular of
    ones (x_j = Σ_{i >= j} d_i) turns the monotone constraint into d_1..d_{n-1} >= 0 with the
    level d_n free. The free level is eliminated by projecting onto the orthogonal complement of
    its column a = R 1, which leaves a non-negative least squares problem in n - 1 variables,
    solved exactly by the Lawson-Hanson active-set method (:func:`scipy.optimize.nnls`); then
    d_n = aᵀ(t - B d) / aᵀa. This is not the same as isotonic regression of the unconstrained
    solution, because the design A is not diagonal.

    Parameters
    ----------
    weights : array_like, shape (L,) or (L, m)
        Target metric weights M(R) for R = 1..L (zero beyond L), L <= N.
    n_items, sample_size : int
        N and n.
    prior : array_like of shape (N,), optional
        P(R); uniform when omitted (as in the paper).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    kernel : numpy.ndarray, optional
        The ``(N, n)`` rank kernel of ``scheme``, when already computed (e.g. from
        :class:`itemsampling.kernels.KernelCache`); computed here otherwise.

    Returns
    -------
    numpy.ndarray
        Non-increasing corrected metric(s), shape ``(n,)`` or ``(n, m)``.
    """
    n_items, sample_size, w = _check_problem(n_items, sample_size, weights)
    _check_cls_memory(n_items, sample_size)
    p = _check_prior(prior, n_items)
    sqrt_p = np.sqrt(p)[:, None]
    q, r_factor = np.linalg.qr(sqrt_p * _kernel(kernel, n_items, sample_size, scheme))
    targets = q[: w.shape[0]].T @ (sqrt_p[: w.shape[0]] * w)
    cumulative = np.triu(np.ones((sample_size, sample_size)))
    design = r_factor @ cumulative
    steps, level = design[:, :-1], design[:, -1]
    projection = np.eye(sample_size) - np.outer(level, level) / (level @ level)
    projected_steps = projection @ steps
    # imported here: scipy.optimize adds 0.1 s to the start of every process that imports the package
    from scipy.optimize import nnls

    out = np.empty((sample_size, w.shape[1]))
    for j in range(w.shape[1]):
        d, _ = nnls(projected_steps, projection @ targets[:, j], maxiter=50 * sample_size)
        d_level = level @ (targets[:, j] - steps @ d) / (level @ level)
        out[:, j] = cumulative @ np.r_[d, d_level]
    return out[:, 0] if np.ndim(weights) == 1 else out


#: N x n float64 arrays that :func:`cls` holds at its peak: the kernel, its prior-weighted copy
#: and the copy and Q factor of the QR factorization
_CLS_ARRAYS = 4


def _check_cls_memory(n_items: int, sample_size: int) -> None:
    """Refuse a :func:`cls` problem whose arrays would exceed ``kernels.MAX_KERNEL_BYTES``."""
    need = _CLS_ARRAYS * n_items * sample_size * np.dtype(np.float64).itemsize
    if need > kernels.MAX_KERNEL_BYTES:
        raise ValueError(
            f"cls would need about {need / 2**30:.1f} GiB ({_CLS_ARRAYS} arrays of N x n = {n_items} x "
            f"{sample_size} float64 for the rank kernel and its QR factorization), more than the limit "
            f"of {kernels.MAX_KERNEL_BYTES / 2**30:.0f} GiB; use a smaller sample size n or fewer "
            "items N, or raise itemsampling.kernels.MAX_KERNEL_BYTES if the machine has the memory"
        )


@dataclass(frozen=True)
class LinearCorrection:
    """A correction that is linear in the target metric: M̂ = W M with W = G⁻¹ Kᵀ diag(p).

    Built by :func:`bv_operator` or :func:`mn_operator`; holds the kernel K (N x n), the prior p
    and the Cholesky factor of the n x n matrix G, so that correcting many metrics costs one
    ``Kᵀ diag(p) M`` product and one triangular solve. W itself (n x N) is formed only on request.

    Attributes
    ----------
    kernel : numpy.ndarray
        The rank kernel P(r | R), shape (N, n).
    prior : numpy.ndarray
        The prior P(R), shape (N,).
    factor : tuple
        Cholesky factorization of G, as returned by :func:`scipy.linalg.cho_factor`.
    """

    kernel: np.ndarray
    prior: np.ndarray
    factor: tuple

    @property
    def n_items(self) -> int:
        """Number of items N."""
        return self.kernel.shape[0]

    @property
    def sample_size(self) -> int:
        """Sample set size n."""
        return self.kernel.shape[1]

    def apply(self, weights) -> np.ndarray:
        """Corrected metrics M̂ = W M for one or many target columns.

        Parameters
        ----------
        weights : array_like, shape (L,) or (L, m)
            Target metric weights M(R) for R = 1..L (zero beyond L), L <= N.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)`` or ``(n, m)``: M̂(r) for r = 1..n, one column per target.
        """
        _, _, w = _check_problem(self.n_items, self.sample_size, weights)
        top = w.shape[0]
        rhs = self.kernel[:top].T @ (self.prior[:top, None] * w)
        out = cho_solve(self.factor, rhs, check_finite=False)
        return out[:, 0] if np.ndim(weights) == 1 else out

    def estimate(self, sampled_distribution, weights) -> np.ndarray:
        """The estimated metrics Σ_r P̃(r) M̂(r) for one or many target columns, with one solve.

        Equal to ``sampled_distribution @ apply(weights)``, computed as
        ``(G⁻¹ P̃)ᵀ Kᵀ D M`` (G is symmetric): one triangular solve for all the columns instead
        of one per column, and only the rows R = 1..L of the kernel.

        Parameters
        ----------
        sampled_distribution : array_like of shape (n,)
            P̃(r), or any weights of the sampled ranks (e.g. user counts: the result is linear
            in them).
        weights : array_like, shape (L,) or (L, m)
            Target metric weights M(R) for R = 1..L (zero beyond L), L <= N.

        Returns
        -------
        float or numpy.ndarray
            One estimate per target column (shape ``(m,)``; a float for 1-d ``weights``).
        """
        pt = self._sampled(sampled_distribution)
        _, _, w = _check_problem(self.n_items, self.sample_size, weights)
        top = w.shape[0]
        solved = cho_solve(self.factor, pt, check_finite=False)
        out = (self.prior[:top] * (self.kernel[:top] @ solved)) @ w
        return float(out[0]) if np.ndim(weights) == 1 else out

    def matrix(self) -> np.ndarray:
        """The operator W = G⁻¹ Kᵀ diag(p) as a dense ``(n, N)`` array (for inspection)."""
        return cho_solve(self.factor, (self.kernel * self.prior[:, None]).T, check_finite=False)

    def rank_distribution(self, sampled_distribution) -> np.ndarray:
        """Rank distribution estimate P̂(R) = Σ_r P̃(r) W[r, R] (AAAI'21 eq. 15).

        Applying the operator to the indicator target 1{R' = R} gives the correction whose
        average is the estimated probability of global rank R; P̂(R) = Recall̂@R - Recall̂@(R-1).
        P̂ sums to Σ_r P̃(r) = 1 (because G 1 = Kᵀ p) but may have negative entries.

        Parameters
        ----------
        sampled_distribution : array_like of shape (n,)
            Empirical sampled rank distribution P̃(r), e.g. from
            :func:`sampled_rank_distribution`.

        Returns
        -------
        numpy.ndarray
            Shape ``(N,)``.
        """
        pt = self._sampled(sampled_distribution)
        return self.prior * (self.kernel @ cho_solve(self.factor, pt, check_finite=False))

    def _sampled(self, sampled_distribution) -> np.ndarray:
        pt = np.asarray(sampled_distribution, dtype=np.float64)
        if pt.shape != (self.sample_size,):
            raise ValueError(
                f"sampled_distribution must have shape ({self.sample_size},), one entry per "
                f"sampled rank, got {pt.shape}"
            )
        return pt


def bv_operator(n_items: int, sample_size: int, *, gamma: float = 0.01, prior=None,
                scheme: str = "binomial", kernel=None, gram=None, base=None) -> LinearCorrection:
    """Bias-variance trade-off correction (Krichene & Rendle, KDD 2020, eq. 24-26).

    Minimises ``Σ_R p(R) [(E[M̂(r) | R] - M(R))² + γ Var[M̂(r) | R]]``, whose normal equations
    give (eq. 25) ``M̂ = ((1 - γ) Kᵀ D K + γ diag(c))⁻¹ Kᵀ D M`` with D = diag(p) and
    c = Kᵀ p. γ = 0 is the least squares problem (21) without constraint; γ = 1 gives the
    posterior mean M̂(r) = Σ_R P(R | r) M(R) (eq. 26). For every γ the corrected metric is
    unbiased on average over the prior: Σ_R p(R) E[M̂(r) | R] = Σ_R p(R) M(R).

    Parameters
    ----------
    n_items, sample_size : int
        N and n.
    gamma : float
        Weight γ >= 0 of the variance term (default 0.01).
    prior : array_like of shape (N,), optional
        P(R); uniform when omitted (as in the paper).
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    kernel : numpy.ndarray, optional
        The ``(N, n)`` rank kernel of ``scheme``, when already computed (e.g. from
        :class:`itemsampling.kernels.KernelCache`); computed here otherwise.
    gram : numpy.ndarray, optional
        ``Kᵀ D K`` (:func:`weighted_gram` of the kernel and the prior), when already computed
        (e.g. shared with :func:`mn_operator` for the same prior).
    base : array_like, optional
        With ``kernel`` given on the nodes of a :class:`~itemsampling.rank_grid.RankGrid`: the
        number of global ranks each row stands for (the nodes' weights w_j); every sum over R
        is then its quadrature Σ_j (module :mod:`itemsampling.rank_grid`), ``prior`` holds the
        nodes' masses, and the uniform prior is w / N.

    Returns
    -------
    LinearCorrection
    """
    if isinstance(gamma, bool) or not np.isscalar(gamma) or not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0 (default 0.01), got {gamma!r}")
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    p, kernel = _prior_and_kernel(prior, kernel, n_items, sample_size, scheme, base)
    gram = weighted_gram(kernel, p) if gram is None else _check_square("gram", gram, sample_size)
    system = (1.0 - gamma) * gram
    system[np.diag_indices_from(system)] += gamma * (kernel.T @ p)
    return LinearCorrection(kernel, p, _factor(system, "BV", "use gamma > 0"))


def mn_operator(n_items: int, sample_size: int, n_users: int, *, prior=None,
                scheme: str = "binomial", kernel=None, gram=None, spread=None, base=None) -> LinearCorrection:
    """Minimal-MSE-bound correction MN (Li et al., AAAI 2023, eq. 10-11).

    Minimises the bound L = L1 + L2 on the mean squared error of the estimated metric over M
    users: L1 = Σ_R p(R) (E[M̂(r) | R] - M(R))² (eq. 7) and L2 = (1/M) Σ_R Var[M̂(r) | R]
    (eq. 8, an unweighted sum over R). In matrix form (eq. 10-11)

        M̂ = (Kᵀ D K - (1/M) Kᵀ K + (1/M) Λ₁)⁻¹ Kᵀ D M,   Λ₁ = diag(Σ_R P(r | R)).

    Like BV it is unbiased on average over the prior, and it tends to the least squares
    solution as M grows.

    Parameters
    ----------
    n_items, sample_size : int
        N and n.
    n_users : int
        Number of test users M (>= 1).
    prior : array_like of shape (N,), optional
        P(R); uniform when omitted. The paper recommends an MLE or MES estimate.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    kernel : numpy.ndarray, optional
        The ``(N, n)`` rank kernel of ``scheme``, when already computed (e.g. from
        :class:`itemsampling.kernels.KernelCache`); computed here otherwise.
    gram : numpy.ndarray, optional
        ``Kᵀ D K`` (:func:`weighted_gram` of the kernel and the prior), when already computed
        (e.g. shared with :func:`bv_operator` for the same prior).
    spread : numpy.ndarray, optional
        ``Λ₁ - Kᵀ K`` (:func:`variance_gram` of the kernel), which depends on the kernel only,
        when already computed.
    base : array_like, optional
        With ``kernel`` given on the nodes of a :class:`~itemsampling.rank_grid.RankGrid`: the
        number of global ranks each row stands for (the nodes' weights w_j); every sum over R
        is then its quadrature Σ_j (module :mod:`itemsampling.rank_grid`), ``prior`` holds the
        nodes' masses, and the uniform prior is w / N.

    Returns
    -------
    LinearCorrection
    """
    if isinstance(n_users, bool) or not isinstance(n_users, (int, np.integer)) or n_users < 1:
        raise ValueError(f"n_users (the number of test users M) must be an integer >= 1, got {n_users!r}")
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    p, kernel = _prior_and_kernel(prior, kernel, n_items, sample_size, scheme, base)
    gram = weighted_gram(kernel, p) if gram is None else _check_square("gram", gram, sample_size)
    spread = variance_gram(kernel, base=base) if spread is None else _check_square("spread", spread, sample_size)
    system = gram + spread * (1.0 / n_users)
    return LinearCorrection(kernel, p, _factor(system, "MN", "check the prior"))


def weighted_gram(kernel, weights, *, banded: BandedKernel | None = None) -> np.ndarray:
    """The n x n matrix ``Kᵀ diag(w) K`` of a rank kernel K (N x n) and weights w >= 0.

    With w the prior P(R) this is the ``Kᵀ D K`` of BV (KDD'20 eq. 25) and MN (AAAI'23
    eq. 11). It is accumulated from the band of K (:class:`~itemsampling.banded_kernel.BandedKernel`,
    entries above 1e-20 of their row maximum) with one symmetric rank-k update per row panel.

    Parameters
    ----------
    kernel : numpy.ndarray
        ``(N, n)`` rank kernel.
    weights : array_like of shape (N,)
        Non-negative weights w(R).
    banded : BandedKernel, optional
        The kernel already banded (as one block), e.g. from
        :class:`~itemsampling.kernels.KernelCache`.

    Returns
    -------
    numpy.ndarray
        Symmetric, shape ``(n, n)``.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (np.shape(kernel)[0],) or np.any(w < 0):
        raise ValueError(f"weights must be {np.shape(kernel)[0]} non-negative numbers, one per global rank")
    banded = BandedKernel(kernel) if banded is None else banded
    upper = banded.gram_upper(w)
    return upper + np.triu(upper, 1).T


def variance_gram(kernel, *, banded: BandedKernel | None = None, base=None) -> np.ndarray:
    """``Λ₁ - Kᵀ K`` with Λ₁ = diag(Σ_R P(r | R)): n x n, the part of MN's system (AAAI'23
    eq. 11) that does not depend on the prior (Σ_R of the covariance of the indicators of r);
    on a grid's nodes each row weighs the w_j ranks it stands for (``base``)."""
    w = np.ones(np.shape(kernel)[0]) if base is None else np.asarray(base, dtype=np.float64)
    out = -weighted_gram(kernel, w, banded=banded)
    out[np.diag_indices_from(out)] += np.asarray(kernel).sum(axis=0) if base is None else w @ np.asarray(kernel)
    return out


def _check_square(name: str, matrix, size: int) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.shape != (size, size):
        raise ValueError(f"{name} must have shape (n, n) = ({size}, {size}), got {matrix.shape}")
    return matrix


def _kernel(kernel, n_items: int, sample_size: int, scheme: str) -> np.ndarray:
    """The given rank kernel (checked for its shape) or :func:`rank_kernel`."""
    if kernel is None:
        return rank_kernel(n_items, sample_size, scheme)
    kernel = np.asarray(kernel, dtype=np.float64)
    if kernel.shape != (n_items, sample_size):
        raise ValueError(f"kernel must have shape (N, n) = ({n_items}, {sample_size}), got {kernel.shape}")
    return kernel


def _factor(system: np.ndarray, name: str, hint: str) -> tuple:
    try:
        return cho_factor(system, lower=True, check_finite=False)
    except LinAlgError:
        raise ValueError(
            f"{name}: the {system.shape[0]} x {system.shape[0]} normal equations are not "
            f"numerically positive definite; {hint}"
        ) from None


def _check_problem(n_items, sample_size, weights) -> tuple[int, int, np.ndarray]:
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        w = w[:, None]
    if w.ndim != 2 or not 1 <= w.shape[0] <= n_items:
        raise ValueError(
            f"weights must have shape (L,) or (L, m) with 1 <= L <= n_items (N={n_items}), "
            f"one row per global rank R = 1..L, got {np.shape(weights)}"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinite values")
    return n_items, sample_size, w


def _prior_and_kernel(prior, kernel, n_items: int, sample_size: int, scheme: str, base) -> tuple:
    """The prior and kernel of BV and MN: on the ranks 1..N, or on the nodes of weights ``base``."""
    if base is None:
        return _check_prior(prior, n_items), _kernel(kernel, n_items, sample_size, scheme)
    base = np.asarray(base, dtype=np.float64)
    if kernel is None or np.shape(kernel) != (base.size, sample_size):
        raise ValueError(f"with base, kernel must be given on its {base.size} nodes: shape ({base.size}, "
                         f"{sample_size}), got {None if kernel is None else np.shape(kernel)}")
    p = base / n_items if prior is None else check_distribution(prior, base.size, name="prior")
    return p, np.asarray(kernel, dtype=np.float64)


def _check_prior(prior, n_items: int) -> np.ndarray:
    if prior is None:
        return np.full(n_items, 1.0 / n_items)
    return check_distribution(prior, n_items, name="prior")
