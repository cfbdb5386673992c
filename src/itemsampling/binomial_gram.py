"""The Gram matrix Kᵀ diag(w) K of a binomial rank kernel from one product with a wider kernel.

With replacement (the ``binomial`` scheme) row R of the rank kernel is
K(R, j) = C(n-1, j-1) θ^(j-1) (1-θ)^(n-j), θ = (R - 1)/(N - 1) (KDD'20 eq. 11, AAAI'21 eq. 5),
so the product of two entries of a row depends on j + k alone, up to a factor free of R:

    K(R, j) K(R, k) = H(j, k) K₂(R, j + k - 1),
    H(j, k) = C(n-1, j-1) C(n-1, k-1) / C(2n-2, j+k-2),

where K₂ is the binomial kernel of set size 2n - 1 and H(j, k) is the hypergeometric
probability of drawing j - 1 of the n - 1 marked among 2n - 2 items in j + k - 2 draws (so each
anti-diagonal j + k = const of H sums to one, Vandermonde's identity). Summing over R,

    (Kᵀ diag(w) K)(j, k) = H(j, k) (K₂ᵀ w)(j + k - 1):

the Gram matrix of BV (KDD'20 eq. 25), MN (AAAI'23 eq. 11) and the MES Newton step
(:mod:`itemsampling.mes`) is one product of w with the band of K₂, O(N x band) work, instead of
one rank-k update per row panel of K, O(N x band²). :class:`BinomialGram` keeps the band of K₂
(rows renormalised to sum to one, as :func:`~itemsampling.kernels.rank_kernel` does) and H,
and agrees with the panel-by-panel Gram to the rounding of the kernels themselves (about
1e-11 relative at N = 35,351, n = 500; both are built from ``gammaln`` in log space).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import gammaln

from ._validation import check_n_items
from .banded_kernel import BAND_CUTOFF, DENSE_ENTRIES, BandedKernel
from .kernels import kernel_rows, log_kernel_block

__all__ = ["BinomialGram", "coupling_matrix"]

#: rows of K₂ computed at once (more where a block would otherwise be kept dense)
_BLOCK_ROWS = 1024


def coupling_matrix(sample_size: int) -> np.ndarray:
    """H(j, k) = C(n-1, j-1) C(n-1, k-1) / C(2n-2, j+k-2) for j, k = 1..n, shape ``(n, n)``.

    Evaluated in log space with ``gammaln``; each anti-diagonal j + k = const, a hypergeometric
    distribution, is then divided by its sum, which is one exactly (Vandermonde's identity),
    so that the rounding of the ``gammaln`` of 2n - 2 cancels.
    """
    n = int(sample_size)
    if n < 1:
        raise ValueError(f"sample_size must be a positive integer, got {sample_size!r}")
    a = np.arange(n)
    log_choose = gammaln(n) - gammaln(a + 1.0) - gammaln(n - a)  # log C(n-1, a)
    diagonal = a[:, None] + a[None, :]
    H = np.exp(log_choose[:, None] + log_choose[None, :] - _log_choose_wide(n)[diagonal])
    return H / np.bincount(diagonal.ravel(), weights=H.ravel())[diagonal]


def _log_choose_wide(n: int) -> np.ndarray:
    """log C(2n-2, m) for m = 0..2n-2."""
    m = np.arange(2 * n - 1)
    return gammaln(2.0 * n - 1.0) - gammaln(m + 1.0) - gammaln(2.0 * n - 1.0 - m)


def _doubled_kernel(n_items: int, sample_size: int, nodes=None) -> BandedKernel:
    """The band of the binomial kernel of set size 2n - 1 at N items (ranks 1..2n-1), with rows
    at the global ranks 1..N or at ``nodes`` (:class:`~itemsampling.rank_grid.RankGrid`).

    Rows are computed in blocks, each only on a window of columns around the means
    (2n - 2) θ of its rows, widened until both of its edges lie below the band's cutoff (each
    row is log-concave in the rank, so nothing beyond an edge is above it either); rows are
    renormalised to sum to one over the window (the mass outside it is below 1e-20).
    """
    width = 2 * sample_size - 1
    all_rows = kernel_rows(n_items, nodes)
    if all_rows.size * width <= DENSE_ENTRIES:  # small: the dense kernel, banded as any other
        return BandedKernel(_normalised(log_kernel_block(all_rows, np.arange(1, width + 1), n_items, width,
                                                         "binomial")))
    height = max(_BLOCK_ROWS, DENSE_ENTRIES // width + 1)  # blocks above DENSE_ENTRIES are banded
    parts = []
    for start in range(0, all_rows.size, height):
        rows = all_rows[start: start + height]
        theta = (rows - 1.0) / max(n_items - 1.0, 1.0)
        spread = 12.0 * np.sqrt((width - 1) * theta * (1.0 - theta)) + 20.0
        lo = int(max(0.0, np.floor(((width - 1) * theta - spread).min())))
        hi = int(min(float(width), np.ceil(((width - 1) * theta + spread).max()) + 1.0))
        while True:
            logp = log_kernel_block(rows, np.arange(lo + 1, hi + 1), n_items, width, "binomial")
            floor = logp.max(axis=1) + np.log(BAND_CUTOFF)
            wider_lo = lo > 0 and bool(np.any(logp[:, 0] > floor))
            wider_hi = hi < width and bool(np.any(logp[:, -1] > floor))
            if not (wider_lo or wider_hi):
                break
            lo, hi = (max(0, lo - (hi - lo)) if wider_lo else lo), (min(width, hi + (hi - lo)) if wider_hi else hi)
        parts.append((start, BandedKernel.from_blocks([(lo, _normalised(logp))], rows.size, width)))
    return BandedKernel.stack_rows(parts, all_rows.size)


def _normalised(logp: np.ndarray) -> np.ndarray:
    """Rows of exp(logp), each divided by its sum (as :func:`~itemsampling.kernels.rank_kernel`)."""
    p = np.exp(logp - logp.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


class BinomialGram:
    """``Kᵀ diag(w) K`` of the binomial rank kernel K of (N, n) at chosen columns, for any w.

    Parameters
    ----------
    n_items : int
        N (>= 2); the kernel's rows are the global ranks R = 1..N.
    sample_size : int
        n (>= 1). n may exceed N: the binomial kernel is defined for any n.
    nodes : array_like of float, optional
        Rows at these global ranks instead of 1..N (a :class:`~itemsampling.rank_grid.RankGrid`'s).

    Examples
    --------
    >>> import numpy as np
    >>> from itemsampling.kernels import rank_kernel
    >>> gram = BinomialGram(200, 20)
    >>> K, w = rank_kernel(200, 20), np.full(200, 1 / 200)
    >>> bool(np.allclose(gram.gram(w), K.T @ (w[:, None] * K), rtol=1e-10))
    True
    >>> bool(np.allclose(gram.at([2, 5]).gram(w), (K.T @ (w[:, None] * K))[np.ix_([1, 4], [1, 4])], rtol=1e-10))
    True
    """

    def __init__(self, n_items: int, sample_size: int, nodes=None):
        n_items = check_n_items(n_items)
        if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)) or sample_size < 1:
            raise ValueError(f"sample_size must be a positive integer, got {sample_size!r}")
        self.n_items, self.sample_size = n_items, int(sample_size)
        self.doubled = _doubled_kernel(n_items, self.sample_size, nodes)
        self.coupling = coupling_matrix(self.sample_size)

    @property
    def nbytes(self) -> int:
        """Memory held: the band of K₂ and H."""
        return self.doubled.stored_entries * 8 + self.coupling.nbytes

    def gram(self, weights) -> np.ndarray:
        """``Kᵀ diag(w) K`` at every column, ``(n, n)``, symmetric."""
        return _GramAt(self, np.arange(self.sample_size)).gram(weights)

    def doubled_products(self, weights: np.ndarray) -> np.ndarray:
        """``K₂ᵀ W`` for an ``(N, B)`` matrix of weights: the ``(2n - 1, B)`` input of
        :meth:`_GramAt.from_doubled` for B Gram matrices, by one matrix–matrix product."""
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or w.shape[0] != self.n_items:
            raise ValueError(f"weights must be an (N, B) matrix with N = {self.n_items} rows, got shape {w.shape}")
        return self.doubled.rmatmat(w)

    def at(self, sampled_ranks) -> _GramAt:
        """The Gram matrix at the columns of the sorted distinct 1-based ``sampled_ranks``."""
        ranks = np.asarray(sampled_ranks, dtype=np.int64)
        if ranks.ndim != 1 or ranks.size == 0 or ranks.min() < 1 or ranks.max() > self.sample_size:
            raise ValueError(f"sampled_ranks must be a non-empty 1-d array of ranks in 1..{self.sample_size}")
        if np.any(np.diff(ranks) <= 0):
            raise ValueError("sampled_ranks must be sorted and distinct")
        return _GramAt(self, ranks - 1)


class _GramAt:
    """:class:`BinomialGram` at columns ``index`` (0-based): ``gram(w)`` is ``(d, d)``."""

    def __init__(self, parent: BinomialGram, index: np.ndarray):
        self.doubled, self.n = parent.doubled, parent.sample_size
        self.whole = index.size == self.n
        self.index = index
        self.coupling = parent.coupling if self.whole else parent.coupling[np.ix_(index, index)]

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """``Kᵀ diag(w) K`` at the columns, symmetric: H ⊙ (K₂ᵀ w)(j + k - 1), for w of length N."""
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (self.doubled.shape[0],):
            raise ValueError(f"weights must have one entry per global rank, shape ({self.doubled.shape[0]},), "
                             f"got {w.shape}")
        return self.from_doubled(self.doubled.rmatvec(w))

    def from_doubled(self, wide: np.ndarray) -> np.ndarray:
        """The Gram matrix at the columns from ``wide`` = K₂ᵀw (length 2n - 1): H ⊙ wide(j + k - 1).

        For many w at once, ``wide`` is a column of ``K₂ᵀ W``, one matrix–matrix product
        (:meth:`BinomialGram.doubled_products`).
        """
        hankel = sliding_window_view(wide, self.n)  # hankel[a, b] = wide[a + b]
        return self.coupling * (hankel if self.whole else hankel[np.ix_(self.index, self.index)])
