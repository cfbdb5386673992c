"""Tests of the EM-based rank distribution estimators (MLE, WMLE, adaptive MLE)."""

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

from itemsampling.banded_kernel import BandedKernel
from itemsampling.distributions import (
    adaptive_mle,
    em_estimates,
    em_estimates_of_draws,
    log_likelihood,
    mes,
    mle,
    weighted_log_likelihood,
    weighted_mle,
    wmle_weights,
)
from itemsampling.em import (
    EMProblem,
    em_mixture_weights,
    em_mixture_weights_many,
)
from itemsampling.kernels import KernelCache, kernel_columns
from itemsampling.metrics import metric_weights

METRIC_GRID = [(m, k) for m in ("recall", "ndcg", "ap") for k in (5, 10, 20, 50)]


def _simulate(P, n, M, rng):
    """Global ranks R_u ~ P and sampled ranks r_u = 1 + Binomial(n - 1, (R_u - 1)/(N - 1))."""
    N = P.size
    global_ranks = rng.choice(np.arange(1, N + 1), size=M, p=P)
    return global_ranks, 1 + rng.binomial(n - 1, (global_ranks - 1) / (N - 1))


def _geometric(N, rho=0.97):
    P = rho ** np.arange(1, N + 1)
    return P / P.sum()


def _zipf(N, a=1.2, shift=5.0):
    P = (np.arange(1, N + 1) + shift) ** -a
    return P / P.sum()


def _binom_pmf(r, n, N, R):
    """P(r | R) straight from scipy, one row per global rank R (independent of the kernels module)."""
    return stats.binom.pmf(np.asarray(r) - 1, np.asarray(n) - 1, (np.asarray(R) - 1) / (N - 1))


def _rel_metric_errors(estimate, truth_P):
    """|Σ_R P̂(R) w(R) − Σ_R P(R) w(R)| / Σ_R P(R) w(R) for each (metric, K) of METRIC_GRID."""
    W = np.array([metric_weights(metric, k, truth_P.size) for metric, k in METRIC_GRID])
    return np.abs(W @ estimate - W @ truth_P) / (W @ truth_P)


@pytest.fixture(scope="module")
def small_data():
    rng = np.random.default_rng(7)
    N, n = 80, 12
    _, r = _simulate(_zipf(N, 1.0, 2.0), n, 3_000, rng)
    return r, N, n


# ---------------------------------------------------------------- EM against eq. 20 user by user


def _naive_em(kernel_per_user, steps, user_weights=None):
    """Eq. 20 / 23 / App. G eq. 21–22 written per user: π ← Σ_u w_u φ_u / Σ_u w_u."""
    n_users, N = kernel_per_user.shape
    w = np.ones(n_users) if user_weights is None else user_weights
    pi = np.full(N, 1.0 / N)
    for _ in range(steps):
        joint = kernel_per_user * pi  # (M, N): π_R P(r_u | R)
        posterior = joint / joint.sum(axis=1, keepdims=True)
        pi = (w[:, None] * posterior).sum(axis=0) / w.sum()
    return pi


@pytest.mark.parametrize("steps", [1, 3, 25])
def test_mle_equals_per_user_em(small_data, steps):
    r, N, n = small_data
    r = r[:400]
    per_user = _binom_pmf(r[:, None], n, N, np.arange(1, N + 1)[None, :])
    expected = _naive_em(per_user, steps)
    np.testing.assert_allclose(mle(r, N, n, max_iter=steps, tol=0), expected, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("weight", ["ndcg", "ap"])
def test_weighted_mle_equals_per_user_em(small_data, weight):
    r, N, n = small_data
    r = r[:400]
    C = 10.0
    w = 1.0 / np.log2(r / C + 1.0) if weight == "ndcg" else C / r  # AAAI'21: M_NDCG(r/C), M_AP(r/C)
    per_user = _binom_pmf(r[:, None], n, N, np.arange(1, N + 1)[None, :])
    expected = _naive_em(per_user, 5, w)
    got = weighted_mle(r, N, n, weight=weight, c=C, max_iter=5, tol=0)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)


def test_adaptive_mle_equals_per_user_em():
    rng = np.random.default_rng(3)
    N = 70
    sizes = rng.choice([5, 10, 20], size=300)
    global_ranks = rng.integers(1, N + 1, size=300)
    r = 1 + rng.binomial(sizes - 1, (global_ranks - 1) / (N - 1))
    per_user = _binom_pmf(r[:, None], sizes[:, None], N, np.arange(1, N + 1)[None, :])
    expected = _naive_em(per_user, 4)
    np.testing.assert_allclose(adaptive_mle(r, N, sizes, max_iter=4, tol=0), expected, rtol=1e-10, atol=1e-15)


def test_wmle_weights_follow_the_metric_functions():
    r = np.array([1, 5, 10, 30])
    np.testing.assert_allclose(wmle_weights(r, "ndcg", 10), 1 / np.log2(r / 10 + 1))
    np.testing.assert_allclose(wmle_weights(r, "ap", 10), 10 / r)
    assert wmle_weights([10], "ndcg", 10)[0] == pytest.approx(1.0)


@pytest.mark.blas_kernels
@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_banded_kernel_products_match_dense(scheme):
    rng = np.random.default_rng(0)
    N = 3_000
    heights = (N, 2_000, 2_500)  # blocks of groups of users with fewer candidates N_g
    blocks = [kernel_columns(h, n, np.unique(rng.integers(1, n + 1, size=n)), scheme)
              for h, n in zip(heights, (50, 400, 1_000), strict=True)]
    K = np.zeros((N, sum(b.shape[1] for b in blocks)))
    bounds = np.cumsum([0] + [b.shape[1] for b in blocks])
    for first, block in zip(bounds, blocks, strict=False):
        K[: block.shape[0], first : first + block.shape[1]] = block
    banded = BandedKernel.from_blocks(list(zip(bounds.tolist(), blocks, strict=False)), N, K.shape[1])
    assert banded.stored_entries < 0.5 * K.size  # the band is a small part of the matrix
    assert len(banded.panels) > 1 and any(isinstance(cols, np.ndarray) for _, _, cols, _ in banded.panels)
    v, x = rng.random(K.shape[1]), rng.random(N)
    np.testing.assert_allclose(banded.matvec(v), K @ v, rtol=1e-14)
    np.testing.assert_allclose(banded.rmatvec(x), K.T @ x, rtol=1e-14, atol=1e-300)
    # the fused EM step: π' = π ⊙ (K w) and Kᵀπ', for two runs at once
    pis, ws = [x, rng.random(N)], [v, rng.random(K.shape[1])]
    for (new, q), pi, w in zip(banded.em_steps(pis, ws), pis, ws, strict=True):
        np.testing.assert_allclose(new, pi * (K @ w), rtol=1e-14)
        np.testing.assert_allclose(q, K.T @ new, rtol=1e-13, atol=1e-300)
    one = BandedKernel(blocks[1])
    upper = np.triu_indices(blocks[1].shape[1])
    x1 = x[: blocks[1].shape[0]]
    dense = blocks[1].T @ (x1[:, None] * blocks[1])
    np.testing.assert_allclose(one.gram_upper(x1)[upper], dense[upper], rtol=1e-12, atol=1e-14 * dense.max())
    with pytest.raises(ValueError, match="single column block"):
        banded.gram_upper(x)


# ---------------------------------------------------------------- monotonicity of EM


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
@pytest.mark.parametrize("weight", [None, "ndcg", "ap"])
def test_em_never_decreases_the_log_likelihood(small_data, scheme, weight):
    r, N, n = small_data
    distinct, counts = np.unique(r, return_counts=True)
    obs = counts if weight is None else counts * wmle_weights(distinct, weight, 10)
    kernel = kernel_columns(N, n, distinct, scheme)
    res = em_mixture_weights(kernel, obs, max_iter=400, tol=0)
    trace = res.log_likelihood
    assert trace.size == 401
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace[1:]))
    assert trace[-1] > trace[0] + 1.0  # it does climb
    # the trace is the public objective evaluated at the iterates
    if weight is None:
        final = log_likelihood(res.weights, r, N, n, scheme=scheme)
    else:
        final = weighted_log_likelihood(res.weights, r, N, n, weight=weight, scheme=scheme)
    assert final == pytest.approx(trace[-1], rel=1e-12)


def test_em_stops_on_the_relative_tolerance(small_data):
    r, N, n = small_data
    distinct, counts = np.unique(r, return_counts=True)
    kernel = kernel_columns(N, n, distinct)
    res = em_mixture_weights(kernel, counts, max_iter=100_000, tol=1e-8)
    assert res.converged and res.n_iter < 100_000
    gains = np.diff(res.log_likelihood)
    assert gains[-1] <= 1e-8 * abs(res.log_likelihood[-1])
    assert np.all(gains[:-1] > 1e-8 * np.abs(res.log_likelihood[1:-1]))


@pytest.mark.blas_kernels
@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_selected_columns_of_the_banded_kernel_are_the_columns(scheme):
    N, n = 20_000, 300
    cache = KernelCache()
    full = cache.banded(N, n, scheme)
    assert len(full.panels) > 1  # banded in panels, not dense
    ranks = np.unique(np.random.default_rng(5).integers(1, n + 1, size=150))
    part = cache.observed(N, n, ranks, scheme)
    assert cache.observed(N, n, ranks.copy(), scheme) is part  # shared by the estimators of one call
    K = cache.kernel(N, n, scheme)[:, ranks - 1]
    assert part.shape == K.shape and part.stored_entries < 0.6 * K.size
    rng = np.random.default_rng(6)
    v, x = rng.random(K.shape[1]), rng.random(N)
    np.testing.assert_allclose(part.matvec(v), K @ v, rtol=1e-14)
    np.testing.assert_allclose(part.rmatvec(x), K.T @ x, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(part.gram_upper(x), np.triu(K.T @ (x[:, None] * K)), rtol=1e-12,
                               atol=1e-14 * K.max())
    with pytest.raises(ValueError, match="single column block"):
        _grouped_kernel(rng)[0].select_columns([0, 1])


def _grouped_kernel(rng, N=3_000, heights=(3_000, 2_000, 2_500), sizes=(50, 400, 1_000)):
    """A kernel of three candidate groups, large enough to be stored in banded panels."""
    blocks = [kernel_columns(h, n, np.unique(rng.integers(1, n + 1, size=n // 2)))
              for h, n in zip(heights, sizes, strict=True)]
    bounds = np.cumsum([0] + [b.shape[1] for b in blocks])
    K = np.zeros((N, bounds[-1]))
    for first, block in zip(bounds, blocks, strict=False):
        K[: block.shape[0], first : first + block.shape[1]] = block
    return BandedKernel.from_blocks(list(zip(bounds.tolist(), blocks, strict=False)), N, K.shape[1]), K


def test_banded_em_is_the_plain_em_iteration():
    rng = np.random.default_rng(1)
    banded, K = _grouped_kernel(rng)
    assert K.size > 2**20 and len(banded.panels) > 1  # the panel path, not the dense one
    c = rng.integers(1, 50, size=K.shape[1]).astype(float)
    pi = np.full(K.shape[0], 1.0 / K.shape[0])
    for _ in range(30):  # eq. 21 with dense products
        pi = pi * (K @ (c / c.sum() / (K.T @ pi)))
    res = em_mixture_weights(banded, c, max_iter=30, tol=0)
    np.testing.assert_allclose(res.weights, pi, rtol=1e-10, atol=1e-300)
    assert np.all(np.diff(res.log_likelihood) >= -1e-12 * np.abs(res.log_likelihood[1:]))


@pytest.mark.blas_kernels
def test_em_runs_advanced_together_equal_each_run_alone():
    rng = np.random.default_rng(2)
    banded, K = _grouped_kernel(rng)
    c = rng.integers(1, 50, size=K.shape[1]).astype(float)
    init = rng.random(K.shape[0])
    problems = [EMProblem(c), EMProblem(c / np.arange(1, c.size + 1), max_iter=7),
                EMProblem(c, max_iter=10_000, tol=1e-6, init=init / init.sum())]
    together = em_mixture_weights_many(banded, problems)
    assert together[2].converged and 7 < together[2].n_iter < 10_000  # stops on its own rule
    for problem, res in zip(problems, together, strict=True):
        alone = em_mixture_weights(banded, problem.obs_weights, max_iter=problem.max_iter, tol=problem.tol,
                                   init=problem.init)
        assert res.n_iter == alone.n_iter and res.converged == alone.converged
        np.testing.assert_array_equal(res.weights, alone.weights)
        np.testing.assert_array_equal(res.log_likelihood, alone.log_likelihood)


@pytest.mark.blas_kernels
def test_stacked_em_runs_equal_each_run_alone_to_rounding():
    rng = np.random.default_rng(5)
    banded, K = _grouped_kernel(rng)
    c = rng.integers(1, 50, size=(K.shape[1], 6)).astype(float)
    c[rng.random(c.shape) < 0.3] = 0.0  # observations that some runs lack
    stacked = em_mixture_weights_many(banded, [EMProblem(c[:, b], max_iter=300, tol=1e-5) for b in range(6)], products="matrix")
    for b, res in enumerate(stacked):
        seen = np.flatnonzero(c[:, b])
        alone = em_mixture_weights(BandedKernel(K[:, seen]), c[seen, b], max_iter=300, tol=1e-5)
        assert res.n_iter == alone.n_iter and res.converged == alone.converged, b
        np.testing.assert_allclose(res.weights, alone.weights, rtol=1e-11, atol=1e-300)
        np.testing.assert_allclose(res.log_likelihood, alone.log_likelihood, rtol=1e-13)
        assert np.all(np.diff(res.log_likelihood) >= -1e-12 * np.abs(res.log_likelihood[1:]))  # EM never lowers ℓ
    steps = [res.n_iter for res in stacked]
    assert all(res.converged for res in stacked) and len(set(steps)) > 1, steps  # each run stops on its own rule
    again = em_mixture_weights_many(banded, [EMProblem(c[:, b], max_iter=300, tol=1e-5) for b in range(6)], products="matrix")
    assert all(np.array_equal(a.weights, b.weights) for a, b in zip(stacked, again, strict=True))
    for products in ("vector", "matrix"):
        with pytest.raises(ValueError, match="non-negative observation weights, some positive"):
            em_mixture_weights_many(banded, [EMProblem(np.zeros(K.shape[1]))] * 2, products=products)
        with pytest.raises(ValueError, match="max_iter"):
            em_mixture_weights_many(banded, [EMProblem(c[:, 0], max_iter=0)], products=products)
    with pytest.raises(ValueError, match="products"):
        em_mixture_weights_many(banded, [EMProblem(c[:, 0])], products="tensor")


@pytest.mark.blas_kernels
def test_em_estimates_of_draws_equal_each_draw_alone_to_rounding():
    rng = np.random.default_rng(6)
    n_items = 2_000 - rng.integers(0, 300, size=3_000)
    draws = [1 + rng.binomial(199, rng.random(3_000) ** 3) for _ in range(4)]
    fits = [("mle", {}), ("wmle", {"weight": "ap", "c": 5.0}), ("mle", {"max_iter": 20})]
    together = em_estimates_of_draws(draws, n_items, 200, fits, n_groups=3)
    for draw, fitted in zip(draws, together, strict=True):
        for alone, estimate in zip(em_estimates(draw, n_items, 200, fits, n_groups=3), fitted, strict=True):
            np.testing.assert_allclose(estimate, alone, rtol=1e-10, atol=1e-300)
    sizes = [rng.integers(20, 200, size=3_000) for _ in draws]  # adaptive sampling: one n_u per user
    ranks = [np.minimum(draw, size) for draw, size in zip(draws, sizes, strict=True)]
    adaptive = em_estimates_of_draws(ranks, n_items, sizes, [("adaptive_mle", {})], n_groups=3)
    for draw, size, (estimate,) in zip(ranks, sizes, adaptive, strict=True):
        np.testing.assert_allclose(estimate, adaptive_mle(draw, n_items, size, n_groups=3), rtol=1e-10, atol=1e-300)
    with pytest.raises(ValueError, match="2 draws' sizes for 4 draws"):
        em_estimates_of_draws(draws, n_items, [200, 200], fits)
    with pytest.raises(ValueError, match="at least one array"):
        em_estimates_of_draws([], n_items, 200, fits)


def test_mle_and_mes_from_the_cached_band_equal_the_dense_computation():
    rng = np.random.default_rng(4)
    N, n = 20_000, 300
    sampled = 1 + rng.binomial(n - 1, rng.random(5_000) ** 4)
    cache = KernelCache()
    banded = mle(sampled, N, n, cache=cache, max_iter=40, tol=0)
    distinct, counts = np.unique(sampled, return_counts=True)
    K = kernel_columns(N, n, distinct)
    pi = np.full(N, 1.0 / N)
    for _ in range(40):  # eq. 21 with dense products
        pi = pi * (K @ (counts / counts.sum() / (K.T @ pi)))
    np.testing.assert_allclose(banded, pi, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(mes(sampled, N, n, cache=cache), mes(sampled, N, n), rtol=1e-8, atol=1e-300)


@pytest.mark.blas_kernels
def test_em_estimates_equal_each_function_alone():
    rng = np.random.default_rng(3)
    n_items = 2_000 - rng.integers(0, 300, size=4_000)
    sampled = 1 + rng.binomial(199, rng.random(4_000) ** 3)
    fits = [("mle", {}), ("wmle", {"weight": "ap", "c": 5.0}), ("mle", {"max_iter": 20})]
    together = em_estimates(sampled, n_items, 200, fits, n_groups=3)
    np.testing.assert_array_equal(together[0], mle(sampled, n_items, 200, n_groups=3))
    np.testing.assert_array_equal(together[1], weighted_mle(sampled, n_items, 200, weight="ap", c=5.0, n_groups=3))
    np.testing.assert_array_equal(together[2], mle(sampled, n_items, 200, n_groups=3, max_iter=20))
    with pytest.raises(ValueError, match=r"unknown option.*'eta'"):
        em_estimates(sampled, n_items, 200, [("mle", {"eta": 1.0})])
    with pytest.raises(ValueError, match="unknown MLE-family method"):
        em_estimates(sampled, n_items, 200, [("mes", {})])
    with pytest.raises(ValueError, match="at least one"):
        em_estimates(sampled, n_items, 200, [])


# ---------------------------------------------------------------- optimality (KKT) of the MLE


def test_mle_approaches_the_kkt_point_and_an_independent_optimum():
    """EM converges sublinearly here (the optimum is on the boundary of the simplex), so the
    KKT residuals are checked at 20,000 steps against bounds measured with margin, and must
    shrink between 2,000 and 20,000 steps."""
    rng = np.random.default_rng(11)
    N, n = 40, 8
    _, r = _simulate(_geometric(N, 0.9), n, 2_000, rng)
    distinct, counts = np.unique(r, return_counts=True)
    K = _binom_pmf(distinct[None, :], n, N, np.arange(1, N + 1)[:, None])

    def kkt_residuals(pi):
        # max Σ c log(Kᵀπ) on the simplex: g_R = Σ_r c_r K_Rr / q_r / M <= 1, with = 1 where π_R > 0
        g = K @ (counts / (K.T @ pi)) / counts.sum()
        return np.max(pi * np.abs(g - 1.0)), g.max() - 1.0

    early = kkt_residuals(mle(r, N, n, max_iter=2_000, tol=0))
    pi = mle(r, N, n, max_iter=20_000, tol=0)
    late = kkt_residuals(pi)
    assert late[0] < 1e-5 and late[1] < 1e-4
    assert late[0] < early[0] / 2 and late[1] < early[1] / 2
    # the optimal value from an independent convex solver
    x = cp.Variable(N, nonneg=True)
    prob = cp.Problem(cp.Maximize(counts @ cp.log(K.T @ x)), [cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    ours = log_likelihood(pi, r, N, n)
    assert ours <= prob.value + 1e-7 * abs(prob.value)
    assert ours == pytest.approx(prob.value, rel=2e-5)


def test_mle_beats_the_true_distribution_in_likelihood():
    rng = np.random.default_rng(5)
    N, n = 300, 30
    P = _zipf(N)
    _, r = _simulate(P, n, 5_000, rng)
    est = mle(r, N, n, max_iter=2_000)
    assert log_likelihood(est, r, N, n) > log_likelihood(P, r, N, n)
    assert log_likelihood(est, r, N, n) > log_likelihood(mes(r, N, n), r, N, n)


# ---------------------------------------------------------------- recovery on simulated data


@pytest.mark.parametrize("P", [_geometric(500), _zipf(500)], ids=["geometric", "zipf"])
def test_mle_recovers_global_metrics(P):
    """N = 500, n = 50, M = 50,000, the papers' 100 EM steps: Recall/NDCG/AP@{5,10,20,50}.

    Over 100 seeds the worst relative error over this grid was 9.2 % and the worst mean over
    the grid 4.3 % (both distributions); this seed is one of the worse ones for Zipf.
    """
    rng = np.random.default_rng(2024)
    _, r = _simulate(P, 50, 50_000, rng)
    errors = _rel_metric_errors(mle(r, 500, 50), P)
    assert errors.max() < 0.12
    assert errors.mean() < 0.05


def test_mle_error_shrinks_with_more_users():
    P = _geometric(500)
    errors = {}
    for M in (2_000, 200_000):
        errors[M] = np.mean(
            [_rel_metric_errors(mle(_simulate(P, 50, M, np.random.default_rng(s))[1], 500, 50), P).max() for s in range(4)]
        )
    assert errors[200_000] < errors[2_000] / 3


def test_default_em_steps_estimate_better_than_running_em_longer():
    """The docstring claim behind max_iter=100: EM run 30x longer fits the noise in P̃(r).

    (Over 10 seeds: mean error 1.6 % with 100 steps vs 4.6 % with 3,000; 9 of 10 seeds better.)
    """
    P = _zipf(500)
    default, longer = [], []
    for seed in range(4):
        _, r = _simulate(P, 50, 20_000, np.random.default_rng(seed))
        default.append(_rel_metric_errors(mle(r, 500, 50), P).mean())
        longer.append(_rel_metric_errors(mle(r, 500, 50, max_iter=3_000, tol=0), P).mean())
    assert np.mean(default) < 0.6 * np.mean(longer)


def test_adaptive_mle_recovers_global_metrics():
    """Adaptive sampling (AAAI'23 Alg. 1: double n while r_u = 1, up to n_max), then adaptive MLE.

    Over 40 seeds the worst relative error over the metric grid was 6.4 % and the worst mean
    2.6 %.
    """
    rng = np.random.default_rng(99)
    N, n0, n_max, M = 500, 10, 160, 50_000
    P = _geometric(N)
    R, r = _simulate(P, n0, M, rng)
    sizes = np.full(M, n0)
    top = r == 1
    while top.any() and sizes[top].max() < n_max:
        # the doubled sample set keeps the old items (none outranks the target, as r_u = 1)
        # and adds n_u new ones
        r[top] = 1 + rng.binomial(sizes[top], (R[top] - 1) / (N - 1))
        sizes[top] *= 2
        top = (r == 1) & (sizes < n_max)
    assert len(np.unique(sizes)) > 2
    errors = _rel_metric_errors(adaptive_mle(r, N, sizes), P)
    assert errors.max() < 0.10
    assert errors.mean() < 0.04


# ---------------------------------------------------------------- adaptive with one sample size


def test_adaptive_mle_with_equal_sizes_is_mle(small_data):
    r, N, n = small_data
    expected = mle(r, N, n, max_iter=300, tol=0)
    np.testing.assert_allclose(adaptive_mle(r, N, np.full(r.size, n), max_iter=300, tol=0), expected, rtol=1e-10, atol=0)
    np.testing.assert_allclose(adaptive_mle(r, N, n, max_iter=300, tol=0), expected, rtol=1e-10, atol=0)
    assert log_likelihood(expected, r, N, np.full(r.size, n)) == pytest.approx(log_likelihood(expected, r, N, n))


def test_estimators_return_distributions(small_data):
    r, N, n = small_data
    for est in (mle(r, N, n), weighted_mle(r, N, n), adaptive_mle(r, N, n), mle(r, N, n, scheme="hypergeometric")):
        assert est.shape == (N,)
        assert np.all(est >= 0)
        assert est.sum() == pytest.approx(1.0, abs=1e-12)


def test_deterministic(small_data):
    r, N, n = small_data
    assert mle(r, N, n).tobytes() == mle(r, N, n).tobytes()


def test_init_is_used(small_data):
    r, N, n = small_data
    init = np.zeros(N)
    init[: N // 2] = 2.0 / N
    est = mle(r, N, n, init=init)
    assert np.all(est[N // 2 :] == 0)  # EM keeps zeros at zero


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("ranks", "N", "n", "match"),
    [
        ([1, 2, 11], 50, 10, "must lie in 1..n"),
        ([0, 2, 3], 50, 10, "must lie in 1..n"),
        ([1.0, np.nan], 50, 10, "NaN"),
        ([], 50, 10, "empty"),
        ([1.5, 2], 50, 10, "whole numbers"),
        ([1, 2], 50, 51, "sample_size"),
        ([1, 2], 1, 1, "n_items"),
    ],
)
@pytest.mark.parametrize("estimator", [mle, weighted_mle, mes])
def test_bad_input_raises(estimator, ranks, N, n, match):
    with pytest.raises(ValueError, match=match):
        estimator(ranks, N, n)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1.0}, "tol"),
        ({"scheme": "poisson"}, "sampling scheme"),
        ({"init": np.ones(5)}, "init"),
    ],
)
def test_bad_em_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mle([1, 2, 3], 50, 10, **kwargs)


def test_bad_wmle_options_raise():
    with pytest.raises(ValueError, match="WMLE weight"):
        weighted_mle([1, 2], 50, 10, weight="recall")
    with pytest.raises(ValueError, match="c must be"):
        weighted_mle([1, 2], 50, 10, c=0)


def test_bad_adaptive_input_raises():
    with pytest.raises(ValueError, match="one sample size per user"):
        adaptive_mle([1, 2, 3], 50, [10, 10])
    with pytest.raises(ValueError, match="sample_sizes"):
        adaptive_mle([1, 2], 50, [10, 60])
    with pytest.raises(ValueError, match="sampled_ranks"):
        adaptive_mle([1, 12], 50, [10, 10])  # r_u > n_u
    with pytest.raises(ValueError, match="NaN"):
        adaptive_mle([1, 2], 50, [10, np.nan])


def test_init_without_support_raises():
    init = np.zeros(50)
    init[-1] = 1.0  # R = N gives P(r | N) = 0 for r < n
    with pytest.raises(ValueError, match="probability 0"):
        mle([1, 2], 50, 10, init=init)


@pytest.mark.blas_kernels
def test_stacked_em_runs_stop_at_their_own_iteration_caps_and_tolerances():
    rng = np.random.default_rng(8)
    banded, K = _grouped_kernel(rng)
    c = rng.integers(1, 50, size=(K.shape[1], 3)).astype(float)
    caps, tols = np.array([5, 40, 300]), np.array([0.0, 0.0, 1e-5])
    stacked = em_mixture_weights_many(banded, [EMProblem(c[:, b], max_iter=int(caps[b]), tol=float(tols[b]))
                                               for b in range(3)], products="matrix")
    for b, res in enumerate(stacked):
        alone = em_mixture_weights(banded, c[:, b], max_iter=int(caps[b]), tol=float(tols[b]))
        assert res.n_iter == alone.n_iter and res.converged == alone.converged, b
        np.testing.assert_allclose(res.weights, alone.weights, rtol=1e-11, atol=1e-300)
    assert [res.n_iter for res in stacked[:2]] == [5, 40] and stacked[2].converged


@pytest.mark.blas_kernels
def test_stacked_em_runs_of_the_same_problem_share_their_iterates():
    """Runs that differ only in when they stop follow one column: a shorter run's trace is the
    start of a longer one's, and every run equals the same run alone (to rounding), also
    among runs of other problems and with a start of its own."""
    rng = np.random.default_rng(9)
    banded, K = _grouped_kernel(rng)
    c = rng.integers(1, 50, size=(K.shape[1], 2)).astype(float)
    start = rng.dirichlet(np.ones(K.shape[0]))
    problems = [EMProblem(c[:, 0], max_iter=7, tol=0.0), EMProblem(c[:, 1], max_iter=30, tol=0.0),
                EMProblem(c[:, 0], max_iter=60, tol=0.0), EMProblem(c[:, 0], max_iter=5_000, tol=1e-7),
                EMProblem(c[:, 0], max_iter=20, tol=0.0, init=start), EMProblem(c[:, 1], max_iter=4, tol=0.0)]
    stacked = em_mixture_weights_many(banded, problems, products="matrix")
    assert [res.n_iter for res in stacked[:3]] == [7, 30, 60] and stacked[3].converged and stacked[3].n_iter > 60
    np.testing.assert_array_equal(stacked[2].log_likelihood[:8], stacked[0].log_likelihood)
    np.testing.assert_array_equal(stacked[3].log_likelihood[:61], stacked[2].log_likelihood)
    np.testing.assert_array_equal(stacked[1].log_likelihood[:5], stacked[5].log_likelihood)
    for problem, res in zip(problems, stacked, strict=True):
        alone = em_mixture_weights(banded, problem.obs_weights, max_iter=problem.max_iter, tol=problem.tol,
                                   init=problem.init)
        assert res.n_iter == alone.n_iter and res.converged == alone.converged
        np.testing.assert_allclose(res.weights, alone.weights, rtol=1e-10, atol=1e-300)
