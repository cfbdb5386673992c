"""Property tests of the rank kernels and the simulators (hypothesis, derandomized)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemsampling.kernels import log_kernel_block, rank_kernel
from itemsampling.simulation import adaptive_sample_ranks, sample_ranks

SCHEMES = st.sampled_from(["binomial", "hypergeometric"])
PROPERTY = settings(derandomize=True, deadline=None, max_examples=60)


def kernel_row(R, N, n, scheme):
    return np.exp(log_kernel_block([R], np.arange(1, n + 1), N, n, scheme)[0])


@st.composite
def sizes(draw, max_items=300):
    N = draw(st.integers(2, max_items))
    n = draw(st.integers(1, N))
    return N, n


@PROPERTY
@given(sizes(), SCHEMES)
def test_kernel_is_row_stochastic(size, scheme):
    N, n = size
    K = rank_kernel(N, n, scheme)
    assert K.shape == (N, n)
    assert np.isfinite(K).all() and (K >= 0).all() and (K <= 1 + 1e-15).all()
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-12)
    # R = 1 is never outranked; R = N is outranked by every sampled item
    assert K[0, 0] == pytest.approx(1.0) and K[-1, -1] == pytest.approx(1.0)


@PROPERTY
@given(sizes(), SCHEMES)
def test_kernel_mean_is_linear_in_global_rank(size, scheme):
    # E[r | R] = 1 + (n - 1)(R - 1)/(N - 1) for both schemes (K&R §4.4.1)
    N, n = size
    K = rank_kernel(N, n, scheme)
    R = np.arange(1, N + 1)
    np.testing.assert_allclose(K @ np.arange(1, n + 1), 1 + (n - 1) * (R - 1) / (N - 1), rtol=1e-10)


@PROPERTY
@given(sizes(), SCHEMES)
def test_kernel_is_stochastically_increasing_in_global_rank(size, scheme):
    # a worse global rank never makes a small sampled rank more likely: CDFs decrease in R
    N, n = size
    cdf = np.cumsum(rank_kernel(N, n, scheme), axis=1)
    assert (np.diff(cdf, axis=0) <= 1e-12).all()


@settings(derandomize=True, deadline=None, max_examples=20)
@given(st.integers(2, 30), st.integers(0, 60))
def test_binomial_and_hypergeometric_agree_as_N_grows(n, j):
    # without replacement tends to with replacement as the population grows: at the same
    # relative rank θ = (R - 1)/(N - 1) = j/60, the total variation distance decreases with N
    tvs = []
    for N in (61, 601, 6001, 60001):
        R = 1 + j * (N - 1) // 60
        rows = [kernel_row(R, N, n, scheme) for scheme in ("binomial", "hypergeometric")]
        tvs.append(0.5 * np.abs(rows[0] - rows[1]).sum())
    # (slack 1e-9: the kernels are exact up to log-space rounding of about 1e-11)
    assert np.all(np.diff(tvs) <= 1e-9)
    # Diaconis & Freedman (1980): k draws with and without replacement from M items differ in
    # total variation by at most k(k - 1)/(2M); here k = n - 1 and M = N - 1
    assert tvs[-1] <= (n - 1) * (n - 2) / (2 * 60000) + 1e-9


@PROPERTY
@given(st.integers(2, 400), st.data(), SCHEMES)
def test_sampled_ranks_lie_in_the_sample(N, data, scheme):
    m = data.draw(st.integers(1, 50))
    R = np.array(data.draw(st.lists(st.integers(1, N), min_size=m, max_size=m)))
    n = data.draw(st.integers(1, N))
    r = sample_ranks(R, N, n, rng=data.draw(st.integers(0, 2**32)), scheme=scheme)
    assert r.dtype == np.int64 and r.shape == R.shape
    assert (r >= 1).all() and (r <= n).all()
    if scheme == "hypergeometric":
        assert (r <= R).all()  # at most the R - 1 items above the target can be drawn


@settings(derandomize=True, deadline=None, max_examples=25)
@given(sizes(max_items=2000), st.floats(0.0, 1.0), SCHEMES, st.integers(0, 2**32))
def test_empirical_distribution_matches_kernel_row(size, quantile, scheme, seed):
    N, n = size
    R = 1 + round(quantile * (N - 1))
    draws = 20_000
    r = sample_ranks(np.full(draws, R), N, n, rng=seed, scheme=scheme)
    p = kernel_row(R, N, n, scheme)
    empirical = np.bincount(r - 1, minlength=n) / draws
    tv = 0.5 * np.abs(empirical - p).sum()
    # E[TV] <= (1/2) Σ_r sqrt(p_r (1 - p_r) / m); one draw moves TV by at most 1/m, so by
    # McDiarmid P(TV > E[TV] + t) <= exp(-2 m t^2): t below makes a false alarm < 1e-9
    bound = 0.5 * np.sqrt(p * (1 - p) / draws).sum() + np.sqrt(np.log(1e9) / (2 * draws))
    assert tv <= bound


@PROPERTY
@given(st.integers(2, 3000), st.data(), SCHEMES)
def test_adaptive_sizes_and_ranks(N, data, scheme):
    n_max = data.draw(st.integers(1, N))
    n0 = data.draw(st.integers(1, n_max))
    R = np.array(data.draw(st.lists(st.integers(1, N), min_size=1, max_size=40)))
    ranks, sizes = adaptive_sample_ranks(R, N, n0, n_max, rng=data.draw(st.integers(0, 2**32)), scheme=scheme)
    ladder = {n0}
    while max(ladder) < n_max:
        ladder.add(min(2 * max(ladder), n_max))
    assert set(sizes.tolist()) <= ladder
    assert (ranks >= 1).all() and (ranks <= sizes).all()
    if scheme == "hypergeometric":
        assert (ranks <= R).all()
    assert (ranks[sizes < n_max] > 1).all()  # r_u > 1 unless n_u = n_max
    assert (sizes[R == 1] == n_max).all()
