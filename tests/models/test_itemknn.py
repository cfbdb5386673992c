"""Item-kNN and K&R's Y and Z (KDD 2020 §9, eqs. 27-30) against a dense brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from itemsampling.models.itemknn import ItemKNN, itemknn_weights, top_k_per_row


def brute_force_weights(x, q, k, k_prime, normalize, self_similarity, norm_ord=2):
    """Eqs. 27-30 with explicit sets and loops (neighbour ties broken by smaller index)."""
    n = x.shape[1]
    users = [set(np.flatnonzero(x[:, i])) for i in range(n)]
    s = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if users[i] and users[j] and (self_similarity or i != j):
                s[i, j] = (len(users[i] & users[j]) / np.sqrt(len(users[i]) * len(users[j]))) ** q

    def nearest(i, size):  # N_size(i): the closest items to i (positive similarity)
        cand = [j for j in range(n) if s[i, j] > 0]
        cand.sort(key=lambda j: (-s[i, j], j))
        return set(cand if size is None else cand[:size])

    s1 = np.zeros_like(s)
    for i in range(n):
        for j in range(n):
            if (k is None or i in nearest(j, k)) and (k_prime is None or j in nearest(i, k_prime)):
                s1[i, j] = s[i, j]  # eq. 28
    if not normalize:
        return s1
    norms = np.linalg.norm(s1, ord=norm_ord, axis=1, keepdims=True)
    s2 = np.divide(s1, norms, out=np.zeros_like(s1), where=norms > 0)  # eq. 29
    sums = s2.sum(axis=1, keepdims=True)
    return np.divide(s2, sums, out=np.zeros_like(s2), where=sums > 0)  # eq. 30


SETTINGS = {
    "Y": dict(q=3.0, k=None, k_prime=None, normalize=True, self_similarity=True),
    "Z": dict(q=1.0, k=None, k_prime=3, normalize=True, self_similarity=True),
    "DK": dict(q=1.0, k=4, k_prime=None, normalize=False, self_similarity=False),
    "both": dict(q=2.0, k=5, k_prime=4, normalize=True, self_similarity=False),
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


def test_eq30_cancels_the_norm_of_eq29(small):
    """Whatever norm eq. 29 uses, eq. 30 gives the same prediction."""
    params = SETTINGS["Z"]
    np.testing.assert_allclose(
        brute_force_weights(small, **params, norm_ord=1), brute_force_weights(small, **params), atol=1e-12
    )


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


@pytest.mark.parametrize(("name", "value"), [("q", 0), ("k", 0), ("k_prime", 2.5), ("normalize", 1)])
def test_hyperparameters_are_validated(name, value):
    with pytest.raises(ValueError, match=name):
        ItemKNN(**{name: value})
