"""Item-based collaborative filtering (item-kNN) with cosine similarities on sparse matrices.

One class covers the classic model of Deshpande & Karypis (TOIS 2004) and recommenders Y and Z
of Krichene & Rendle (KDD 2020, §9, eqs. 27-30). With H the training pairs, U_i the training
users of item i and n_i = |U_i|:

* eq. 27, sharpened cosine: s_ij = (|U_i ∩ U_j| / (sqrt(n_i) sqrt(n_j)))^q;
* eq. 28, k-nearest-neighbour sparsification: s'_ij = s_ij δ(i ∈ N_k(j)) δ(j ∈ N_k'(i)),
  N_k(i) being the k items closest to i under s (``k`` selects column neighbours, ``k_prime``
  row neighbours; ``None`` is k = ∞, no sparsification);
* eq. 29, row normalisation: s''_ij = s'_ij / ||s'_i||;
* eq. 30, prediction: ŷ(u, i) = Σ_{j:(u,j)∈H} s''_ij / Σ_{j∈I} s''_ij.

Without ``normalize`` the prediction is the Deshpande & Karypis score ŷ(u, i) = Σ_{j∈H_u} s'_ij.
Rows (or columns) that are all zero (items without training users) score 0.

**Readings.** The equations leave four choices open; each is an option (the defaults of
``krY``/``krZ`` follow the text as printed):

* ``self_similarity``: eq. 27 gives s_ii = 1 and nothing excludes j = i, so the item is its
  own most similar item and counts in the denominator of eq. 30 (``True``, as printed);
  ``False`` sets s_ii = 0 first, as Deshpande & Karypis do.
* ``self_neighbor`` (with ``self_similarity``): whether i counts among "the k closest items to
  i" of eq. 28 (``True``: it is the closest, and takes one of the k' places) or the k (k')
  neighbours are chosen among the other items and s'_ii = s_ii is kept on top (``False``).
* ``orientation``: whose row of s'' scores item i. ``"target"`` is eq. 30 as printed,
  s''_{i,j} — row i, the target's own neighbours. ``"history"`` reads it as s''_{j,i}: the rows
  of the user's items j, i.e. ŷ_u = x_u S'' / 1ᵀS'' in matrix form (then the k' row neighbours
  of eq. 28 are the neighbours of the user's items, as in Deshpande & Karypis).
* ``norm`` of eq. 29, ``"l2"`` or ``"l1"`` (the paper does not name it). Under ``"target"``
  eq. 30 divides row i by its sum, which cancels any scaling of row i: the norm has no effect.
  Under ``"history"`` eq. 29 scales the rows j and eq. 30 sums columns, so it does not cancel.

Neighbours with equal similarity are ranked by item index (a deterministic model choice, not an
evaluation tie-break; ties of the *scores* are the business of :mod:`itemsampling.ranks`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .base import Recommender

__all__ = ["ItemKNN", "itemknn_weights", "top_k_per_row"]

#: store the prediction matrix densely for scoring when more than this fraction is non-zero
_DENSE_FRACTION = 0.1


#: eq. 29 row norms
NORMS = ("l2", "l1")
#: eq. 30: whose row of s'' scores item i (see the module docstring)
ORIENTATIONS = ("target", "history")


def _check_k(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"item-kNN {name} must be a positive integer or None (k = ∞), got {value!r}")
    return int(value)


def _check_option(name: str, value, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"item-kNN {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def top_k_per_row(matrix: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Keep the ``k`` largest stored entries of every row (ties: smaller column index first).

    Row by row: the k-th largest value (``np.partition``, linear time) splits the row into the
    entries above it, all kept, and those equal to it, kept in column order until k are kept.
    """
    matrix = sp.csr_matrix(matrix)
    matrix.sort_indices()
    keep = np.zeros(matrix.nnz, dtype=bool)
    for start, stop in zip(matrix.indptr[:-1].tolist(), matrix.indptr[1:].tolist(), strict=True):
        if stop - start <= k:
            keep[start:stop] = True
            continue
        values = matrix.data[start:stop]
        kth = np.partition(values, values.size - k)[values.size - k]
        kept = values > kth
        kept[np.flatnonzero(values == kth)[: k - int(kept.sum())]] = True
        keep[start:stop] = kept
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    return sp.csr_matrix(
        (matrix.data[keep], (rows[keep], matrix.indices[keep])), shape=matrix.shape
    )


def _scale_rows(matrix: sp.spmatrix, values: np.ndarray) -> sp.csr_matrix:
    """Divide row i of ``matrix`` by ``values[i]`` (rows with value 0 stay 0)."""
    inverse = np.divide(1.0, values, out=np.zeros_like(values), where=values > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix)


def _sparsify(sim: sp.csr_matrix, k: int | None, k_prime: int | None) -> sp.csr_matrix:
    """Eq. 28 on a symmetric ``sim``: keep s_ij where j ∈ N_k'(i) (row) and i ∈ N_k(j) (column)."""
    rows = top_k_per_row(sim, k_prime) if k_prime is not None else sim
    if k is not None:  # the k largest entries of column j = of row j (s is symmetric)
        rows = sp.csr_matrix(rows.multiply(top_k_per_row(sim, k).T.astype(bool)))
    return rows


def itemknn_weights(
    train: sp.csr_matrix,
    q: float = 1.0,
    k: int | None = None,
    k_prime: int | None = None,
    normalize: bool = False,
    self_similarity: bool = False,
    self_neighbor: bool = True,
    orientation: str = "target",
    norm: str = "l2",
) -> sp.csr_matrix:
    """The prediction matrix W of item-kNN, so that ŷ(u, i) = Σ_j x_uj W_ij.

    Krichene & Rendle (KDD 2020), eqs. 27-30 (see the module docstring for the readings).

    Parameters
    ----------
    train : scipy.sparse.csr_matrix
        Binary ``(n_users, n_items)`` training matrix.
    q : float
        Exponent sharpening the cosine (eq. 27).
    k, k_prime : int or None
        Column and row neighbourhood sizes of eq. 28; ``None`` keeps all.
    normalize : bool
        Apply eqs. 29-30 (K&R); otherwise W = s' (Deshpande & Karypis).
    self_similarity : bool
        Keep s_ii = 1 (the equations as written) instead of setting it to 0.
    self_neighbor : bool
        With ``self_similarity``: i is one of its own k (k') nearest neighbours in eq. 28
        (``True``), or the neighbours are other items and s'_ii = s_ii is kept (``False``).
    orientation : {"target", "history"}
        Eq. 30 reads s''_{i,j} (row of the target, as printed) or s''_{j,i} (rows of the
        user's items).
    norm : {"l2", "l1"}
        Row norm of eq. 29 (no effect under ``"target"``, where eq. 30 cancels it).

    Returns
    -------
    scipy.sparse.csr_matrix
        float32 ``(N, N)``; row i holds the weights of the user's items in the score of item i.
    """
    orientation = _check_option("orientation", orientation, ORIENTATIONS)
    norm = _check_option("norm", norm, NORMS)
    x = sp.csr_matrix(train, dtype=np.float64)
    counts = np.asarray(x.sum(axis=0)).ravel()
    inv_sqrt = np.divide(1.0, np.sqrt(counts), out=np.zeros_like(counts), where=counts > 0)
    scale = sp.diags(inv_sqrt)
    sim = sp.csr_matrix(scale @ (x.T @ x) @ scale)  # eq. 27 with q = 1
    sim.data **= q
    diagonal = sp.diags(sim.diagonal()) if self_similarity and not self_neighbor else None
    if not self_similarity or diagonal is not None:
        sim = sp.csr_matrix(sim - sp.diags(sim.diagonal()))
    sim.eliminate_zeros()
    weights = _sparsify(sim, k, k_prime)  # eq. 28
    if diagonal is not None:
        weights = sp.csr_matrix(weights + diagonal)
    if normalize:
        squared = weights.multiply(weights) if norm == "l2" else abs(weights)
        norms = np.asarray(squared.sum(axis=1)).ravel()
        weights = _scale_rows(weights, np.sqrt(norms) if norm == "l2" else norms)  # eq. 29
    if orientation == "history":
        weights = sp.csr_matrix(weights.T)
    if normalize:  # eq. 30: divide by the sum over all j
        weights = _scale_rows(weights, np.asarray(weights.sum(axis=1)).ravel())
    weights = sp.csr_matrix(weights, dtype=np.float32)
    weights.eliminate_zeros()
    weights.sort_indices()
    return weights


class ItemKNN(Recommender):
    """Item-based collaborative filtering with cosine similarities.

    Parameters
    ----------
    q : float
        Exponent of the cosine similarity (K&R eq. 27; 1 = plain cosine).
    k : int or None
        Keep s_ij only if i is among the k nearest neighbours of j (eq. 28, column
        neighbours; the neighbourhood of Deshpande & Karypis). ``None``: no limit.
    k_prime : int or None
        Keep s_ij only if j is among the k' nearest neighbours of i (eq. 28, row neighbours).
    normalize : bool
        Row-normalise and divide by the row sum (eqs. 29-30).
    self_similarity : bool
        Keep the self-similarity s_ii = 1 of eq. 27.
    self_neighbor : bool
        With ``self_similarity``: the item counts among its own k (k') neighbours of eq. 28
        (``True``), or its neighbours are k (k') other items and s_ii is kept besides them.
    orientation : {"target", "history"}
        Eq. 30 scores item i from its own row of s'' (``"target"``, as printed) or from the
        rows of the user's items (``"history"``).
    norm : {"l2", "l1"}
        Row norm of eq. 29; it matters only under ``orientation="history"``.

    Notes
    -----
    Deterministic; ``seed`` is accepted and unused. K&R's recommender Y is
    ``ItemKNN(q=3, normalize=True, self_similarity=True)`` and Z is
    ``ItemKNN(q=1, k_prime=10, normalize=True, self_similarity=True)``.
    """

    name = "itemknn"
    state_attributes = ("weights_data_", "weights_indices_", "weights_indptr_")

    def __init__(
        self,
        *,
        q: float = 1.0,
        k: int | None = 100,
        k_prime: int | None = None,
        normalize: bool = False,
        self_similarity: bool = False,
        self_neighbor: bool = True,
        orientation: str = "target",
        norm: str = "l2",
    ) -> None:
        if isinstance(q, bool) or not isinstance(q, (int, float, np.number)) or not q > 0 \
                or not np.isfinite(q):
            raise ValueError(f"item-kNN exponent q must be a positive number, got {q!r}")
        for flag, value in (("normalize", normalize), ("self_similarity", self_similarity),
                            ("self_neighbor", self_neighbor)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"item-kNN {flag} must be true or false, got {value!r}")
        super().__init__(
            q=float(q),
            k=_check_k("k", k),
            k_prime=_check_k("k_prime", k_prime),
            normalize=bool(normalize),
            self_similarity=bool(self_similarity),
            self_neighbor=bool(self_neighbor),
            orientation=_check_option("orientation", orientation, ORIENTATIONS),
            norm=_check_option("norm", norm, NORMS),
        )
        self.weights_data_ = self.weights_indices_ = self.weights_indptr_ = None
        self._score_matrix = None

    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        w = itemknn_weights(train, **self._hyperparameters)
        self.weights_data_, self.weights_indices_, self.weights_indptr_ = w.data, w.indices, w.indptr
        self._score_matrix = None

    def load_state(self, train, state):
        """Restore a model fitted on ``train`` from the arrays returned by :meth:`state`."""
        super().load_state(train, state)
        self._score_matrix = None
        return self

    @property
    def weights(self) -> sp.csr_matrix:
        """The ``(N, N)`` prediction matrix W: ŷ(u, i) = Σ_j x_uj W_ij."""
        self._check_fitted()
        n = self.n_items
        return sp.csr_matrix((self.weights_data_, self.weights_indices_, self.weights_indptr_), shape=(n, n))

    def _score(self, users: np.ndarray) -> np.ndarray:
        if self._score_matrix is None:
            w_t = self.weights.T
            if w_t.nnz > _DENSE_FRACTION * self.n_items**2:
                self._score_matrix = np.ascontiguousarray(w_t.toarray())
            else:
                self._score_matrix = sp.csr_matrix(w_t)
        out = self.train_[users] @ self._score_matrix
        return out.toarray() if sp.issparse(out) else out
