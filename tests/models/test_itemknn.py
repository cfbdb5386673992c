"""Item-kNN and K&R's Y and Z (KDD 2020 §9, eqs. 27-30) against a dense brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from itemsampling.models.itemknn import ItemKNN, itemknn_weights, top_k_per_row


def brute_force_weights(x, q, k, k_prime, normalize, self_similarity, self_neighbor=True,
                        orientation="target", norm="l2"):
    """Eqs. 27-30 with explicit sets and loops (neighbour ties broken by smaller index).

    ``self_neighbor=False``: N_k(i) holds k items other than i and δ(i ∈ N_k(i)) is taken as 1,
    so s'_ii = s_ii. ``orientation="history"``: eq. 30 with s''_{j,i} in place of s''_{i,j}.
    """
    n = x.shape[1]
    users = [set(np.flatnonzero(x[:, i])) for i in range(n)]
    s = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if users[i] and users[j] and (self_similarity or i != j):
                s[i, j] = (len(users[i] & users[j]) / np.sqrt(len(users[i]) * len(users[j]))) ** q

    def nearest(i, size):  # N_size(i): the closest items to i (positive similarity)
        cand = [j for j in range(n) if s[i, j] > 0 and (self_neighbor or j != i)]
        cand.sort(key=lambda j: (-s[i, j], j))
        return set(cand if size is None else cand[:size])

    s1 = np.zeros_like(s)
    for i in range(n):
        for j in range(n):
            if (i == j and not self_neighbor) or (
                    (k is None or i in nearest(j, k)) and (k_prime is None or j in nearest(i, k_prime))):
                s1[i, j] = s[i, j]  # eq. 28
    s2 = s1
    if normalize:
        norms = np.linalg.norm(s1, ord=1 if norm == "l1" else 2, axis=1, keepdims=True)
        s2 = np.divide(s1, norms, out=np.zeros_like(s1), where=norms > 0)  # eq. 29
    w = np.zeros_like(s2)
    for i in range(n):  # eq. 30: the weight of the user's item j in the score of item i
        for j in range(n):
            w[i, j] = s2[i, j] if orientation == "target" else s2[j, i]
    if not normalize:
        return w
    sums = w.sum(axis=1, keepdims=True)
    return np.divide(w, sums, out=np.zeros_like(w), where=sums > 0)


SETTINGS = {
    "Y": dict(q=3.0, k=None, k_prime=None, normalize=True, self_similarity=True),
    "Z": dict(q=1.0, k=None, k_prime=3, normalize=True, self_similarity=True),
    "DK": dict(q=1.0, k=4, k_prime=None, normalize=False, self_similarity=False),
    "both": dict(q=2.0, k=5, k_prime=4, normalize=True, self_similarity=False),
    "Z self extra": dict(q=1.0, k=None, k_prime=3, normalize=True, self_similarity=True, self_neighbor=False),
    "Z history l2": dict(q=1.0, k=None, k_prime=3, normalize=True, self_similarity=True, orientation="history"),
    "Z history l1": dict(q=1.0, k=None, k_prime=3, normalize=True, self_similarity=True, orientation="history",
                         norm="l1"),
    "Y history l1 no self": dict(q=3.0, k=None, k_prime=None, normalize=True, self_similarity=False,
                                 orientation="history", norm="l1"),
    "both extra history": dict(q=2.0, k=5, k_prime=4, normalize=True, self_similarity=True, self_neighbor=False,
                               orientation="history", norm="l1"),
    "DK history": dict(q=1.0, k=4, k_prime=None, normalize=False, self_similarity=False, orientation="history"),
}


@pytest.fixture(scope="module")
def small():
    """20 users x 15 items with small counts (many tied similarities) and one unused item."""
    rng = np.random.default_rng(3)
    x = (rng.random((20, 15)) < 0.25).astype(np.float32)
    x[:, 7] = 0
    return x


@pytest.mark.parametrize("setting", SETTINGS)
def test_weights_and_scores_match_brute_force(small, setting):
    params = SETTINGS[setting]
    expected = brute_force_weights(small.astype(np.float64), **params)
    weights = itemknn_weights(sp.csr_matrix(small), **params)
    np.testing.assert_allclose(weights.toarray(), expected, rtol=1e-5, atol=1e-7)
    model = ItemKNN(**params).fit(sp.csr_matrix(small))
    np.testing.assert_allclose(model.score(np.arange(20)), small @ expected.T, rtol=1e-5, atol=1e-6)


def test_eq30_cancels_the_norm_of_eq29_only_for_the_target_row(small):
    """As printed (row i scores item i) the norm of eq. 29 cancels; read from the rows of the
    user's items it does not, and the readings give different predictions."""
    params = SETTINGS["Z"]
    for name in ("Z", "Y", "both"):
        np.testing.assert_allclose(itemknn_weights(sp.csr_matrix(small), **SETTINGS[name], norm="l1").toarray(),
                                   itemknn_weights(sp.csr_matrix(small), **SETTINGS[name]).toarray(), atol=1e-7)
    history = {**params, "orientation": "history"}
    l1 = itemknn_weights(sp.csr_matrix(small), **history, norm="l1").toarray()
    l2 = itemknn_weights(sp.csr_matrix(small), **history, norm="l2").toarray()
    assert np.abs(l1 - l2).max() > 1e-3
    assert np.abs(l2 - itemknn_weights(sp.csr_matrix(small), **params).toarray()).max() > 1e-3


def test_self_neighbor_matters_only_with_a_finite_neighbourhood(small):
    x = sp.csr_matrix(small)
    for name, differs in (("Y", False), ("Z", True)):
        extra = itemknn_weights(x, **SETTINGS[name], self_neighbor=False).toarray()
        assert (np.abs(extra - itemknn_weights(x, **SETTINGS[name]).toarray()).max() > 1e-3) == differs, name
    z = itemknn_weights(x, **{**SETTINGS["Z"], "normalize": False}, self_neighbor=False).toarray()
    used = np.flatnonzero(small.sum(axis=0))
    assert (np.diag(z)[used] == 1).all() and ((z > 0).sum(axis=1)[used] <= 3 + 1).all()


def test_the_history_reading_keeps_the_neighbours_of_the_users_items(small):
    """Under "history", k' = 3 keeps the 3 nearest items of each user item j (j itself among
    them): column j of W has at most 3 non-zeros, while row i may have many."""
    w = itemknn_weights(sp.csr_matrix(small), **SETTINGS["Z history l2"]).toarray()
    assert ((w > 0).sum(axis=0) <= 3).all() and (w > 0).sum(axis=1).max() > 3


def test_top_k_per_row_ties_by_index():
    m = sp.csr_matrix(np.array([[0.5, 0.9, 0.5, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(top_k_per_row(m, 2).toarray(), [[0.5, 0.9, 0, 0, 0], [1.0, 0, 0, 0, 0]])


def test_dense_and_sparse_scoring_agree(small, monkeypatch):
    from itemsampling.models import itemknn as module

    model = ItemKNN(k=3).fit(sp.csr_matrix(small))
    sparse_scores = model.score(np.arange(20))
    monkeypatch.setattr(module, "_DENSE_FRACTION", 0.0)
    dense_model = ItemKNN(k=3).fit(sp.csr_matrix(small))
    np.testing.assert_allclose(dense_model.score(np.arange(20)), sparse_scores, rtol=1e-6)
    assert isinstance(dense_model._score_matrix, np.ndarray)


@pytest.mark.parametrize(("name", "value"), [("q", 0), ("k", 0), ("k_prime", 2.5), ("normalize", 1),
                                             ("self_neighbor", "no"), ("orientation", "row"), ("norm", "l3")])
def test_hyperparameters_are_validated(name, value):
    with pytest.raises(ValueError, match=name):
        ItemKNN(**{name: value})


def _top_k_by_sorting(matrix: sp.csr_matrix, k: int) -> np.ndarray:
    """The reference: one lexicographic sort of all entries by (row, -value, column)."""
    matrix = sp.csr_matrix(matrix)
    matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    order = np.lexsort((matrix.indices, -matrix.data, rows))
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size) - matrix.indptr[rows[order]]
    keep = position < k
    return sp.csr_matrix((matrix.data[keep], (rows[keep], matrix.indices[keep])), shape=matrix.shape).toarray()


@pytest.mark.parametrize("k", [1, 2, 5, 40])
def test_top_k_per_row_equals_a_full_sort_with_many_ties(k):
    rng = np.random.default_rng(k)
    dense = rng.integers(0, 4, size=(60, 50)).astype(float) / 3  # few distinct values: ties everywhere
    dense[rng.random(dense.shape) < 0.3] = 0.0
    dense[7] = 0.0  # an empty row
    matrix = sp.csr_matrix(dense)
    np.testing.assert_array_equal(top_k_per_row(matrix, k).toarray(), _top_k_by_sorting(matrix, k))
