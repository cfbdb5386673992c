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

Row R of a rank kernel is a distribution over r (binomial or hypergeometric) concentrated
around its mean, so :class:`BandedKernel` keeps only the band of entries above 1e-20 of their
row maximum, in tiles of consecutive rows; the products then cost a fraction of N x d (kernels of
at most 2^20 entries stay dense: one BLAS product is faster there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk
from tqdm import tqdm

__all__ = [
    "DEFAULT_MAX_ITER",
    "DEFAULT_TOL",
    "BandedKernel",
    "EMResult",
    "em_mixture_weights",
    "mixture_log_likelihood",
]

#: default number of EM steps: the AAAI'23 authors' code runs exactly 100 from the uniform start
DEFAULT_MAX_ITER = 100
#: default stopping threshold on the relative increase of the log-likelihood per step
DEFAULT_TOL = 1e-9


#: kernels with at most this many entries are kept dense (one tile) by :class:`BandedKernel`
DENSE_ENTRIES = 2**20
#: kernel entries below this fraction of the largest entry of their row (within a column
#: group) are dropped by :class:`BandedKernel`
BAND_CUTOFF = 1e-20


class BandedKernel:
    """A kernel matrix ``K`` (N x d) stored as tiles that hold its significant band.

    Parameters
    ----------
    kernel : numpy.ndarray
        ``(N, d)`` non-negative matrix whose rows, within each column group, put their mass on
        a band of neighbouring columns (columns sorted by sampled rank).
    cutoff : float
        Entries at most ``cutoff`` times their row maximum within the group are dropped.
    """

    def __init__(self, kernel: np.ndarray, cutoff: float = BAND_CUTOFF):
        K = np.asarray(kernel, dtype=np.float64)
        self.shape = K.shape
        n_rows, d = K.shape
        self.n_groups = 1
        self.tiles: list[tuple[int, int, int, int, np.ndarray]] = []
        if n_rows * d <= DENSE_ENTRIES:  # small: one dense product beats many small ones
            if K.size:
                self.tiles.append((0, n_rows, 0, d, np.ascontiguousarray(K)))
            return
        # about 16 columns of drift of the band per block of rows
        step = int(min(1024, max(8, 16 * n_rows // max(d, 1))))
        for r0 in range(0, n_rows, step):
            r1 = min(r0 + step, n_rows)
            part = K[r0:r1]
            cols = np.flatnonzero((part > cutoff * part.max(axis=1, keepdims=True)).any(axis=0))
            if cols.size:
                lo, hi = int(cols[0]), int(cols[-1]) + 1
                self.tiles.append((r0, r1, lo, hi, np.ascontiguousarray(K[r0:r1, lo:hi])))

    @classmethod
    def from_blocks(cls, blocks, n_rows: int, n_cols: int, cutoff: float = BAND_CUTOFF) -> BandedKernel:
        """Band column blocks of different heights into one ``(n_rows, n_cols)`` kernel.

        Parameters
        ----------
        blocks : sequence of (int, numpy.ndarray)
            ``(first column, dense block)``: a block of shape ``(h, d_b)`` fills rows 0..h-1 of
            columns first..first+d_b-1; the rows below it are zero (e.g. ranks R > N_g of a
            group of users with N_g candidates). Blocks are banded separately.
        n_rows, n_cols : int
            Shape of the whole kernel.
        cutoff : float
            As in the constructor.
        """
        out = cls(np.zeros((0, 0)), cutoff=cutoff)
        out.shape = (int(n_rows), int(n_cols))
        out.n_groups = len(blocks)
        for first, block in blocks:
            banded = cls(block, cutoff=cutoff)
            out.tiles.extend((r0, r1, lo + first, hi + first, tile) for r0, r1, lo, hi, tile in banded.tiles)
        return out

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``K @ v`` (length N)."""
        out = np.zeros(self.shape[0])
        for r0, r1, lo, hi, tile in self.tiles:
            out[r0:r1] += tile @ v[lo:hi]
        return out

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        """``K.T @ x`` (length d)."""
        out = np.zeros(self.shape[1])
        for r0, r1, lo, hi, tile in self.tiles:
            out[lo:hi] += x[r0:r1] @ tile
        return out

    def gram_upper(self, weights: np.ndarray, skip_below: float = 0.0) -> np.ndarray:
        """Upper triangle of ``K.T @ diag(weights) @ K`` (a kernel banded as one block only).

        Tiles whose weights are all at most ``skip_below`` are left out. Each tile adds a
        symmetric rank-k update on its own column range.
        """
        if self.n_groups != 1:
            raise ValueError("gram_upper needs a kernel banded as a single column block")
        out = np.zeros((self.shape[1], self.shape[1]))
        root = np.sqrt(weights)
        for r0, r1, lo, hi, tile in self.tiles:
            w = root[r0:r1]
            if w.max() * w.max() <= skip_below:
                continue
            # (tile * w).T is Fortran-ordered, so BLAS reads it without a copy
            out[lo:hi, lo:hi] += dsyrk(1.0, (tile * w[:, None]).T, trans=0)
        return out


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
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` matrix ``K[R-1, j] = P(obs_j | R)``.
    obs_weights : array_like
        ``(d,)`` non-negative weight c_j of each distinct observation.

    Returns
    -------
    float
        The log-likelihood; ``-inf`` if an observation with positive weight has probability 0.
    """
    pi = np.asarray(weights, dtype=np.float64)
    q = kernel.rmatvec(pi) if isinstance(kernel, BandedKernel) else np.asarray(kernel).T @ pi
    c = np.asarray(obs_weights, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(c > 0, c * np.log(q), 0.0)))


def em_mixture_weights(
    kernel: np.ndarray | BandedKernel,
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
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` non-negative matrix ``K[R-1, j] = P(obs_j | R)``; a dense array is
        banded with :class:`BandedKernel` first.
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
    K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(kernel)
    c = np.asarray(obs_weights, dtype=np.float64)
    frac = c / c.sum()
    n_rows = K.shape[0]
    pi = np.full(n_rows, 1.0 / n_rows) if init is None else np.array(init, dtype=np.float64)
    q = K.rmatvec(pi)
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
            pi = pi * K.matvec(frac / q)
            pi /= pi.sum()  # only rounding error: the step preserves the total mass
            q = K.rmatvec(pi)
            trace.append(float(c @ np.log(q)))
            bar.update()
            if trace[-1] - trace[-2] <= tol * abs(trace[-1]):
                converged = True
                break
    return EMResult(weights=pi, log_likelihood=np.asarray(trace), n_iter=n_iter, converged=converged)
