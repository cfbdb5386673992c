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


@pytest.mark.blas_kernels
@pytest.mark.parametrize(("n_items", "sample_size"), [(2, 1), (2, 2), (10, 3), (50, 120), (3_706, 100), (20_000, 800)])
def test_binomial_log_kernel_is_the_xlogy_formula_to_the_bit(n_items, sample_size):
    """The logarithms are taken once per row; the entries are those of log C(n-1, k) + xlogy(k, θ)
    + xlog1py(n-1-k, -θ) bit for bit, with the rows θ = 0 and θ = 1, and columns beyond 1..n."""
    from scipy.special import gammaln, xlog1py, xlogy

    R = np.arange(1, n_items + 1, dtype=np.float64)[:, None]
    cols = np.arange(0, sample_size + 2)
    k = cols[None, :] - 1.0
    theta = (R - 1.0) / (n_items - 1.0)
    inside = (k >= 0) & (k <= sample_size - 1)
    choose = np.where(inside, gammaln(sample_size) - gammaln(np.where(inside, k, 0) + 1.0)
                      - gammaln(np.where(inside, sample_size - 1.0 - k, 0) + 1.0), -np.inf)
    with np.errstate(invalid="ignore"):
        expected = np.where(inside, choose + xlogy(k, theta) + xlog1py(sample_size - 1.0 - k, -theta), -np.inf)
    got = log_kernel_block(R.ravel(), cols, n_items, sample_size, "binomial")
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
