from fractions import Fraction
from math import comb, factorial

import numpy as np
import pytest
from scipy.special import beta as beta_fn
from scipy.special import comb as comb_float

import itemsampling as its
from itemsampling.mappings import expected_sampled_hit_ratio, fit_beta, mapping
from itemsampling.simulation import sample_ranks

# ---------------------------------------------------------------------------- linear and bound


def test_linear_mapping_inverts_expected_sampled_rank():
    # eq. 9: f(k) is the global rank R whose expected sampled rank 1 + (n-1)(R-1)/(N-1) is k
    N, n = 3706, 100
    k = np.arange(1, n + 1)
    f = mapping(k, N, n, "linear")
    np.testing.assert_allclose(1 + (n - 1) * (f - 1) / (N - 1), k, rtol=1e-13)
    assert f[0] == 1 and f[-1] == N


@pytest.mark.parametrize("t", [0.0, 1.7, 5.0])
def test_bound_mapping_is_floor_of_average_of_eq_12_bounds(t):
    N, n = 3706, 100
    k = np.arange(1, n + 1)
    lower = (k - t) * (N - 1) / (n - 1) + 1
    upper = (k + t - 1) * (N - 1) / (n - 1)
    np.testing.assert_array_equal(mapping(k, N, n, "bound"), np.floor((lower + upper) / 2 + 1e-9))


# ---------------------------------------------------------------------------- beta recurrence


def _direct_recurrence(N, n, a, k_max, lib):
    """Eq. 17 then eq. 16, literally, with the arithmetic of ``lib`` (mpmath or numpy/scipy)."""
    if lib == "float":
        f = [(N - 1) * (a * beta_fn(a, n)) ** (1 / a) + 1]
        for k in range(1, k_max):
            step = a * (N - 1) ** a * comb_float(n - 1, k) * beta_fn(a + k, n - k)
            f.append((step + (f[-1] - 1) ** a) ** (1 / a) + 1)
        return np.array(f)
    mp = lib
    a, N = mp.mpf(a), mp.mpf(N)
    f = [(N - 1) * (a * mp.beta(a, n)) ** (1 / a) + 1]
    for k in range(1, k_max):
        step = a * (N - 1) ** a * mp.binomial(n - 1, k) * mp.beta(a + k, n - k)
        f.append((step + (f[-1] - 1) ** a) ** (1 / a) + 1)
    return np.array([float(x) for x in f])


@pytest.mark.parametrize("a", [0.3, 0.6, 1.7])
def test_beta_mapping_matches_float_recurrence_on_small_sizes(a):
    N, n = 500, 20
    np.testing.assert_allclose(mapping(np.arange(1, n + 1), N, n, "beta", a=a),
                               _direct_recurrence(N, n, a, n, "float"), rtol=1e-11)


@pytest.mark.parametrize("a", [0.05, 0.37, 1.0, 4.0])
def test_beta_mapping_matches_high_precision_recurrence_at_large_sizes(a):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    N, n = 10**5, 1000
    f = mapping(np.arange(1, n + 1), N, n, "beta", a=a)
    assert np.isfinite(f).all()
    np.testing.assert_allclose(f, _direct_recurrence(N, n, a, n, mpmath), rtol=1e-9)


def test_beta_mapping_matches_exact_rational_recurrence_for_a_2():
    # with a = 2, B(2 + k, n - k) = (k + 1)! (n - k - 1)! / (n + 1)! is rational, so
    # G_k = (f(k) - 1)^2 follows eq. 15 exactly in fractions
    N, n, a = 2000, 60, 2
    G = [Fraction((N - 1) ** 2 * 2 * factorial(1) * factorial(n - 1), factorial(n + 1))]  # eq. 17
    for k in range(1, n):
        B = Fraction(factorial(k + 1) * factorial(n - k - 1), factorial(n + 1))
        G.append(G[-1] + a * (N - 1) ** a * comb(n - 1, k) * B)
    assert G[-1] == (N - 1) ** 2  # Lemma 3.1, exactly
    f = mapping(np.arange(1, n + 1), N, n, "beta", a=2.0)
    np.testing.assert_allclose((f - 1) ** 2, [float(g) for g in G], rtol=1e-12)


@pytest.mark.parametrize("a", [0.05, 0.2, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize(("N", "n"), [(3706, 100), (10**5, 1000), (50, 50)])
def test_beta_mapping_last_point_and_monotone(a, N, n):
    f = mapping(np.arange(1, n + 1), N, n, "beta", a=a)
    assert f[-1] == pytest.approx(N, rel=1e-9)  # Lemma 3.1
    assert np.all(np.diff(f) > 0) and f[0] > 1


def test_beta_mapping_with_a_1_is_eq_18():
    N, n = 10**5, 1000
    k = np.arange(1, n + 1)
    np.testing.assert_allclose(mapping(k, N, n, "beta", a=1.0), k * (N - 1) / n + 1, rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "beta"}, "a > 0"),
        ({"kind": "beta", "a": -1.0}, "a > 0"),
        ({"kind": "linear", "a": 0.5}, "beta mapping only"),
        ({"kind": "spline"}, "unknown mapping kind"),
        ({"ks": [0, 3]}, "ks must lie in 1..n"),
        ({"ks": [101]}, "ks must lie in 1..n"),
        ({"sample_size": 1}, "n >= 2"),
    ],
)
def test_mapping_rejects_bad_input(kwargs, match):
    args = {"ks": [1, 2], "n_items": 1000, "sample_size": 100, "kind": "linear"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        mapping(**args)


# ---------------------------------------------------------------------------- fit_beta


def _beta_ranks(a, N, size, rng):
    """Global ranks from a discretised Beta(a, 1): P(R <= x) = (x / N)^a (§3.2)."""
    cdf = (np.arange(1, N + 1) / N) ** a
    return rng.choice(np.arange(1, N + 1), size=size, p=np.diff(cdf, prepend=0.0))


def test_fit_beta_solves_the_eq_19_fixed_point():
    N, n = 3706, 100
    r = sample_ranks(_beta_ranks(0.4, N, 6040, np.random.default_rng(0)), N, n, rng=1)
    a = fit_beta(r, N, n)
    f = mapping(r, N, n, "beta", a=a)
    assert a == pytest.approx(-r.size / np.log((f - 1) / (N - 1)).sum(), rel=1e-10)
    # the paper's plain iteration of eq. 19, started at a = 1, reaches the same point
    it = 1.0
    for _ in range(200):
        f = mapping(r, N, n, "beta", a=it)
        it = -r.size / np.log((f - 1) / (N - 1)).sum()
    assert it == pytest.approx(a, rel=1e-8)


def test_fit_beta_recovers_the_generating_parameter():
    # eq. 19 treats the discrete sampled rank as continuous, which biases a upwards by an amount
    # that shrinks as n grows; the fit must order the parameters correctly and approach them
    N = 10**5
    rng = np.random.default_rng(3)
    for a in (0.2, 0.5):
        R = _beta_ranks(a, N, 20_000, rng)
        fits = [fit_beta(sample_ranks(R, N, n, rng=rng), N, n) for n in (100, 1000, 10_000)]
        errors = np.abs(np.array(fits) - a)
        assert np.all(np.diff(errors) < 0), fits
        assert errors[-1] < 0.06, fits
    low = fit_beta(sample_ranks(_beta_ranks(0.2, N, 5000, rng), N, 100, rng=rng), N, 100)
    high = fit_beta(sample_ranks(_beta_ranks(0.5, N, 5000, rng), N, 100, rng=rng), N, 100)
    assert low < high


def test_fit_beta_rejects_degenerate_ranks():
    with pytest.raises(ValueError, match="unbounded"):
        fit_beta([100, 100], 1000, 100)
    with pytest.raises(ValueError, match=r"sampled_ranks must lie in 1\.\.n"):
        fit_beta([101], 1000, 100)


# ---------------------------------------------------------------------------- E[SHR@k]


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_expected_sampled_hit_ratio_matches_monte_carlo(scheme):
    N, n, M = 2000, 50, 40_000
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.full(N, 0.05))
    ks = np.array([1, 2, 5, 10, 25, 50])
    expected = expected_sampled_hit_ratio(p, N, n, ks, scheme)
    r = sample_ranks(rng.choice(np.arange(1, N + 1), size=M, p=p), N, n, rng=rng, scheme=scheme)
    observed = (r[:, None] <= ks).mean(axis=0)
    se = np.sqrt(expected * (1 - expected) / M)
    assert np.all(np.abs(observed - expected) <= 4 * se + 1e-12)
    assert expected[-1] == pytest.approx(1.0, abs=1e-10)


def test_expected_sampled_hit_ratio_agrees_with_kernel_and_sampling_theorem():
    N, n = 400, 30
    rng = np.random.default_rng(6)
    p1 = rng.dirichlet(np.ones(N))
    ks = np.arange(1, n + 1)
    direct = np.cumsum(p1 @ its.rank_kernel(N, n, "hypergeometric"))
    np.testing.assert_allclose(expected_sampled_hit_ratio(p1, N, n, ks, "hypergeometric"), direct, atol=1e-12)
    # Theorem 2.1: moving mass to better ranks (HR_2 dominates HR_1) raises E[SHR@k] at every k
    p2 = p1.copy()
    p2[:50] += p1[200:250]
    p2[200:250] = 0
    assert np.all(expected_sampled_hit_ratio(p2, N, n, ks) >= expected_sampled_hit_ratio(p1, N, n, ks) - 1e-15)
