from fractions import Fraction
from math import comb, factorial

import numpy as np
import pytest
from scipy.special import beta as beta_fn
from scipy.special import comb as comb_float

import itemsampling as its
from itemsampling.mappings import (
    beta_hit_ratio,
    expected_sampled_hit_ratio,
    fit_beta,
    fit_beta_global,
    mapped_hit_ratio,
    mapping,
    mapping_errors,
    scaled_hit_ratio,
)
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


# ---------------------------------------------------------------------------- what f(k; a) means


@pytest.mark.parametrize("a", [0.2, 0.5, 1.0, 2.5])
@pytest.mark.parametrize(("N", "n"), [(3706, 100), (500, 20)])
def test_beta_mapping_matches_eq_14_by_numerical_integration(a, N, n):
    # eq. 14 in the continuous limit: with x = (R - 1)/(N - 1) ~ Beta(a, 1), the mass below f(k),
    # ((f(k) - 1)/(N - 1))^a, equals Pr(r <= k) = ∫ a x^{a-1} BinomCDF(k - 1; n - 1, x) dx
    from scipy import integrate, stats

    ks = np.array([1, 2, 3, 5, n // 2, n - 1])
    f = mapping(ks, N, n, "beta", a=a)
    for k, fk in zip(ks, f, strict=True):
        # substitute x = t^{1/a}: dx a x^{a-1} = dt, a smooth integrand on [0, 1]
        prob, _ = integrate.quad(lambda t, k=k: stats.binom.cdf(k - 1, n - 1, t ** (1 / a)), 0, 1,
                                 epsabs=1e-13, epsrel=1e-11, limit=200)
        assert ((fk - 1) / (N - 1)) ** a == pytest.approx(prob, rel=1e-8), k


def test_beta_mapping_matches_monte_carlo_sampled_ranks():
    N, n, a, M = 5000, 50, 0.4, 400_000
    rng = np.random.default_rng(11)
    x = rng.beta(a, 1.0, size=M)
    r = 1 + rng.binomial(n - 1, x)
    ks = np.array([1, 2, 5, 10, 25])
    model = ((mapping(ks, N, n, "beta", a=a) - 1) / (N - 1)) ** a
    observed = (r[:, None] <= ks).mean(axis=0)
    assert np.all(np.abs(observed - model) <= 5 * np.sqrt(model * (1 - model) / M))


@pytest.mark.parametrize(("N", "n"), [(3706, 100), (10**5, 1000), (60, 10)])
def test_beta_mapping_increases_with_a(N, n):
    # Li et al. §4.2, Remedy #3, observed numerically there (the proof is open): f(k; a) is
    # increasing in a for every k < n (f(n; a) = N for all a)
    k = np.arange(1, n)
    grid = np.exp(np.linspace(np.log(0.02), np.log(5.0), 60))
    f = np.array([mapping(k, N, n, "beta", a=a) for a in grid])
    assert np.all(np.diff(f, axis=0) > 0)


# ---------------------------------------------------------------------------- HR at mapped cut-offs


def _users(seed, M=600, N_max=700, per_user=True):
    rng = np.random.default_rng(seed)
    N = N_max - rng.integers(0, 200, size=M) if per_user else np.full(M, N_max)
    R = np.minimum(rng.geometric(0.01, size=M), N)
    return R, N


@pytest.mark.parametrize("per_user", [False, True])
def test_mapped_hit_ratio_of_linear_and_bound_in_integer_arithmetic(per_user):
    # R <= (k-1)(N-1)/(n-1) + 1  <=>  (R-1)(n-1) <= (k-1)(N-1)  (eq. 9), and
    # R <= ⌊(k-1/2)(N-1)/(n-1) + 1/2⌋  <=>  2R(n-1) <= (2k-1)(N-1) + (n-1)  (eq. 13): no rounding
    R, N = _users(12, per_user=per_user)
    n = 30
    k = np.arange(1, n + 1)
    linear = ((R[:, None] - 1) * (n - 1) <= (k - 1) * (N[:, None] - 1)).mean(axis=0)
    bound = (2 * R[:, None] * (n - 1) <= (2 * k - 1) * (N[:, None] - 1) + (n - 1)).mean(axis=0)
    n_items = N if per_user else int(N[0])
    np.testing.assert_array_equal(mapped_hit_ratio(R, n_items, n, k, "linear"), linear)
    np.testing.assert_array_equal(mapped_hit_ratio(R, n_items, n, k, "bound"), bound)
    assert mapped_hit_ratio(R, n_items, n, n, "linear")[0] == 1.0


@pytest.mark.parametrize("a", [0.3, 1.0])
def test_mapped_hit_ratio_of_beta_per_user_and_scaled_curve_agree(a):
    R, N = _users(13)
    n, N_total = 40, 700
    k = np.arange(1, n + 1)
    per_user = np.mean([R_u <= np.floor(mapping(k, int(N_u), n, "beta", a=a) * (1 + 1e-10))
                        for R_u, N_u in zip(R, N, strict=True)], axis=0)
    got = mapped_hit_ratio(R, N, n, k, "beta", a=a)
    np.testing.assert_array_equal(got, per_user)
    # the same fraction of each user's candidates: HR at f(k; N) scaled to N_u (module docstring)
    np.testing.assert_array_equal(scaled_hit_ratio(R, N, mapping(k, N_total, n, "beta", a=a), N_total), got)
    assert got[-1] == 1.0


def test_hit_ratio_curve_is_recall_at_k_with_one_n_and_scales_in_integer_arithmetic():
    R, N = _users(14, per_user=False)
    K = np.arange(1, 701)
    np.testing.assert_allclose(scaled_hit_ratio(R, 700, K), its.global_metrics(R, 700, "recall", K)["value"],
                               rtol=1e-15)
    R, N = _users(15)
    want = ((R[:, None] - 1) * 699 <= (K - 1) * (N[:, None] - 1)).mean(axis=0)
    np.testing.assert_array_equal(scaled_hit_ratio(R, N, K, 700), want)


def test_beta_hit_ratio_matches_monte_carlo_of_the_rank_model():
    rng = np.random.default_rng(16)
    M, a = 200_000, 0.35
    N = 900 - rng.integers(0, 300, size=M)
    R = np.maximum(np.ceil(N * rng.beta(a, 1.0, size=M)), 1).astype(np.int64)  # R = ⌈N_u X⌉
    K = np.array([1, 2, 10, 100, 500, 900])
    model = beta_hit_ratio(N, K, a, 900)
    observed = scaled_hit_ratio(R, N, K, 900)
    assert np.all(np.abs(observed - model) <= 5 * np.sqrt(model * (1 - model) / M) + 1e-12)
    assert model[-1] == 1.0


def test_fit_beta_global_maximises_the_direct_likelihood():
    from scipy.optimize import minimize_scalar

    R, N = _users(17)
    x, y = R / N, (R - 1) / N

    def negative_log_likelihood(a):
        return -np.sum(np.log(x**a - y**a))

    direct = minimize_scalar(negative_log_likelihood, bounds=(1e-3, 5.0), method="bounded",
                             options={"xatol": 1e-10}).x
    assert fit_beta_global(R, N) == pytest.approx(direct, rel=1e-6)


def test_fit_beta_global_recovers_the_generating_parameter():
    rng = np.random.default_rng(18)
    for a in (0.2, 0.5, 1.3):
        N = 3000 - rng.integers(0, 500, size=50_000)
        R = np.maximum(np.ceil(N * rng.beta(a, 1.0, size=N.size)), 1).astype(np.int64)
        # the MLE's standard error is about a / sqrt(M) (Fisher information of Beta(a, 1): 1/a²)
        assert fit_beta_global(R, N) == pytest.approx(a, abs=5 * a / np.sqrt(N.size))


def test_fit_beta_global_rejects_degenerate_ranks():
    with pytest.raises(ValueError, match="tends to 0"):
        fit_beta_global([1, 1], 100)
    with pytest.raises(ValueError, match="unbounded"):
        fit_beta_global([100, 50], [100, 50])


def test_mapping_errors_by_hand():
    shr = np.array([0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0])
    hr = shr + np.array([0.05, -0.02, 0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, -0.05, 0.0])
    e = mapping_errors(shr, hr)
    assert list(e) == list(its.mappings.MAPPING_ERRORS)
    assert e["abs"] == pytest.approx(0.13 / 11)
    assert e["abs@1"] == pytest.approx(0.05) and e["rel@1"] == pytest.approx(0.5)
    assert e["abs@2-10"] == pytest.approx(0.08 / 9)
    assert e["rel@2-10"] == pytest.approx((0.02 / 0.2 + 0.01 / 0.5 + 0.05 / 0.95) / 9)
    assert e["rel"] == pytest.approx((0.5 + 0.1 + 0.02 + 0.05 / 0.95) / 11)
    undefined = mapping_errors([0.0, 0.5], [0.1, 0.5])
    assert np.isnan(undefined["rel@1"]) and np.isnan(undefined["rel"]) and undefined["abs"] == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mapping_errors([0.1], [0.1]), "same length n >= 2"),
        (lambda: mapping_errors([0.1, 0.2], [0.1, np.nan]), "finite"),
        (lambda: scaled_hit_ratio([1, 2], [10, 20], [0.5]), "K >= 1"),
        (lambda: scaled_hit_ratio([1, 2], [10, 20], [3], n_total=15), "smaller than the largest"),
        (lambda: beta_hit_ratio([10, 20], [3], 0.0), "a > 0"),
        (lambda: mapped_hit_ratio([1, 2], [10, 20], 15, [1]), "out of range"),
        (lambda: mapped_hit_ratio([1, 2], 20, 10, [11]), "ks must lie in 1..n"),
    ],
)
def test_hit_ratio_helpers_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
