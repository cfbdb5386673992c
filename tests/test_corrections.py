"""Corrected sampled metrics: closed forms against cvxpy, exact properties, linearity."""

import cvxpy as cp
import numpy as np
import pytest

from itemsampling import corrections as C
from itemsampling.kernels import rank_kernel
from itemsampling.metrics import metric_weights, rank_weight

SCHEMES = ["binomial", "hypergeometric"]
CLARABEL_TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}


def _instance(seed, n_items=40, sample_size=6):
    """A small random problem: a Dirichlet prior and four targets (three metrics + noise)."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(n_items))
    targets = np.column_stack(
        [metric_weights("ap", 5, n_items), metric_weights("ndcg", 10, n_items),
         metric_weights("recall", 3, n_items), rng.normal(size=n_items)]
    )
    return prior, targets


def _cvxpy_correction(kernel, prior, target, gamma_by_rank, monotone=False):
    """min_x Σ_R p(R) (E[x_r|R] - M(R))² + Σ_R g(R) Var[x_r|R], Var written as E[(x_r - E)²]."""
    n_items, sample_size = kernel.shape
    x = cp.Variable(sample_size)
    mean = kernel @ x
    deviation = x[None, :] - cp.reshape(mean, (n_items, 1), order="C")
    objective = cp.sum(cp.multiply(prior, cp.square(mean - target)))
    objective += cp.sum(cp.multiply(gamma_by_rank[:, None] * kernel, cp.square(deviation)))
    constraints = [x[:-1] >= x[1:]] if monotone else []
    problem = cp.Problem(cp.Minimize(objective), constraints)
    problem.solve(solver="CLARABEL", **CLARABEL_TIGHT)
    assert problem.status == cp.OPTIMAL
    return x.value


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.3, 1.0, 2.5])
def test_bv_closed_form_matches_cvxpy(scheme, gamma):
    prior, targets = _instance(1)
    kernel = rank_kernel(40, 6, scheme)
    got = C.bv_operator(40, 6, gamma=gamma, prior=prior, scheme=scheme).apply(targets)
    for j in range(targets.shape[1]):
        ref = _cvxpy_correction(kernel, prior, targets[:, j], gamma * prior)
        np.testing.assert_allclose(got[:, j], ref, atol=1e-6)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("n_users", [1, 25, 5000])
def test_mn_closed_form_matches_cvxpy(scheme, n_users):
    prior, targets = _instance(2)
    kernel = rank_kernel(40, 6, scheme)
    got = C.mn_operator(40, 6, n_users, prior=prior, scheme=scheme).apply(targets)
    for j in range(targets.shape[1]):
        # L2 = (1/M) Σ_R Var[M̂ | R]: every global rank weighs 1/M, whatever the prior
        ref = _cvxpy_correction(kernel, prior, targets[:, j], np.full(40, 1.0 / n_users))
        np.testing.assert_allclose(got[:, j], ref, atol=1e-6)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_cls_matches_cvxpy_with_active_constraints(scheme, seed):
    prior, targets = _instance(seed)
    kernel = rank_kernel(40, 6, scheme)
    got = C.cls(targets, 40, 6, prior=prior, scheme=scheme)
    design = np.sqrt(prior)[:, None] * kernel
    n_active = 0
    for j in range(targets.shape[1]):
        ref = _cvxpy_correction(kernel, prior, targets[:, j], np.zeros(40), monotone=True)
        np.testing.assert_allclose(got[:, j], ref, atol=1e-6)
        unconstrained = np.linalg.lstsq(design, np.sqrt(prior) * targets[:, j], rcond=None)[0]
        n_active += np.any(np.diff(unconstrained) > 0)
    assert np.all(np.diff(got, axis=0) <= 1e-12)
    assert n_active > 0  # the constraint changed at least one solution


def test_cls_is_the_least_squares_solution_when_that_is_monotone():
    n_items, sample_size = 30, 4
    kernel = rank_kernel(n_items, sample_size)
    target = kernel @ np.array([0.9, 0.5, 0.2, 0.1])  # exactly representable, decreasing
    np.testing.assert_allclose(C.cls(target, n_items, sample_size), [0.9, 0.5, 0.2, 0.1], atol=1e-9)


def test_bv_limits_gamma_zero_and_one():
    prior, targets = _instance(6)
    kernel = rank_kernel(40, 6)
    least_squares = np.linalg.lstsq(np.sqrt(prior)[:, None] * kernel,
                                    np.sqrt(prior)[:, None] * targets, rcond=None)[0]
    near_zero = C.bv_operator(40, 6, gamma=1e-10, prior=prior).apply(targets)
    np.testing.assert_allclose(near_zero, least_squares, atol=1e-6)
    # γ = 1: posterior mean M̂(r) = Σ_R P(R | r) M(R) (KDD'20 eq. 26)
    joint = prior[:, None] * kernel
    posterior_mean = (joint / joint.sum(axis=0)).T @ targets
    np.testing.assert_allclose(C.bv_operator(40, 6, gamma=1.0, prior=prior).apply(targets),
                               posterior_mean, atol=1e-12)


def test_mn_tends_to_least_squares_as_users_grow():
    prior, targets = _instance(7)
    kernel = rank_kernel(40, 6)
    least_squares = np.linalg.lstsq(np.sqrt(prior)[:, None] * kernel,
                                    np.sqrt(prior)[:, None] * targets, rcond=None)[0]
    errors = [np.abs(C.mn_operator(40, 6, m, prior=prior).apply(targets) - least_squares).max()
              for m in (10, 10**6, 10**12)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6  # the gap shrinks like 1/M


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bv_and_mn_are_unbiased_on_average_over_their_prior(scheme):
    """Σ_R p(R) E[M̂(r) | R] = Σ_R p(R) M(R) exactly, for any γ and any M."""
    prior, targets = _instance(8, n_items=300, sample_size=25)
    kernel = rank_kernel(300, 25, scheme)
    operators = [C.bv_operator(300, 25, gamma=g, prior=prior, scheme=scheme) for g in (0.01, 0.5)]
    operators.append(C.mn_operator(300, 25, 100, prior=prior, scheme=scheme))
    for op in operators:
        np.testing.assert_allclose(prior @ kernel @ op.apply(targets), prior @ targets, atol=1e-10)
    # the uniform default prior is the one used
    uniform = np.full(300, 1 / 300)
    default = C.bv_operator(300, 25, scheme=scheme).apply(targets)
    np.testing.assert_allclose(uniform @ kernel @ default, uniform @ targets, atol=1e-10)


def _all_targets(n_items, ks=range(1, 51)):
    ranks = np.arange(1, max(ks) + 1)
    return np.column_stack([rank_weight(m, ranks, n_items, k) for m in ("recall", "ndcg", "ap")
                            for k in ks])


@pytest.mark.parametrize("make", [
    lambda: C.bv_operator(500, 40, gamma=0.01),
    lambda: C.mn_operator(500, 40, 200, prior=np.random.default_rng(0).dirichlet(np.ones(500))),
])
@pytest.mark.blas_kernels
def test_linear_operator_on_a_stack_equals_separate_solves(make):
    op = make()
    targets = _all_targets(500)  # 50 rows: every weight beyond K = 50 is zero
    stacked = op.apply(targets)
    assert stacked.shape == (40, 150)
    for j in (0, 17, 49, 75, 149):
        np.testing.assert_allclose(stacked[:, j], op.apply(targets[:, j]), rtol=1e-10, atol=1e-12)
    padded = np.vstack([targets, np.zeros((450, 150))])
    np.testing.assert_allclose(op.matrix() @ padded, stacked, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(op.apply(padded), stacked, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: C.bv_operator(200, 20, gamma=0.1),
                                  lambda: C.mn_operator(200, 20, 50)])
def test_rank_distribution_view_eq15(make):
    op = make()
    rng = np.random.default_rng(9)
    p_tilde = C.sampled_rank_distribution(rng.integers(1, 21, size=300), 20)
    p_hat = op.rank_distribution(p_tilde)
    np.testing.assert_allclose(p_hat, op.matrix().T @ p_tilde, atol=1e-13)
    assert p_hat.sum() == pytest.approx(1.0, abs=1e-10)
    # P̂(R) = Recall̂@R - Recall̂@(R-1): cumulative sums are the corrected recall estimates
    recall_hat = p_tilde @ op.apply(np.column_stack([metric_weights("recall", k, 200)[:30]
                                                     for k in range(1, 31)]))
    np.testing.assert_allclose(np.cumsum(p_hat)[:30], recall_hat, atol=1e-12)


@pytest.mark.parametrize(("n_items", "sample_size"), [(300, 20), (12_000, 150)])  # dense; banded panels
@pytest.mark.parametrize("scheme", SCHEMES)
def test_grams_are_the_dense_products(n_items, sample_size, scheme):
    K = rank_kernel(n_items, sample_size, scheme)
    w = np.random.default_rng(3).dirichlet(np.full(n_items, 0.3))  # many tiny weights
    dense = K.T @ (w[:, None] * K)
    np.testing.assert_allclose(C.weighted_gram(K, w), dense, rtol=1e-12, atol=1e-15 * dense.max())
    spread = np.diag(K.sum(axis=0)) - K.T @ K
    np.testing.assert_allclose(C.variance_gram(K), spread, rtol=1e-12, atol=1e-13 * np.abs(spread).max())


def test_operators_with_given_grams_and_the_plain_normal_equations():
    n_items, n, users = 12_000, 150, 400  # a kernel large enough to be banded in panels
    K = rank_kernel(n_items, n)
    p = np.random.default_rng(4).dirichlet(np.ones(n_items))
    targets = _all_targets(n_items)
    rhs = K[:50].T @ (p[:50, None] * targets)
    gram = K.T @ (p[:, None] * K)
    plain_bv = np.linalg.solve(0.9 * gram + 0.1 * np.diag(K.T @ p), rhs)
    plain_mn = np.linalg.solve(gram - K.T @ K / users + np.diag(K.sum(axis=0)) / users, rhs)
    bv = C.bv_operator(n_items, n, gamma=0.1, prior=p, kernel=K)
    mn = C.mn_operator(n_items, n, users, prior=p, kernel=K)
    np.testing.assert_allclose(bv.apply(targets), plain_bv, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(mn.apply(targets), plain_mn, rtol=1e-7, atol=1e-10)
    shared = C.weighted_gram(K, p)
    given_bv = C.bv_operator(n_items, n, gamma=0.1, prior=p, kernel=K, gram=shared)
    given_mn = C.mn_operator(n_items, n, users, prior=p, kernel=K, gram=shared, spread=C.variance_gram(K))
    np.testing.assert_array_equal(given_bv.apply(targets), bv.apply(targets))
    np.testing.assert_array_equal(given_mn.apply(targets), mn.apply(targets))


@pytest.mark.parametrize("make", [lambda: C.bv_operator(500, 40, gamma=0.01),
                                  lambda: C.mn_operator(500, 40, 200)])
def test_estimate_with_one_solve_equals_the_average_correction(make):
    op = make()
    counts = np.random.default_rng(5).integers(0, 30, size=40).astype(float)
    targets = _all_targets(500)
    np.testing.assert_allclose(op.estimate(counts, targets), counts @ op.apply(targets), rtol=1e-10, atol=1e-12)
    assert op.estimate(counts, targets[:, 3]) == pytest.approx(counts @ op.apply(targets[:, 3]), rel=1e-10)


def test_sampled_rank_distribution_counts():
    np.testing.assert_allclose(C.sampled_rank_distribution([1, 1, 3, 2], 4), [0.5, 0.25, 0.25, 0.0])


def test_sampled_metric_definitions_and_unbiased_auc():
    n_items, sample_size = 120, 9
    got = C.sampled([("recall", 3), ("ap", None), ("auc", None), ("ndcg", 2)], sample_size)
    r = np.arange(1, sample_size + 1)
    np.testing.assert_allclose(got[:, 0], r <= 3)
    np.testing.assert_allclose(got[:, 1], 1 / r)
    np.testing.assert_allclose(got[:, 3], np.where(r <= 2, 1 / np.log2(r + 1), 0))
    # sampled AUC is unbiased for the global AUC (KDD'20 §4.4.1)
    for scheme in SCHEMES:
        expected = rank_kernel(n_items, sample_size, scheme) @ got[:, 2]
        np.testing.assert_allclose(expected, metric_weights("auc", None, n_items), atol=1e-12)


def test_rank_estimate_uses_floor_of_unbiased_rank():
    n_items, sample_size = 1000, 7
    full = np.column_stack([metric_weights("ndcg", 400, n_items), metric_weights("ap", None, n_items)])
    got = C.rank_estimate(full, n_items, sample_size)
    r = np.arange(1, sample_size + 1)
    r_hat = np.floor(1 + (n_items - 1) * (r - 1) / (sample_size - 1)).astype(int)
    np.testing.assert_allclose(got, full[r_hat - 1])
    assert r_hat[-1] == n_items
    # truncated weights (zero beyond row L) give the same result
    np.testing.assert_allclose(C.rank_estimate(full[:400, 0], n_items, sample_size), got[:, 0])


def test_rank_estimate_is_unbiased_for_auc():
    # AUC is linear in R, so the (unfloored) unbiased rank estimate is exact in expectation;
    # with N - 1 divisible by n - 1 the floor changes nothing.
    n_items, sample_size = 91, 10
    corrected = C.rank_estimate(metric_weights("auc", None, n_items), n_items, sample_size)
    np.testing.assert_allclose(rank_kernel(n_items, sample_size) @ corrected,
                               metric_weights("auc", None, n_items), atol=1e-12)


def test_truncated_weights_give_the_same_cls():
    target = metric_weights("ap", 8, 60)
    np.testing.assert_allclose(C.cls(target[:8], 60, 5), C.cls(target, 60, 5), atol=1e-10)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: C.bv_operator(50, 5, gamma=-0.1), "gamma must be"),
        # γ = 0 with n = 100: the Gram matrix of the binomial kernel is numerically singular
        (lambda: C.bv_operator(500, 100, gamma=0.0), "not numerically positive definite; use gamma > 0"),
        (lambda: C.bv_operator(50, 5, gamma=float("nan")), "gamma must be"),
        (lambda: C.mn_operator(50, 5, 0), "n_users"),
        (lambda: C.mn_operator(50, 5, 10, prior=np.ones(50)), "sum to 1"),
        (lambda: C.bv_operator(50, 5, prior=np.full(49, 1 / 49)), r"shape \(50,\)"),
        (lambda: C.bv_operator(50, 60), "n <= n_items"),
        (lambda: C.cls(np.ones(51), 50, 5), "1 <= L <= n_items"),
        (lambda: C.cls([np.nan, 1.0], 50, 5), "NaN"),
        (lambda: C.rank_estimate(np.ones(50), 50, 1), "sample_size >= 2"),
        (lambda: C.bv_operator(50, 5).rank_distribution(np.ones(4) / 4), r"shape \(5,\)"),
        (lambda: C.sampled_rank_distribution([0, 1], 5), "1..n"),
        (lambda: C.bv_operator(50, 5, gram=np.eye(4)), r"gram must have shape \(n, n\) = \(5, 5\)"),
        (lambda: C.mn_operator(50, 5, 10, spread=np.eye(6)), r"spread must have shape"),
        (lambda: C.weighted_gram(np.ones((5, 2)), -np.ones(5)), "non-negative"),
        (lambda: C.bv_operator(50, 5).estimate(np.ones(4), np.ones(3)), r"shape \(5,\)"),
    ],
)
def test_bad_input_is_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()
