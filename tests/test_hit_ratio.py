"""Sampled hit ratio moments and the sampling theorem (Li et al. KDD 2020 §2), against scipy's
binomial and hypergeometric CDFs summed user by user, Monte Carlo and constructed examples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from itemsampling.hit_ratio import (
    dominance,
    hit_probabilities,
    hit_ratio_curve,
    hoeffding_bound,
    hoeffding_radius,
    sampled_hit_ratio_moments,
    sampling_window,
    sign_changes,
)
from itemsampling.metrics import global_metrics
from itemsampling.simulation import sample_ranks


def _cdf(R, N, n, scheme):
    """P(r <= k | R) for k = 1..n, one row per user, straight from scipy (eq. 6 and §2.2)."""
    R, N = np.asarray(R)[:, None], np.broadcast_to(np.asarray(N), np.shape(R))[:, None]
    x = np.arange(n)[None, :]  # k - 1 items sampled above the target
    if scheme == "binomial":
        return stats.binom.cdf(x, n - 1, (R - 1) / (N - 1))
    return stats.hypergeom.cdf(x, N - 1, R - 1, n - 1)


def _direct_moments(R, N, n, scheme):
    p = _cdf(R, N, n, scheme)
    return p.mean(axis=0), (p * (1 - p)).sum(axis=0) / len(R) ** 2


def _ranks(rng, M, N, scale):
    return np.minimum(1 + rng.geometric(1 / scale, M), N)


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_hit_probabilities_are_the_binomial_and_hypergeometric_cdfs(scheme):
    R = np.array([1, 2, 7, 50, 199, 200])
    got = hit_probabilities(R, 200, 30, scheme)
    np.testing.assert_allclose(got, _cdf(R, 200, 30, scheme), rtol=1e-10, atol=1e-13)
    assert (got[:, -1] == 1).all() and (np.diff(got, axis=0) <= 1e-15).all() and (np.diff(got, axis=1) >= 0).all()


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_moments_equal_the_direct_sum_over_users_with_per_user_candidates(scheme):
    rng = np.random.default_rng(0)
    N = rng.integers(300, 400, 500)
    R = np.minimum(_ranks(rng, 500, 400, 40), N)
    mean, var = sampled_hit_ratio_moments(R, N, 25, scheme)
    want_mean, want_var = _direct_moments(R, N, 25, scheme)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(var, want_var, rtol=1e-9, atol=1e-15)


def test_moments_agree_with_monte_carlo_mean_and_variance():
    rng = np.random.default_rng(1)
    N = rng.integers(200, 260, 300)
    R = np.minimum(_ranks(rng, 300, 260, 30), N)
    n, draws = 20, 4000
    mean, var = sampled_hit_ratio_moments(R, N, n)
    shr = np.stack([np.cumsum(np.bincount(sample_ranks(R, N, n, rng), minlength=n + 1)[1:]) / R.size
                    for _ in range(draws)])
    k = np.arange(n - 1)  # SHR@n = 1 has no variance
    z = (shr.mean(axis=0)[k] - mean[k]) / np.sqrt(var[k] / draws)
    assert np.abs(z).max() < 4.5
    # the sample variance of a sum of independent Bernoulli(p_u) has variance ≈ (κ4 + 2σ⁴)/draws,
    # κ4 = Σ p(1-p)(1 - 6p(1-p)) its fourth cumulant (in units of 1/M⁴ for the mean SHR)
    q = _cdf(R, N, n, "binomial")[:, k] * (1 - _cdf(R, N, n, "binomial")[:, k])
    se = np.sqrt(((q * (1 - 6 * q)).sum(axis=0) + 2 * q.sum(axis=0) ** 2) / draws) / R.size**2
    assert np.abs((shr.var(axis=0, ddof=1)[k] - var[k]) / se).max() < 4.5
    assert var[-1] == 0 and mean[-1] == pytest.approx(1)


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_window_sums_the_hit_ratio_curve_to_the_expectation(scheme):
    rng = np.random.default_rng(2)
    N, n = 300, 15
    R = _ranks(rng, 400, N, 50)
    ks = np.arange(1, n + 1)
    w = sampling_window(N, n, ks, scheme)
    assert (w >= 0).all() and np.allclose(w.sum(axis=0), 1)
    np.testing.assert_allclose(hit_ratio_curve(R, N) @ w, _direct_moments(R, N, n, scheme)[0], atol=1e-12)


def test_hit_ratio_curve_is_global_recall_at_every_cutoff():
    rng = np.random.default_rng(3)
    N = rng.integers(40, 61, 100)
    R = np.minimum(_ranks(rng, 100, 60, 10), N)
    K = np.arange(1, N.max() + 1)
    np.testing.assert_array_equal(hit_ratio_curve(R, N), global_metrics(R, N, "recall", K)["value"].to_numpy())
    np.testing.assert_allclose(hit_ratio_curve(R, N), [(R <= k).mean() for k in K])
    assert hit_ratio_curve(R, N)[-1] == 1


def _dominating_pair(rng, M, N):
    """Ranks of b are those of a pushed down (never up), so HR_a@K >= HR_b@K for every K."""
    a = _ranks(rng, M, N, rng.uniform(5, 80))
    b = np.minimum(a + rng.geometric(rng.uniform(0.02, 0.5), M) - 1, N)
    return rng.permutation(a), rng.permutation(b)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_theorem_2_1_dominating_curves_keep_their_order_for_every_k(seed, scheme):
    rng = np.random.default_rng(seed)
    N, n = int(rng.integers(50, 400)), int(rng.integers(2, 50))
    a, b = _dominating_pair(rng, int(rng.integers(5, 300)), N)
    assert dominance(hit_ratio_curve(a, N), hit_ratio_curve(b, N)) in ("a", "equal")
    got_a, got_b = sampled_hit_ratio_moments(a, N, n, scheme)[0], sampled_hit_ratio_moments(b, N, n, scheme)[0]
    want_a, want_b = _direct_moments(a, N, n, scheme)[0], _direct_moments(b, N, n, scheme)[0]
    np.testing.assert_allclose(got_a - got_b, want_a - want_b, atol=1e-12)
    assert (want_a - want_b >= -1e-12).all()


def test_crossing_curves_can_swap_the_sampled_order_with_k():
    # a: half the users at the top, half at the bottom; b: everybody in the middle
    N, n = 1000, 50
    a, b = np.repeat([1, 900], 50), np.full(100, 300)
    assert dominance(hit_ratio_curve(a, N), hit_ratio_curve(b, N)) == "cross"
    diff = _direct_moments(a, N, n, "binomial")[0] - _direct_moments(b, N, n, "binomial")[0]
    np.testing.assert_allclose(sampled_hit_ratio_moments(a, N, n)[0] - sampled_hit_ratio_moments(b, N, n)[0],
                               diff, atol=1e-12)
    flips = sign_changes(diff, atol=1e-12)
    assert diff[0] > 0 and len(flips) == 1 and diff[flips[0]] < 0


def test_with_per_user_candidates_pooled_dominance_does_not_imply_the_order():
    # user 0 has N = 1000 candidates, user 1 only 100: a dominates b on the pooled HR curve,
    # yet b's second user sits much higher in its own, shorter list
    N = np.array([1000, 100])
    a, b = np.array([50, 89]), np.array([90, 50])
    assert dominance(hit_ratio_curve(a, N), hit_ratio_curve(b, N)) == "a"
    diff = sampled_hit_ratio_moments(a, N, 20)[0] - sampled_hit_ratio_moments(b, N, 20)[0]
    np.testing.assert_allclose(diff, _direct_moments(a, N, 20, "binomial")[0]
                               - _direct_moments(b, N, 20, "binomial")[0], atol=1e-12)
    assert diff.min() < -0.1


def test_dominance_and_sign_changes_on_small_examples():
    assert dominance([0.1, 0.5, 1], [0.1, 0.4, 1]) == "a"
    assert dominance([0.1, 0.4, 1], [0.1, 0.5, 1]) == "b"
    assert dominance([0.2, 0.4, 1], [0.1, 0.5, 1]) == "cross"
    assert dominance([0.2, 0.4, 1], [0.1, 0.5, 1], atol=0.2) == "equal"
    np.testing.assert_array_equal(sign_changes([0.0, 1, 0, 2, -1, -1, 0, 3]), [4, 7])
    assert sign_changes([0.1, -1e-9, 0.2], atol=1e-8).size == 0
    with pytest.raises(ValueError, match="same length"):
        dominance([0.1, 1], [1.0])
    with pytest.raises(ValueError, match="1-D"):
        sign_changes([[1.0]])


def test_hoeffding_bound_and_radius_invert_each_other():
    # the paper's example (§2.4): M = 30K users, t = 0.01 -> at most 0.005
    assert float(hoeffding_bound(30_000, 0.01)) == pytest.approx(2 * np.exp(-6)) and hoeffding_bound(30_000, 0.01) < 0.005
    M = np.array([10, 100, 6040])
    np.testing.assert_allclose(hoeffding_bound(M, hoeffding_radius(M, 0.05)), 0.05)
    assert float(hoeffding_bound(1, 0.01)) == 1.0
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="n_users"):
            hoeffding_radius(bad, 0.05)
    with pytest.raises(ValueError, match="delta"):
        hoeffding_radius(10, 1.0)
    with pytest.raises(ValueError, match="deviation"):
        hoeffding_bound(10, 0.0)


def test_bad_input_is_rejected_with_clear_messages():
    with pytest.raises(ValueError, match="sample_size"):
        sampled_hit_ratio_moments([1, 2], [50, 10], 20)
    with pytest.raises(ValueError, match="scheme"):
        hit_probabilities([1], 10, 5, "poisson")
    with pytest.raises(ValueError, match="ks"):
        sampling_window(10, 5, [6])
