import numpy as np
import pytest
from scipy import stats

import itemsampling as its
from itemsampling.kernels import kernel_columns, log_kernel_block


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_kernel_matches_scipy(scheme):
    N, n = 60, 12
    K = its.rank_kernel(N, n, scheme)
    R = np.arange(1, N + 1)[:, None]
    r = np.arange(1, n + 1)[None, :]
    if scheme == "binomial":
        ref = stats.binom.pmf(r - 1, n - 1, (R - 1) / (N - 1))
    else:
        ref = stats.hypergeom.pmf(r - 1, N - 1, R - 1, n - 1)
    np.testing.assert_allclose(K, ref, atol=1e-13)
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_large_kernel_columns_are_finite_probabilities(scheme):
    N, n = 10**6, 10**4
    cols = kernel_columns(N, n, [1, 2, 500, 9_999, 10_000], scheme, dtype=np.float32)
    assert cols.shape == (N, 5)
    assert np.isfinite(cols).all() and (cols >= 0).all() and (cols <= 1).all()
    # a column sums over R to about N/n (each sampled rank is equally likely when R is uniform)
    np.testing.assert_allclose(cols.sum(axis=0, dtype=np.float64), 100.0, rtol=1e-2)


def test_kernel_rejects_n_greater_than_N():
    with pytest.raises(ValueError, match="n <= n_items"):
        its.rank_kernel(10, 11)


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_log_kernel_block_takes_one_number_of_items_per_row(scheme):
    R, N = np.array([1, 5, 40, 40, 120]), np.array([50, 60, 40, 300, 120])
    r = np.arange(1, 11)
    rows = log_kernel_block(R, r, N, 10, scheme)
    for i in range(R.size):
        np.testing.assert_array_equal(rows[i], log_kernel_block(R[i : i + 1], r, int(N[i]), 10, scheme)[0])
