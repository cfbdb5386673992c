"""Tests of the Gram matrix of a binomial kernel through the kernel of set size 2n - 1."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats

from itemsampling.banded_kernel import BandedKernel
from itemsampling.binomial_gram import BinomialGram, coupling_matrix
from itemsampling.distributions import _pooled_gram, binomial_gram_of, check_sampled_ranks, mes
from itemsampling.kernels import KernelCache, rank_kernel
from itemsampling.mes import solve_mes


def _binomial_kernel(N, n):
    """P(r | R) straight from scipy's binomial pmf: Binom(r - 1; n - 1, (R - 1)/(N - 1))."""
    R = np.arange(1, N + 1)
    return stats.binom.pmf(np.arange(n)[None, :], n - 1, (R[:, None] - 1) / max(N - 1, 1))


@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_coupling_matrix_is_the_ratio_of_binomial_coefficients(n):
    """H(j, k) = C(n-1, j-1) C(n-1, k-1) / C(2n-2, j+k-2), against exact rationals."""
    H = coupling_matrix(n)
    exact = np.array([[float(Fraction(comb(n - 1, a) * comb(n - 1, b), comb(2 * n - 2, a + b))) for b in range(n)]
                      for a in range(n)])
    np.testing.assert_allclose(H, exact, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(H, H.T)


@pytest.mark.parametrize(("N", "n"), [(2, 1), (2, 3), (30, 5), (200, 20), (50, 80), (4_000, 300), (1_500, 800)])
def test_gram_equals_the_dense_product(N, n):
    """Kᵀ diag(w) K for uniform, random and peaked w against the dense product of scipy's pmf;
    the two largest cases band K₂ in row blocks (more than 2^20 entries)."""
    K = _binomial_kernel(N, n)
    gram = BinomialGram(N, n)
    rng = np.random.default_rng(N + n)
    peaked = np.exp(-np.arange(N) / max(N / 50, 1.0))
    for w in (np.full(N, 1.0 / N), rng.dirichlet(np.full(N, 0.3)), peaked / peaked.sum()):
        dense = K.T @ (w[:, None] * K)
        np.testing.assert_allclose(gram.gram(w), dense, rtol=1e-9, atol=1e-13 * dense.max())


def test_gram_at_columns_is_the_submatrix_and_bad_columns_raise():
    gram = BinomialGram(500, 60)
    w = np.random.default_rng(0).dirichlet(np.ones(500))
    ranks = np.array([1, 2, 9, 30, 31, 60])
    np.testing.assert_array_equal(gram.at(ranks).gram(w), gram.gram(w)[np.ix_(ranks - 1, ranks - 1)])
    for bad in ([], [0, 3], [3, 61], [5, 5], [7, 3]):
        with pytest.raises(ValueError, match="sampled_ranks"):
            gram.at(bad)
    with pytest.raises(ValueError, match="sample_size"):
        BinomialGram(500, 0)
    with pytest.raises(ValueError, match=r"one entry per global rank, shape \(500,\)"):
        gram.gram(np.ones(499))


def test_stacked_rows_are_one_kernel():
    """Row blocks banded alone and stacked give the products of the whole kernel."""
    K = rank_kernel(3_000, 400)
    parts = [(0, BandedKernel(K[:1_200])), (1_200, BandedKernel(K[1_200:2_900])), (2_900, BandedKernel(K[2_900:]))]
    stacked = BandedKernel.stack_rows(parts, 3_000)
    x, v = np.random.default_rng(1).random(3_000), np.random.default_rng(2).random(400)
    np.testing.assert_allclose(stacked.rmatvec(x), K.T @ x, rtol=1e-12)
    np.testing.assert_allclose(stacked.matvec(v), K @ v, rtol=1e-12)
    with pytest.raises(ValueError, match="cover rows"):
        BandedKernel.stack_rows(parts[:2], 3_000)
    with pytest.raises(ValueError, match="same columns"):
        BandedKernel.stack_rows([(0, BandedKernel(K[:100])), (100, BandedKernel(K[100:, :50]))], 3_000)


def test_mes_newton_with_the_binomial_gram_reaches_the_same_optimum():
    """The Hessian only steers Newton's steps: both Grams stop at the same π to rounding."""
    rng = np.random.default_rng(3)
    N, n = 5_000, 300
    R = np.minimum(1 + rng.geometric(1 / 400, size=4_000), N)
    r = 1 + rng.binomial(n - 1, (R - 1) / (N - 1))
    distinct, counts = np.unique(r, return_counts=True)
    K = BandedKernel(rank_kernel(N, n)[:, distinct - 1])
    for eta in (1e-3, 1e-3 / n):
        plain = solve_mes(K, counts / counts.sum(), eta, tol=1e-12)
        fast = solve_mes(K, counts / counts.sum(), eta, tol=1e-12, gram=BinomialGram(N, n).at(distinct).gram)
        assert plain.converged and fast.converged
        np.testing.assert_allclose(fast.weights, plain.weights, rtol=1e-8, atol=1e-14)


def test_mes_takes_the_binomial_gram_from_a_shared_cache_only():
    """With a cache the binomial MES uses (and keeps) the Gram of set size 2n - 1; without one,
    with hypergeometric sampling or with several candidate-set sizes it keeps the band's."""
    rng = np.random.default_rng(4)
    N, n = 2_000, 100
    r = 1 + rng.binomial(n - 1, np.minimum(rng.geometric(1 / 200, size=3_000), N - 1) / (N - 1))
    cache = KernelCache()
    checked = check_sampled_ranks(r, N, n, 20, False)
    assert _pooled_gram(checked, "binomial", cache) is not None
    assert _pooled_gram(checked, "binomial", None) is None
    assert _pooled_gram(checked, "hypergeometric", cache) is None
    several = check_sampled_ranks(r, rng.choice([1_500, 2_000], size=r.size), n, 20, False)
    assert _pooled_gram(several, "binomial", cache) is None
    np.testing.assert_allclose(mes(r, N, n, cache=cache), mes(r, N, n), rtol=1e-8, atol=1e-14)
    assert binomial_gram_of(cache, N, n) is binomial_gram_of(cache, N, n)
