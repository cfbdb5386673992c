"""EASE: the in-place closed form against column-wise ridge regressions, and the memory check."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from itemsampling.models import ease as ease_module
from itemsampling.models.ease import EASE, ease_memory_bytes, ease_weights


def column_ridge(x: np.ndarray, l2: float) -> np.ndarray:
    """Steck (2019) eq. 1 solved column by column: B_{-j,j} = argmin ||x_j - X_{-j} b||^2 + λ||b||^2."""
    n = x.shape[1]
    out = np.zeros((n, n))
    for j in range(n):
        others = np.delete(np.arange(n), j)
        design = np.vstack([x[:, others], np.sqrt(l2) * np.eye(n - 1)])
        target = np.concatenate([x[:, j], np.zeros(n - 1)])
        out[others, j] = np.linalg.lstsq(design, target, rcond=None)[0]
    return out


@pytest.mark.parametrize("l2", [0.5, 10.0])
def test_closed_form_matches_direct_solve(l2, monkeypatch):
    monkeypatch.setattr(ease_module, "_BLOCK_ENTRIES", 7 * 13)  # several blocks of 7 columns
    rng = np.random.default_rng(0)
    x = (rng.random((60, 13)) < 0.3).astype(np.float32)
    weights = ease_weights(sp.csr_matrix(x), l2)
    assert weights.dtype == np.float32 and weights.flags.c_contiguous
    np.testing.assert_allclose(weights, column_ridge(x.astype(np.float64), l2), atol=2e-5)
    model = EASE(l2=l2).fit(sp.csr_matrix(x))
    np.testing.assert_allclose(model.score(np.arange(60)), x @ weights, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("l2", [0.5, 10.0])
def test_fewer_users_than_items_matches_direct_solve(l2, monkeypatch):
    """U < N goes through the U x U Woodbury inverse, in several blocks, and gives the same B."""
    monkeypatch.setattr(ease_module, "_BLOCK_ENTRIES", 7 * 45)  # item blocks of 7 rows
    inverted = []
    regularised_inverse = ease_module._regularised_inverse
    monkeypatch.setattr(ease_module, "_regularised_inverse",
                        lambda x, *a: inverted.append(x.shape[1]) or regularised_inverse(x, *a))
    rng = np.random.default_rng(1)
    x = (rng.random((20, 45)) < 0.2).astype(np.float32)
    x[:, 3] = 0  # an item without users: its column of B is zero
    weights = ease_weights(sp.csr_matrix(x), l2)
    assert inverted == [20]
    assert weights.dtype == np.float32 and weights.flags.c_contiguous
    expected = column_ridge(x.astype(np.float64), l2)
    np.testing.assert_allclose(weights, expected, atol=2e-5 * max(1.0, np.abs(expected).max()))
    assert not weights[:, 3].any() and np.abs(weights).max() > 0.01
    model = EASE(l2=l2).fit(sp.csr_matrix(x))
    np.testing.assert_allclose(model.score(np.arange(20)), x @ weights, rtol=1e-5, atol=1e-6)


def test_memory_is_checked_before_allocating(monkeypatch):
    monkeypatch.setattr(ease_module, "available_memory_bytes", lambda: 1000)
    with pytest.raises(ValueError, match=r"needs .* GiB .* available"):
        EASE(l2=1.0).fit(sp.random(5, 30, density=0.3, format="csr", rng=0))
    assert ease_memory_bytes(30) > 30 * 30 * 4
    assert ease_memory_bytes(30, 30) == ease_memory_bytes(30)
    assert ease_memory_bytes(30, 29) > ease_memory_bytes(30) + 29 * 29 * 4


def test_memory_check_for_a_large_catalogue():
    """N = 300,000 needs 335 GiB: refused with a ValueError, not attempted."""
    x = sp.csr_matrix((np.ones(3, np.float32), ([0, 1, 2], [0, 5, 299_999])), shape=(3, 300_000))
    with pytest.raises(ValueError, match="N = 300000"):
        EASE(l2=1.0).fit(x)


@pytest.mark.parametrize("bad", [0, -1.0, np.inf, "1", True])
def test_l2_is_validated(bad):
    with pytest.raises(ValueError, match="l2"):
        EASE(l2=bad)


@pytest.mark.blas_kernels
def test_score_items_are_bitwise_the_full_scores(planted):
    """EASE scores chosen items from the training rows only, adding the terms in the order of
    the full sparse product, so live evaluation sees exactly the scores of the global ranks."""
    model = EASE(l2=20.0).fit(planted.train)
    rng = np.random.default_rng(0)
    users = rng.integers(0, planted.n_users, size=300)
    users[:3] = np.flatnonzero(np.diff(planted.train.indptr) == np.diff(planted.train.indptr).max())[0]
    items = rng.integers(0, planted.n_items, size=(300, 37))
    full = model.score(users)[np.arange(users.size)[:, None], items]
    np.testing.assert_array_equal(model.score_items(users, items), full)
    # a user without training items scores 0 everywhere
    small = EASE(l2=1.0).fit(sp.csr_matrix(np.array([[1, 0, 1, 0], [0, 0, 0, 0], [0, 1, 0, 1]], np.float32)))
    items = np.array([[0, 3], [1, 1], [2, 0]])
    np.testing.assert_array_equal(small.score_items([0, 1, 2], items),
                                  np.take_along_axis(small.score([0, 1, 2]), items, axis=1))
    assert (small.score_items([1], [[0, 2]]) == 0).all()
