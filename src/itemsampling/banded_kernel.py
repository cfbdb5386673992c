"""A rank kernel stored as its band, in row panels (the products of EM, MES, BV and MN).

Row R of a rank kernel P(r | R) is a distribution over r (binomial or hypergeometric)
concentrated around its mean, so :class:`BandedKernel` keeps only the band of entries above
1e-20 of their row maximum, in panels of consecutive rows small enough to stay in the
processor's cache. It gives the products the estimators need: ``K v`` and ``Kᵀ x`` (and with
matrices), the EM step of one or several runs (:mod:`itemsampling.em`, AAAI'21 eq. 21) with each
panel read once for both of its products, and the Gram matrix ``Kᵀ diag(w) K`` of BV (KDD'20
eq. 25), MN (AAAI'23 eq. 11) and the MES Newton step (:mod:`itemsampling.mes`). Kernels of at
most 2^20 entries stay dense: one BLAS product is faster there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg.blas import dsyrk

__all__ = ["BAND_CUTOFF", "DENSE_ENTRIES", "PANEL_DRIFT", "PANEL_ENTRIES", "STACKED_MIN_RUNS", "BandedKernel"]

#: kernels with at most this many entries are kept dense (one panel) by :class:`BandedKernel`
DENSE_ENTRIES = 2**20
#: kernel entries below this fraction of the largest entry of their row (within a column
#: group) are dropped by :class:`BandedKernel`
BAND_CUTOFF = 1e-20
#: stored entries of one row panel of :class:`BandedKernel` (512 KiB of float64: the panel is
#: still in the core's cache when the second product of an EM step reads it)
PANEL_ENTRIES = 2**16
#: largest drift of the band (in columns) across the rows of one panel
PANEL_DRIFT = 16
#: fewest runs that :meth:`BandedKernel.em_steps_stacked` advances by matrix–matrix products: a
#: product with two or three right-hand sides is slower than as many matrix–vector products
STACKED_MIN_RUNS = 4


def _row_bands(block: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``[lo, hi)`` of the entries of each row above ``cutoff`` times the row maximum.

    A row without such entries (all zero) gets the empty range ``lo = width, hi = 0``.
    """
    width = block.shape[1]
    mask = block > (cutoff * block.max(axis=1, initial=0.0))[:, None]
    kept = mask.any(axis=1)
    lo = np.where(kept, mask.argmax(axis=1), width)
    hi = np.where(kept, width - mask[:, ::-1].argmax(axis=1), 0)
    return lo, hi


class BandedKernel:
    """A kernel matrix ``K`` (N x d) stored as row panels that hold its significant band.

    Each panel covers rows ``r0:r1`` and, of every column block, the columns where one of
    those rows has an entry above ``cutoff`` times its row maximum within the block; the panel
    keeps them as one dense C-ordered array of at most about :data:`PANEL_ENTRIES` entries with
    the indices of its columns (a slice when they are contiguous).

    Parameters
    ----------
    kernel : numpy.ndarray
        ``(N, d)`` non-negative matrix whose rows put their mass on a band of neighbouring
        columns (columns sorted by sampled rank).
    cutoff : float
        Entries at most ``cutoff`` times their row maximum are dropped.
    """

    def __init__(self, kernel: np.ndarray, cutoff: float = BAND_CUTOFF):
        K = np.asarray(kernel, dtype=np.float64)
        self._build([(0, K)], K.shape, cutoff)

    @classmethod
    def from_blocks(cls, blocks, n_rows: int, n_cols: int, cutoff: float = BAND_CUTOFF) -> BandedKernel:
        """Band column blocks of different heights into one ``(n_rows, n_cols)`` kernel.

        Parameters
        ----------
        blocks : sequence of (int, numpy.ndarray)
            ``(first column, dense block)``: a block of shape ``(h, d_b)`` fills rows 0..h-1 of
            columns first..first+d_b-1; the rows below it are zero (e.g. ranks R > N_g of a
            group of users with N_g candidates). The band of each block is found separately.
        n_rows, n_cols : int
            Shape of the whole kernel.
        cutoff : float
            As in the constructor.
        """
        out = cls.__new__(cls)
        out._build([(int(first), np.asarray(block, dtype=np.float64)) for first, block in blocks],
                   (n_rows, n_cols), cutoff)
        return out

    @classmethod
    def stack_rows(cls, parts, n_rows: int) -> BandedKernel:
        """One kernel of ``n_rows`` rows from kernels of consecutive row blocks, each banded alone.

        Parameters
        ----------
        parts : sequence of (int, BandedKernel)
            ``(first row, kernel of rows first..first+h-1)``, each banded as a single column
            block, all with the same number of columns, covering rows 0..n_rows-1 in order.
        n_rows : int
            Rows of the whole kernel.
        """
        widths = {part.shape[1] for _, part in parts}
        if len(widths) != 1 or any(part.n_groups != 1 for _, part in parts):
            raise ValueError("stack_rows needs kernels with the same columns, each banded as one block")
        firsts = [int(first) for first, _ in parts]
        ends = [first + part.shape[0] for first, part in zip(firsts, (part for _, part in parts), strict=True)]
        if firsts[0] != 0 or firsts[1:] != ends[:-1] or ends[-1] != n_rows:
            raise ValueError("stack_rows needs row blocks that cover rows 0..n_rows-1 in order")
        out = cls.__new__(cls)
        out.shape, out.n_groups = (int(n_rows), widths.pop()), 1
        out.panels = [(first + r0, first + r1, cols, tile) for first, (_, part) in zip(firsts, parts, strict=True)
                      for r0, r1, cols, tile in part.panels]
        return out

    def _build(self, blocks, shape, cutoff: float) -> None:
        self.shape = (int(shape[0]), int(shape[1]))
        self.n_groups = len(blocks)
        self.panels: list[tuple[int, int, slice | np.ndarray, np.ndarray]] = []
        n_rows, n_cols = self.shape
        if n_rows * n_cols <= DENSE_ENTRIES:  # small: one dense product beats many small ones
            if n_rows and n_cols:
                dense = np.zeros(self.shape)
                for first, block in blocks:
                    dense[: block.shape[0], first : first + block.shape[1]] = block
                self.panels.append((0, n_rows, slice(0, n_cols), dense))
            return
        bands = [(first, block, *_row_bands(block, cutoff)) for first, block in blocks if block.size]
        stored = sum(float(np.maximum(hi - lo, 0).sum()) for *_, lo, hi in bands)
        drift = min(PANEL_DRIFT * block.shape[0] / block.shape[1] for _, block, *_ in bands)
        step = int(max(8, min(PANEL_ENTRIES * n_rows / max(stored, 1.0), drift)))
        starts = np.arange(0, n_rows, step)
        limits = []  # per block: band [lo, hi) of each panel that the block reaches
        for first, block, lo, hi in bands:
            mine = starts[starts < block.shape[0]]
            limits.append((first, block, np.minimum.reduceat(lo, mine), np.maximum.reduceat(hi, mine)))
        for i, r0 in enumerate(starts.tolist()):
            r1 = min(r0 + step, n_rows)
            pieces = [(first, block, int(lo[i]), int(hi[i])) for first, block, lo, hi in limits
                      if i < lo.size and lo[i] < hi[i]]
            if len(pieces) == 1:
                first, block, lo, hi = pieces[0]
                r1 = min(r1, block.shape[0])
                self.panels.append((r0, r1, slice(first + lo, first + hi), np.ascontiguousarray(block[r0:r1, lo:hi])))
            elif pieces:
                tile = np.zeros((r1 - r0, sum(hi - lo for *_, lo, hi in pieces)))
                at = 0
                for _, block, lo, hi in pieces:
                    part = block[r0:r1, lo:hi]
                    tile[: part.shape[0], at : at + hi - lo] = part
                    at += hi - lo
                cols = np.concatenate([np.arange(first + lo, first + hi) for first, _, lo, hi in pieces])
                self.panels.append((r0, r1, cols, tile))

    def select_columns(self, columns) -> BandedKernel:
        """The kernel restricted to ``columns`` (sorted distinct 0-based indices), banded as this one.

        Only the stored band is read: each panel keeps its entries in the selected columns, so
        an entry is kept when it was kept here (above the cutoff relative to the maximum of its
        row over all the columns, not only the selected ones; the difference is below the cutoff).
        """
        if self.n_groups != 1:
            raise ValueError("select_columns needs a kernel banded as a single column block")
        cols = np.asarray(columns, dtype=np.int64)
        out = BandedKernel.__new__(BandedKernel)
        out.shape, out.n_groups, out.panels = (self.shape[0], cols.size), 1, []
        for r0, r1, span, tile in self.panels:
            j0, j1 = np.searchsorted(cols, [span.start, span.stop])
            if j1 > j0:
                out.panels.append((r0, r1, slice(int(j0), int(j1)), tile[:, cols[j0:j1] - span.start]))
        return out

    @property
    def stored_entries(self) -> int:
        """Number of entries kept in the panels."""
        return sum(tile.size for *_, tile in self.panels)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``K @ v`` (length N)."""
        out = np.zeros(self.shape[0])
        for r0, r1, cols, tile in self.panels:
            out[r0:r1] = tile @ v[cols]
        return out

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        """``K.T @ x`` (length d)."""
        out = np.zeros(self.shape[1])
        for r0, r1, cols, tile in self.panels:
            out[cols] += x[r0:r1] @ tile
        return out

    def matmat(self, values: np.ndarray) -> np.ndarray:
        """``K @ V`` for a ``(d, m)`` matrix V, panel by panel."""
        out = np.zeros((self.shape[0], values.shape[1]))
        for r0, r1, cols, tile in self.panels:
            out[r0:r1] += tile @ values[cols]
        return out

    def rmatmat(self, values: np.ndarray) -> np.ndarray:
        """``Kᵀ @ X`` for an ``(N, m)`` matrix X, panel by panel (the columns of a panel are distinct)."""
        out = np.zeros((self.shape[1], values.shape[1]))
        for r0, r1, cols, tile in self.panels:
            out[cols] += tile.T @ values[r0:r1]
        return out

    def em_steps_stacked(self, pi: np.ndarray, ratio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unnormalised EM steps of B runs stored as columns: ``Π' = Π ⊙ (K W)`` and ``Kᵀ Π'``.

        Each panel is read once for the two matrix–matrix products of all B runs
        (``(rows, w) @ (w, B)`` and its transpose), so a step does B times the work of one
        run for little more than one run's memory traffic; fewer than :data:`STACKED_MIN_RUNS`
        runs take matrix–vector products, run by run.

        Parameters
        ----------
        pi, ratio : numpy.ndarray
            ``(N, B)`` current Π and ``(d, B)`` W = (C / Σ C) / (Kᵀ Π) of the runs.

        Returns
        -------
        tuple of numpy.ndarray
            ``(Π', Kᵀ Π')``, shapes ``(N, B)`` and ``(d, B)``.
        """
        if pi.shape[1] < STACKED_MIN_RUNS:  # matrix-vector products, run by run
            steps = self.em_steps(list(pi.T), list(ratio.T))
            return np.column_stack([n for n, _ in steps]), np.column_stack([q for _, q in steps])
        new = np.zeros(pi.shape)
        q = np.zeros((self.shape[1], pi.shape[1]))
        for r0, r1, cols, tile in self.panels:
            part = pi[r0:r1] * (tile @ ratio[cols])
            new[r0:r1] = part
            q[cols] += tile.T @ part
        return new, q

    def em_steps(self, pis: Sequence[np.ndarray], ratios: Sequence[np.ndarray]):
        """Unnormalised EM steps ``π' = π ⊙ (K @ w)`` and ``Kᵀ π'`` for several runs at once.

        Each panel is read from memory once for all the products of all the runs; run ``i``
        gets exactly the arithmetic of a call with that run alone.

        Parameters
        ----------
        pis, ratios : sequences of numpy.ndarray
            The current π (length N) and w = (c / Σc) / (Kᵀπ) (length d) of each run.

        Returns
        -------
        list of (numpy.ndarray, numpy.ndarray)
            ``(π', Kᵀπ')`` of each run.
        """
        out = [(np.zeros(self.shape[0]), np.zeros(self.shape[1])) for _ in pis]
        for r0, r1, cols, tile in self.panels:
            for pi, w, (new, q) in zip(pis, ratios, out, strict=True):
                part = pi[r0:r1] * (tile @ w[cols])
                new[r0:r1] = part
                q[cols] += part @ tile
        return out

    def gram_upper(self, weights: np.ndarray, skip_below: float = 0.0) -> np.ndarray:
        """Upper triangle of ``K.T @ diag(weights) @ K`` (a kernel banded as one block only).

        Panels whose weights are all at most ``skip_below`` are left out. Each panel adds a
        symmetric rank-k update on its own column range.
        """
        if self.n_groups != 1:
            raise ValueError("gram_upper needs a kernel banded as a single column block")
        out = np.zeros((self.shape[1], self.shape[1]))
        root = np.sqrt(weights)
        for r0, r1, cols, tile in self.panels:
            w = root[r0:r1]
            if w.max() * w.max() <= skip_below:
                continue
            # (tile * w).T is Fortran-ordered, so BLAS reads it without a copy
            out[cols, cols] += dsyrk(1.0, (tile * w[:, None]).T, trans=0)
        return out
