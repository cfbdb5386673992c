"""EASE: the closed-form linear item-item autoencoder of Steck (WWW 2019).

EASE learns an item-item weight matrix B by ridge regression of every item column on all the
others (Steck 2019, eq. 1):

    min_B ||X - X B||_F^2 + λ ||B||_F^2   subject to diag(B) = 0,

whose solution is (eq. 8) B = I - P diag(1 / diag(P)) with P = (X^T X + λ I)^{-1}; a user's
scores are x_u B. B is one dense N x N float32 buffer. With at least as many users as items,
the Gram matrix is written into it block by block, factorised in place (LAPACK ``potrf``),
inverted in place (``potri``), symmetrised block by block and rescaled in place into B: O(N^3).

With fewer users U than items N, the Woodbury identity

    P = (X^T X + λ I_N)^{-1} = (I_N - C) / λ,   C = X^T (X X^T + λ I_U)^{-1} X,

replaces the N x N inversion by a U x U one, O(U^3), plus sparse products of O(nnz(X) (U + N)):
C is written into the B buffer in row blocks and B_ij = C_ij / (1 - C_jj) for i != j (the
factor 1/λ cancels). On 17,220 users and 35,351 items this is about (N/U)^3 = 8.7 times less
work. The memory either way takes is checked against the memory available before anything is
allocated.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from scipy.linalg import get_lapack_funcs

from .._progress import progress_bar
from .base import Recommender

__all__ = ["EASE", "available_memory_bytes", "ease_memory_bytes"]

#: entries of the dense temporary block used while building and symmetrising the Gram matrix
_BLOCK_ENTRIES = 2**25


def available_memory_bytes() -> int:
    """Memory the process can still allocate, in bytes.

    ``MemAvailable`` from ``/proc/meminfo`` where it exists (it counts reclaimable page cache),
    else the free physical pages reported by ``os.sysconf``.
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _block_columns(n_items: int) -> int:
    return max(1, min(n_items, _BLOCK_ENTRIES // n_items))


def ease_memory_bytes(n_items: int, n_users: int | None = None) -> int:
    """Peak memory of an EASE fit on ``n_items`` items (and ``n_users`` users), in bytes.

    One dense float32 N x N buffer (Gram matrix, Cholesky factor, inverse and B all share it)
    plus one float32 temporary block of N x ``_BLOCK_ENTRIES / N`` entries. With fewer users
    than items (the Woodbury path) add the float32 U x U inverse and two more blocks.
    """
    block = 4 * n_items * _block_columns(n_items)
    if n_users is None or n_users >= n_items:
        return 4 * n_items * n_items + block
    return 4 * n_items * n_items + 4 * n_users * n_users + 3 * block


class EASE(Recommender):
    """Embarrassingly Shallow Autoencoder (Steck, WWW 2019), closed form.

    Parameters
    ----------
    l2 : float
        Ridge penalty λ > 0 of eq. 1 (Steck uses 500 on ML-20M, 1000 on Netflix, 200 on MSD).

    Notes
    -----
    The model is deterministic; ``seed`` is accepted and unused. Scores are float32.
    """

    name = "ease"
    state_attributes = ("weights_",)

    def __init__(self, *, l2: float = 500.0) -> None:
        if isinstance(l2, bool) or not isinstance(l2, (int, float, np.number)) or not l2 > 0 \
                or not np.isfinite(l2):
            raise ValueError(f"EASE l2 (λ) must be a positive finite number, got {l2!r}")
        super().__init__(l2=float(l2))
        self.weights_: np.ndarray | None = None

    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        self.weights_ = ease_weights(train, self._hyperparameters["l2"], progress=progress)

    def _score(self, users: np.ndarray) -> np.ndarray:
        return np.asarray(self.train_[users] @ self.weights_, dtype=np.float32)

    def _score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """x_u B at the chosen items only: Σ_{i in train_u} B[i, item], O(|train_u|) per item.

        One step per training item i of the batch (in increasing order): every user who has
        i adds B[i, its items]. Each step reads one row of B, and each user's terms are added
        one by one in increasing i, the order of the sparse product of :meth:`_score`, so the
        scores are bitwise those of ``score``.
        """
        rows = self.train_[users].tocsc()
        out = np.zeros(items.shape, dtype=np.float32)
        for i in np.flatnonzero(np.diff(rows.indptr)):
            owners = rows.indices[rows.indptr[i] : rows.indptr[i + 1]]  # distinct rows of the batch
            out[owners] += self.weights_[i, items[owners]]
        return out


def ease_weights(train: sp.csr_matrix, l2: float, progress: bool | None = None) -> np.ndarray:
    """The EASE weight matrix B = I - P diag(1/diag(P)), P = (X^T X + λI)^{-1} (Steck 2019, eq. 8).

    P is computed directly when there are at least as many users as items, else through the
    Woodbury identity (see the module docstring); both give the same B up to float32 rounding.

    Parameters
    ----------
    train : scipy.sparse.csr_matrix
        Binary ``(n_users, n_items)`` float32 training matrix X.
    l2 : float
        Ridge penalty λ > 0.
    progress : bool or None
        Show a progress bar over the blocks of the Gram matrix (and of C).

    Returns
    -------
    numpy.ndarray
        C-contiguous float32 ``(N, N)`` matrix B with a zero diagonal.

    Raises
    ------
    ValueError
        If the buffers do not fit in the available memory (checked before any allocation),
        or if X^T X + λI (X X^T + λI) is not numerically positive definite.
    """
    n_users, n_items = train.shape
    need, have = ease_memory_bytes(n_items, n_users), available_memory_bytes()
    if need > have:
        raise ValueError(
            f"EASE on N = {n_items} items needs {need / 2**30:.1f} GiB (one dense N x N float32 "
            f"matrix, N^2 x 4 bytes, plus work buffers) but only {have / 2**30:.1f} GiB is "
            "available; use fewer items (e.g. drop the least popular ones), another model, or a "
            "machine with more memory"
        )
    if n_users >= n_items:
        # P = (X^T X + λI)^{-1}; B_ij = -P_ij / P_jj
        weights = _regularised_inverse(train, l2, "X^T X + λI", progress)
        weights /= -np.diagonal(weights).copy()[None, :]
    else:
        # K = (X X^T + λI)^{-1}, C = X^T K X; B_ij = C_ij / (1 - C_jj)
        x_t = sp.csr_matrix(train.T)
        inverse = _regularised_inverse(x_t, l2, "X X^T + λI", progress)
        weights = np.empty((n_items, n_items), dtype=np.float32)
        x_csc = train.tocsc()
        step = _block_columns(n_items)
        for start in progress_bar(range(0, n_items, step), progress, desc="EASE C", unit="block"):
            stop = min(start + step, n_items)
            rows = x_csc[:, start:stop].T @ inverse  # X_I^T K, (|I|, U)
            weights[start:stop] = (x_t @ rows.T).T  # rows I of C = (X^T (X_I^T K)^T)^T
        del inverse
        weights /= 1.0 - np.diagonal(weights).copy()[None, :]
    np.fill_diagonal(weights, 0.0)
    return weights


def _regularised_inverse(x: sp.csr_matrix, l2: float, name: str, progress: bool | None) -> np.ndarray:
    """(X^T X + λI)^{-1} of the columns of ``x``, as a C-contiguous float32 symmetric matrix.

    The Gram matrix is written into one Fortran-ordered buffer block by block, factorised and
    inverted in place by LAPACK (``potrf``, ``potri``) and symmetrised block by block; the
    result is a transposed view of that buffer. ``name`` is used in the error messages.
    """
    n = x.shape[1]
    # Fortran order: the column blocks written below are contiguous and LAPACK works in place
    gram = np.empty((n, n), dtype=np.float32, order="F")
    x_csc = x.tocsc()
    x_t = sp.csr_matrix(x.T)
    step = _block_columns(n)
    for start in progress_bar(range(0, n, step), progress, desc="EASE Gram", unit="block"):
        stop = min(start + step, n)
        gram[:, start:stop] = (x_t @ x_csc[:, start:stop]).toarray()
    gram[np.diag_indices(n)] += np.float32(l2)
    potrf, potri = get_lapack_funcs(("potrf", "potri"), (gram,))
    factor, info = potrf(gram, lower=True, overwrite_a=True, clean=False)
    if info != 0:
        raise ValueError(
            f"{name} is not positive definite in float32 (LAPACK potrf info={info}); "
            f"increase l2 (λ = {l2})"
        )
    inverse, info = potri(factor, lower=True, overwrite_c=True)
    if info != 0:
        raise ValueError(f"inverting {name} failed (LAPACK potri info={info}); increase l2")
    # potri filled the lower triangle only; copy it to the upper one, one column block at a time
    for start in range(0, n, step):
        stop = min(start + step, n)
        inverse[:start, start:stop] = inverse[start:stop, :start].T
        block = inverse[start:stop, start:stop]
        block[...] = np.tril(block) + np.tril(block, -1).T
    # inverse.T is a C-contiguous view of the same (symmetric) matrix
    return inverse.T
