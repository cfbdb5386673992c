"""Per-user numbers of candidates N_u in the public estimators (``unseen`` protocol)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, hypergeom

import itemsampling as its
from itemsampling.candidates import GROUP_TOLERANCE, CandidateGroups, item_groups
from itemsampling.distributions import _pooled_observations, log_likelihood
from itemsampling.estimators import METHODS, Estimator, estimate_many
from itemsampling.kernels import KernelCache

N_MAX = 400
N_SAMPLE = 20


def _users(seed=0, m=600):
    rng = np.random.default_rng(seed)
    n_items = N_MAX - rng.integers(0, 120, size=m)  # N_u = N - |train_u|
    ranks = np.minimum(np.ceil(rng.pareto(0.8, size=m) * 3), n_items).astype(np.int64)
    sampled = its.sample_ranks(ranks, n_items, N_SAMPLE, rng=rng)
    return ranks, n_items, sampled


def test_groups_are_contiguous_and_exact_for_equal_values():
    n_items = np.array([10, 10, 12, 50, 50, 51, 80, 80])
    index, _ = item_groups(n_items, 3)
    assert np.all(np.diff(index[np.argsort(n_items)]) >= 0)  # contiguous in N_u
    assert np.unique(index[n_items == 50]).size == 1  # equal N_u share a group
    exact_index, exact_n = item_groups(n_items, None)
    np.testing.assert_array_equal(exact_n, [10, 12, 50, 51, 80])
    np.testing.assert_array_equal(exact_n[exact_index], n_items)
    groups = CandidateGroups.build(n_items, n_items.size, None)
    assert groups.max_items == 80 and groups.n_users.sum() == 8
    with pytest.raises(ValueError, match="one N_u per user"):
        CandidateGroups.build(n_items, 7)
    with pytest.raises(ValueError, match="integers >= 2"):
        CandidateGroups.build(np.array([1, 5]), 2)
    for bad in (0, -2, 1.5):  # checked with one N as well as with one N_u per user
        with pytest.raises(ValueError, match="n_groups"):
            CandidateGroups.build(400, 3, bad)
        with pytest.raises(ValueError, match="n_groups"):
            its.estimate(np.array([1, 2, 5]), 400, N_SAMPLE, "mle", metrics="recall", ks=[10], n_groups=bad)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "adaptive_mle"])
def test_an_array_of_equal_values_gives_the_scalar_result(method):
    _, _, sampled = _users()
    scalar = its.estimate(sampled, 350, N_SAMPLE, method, ks=[1, 5, 20])
    array = its.estimate(sampled, np.full(sampled.size, 350), N_SAMPLE, method, ks=[1, 5, 20])
    pd.testing.assert_frame_equal(scalar, array, check_exact=True)


def _per_user_em(sampled, n_items, n, scheme, steps):
    """EM with one kernel row P(r_u | R; n, N_u) per user, written out densely (no grouping)."""
    R = np.arange(1, n_items.max() + 1)[:, None]
    N = n_items[None, :]
    r = sampled[None, :]
    if scheme == "binomial":
        lik = binom.pmf(r - 1, n - 1, (R - 1) / (N - 1))
    else:
        lik = hypergeom.pmf(r - 1, N - 1, R - 1, n - 1)
    lik = np.where(R <= N, lik, 0.0)  # a user cannot have a rank beyond its candidates
    pi = np.full(R.size, 1.0 / R.size)
    for _ in range(steps):
        post = pi[:, None] * lik
        pi = (post / post.sum(axis=0)).mean(axis=1)
    return pi


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_mle_with_exact_groups_is_em_with_each_users_kernel(scheme):
    _, n_items, sampled = _users(1, m=300)
    ours = its.rank_distribution(sampled, n_items, N_SAMPLE, "mle", scheme=scheme, n_groups=None,
                                 max_iter=30, tol=0)
    np.testing.assert_allclose(ours, _per_user_em(sampled, n_items, N_SAMPLE, scheme, 30), atol=1e-10)


def test_em_with_per_user_candidates_never_lowers_the_likelihood():
    _, n_items, sampled = _users(2)
    previous = -np.inf
    for steps in (1, 2, 5, 20, 60):
        pi = its.rank_distribution(sampled, n_items, N_SAMPLE, "mle", max_iter=steps, tol=0)
        value = log_likelihood(pi, sampled, n_items, N_SAMPLE)
        assert value >= previous - 1e-9
        previous = value


def test_corrections_are_averaged_over_the_groups():
    _, n_items, sampled = _users(3)
    groups = CandidateGroups.build(n_items, sampled.size, 4)
    for method in ("rank_estimate", "cls", "bv", "mn"):
        whole = its.estimate(sampled, n_items, N_SAMPLE, method, ks=[5, 10], n_groups=4)["estimate"]
        parts = [
            share * its.estimate(sampled[groups.members(g)], int(groups.n_items[g]), N_SAMPLE, method,
                                 ks=[5, 10])["estimate"].to_numpy()
            for g, share in enumerate(groups.fractions)
        ]
        np.testing.assert_allclose(whole, np.sum(parts, axis=0), rtol=1e-10, err_msg=method)


def test_mes_uses_the_user_averaged_kernel():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(4)
    n_items = rng.choice([40, 50, 60], size=400)
    sampled = its.sample_ranks(np.minimum(rng.integers(1, 30, size=400), n_items), n_items, 8, rng=rng)
    ours = its.rank_distribution(sampled, n_items, 8, "mes", n_groups=None, eta=0.01)
    # independent formulation: the expected sampled rank distribution of all users
    kbar = sum((n_items == n).mean() * np.pad(its.rank_kernel(int(n), 8), ((0, 60 - n), (0, 0)))
               for n in (40, 50, 60))
    p_tilde = np.bincount(sampled - 1, minlength=8) / sampled.size
    seen = p_tilde > 0
    pi = cp.Variable(60)
    objective = cp.sum(cp.multiply(p_tilde[seen], cp.square(kbar[:, seen].T @ pi - p_tilde[seen])))
    problem = cp.Problem(cp.Minimize(objective - 0.01 * cp.sum(cp.entr(pi))), [pi >= 0, cp.sum(pi) == 1])
    problem.solve(solver="CLARABEL")
    np.testing.assert_allclose(ours, pi.value, atol=1e-6)


def test_pooled_kernel_from_the_cache_is_the_user_weighted_sum_of_the_groups_kernels():
    rng = np.random.default_rng(6)
    n_items = rng.choice([40, 50, 60], size=400)
    sampled = rng.integers(1, 9, size=400)
    distinct = np.unique(sampled)
    expected = sum((n_items == n).mean() * np.pad(its.rank_kernel(int(n), 8), ((0, 60 - n), (0, 0)))
                   for n in (40, 50, 60))[:, distinct - 1]
    cache = KernelCache()
    for _ in range(2):  # built, then taken from the cache
        pooled, p_tilde = _pooled_observations(sampled, n_items, 8, "binomial", None, cache)
        np.testing.assert_allclose(pooled, expected, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(p_tilde, np.bincount(sampled)[distinct] / 400)


def _rms(n_items, index, group_n):
    return np.sqrt(np.mean(np.log(n_items / group_n[index]) ** 2))


def test_indistinguishable_candidate_counts_share_one_kernel():
    rng = np.random.default_rng(7)
    narrow = 35_000 - rng.geometric(0.01, size=5_000)  # N_u within ~1 %: one kernel fits all
    index, group_n = item_groups(narrow, 20)
    assert group_n.size == 20 and np.all(group_n == round(narrow.mean()))  # the groups stay
    assert _rms(narrow, index, group_n) <= GROUP_TOLERANCE
    groups = CandidateGroups.build(narrow, narrow.size, 20)
    np.testing.assert_array_equal(groups.kernel_items, [round(narrow.mean())])
    assert groups.kernel_users.tolist() == [5_000] and np.all(groups.kernel_index == 0)
    wide = 3_706 - rng.geometric(0.01, size=5_000)  # N_u spread over ~20 %: one kernel per group
    index, group_n = item_groups(wide, 20)
    edges = np.unique(np.quantile(wide, np.linspace(0, 1, 21)[1:-1], method="lower"))
    np.testing.assert_array_equal(index, np.searchsorted(edges, wide, side="left"))
    np.testing.assert_array_equal(group_n, [round(wide[index == g].mean()) for g in range(20)])
    assert _rms(wide, np.zeros_like(wide), np.array([round(wide.mean())])) > GROUP_TOLERANCE
    exact_index, exact_n = item_groups(narrow, None)  # exact groups are never merged
    np.testing.assert_array_equal(exact_n[exact_index], narrow)


@pytest.mark.parametrize("method", ["mle", "wmle", "mes", "cls", "bv", "bv_mle", "mn_mes", "rank_estimate"])
def test_one_shared_kernel_gives_the_estimates_of_that_n_for_every_user(method):
    rng = np.random.default_rng(8)
    n_items = 2_000 - rng.integers(0, 15, size=3_000)  # rms of ln(N_u / N) ~ 0.2 %: one kernel
    sampled = its.sample_ranks(np.minimum(rng.integers(1, 400, size=3_000), n_items), n_items, 30, rng=rng)
    groups = CandidateGroups.build(n_items, n_items.size)
    assert groups.n_groups > 1 and groups.kernel_items.size == 1
    common = int(groups.kernel_items[0])
    ours = its.estimate(sampled, n_items, 30, method, ks=[1, 10, 50])["estimate"].to_numpy()
    if method.startswith("mn"):  # MN keeps each group's number of users as its M
        prior = its.rank_distribution(sampled, common, 30, method.split("_")[1])
        parts = [share * its.estimate(sampled[groups.members(g)], common, 30, "mn", ks=[1, 10, 50],
                                      prior=prior)["estimate"].to_numpy()
                 for g, share in enumerate(groups.fractions)]
        np.testing.assert_allclose(ours, np.sum(parts, axis=0), rtol=1e-9, atol=1e-12)
    else:
        one = its.estimate(sampled, common, 30, method, ks=[1, 10, 50])["estimate"].to_numpy()
        np.testing.assert_allclose(ours, one, rtol=1e-9, atol=1e-12)


def test_true_candidates_recover_the_metric_better_than_one_common_n():
    ranks, n_items, _ = _users(5, m=4000)
    exact = float((ranks <= 10).mean())
    errors = {"per-user": [], "common": []}
    for seed in range(5):
        sampled = its.sample_ranks(ranks, n_items, N_SAMPLE, rng=seed)
        for label, n in (("per-user", n_items), ("common", N_MAX)):
            value = its.estimate(sampled, n, N_SAMPLE, "mle", metrics="recall", ks=10)["estimate"].item()
            errors[label].append(abs(value - exact))
    assert np.mean(errors["per-user"]) < np.mean(errors["common"])


@pytest.mark.parametrize("n_items", [350, "per-user"])
def test_estimate_many_equals_one_estimate_per_method(n_items):
    _, per_user, sampled = _users(6)
    n_items = per_user if n_items == "per-user" else n_items
    estimators = [Estimator(m) for m in METHODS if m != "adaptive_mle"] + [
        Estimator("bv", {"gamma": 0.1}, name="bv_0.1"),
        Estimator("wmle", {"weight": "ap"}, name="wmle_ap"),
    ]
    cache = KernelCache()
    for _ in range(2):  # the second call takes kernels and operators from the cache
        many = estimate_many(sampled, n_items, N_SAMPLE, estimators, ks=[1, 10, None], cache=cache)
        for est in estimators:
            one = its.estimate(sampled, n_items, N_SAMPLE, est.method, ks=[1, 10, None], **est.options)
            got = many[many["estimator"] == est.label]["estimate"].to_numpy()
            np.testing.assert_array_equal(got, one["estimate"].to_numpy(), err_msg=est.label)


def test_estimate_many_rejects_duplicate_labels_and_common_options():
    with pytest.raises(ValueError, match="distinct labels"):
        estimate_many([1, 2], 50, 10, [Estimator("bv"), Estimator("bv")])
    with pytest.raises(ValueError, match="apply to all estimators"):
        Estimator("bv", {"scheme": "binomial"})


def test_fit_beta_does_not_depend_on_the_number_of_items():
    _, n_items, sampled = _users(7)
    a = its.fit_beta(sampled, n_items, N_SAMPLE)
    assert a == its.fit_beta(sampled, 10_000, N_SAMPLE)
    with pytest.raises(ValueError, match="one N_u per user"):
        its.fit_beta(sampled, n_items[:-1], N_SAMPLE)


def test_sample_size_above_the_smallest_candidate_count_is_rejected():
    _, n_items, sampled = _users(8)
    with pytest.raises(ValueError, match="out of range"):
        its.estimate(sampled, n_items, int(n_items.min()) + 1, "mle")


def test_em_start_covers_the_estimated_ranks_with_grouped_candidates():
    _, n_items, sampled = _users(9)
    p_hat = its.rank_distribution(sampled, n_items, N_SAMPLE, "mle", n_groups=4)
    start = np.full(p_hat.size, 1.0 / p_hat.size)  # max N_g of the groups, below max N_u
    assert p_hat.size < n_items.max()
    np.testing.assert_array_equal(its.rank_distribution(sampled, n_items, N_SAMPLE, "mle", n_groups=4, init=start),
                                  p_hat)
    with pytest.raises(ValueError, match=rf"init must have shape \({p_hat.size},\)"):
        its.rank_distribution(sampled, n_items, N_SAMPLE, "mle", n_groups=4, init=np.full(400, 1 / 400))
