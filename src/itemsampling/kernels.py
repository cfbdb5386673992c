"""Rank kernels P(r | R): the distribution of the sampled rank given the global rank.

An item at global rank R among N items is evaluated against n - 1 items sampled from the
other N - 1. Each sampled item outranks the target with probability θ = (R - 1)/(N - 1), so
the sampled rank r = 1 + (number of sampled items that outrank it) follows

* ``binomial`` (sampling with replacement; Krichene & Rendle KDD 2020 eq. 11, Li et al.
  KDD 2020 eq. 1, Jin et al. AAAI 2021 eq. 5):
  P(r | R) = Binom(r - 1; n - 1, θ);
* ``hypergeometric`` (sampling without replacement):
  P(r | R) = C(R-1, r-1) C(N-R, n-r) / C(N-1, n-1).

Both are evaluated in log space with ``gammaln`` so that N up to 10^6 and n up to 10^4 give
no overflow, no NaN and no negative probability; each row is renormalised to sum to one.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
from numpy.typing import ArrayLike, DTypeLike
from scipy.special import gammaln, xlog1py, xlogy

from ._validation import check_choice, check_n_items, check_sample_size
from .banded_kernel import BandedKernel
from .rank_grid import AUTO_MIN_ITEMS, RankGrid

__all__ = ["SCHEMES", "KernelCache", "kernel_columns", "kernel_rows", "log_kernel_block", "rank_kernel"]

SCHEMES = ("binomial", "hypergeometric")

#: Largest kernel (in bytes) that :func:`rank_kernel` builds densely.
MAX_KERNEL_BYTES = 8 * 2**30
#: Number of entries computed at once; bounds the temporary memory of a block to ~200 MB.
_BLOCK_ENTRIES = 2**22


def _log_choose(a, b):
    """log C(a, b) for arrays, -inf where b < 0 or b > a."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    valid = (b >= 0) & (b <= a)
    with np.errstate(invalid="ignore"):
        out = gammaln(a + 1.0) - gammaln(np.where(valid, b, 0) + 1.0) - gammaln(np.where(valid, a - b, 0) + 1.0)
    return np.where(valid, out, -np.inf)


def log_kernel_block(global_ranks, sampled_ranks, n_items: int, sample_size: int, scheme: str) -> np.ndarray:
    """log P(r | R) on the grid ``global_ranks`` x ``sampled_ranks`` (no renormalisation).

    Parameters
    ----------
    global_ranks : array_like of int
        1-based global ranks R (rows).
    sampled_ranks : array_like of int
        1-based sampled ranks r (columns).
    n_items : int or array_like of int
        N, or one N per row (per global rank), e.g. the N_u of users with their own candidates.
    sample_size : int
        n.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``(len(global_ranks), len(sampled_ranks))``; ``-inf`` where the
        probability is exactly zero.
    """
    R = np.asarray(global_ranks, dtype=np.float64)[:, None]
    r = np.asarray(sampled_ranks, dtype=np.float64)[None, :]
    N = np.asarray(n_items, dtype=np.float64)
    N, n = (N[:, None] if N.ndim else N), float(sample_size)
    k = r - 1.0
    if scheme == "binomial":
        theta = (R - 1.0) / np.maximum(N - 1.0, 1.0)  # N = 1 leaves R = 1: theta = 0
        m = n - 1.0 - k
        # xlogy(k, θ) + xlog1py(m, -θ) with the logarithms taken once per row (xlogy(1, θ) is log θ
        # to the bit) and multiplied per entry, as xlogy and xlog1py multiply; only where θ is 0 or
        # 1 do their conventions (0 · log 0 = 0) matter, and those rows are computed by them
        edge = np.flatnonzero((theta == 0) | (theta == 1))
        with np.errstate(invalid="ignore"):  # 0 · log 0, and -inf + inf beyond 1..n: both replaced
            out = _log_choose(n - 1.0, k) + k * xlogy(1.0, theta) + m * xlog1py(1.0, -theta)
            if edge.size:
                out[edge] = _log_choose(n - 1.0, k) + xlogy(k, theta[edge]) + xlog1py(m, -theta[edge])
        if k.min(initial=0.0) < 0 or k.max(initial=0.0) > n - 1.0:
            out = np.where((k >= 0) & (k <= n - 1.0), out, -np.inf)
        return out
    # hypergeometric: draws n-1 from N-1 items of which R-1 outrank the target
    return _log_choose(R - 1.0, k) + _log_choose(N - R, n - 1.0 - k) - _log_choose(N - 1.0, n - 1.0)


def _check(n_items, sample_size, scheme):
    n_items = check_n_items(n_items)
    sample_size = check_sample_size(sample_size, n_items)
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    return n_items, sample_size, scheme


def rank_kernel(n_items: int, sample_size: int, scheme: str = "binomial", dtype: DTypeLike = np.float64, *,
                nodes: ArrayLike | None = None) -> np.ndarray:
    """The full rank kernel P(r | R) as an ``(N, n)`` row-stochastic matrix.

    Row ``R - 1`` is the distribution of the sampled rank r = 1..n of an item at global rank R
    (Krichene & Rendle KDD 2020 eq. 11; Jin et al. AAAI 2021 eq. 5). Rows are computed in
    blocks of about 4M entries, in log space, and renormalised to sum to one.

    Parameters
    ----------
    n_items : int
        Number of items N (>= 2).
    sample_size : int
        Sample set size n, the target plus n - 1 sampled items (1 <= n <= N).
    scheme : {"binomial", "hypergeometric"}
        ``binomial`` for sampling with replacement, ``hypergeometric`` without.
    dtype : numpy dtype
        ``float64`` (default) or ``float32``. The matrix has N x n entries (for N = 10^6 and
        n = 10^4 that is 40 GB even in float32): use :func:`kernel_columns` for the columns of the
        sampled ranks you observed instead.
    nodes : array_like of float, optional
        Global ranks at which to take the rows instead of 1..N (e.g. the nodes of a
        :class:`~itemsampling.rank_grid.RankGrid`; positions above N are taken at N). The
        kernel is a distribution over r at every real R in [1, N] (the binomial pmf at real θ;
        Chu–Vandermonde for the hypergeometric).

    Returns
    -------
    numpy.ndarray
        Shape ``(N, n)`` (``(len(nodes), n)`` with ``nodes``).

    Raises
    ------
    ValueError
        For bad sizes or scheme, or if the matrix would exceed ``MAX_KERNEL_BYTES``.
    """
    n_items, sample_size, scheme = _check(n_items, sample_size, scheme)
    dtype = _check_dtype(dtype)
    rows = kernel_rows(n_items, nodes)
    _check_memory(rows.size, sample_size, dtype)
    out = np.empty((rows.size, sample_size), dtype=dtype)
    all_r = np.arange(1, sample_size + 1)
    for block in _row_blocks(rows.size, sample_size):
        logp = log_kernel_block(rows[block], all_r, n_items, sample_size, scheme)
        p = np.exp(logp - logp.max(axis=1, keepdims=True))
        out[block] = p / p.sum(axis=1, keepdims=True)
    return out


def kernel_columns(n_items: int, sample_size: int, sampled_ranks: ArrayLike, scheme: str = "binomial",
                   dtype: DTypeLike = np.float64, *, nodes: ArrayLike | None = None) -> np.ndarray:
    """Selected columns P(r | R) of the rank kernel, for all R = 1..N.

    Estimators that see only a few distinct sampled ranks need only those columns; this keeps
    time and memory at ``N x len(sampled_ranks)``. The entries are ``exp`` of the exact log
    probabilities (no row renormalisation, which would need the whole row), so they agree with
    :func:`rank_kernel` to rounding error (~1e-12 relative).

    Parameters
    ----------
    n_items, sample_size : int
        N and n.
    sampled_ranks : array_like of int
        1-based sampled ranks r in 1..n whose columns are wanted.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement.
    dtype : numpy dtype
        dtype of the result (``float64`` or ``float32``).
    nodes : array_like of float, optional
        Global ranks of the rows instead of 1..N (as in :func:`rank_kernel`).

    Returns
    -------
    numpy.ndarray
        Shape ``(N, len(sampled_ranks))`` (``(len(nodes), len(sampled_ranks))`` with ``nodes``).
    """
    n_items, sample_size, scheme = _check(n_items, sample_size, scheme)
    dtype = _check_dtype(dtype)
    cols = np.asarray(sampled_ranks, dtype=np.int64).ravel()
    if cols.size and (cols.min() < 1 or cols.max() > sample_size):
        raise ValueError(f"sampled_ranks must lie in 1..n (n = {sample_size})")
    rows = kernel_rows(n_items, nodes)
    _check_memory(rows.size, cols.size, dtype)
    out = np.empty((rows.size, cols.size), dtype=dtype)
    for block in _row_blocks(rows.size, max(cols.size, 1)):
        out[block] = np.exp(log_kernel_block(rows[block], cols, n_items, sample_size, scheme))
    return out


def _check_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def _check_memory(n_items: int, n_cols: int, dtype: np.dtype) -> None:
    """Refuse a kernel of more than ``MAX_KERNEL_BYTES`` before allocating it.

    The message names what every caller can change (n and N, which :func:`itemsampling.estimate`
    also takes) and, for those who call the kernel functions themselves, the cheaper per-call
    variant: :func:`kernel_columns` with only the observed sampled ranks, in float32.
    """
    need = n_items * n_cols * dtype.itemsize
    if need > MAX_KERNEL_BYTES:
        raise ValueError(
            f"the rank kernel P(r | R) would take {need / 2**30:.1f} GiB (N={n_items} global ranks x "
            f"{n_cols} sampled ranks, {dtype}), more than the limit of {MAX_KERNEL_BYTES / 2**30:.0f} GiB; "
            "use a smaller sample size n or fewer items N, or grid='coarse' in itemsampling.estimate (a "
            "coarse-to-fine grid of the global ranks; grid='auto', the default, takes it from N = "
            f"{AUTO_MIN_ITEMS:,} on), or, calling the kernel yourself, kernel_columns(...) with only "
            "the sampled ranks you observed and dtype=float32"
        )


def kernel_rows(n_items: int, nodes=None) -> np.ndarray:
    """The global ranks of the kernel's rows: 1..N, or the given nodes (at most N)."""
    if nodes is None:
        return np.arange(1, n_items + 1)
    return np.minimum(np.asarray(nodes, dtype=np.float64), float(n_items))


def _row_blocks(n_rows: int, n_cols: int):
    """Yield consecutive slices of rows with about ``_BLOCK_ENTRIES`` entries."""
    step = max(1, _BLOCK_ENTRIES // n_cols)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


class KernelCache:
    """Rank kernels and other arrays derived from them, reused across estimations.

    Estimating many repeats, models and estimators at the same (N, n, scheme) needs the same
    kernel P(r | R) and the same fixed-prior corrections every time; a cache computes each once.
    Entries are kept in least-recently-used order within ``max_bytes`` (arrays and tuples of
    arrays are counted; an entry larger than the budget is returned but not kept).

    Parameters
    ----------
    max_bytes : int
        Memory budget of the cached arrays (default 2 GiB).
    full_kernels : bool
        Whether :meth:`columns` and :meth:`observed` take their columns from the whole kernel
        (:func:`rank_kernel`, computed once and kept: for a cache that serves many estimations at
        the same N and n), or compute only the columns asked for (:func:`kernel_columns`, kept
        for the ranks asked for: for a cache that serves one estimation in which no kernel is
        read twice, e.g. the adaptive MLE of AAAI'23 eq. 12, which reads the kernel of every
        sample size n_u of adaptive sampling at the few ranks observed with it).
    """

    def __init__(self, max_bytes: int = 2 * 2**30, *, full_kernels: bool = True):
        self.max_bytes = int(max_bytes)
        self.full_kernels = bool(full_kernels)
        self._store = _Store()
        self.grid: RankGrid | None = None  # the rows: the ranks 1..N, or the nodes of a grid
        self._observed: tuple | None = None  # (key, value) of the last call of observed()

    def on(self, grid: RankGrid | None) -> KernelCache:
        """This cache with its kernels taken at the nodes of ``grid`` (the ranks 1..N if None),
        sharing the stored entries and the budget (entries of a grid are keyed by it)."""
        if grid is self.grid:
            return self
        view = KernelCache(self.max_bytes, full_kernels=self.full_kernels)
        view._store, view.grid = self._store, grid
        return view

    def n_rows(self, n_items: int) -> int:
        """The number of rows of the kernels of N items: N, or the grid's nodes of 1..N."""
        return int(n_items) if self.grid is None else self.grid.rows(n_items)

    def uniform(self, n_items: int) -> np.ndarray:
        """The uniform P(R) on the ranks 1..N, on this cache's rows."""
        if self.grid is None:
            return np.full(int(n_items), 1.0 / int(n_items))
        return self.grid.uniform(n_items)

    def nodes(self, n_items: int):
        """The global ranks of the rows of the kernels of N items: None for 1..N, else the grid's
        nodes of 1..N (those in (N, N + ½] taken at N)."""
        return None if self.grid is None else np.minimum(self.grid.nodes[: self.grid.rows(n_items)], float(n_items))

    @classmethod
    def for_one_call(cls, sample_size) -> KernelCache:
        """The cache of one estimation that was given none.

        With one sample size n, the fits and the operators of the call share the full kernel of
        each N_g. With one n_u per user (adaptive sampling, AAAI'23 Algorithm 1) the adaptive MLE
        (eq. 12) reads the kernel of each (N_g, n_u) only at the ranks observed with it — some
        130 of the 6,300 columns of the sizes 100..3,200 of a doubling ladder — so only those
        columns are computed (``full_kernels=False``).

        Parameters
        ----------
        sample_size : int or array_like of int
            The ``sample_size`` of the call: one n, or one n_u per user.
        """
        return cls(full_kernels=np.ndim(sample_size) == 0)

    def get(self, key, build):
        """The cached value of ``key``, or ``build()`` (stored if it fits in the budget)."""
        store = self._store
        if self.grid is not None:
            key = (self.grid.key, key)
        if key in store.entries:
            store.entries.move_to_end(key)
            return store.entries[key][0]
        value = build()
        size = _nbytes(value)
        if size <= self.max_bytes:
            while store.total + size > self.max_bytes:
                _, (_, freed) = store.entries.popitem(last=False)
                store.total -= freed
            store.entries[key] = (value, size)
            store.total += size
        return value

    def kernel(self, n_items: int, sample_size: int, scheme: str = "binomial") -> np.ndarray:
        """:func:`rank_kernel` ``(N, n)``, computed once per (N, n, scheme)."""
        return self.get(("kernel", int(n_items), int(sample_size), scheme),
                        lambda: rank_kernel(n_items, sample_size, scheme, nodes=self.nodes(n_items)))

    def banded(self, n_items: int, sample_size: int, scheme: str = "binomial") -> BandedKernel:
        """:meth:`kernel` stored as its band (:class:`~itemsampling.banded_kernel.BandedKernel`), once per
        (N, n, scheme)."""
        return self.get(("banded", int(n_items), int(sample_size), scheme),
                        lambda: BandedKernel(self.kernel(n_items, sample_size, scheme)))

    def observed(self, n_items: int, sample_size: int, sampled_ranks, scheme: str = "binomial") -> BandedKernel:
        """The banded columns P(r | R) at the sorted distinct ``sampled_ranks``, taken from
        :meth:`banded` (:meth:`~itemsampling.banded_kernel.BandedKernel.select_columns`). The last result
        is kept (outside the budget, until a call with other ranks), so that the estimators of
        one call on the same ranks (MLE, WMLE, MES) share it."""
        ranks = np.asarray(sampled_ranks, dtype=np.int64)
        key = (int(n_items), int(sample_size), scheme, hashlib.sha1(ranks.tobytes()).hexdigest(),
               None if self.grid is None else self.grid.key)
        if self._observed is None or self._observed[0] != key:
            self._observed = (key, self.banded(n_items, sample_size, scheme).select_columns(ranks - 1))
        return self._observed[1]

    def fits(self, n_items: int, sample_size: int) -> bool:
        """Whether :meth:`columns` takes its columns from the full ``(N, n)`` float64 kernel:
        with ``full_kernels`` when that kernel fits in the budget (else columns are computed by
        :func:`kernel_columns`)."""
        return self.full_kernels and self.n_rows(n_items) * sample_size * 8 <= self.max_bytes

    def columns(self, n_items: int, sample_size: int, sampled_ranks, scheme: str = "binomial") -> np.ndarray:
        """Columns P(r | R) at ``sampled_ranks``, taken from the cached full kernel when it
        :meth:`fits` (then equal to :func:`rank_kernel`), else from :func:`kernel_columns`
        (without ``full_kernels`` kept for these ranks, so that a second reader of the same
        columns in the call, e.g. the interval of :mod:`itemsampling.intervals`, shares them)."""
        ranks = np.asarray(sampled_ranks, dtype=np.int64)
        if self.fits(n_items, sample_size):
            return self.kernel(n_items, sample_size, scheme)[:, ranks - 1]
        nodes = self.nodes(n_items)
        if self.full_kernels:
            return kernel_columns(n_items, sample_size, ranks, scheme, nodes=nodes)
        key = ("columns", int(n_items), int(sample_size), scheme, hashlib.sha1(ranks.tobytes()).hexdigest())
        return self.get(key, lambda: kernel_columns(n_items, sample_size, ranks, scheme, nodes=nodes))


class _Store:
    """The entries of a :class:`KernelCache` (key -> (value, bytes)) in least-recently-used order,
    shared by its views on other grids (:meth:`KernelCache.on`)."""

    def __init__(self):
        self.entries: OrderedDict = OrderedDict()
        self.total = 0


def _nbytes(value) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, BandedKernel):
        return value.stored_entries * 8
    return int(getattr(value, "nbytes", 0))
