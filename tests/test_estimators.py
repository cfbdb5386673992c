"""Public estimators: statistical accuracy, consistency between methods, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling import corrections, distributions
from itemsampling.estimators import (
    METHODS,
    RANK_DISTRIBUTION_METHODS,
    Estimator,
    estimate,
    estimate_draws,
    estimate_many,
    method_options,
    rank_distribution,
)
from itemsampling.kernels import KernelCache, rank_kernel
from itemsampling.metrics import metric_weights, rank_weight

N_ITEMS, SAMPLE_SIZE, N_USERS = 500, 100, 50_000
KS = [1, 5, 10, 20, 50]


def _true_distribution(n_items=N_ITEMS):
    weights = 1.0 / (np.arange(1, n_items + 1) + 4.0) ** 1.5
    return weights / weights.sum()


@pytest.fixture(scope="module")
def simulated():
    """Global ranks drawn from a known P(R) (Recall@10 about 0.5) and their sampled ranks."""
    rng = np.random.default_rng(2024)
    global_ranks = rng.choice(np.arange(1, N_ITEMS + 1), size=N_USERS, p=_true_distribution())
    sampled_ranks = its.sample_ranks(global_ranks, N_ITEMS, SAMPLE_SIZE, rng=rng)
    truth = its.global_metrics(global_ranks, N_ITEMS, ("recall", "ndcg", "ap"), KS)
    return global_ranks, sampled_ranks, truth


# ----------------------------------------------------------------------------- accuracy


@pytest.mark.parametrize(
    ("method", "opts"),
    [
        ("mle", {}),
        # η as in the AAAI'23 code (η/n): with the paper's η = 0.001 the entropy term dominates
        # the squared error at this N and n and pulls P̂ towards uniform (Recall@50 off by ~0.14)
        ("mes", {"eta_scale": "code"}),
        ("bv", {}),
        ("mn", {}),
        ("bv_mle", {}),
        ("bv_mes", {}),
        ("mn_mle", {}),
        ("mn_mes", {}),
    ],
)
def test_estimates_approach_the_true_metrics(simulated, method, opts):
    _, sampled_ranks, truth = simulated
    got = estimate(sampled_ranks, N_ITEMS, SAMPLE_SIZE, method, ks=KS, **opts)
    pd.testing.assert_frame_equal(got[["metric", "k"]], truth[["metric", "k"]])
    error = np.abs(got.estimate.to_numpy() - truth.value.to_numpy())
    assert error.max() < 0.02, got.assign(truth=truth.value)
    # the uncorrected sampled metrics are far off on the same data
    naive = estimate(sampled_ranks, N_ITEMS, SAMPLE_SIZE, "sampled", ks=KS).estimate.to_numpy()
    assert np.abs(naive - truth.value.to_numpy()).min() > 0.1


def test_mes_with_the_papers_eta_is_pulled_below_the_truth(simulated):
    """docs/findings.md: at N = 500, n = 100 the entropy term with the papers'
    η = 0.001 dominates and Recall@50 comes out more than 0.1 too low; η/n (the AAAI'23 code)
    is within 0.02."""
    _, sampled_ranks, truth = simulated
    want = truth.set_index(["metric", "k"]).at[("recall", 50), "value"]
    paper, code = (estimate(sampled_ranks, N_ITEMS, SAMPLE_SIZE, "mes", "recall", 50, **opts).estimate.iloc[0]
                   for opts in ({}, {"eta_scale": "code"}))
    assert want - paper > 0.1 and abs(code - want) < 0.02


def test_hypergeometric_scheme_matches_sampling_without_replacement():
    rng = np.random.default_rng(5)
    global_ranks = rng.choice(np.arange(1, 201), size=40_000, p=_true_distribution(200))
    sampled_ranks = its.sample_ranks(global_ranks, 200, 100, rng=rng, scheme="hypergeometric")
    truth = its.global_metrics(global_ranks, 200, ("recall", "ndcg"), [2, 5, 10]).value.to_numpy()
    errors = {}
    for scheme in ("hypergeometric", "binomial"):
        for method in ("mle", "mn"):
            got = estimate(sampled_ranks, 200, 100, method, ("recall", "ndcg"), [2, 5, 10],
                           scheme=scheme).estimate.to_numpy()
            errors[method, scheme] = np.abs(got - truth).max()
    assert errors["mle", "hypergeometric"] < 0.01
    assert errors["mn", "hypergeometric"] < 0.01
    # sampling half the items without replacement is not binomial: the wrong kernel is worse
    assert errors["mle", "binomial"] > 3 * errors["mle", "hypergeometric"]


def test_adaptive_mle_recovers_the_top_ranks(simulated):
    global_ranks, _, truth = simulated
    ranks, sizes = its.adaptive_sample_ranks(global_ranks, N_ITEMS, 25, 400, rng=7)
    got = estimate(ranks, N_ITEMS, sizes, "adaptive_mle", ks=KS)
    assert np.abs(got.estimate.to_numpy() - truth.value.to_numpy()).max() < 0.02
    # users stopped early share the base size; adaptive sampling costs less than n_max each
    assert sizes.mean() < 400
    # with the same initial size, the fixed-size MLE cannot resolve Recall@1
    fixed = its.sample_ranks(global_ranks, N_ITEMS, 25, rng=7)
    fixed_recall1 = estimate(fixed, N_ITEMS, 25, "mle", "recall", 1).estimate.item()
    adaptive_recall1 = got.estimate.iloc[0]
    true_recall1 = truth.value.iloc[0]
    assert abs(adaptive_recall1 - true_recall1) < abs(fixed_recall1 - true_recall1)


@pytest.mark.parametrize(("method", "opts"), [("bv", {}), ("bv", {"gamma": 0.3}),
                                              ("mn", {"n_users": 1000})])
def test_bv_and_mn_with_the_true_prior_are_exact_in_expectation(method, opts):
    """Σ_r P(r) M̂(r) = Σ_R P(R) M(R) when the prior is the true P(R) (no sampling noise)."""
    prior = _true_distribution(300)
    pmf = rank_kernel(300, 30).T @ prior
    counts = np.round(pmf * 1e7).astype(int)  # ranks in proportion to the exact P(r)
    ranks = np.repeat(np.arange(1, 31), counts)
    got = estimate(ranks, 300, 30, method, ks=[1, 3, 10, 40, None], prior=prior, **opts)
    targets = [metric_weights(m, k, 300) @ prior for m in ("recall", "ndcg", "ap")
               for k in (1, 3, 10, 40, None)]
    np.testing.assert_allclose(got.estimate, targets, atol=1e-6)


# ----------------------------------------------------------------------------- consistency


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(11)
    global_ranks = rng.choice(np.arange(1, 301), size=3000, p=_true_distribution(300))
    return its.sample_ranks(global_ranks, 300, 40, rng=rng)


@pytest.mark.parametrize("method", RANK_DISTRIBUTION_METHODS)
def test_estimate_is_the_metric_of_the_rank_distribution(small, method):
    sizes = np.full(small.size, 40) if method == "adaptive_mle" else 40
    p_hat = rank_distribution(small, 300, sizes, method)
    assert p_hat.shape == (300,)
    assert p_hat.sum() == pytest.approx(1.0, abs=1e-8)
    got = estimate(small, 300, sizes, method, ("recall", "ndcg", "ap", "auc"), [1, 7, 30, None])
    expected = [metric_weights(m, k, 300) @ p_hat for m in ("recall", "ndcg", "ap", "auc")
                for k in (1, 7, 30, None)]
    np.testing.assert_allclose(got.estimate, expected, rtol=1e-9, atol=1e-12)


def test_methods_with_a_prior_use_it_from_the_same_ranks(small):
    p_tilde = corrections.sampled_rank_distribution(small, 40)
    ks = [1, 10, 25]
    weights = np.column_stack([metric_weights(m, k, 300) for m in ("recall", "ndcg", "ap")
                               for k in ks])
    priors = {"mle": distributions.mle(small, 300, 40),
              "mes": distributions.mes(small, 300, 40, eta=1e-4)}
    for family in ("bv", "mn"):
        for name, prior in priors.items():
            opts = {"eta": 1e-4} if name == "mes" else {}
            got = estimate(small, 300, 40, f"{family}_{name}", ks=ks, **opts).estimate
            if family == "bv":
                op = corrections.bv_operator(300, 40, gamma=0.01, prior=prior)
            else:
                op = corrections.mn_operator(300, 40, small.size, prior=prior)
            np.testing.assert_allclose(got, p_tilde @ op.apply(weights), rtol=1e-8, atol=1e-12)


def test_mn_with_uniform_prior_is_bv_with_gamma_n_over_m(small):
    """AAAI'23 §3.2: with a uniform prior MN is BV with γ = N/M (K^T D K = K^T K / N)."""
    bv = estimate(small, 300, 40, "bv", gamma=300 / 5000).estimate
    mn = estimate(small, 300, 40, "mn", n_users=5000).estimate
    np.testing.assert_allclose(mn, bv, rtol=1e-9, atol=1e-12)
    default = estimate(small, 300, 40, "mn").estimate
    explicit = estimate(small, 300, 40, "mn", n_users=small.size).estimate
    np.testing.assert_array_equal(default, explicit)
    assert np.abs(default - mn).max() > 1e-4


def test_gamma_and_prior_options_change_bv(small):
    base = estimate(small, 300, 40, "bv", "recall", 10).estimate.item()
    other_gamma = estimate(small, 300, 40, "bv", "recall", 10, gamma=0.5).estimate.item()
    tail = np.r_[np.zeros(100), np.full(200, 1 / 200)]  # a prior that rules out R <= 100
    other_prior = estimate(small, 300, 40, "bv", "recall", 10, prior=tail).estimate.item()
    assert abs(base - other_gamma) > 1e-3 and abs(base - other_prior) > 1e-3


def test_adaptive_mle_with_one_size_is_mle(small):
    sizes = np.full(small.size, 40)
    np.testing.assert_allclose(rank_distribution(small, 300, sizes, "adaptive_mle"),
                               rank_distribution(small, 300, 40, "mle"), atol=1e-12)


def test_sampled_rank_estimate_and_cls_match_their_corrections(small):
    ks = [1, 5, 40]
    got = estimate(small, 300, 40, "sampled", ("recall", "ndcg", "auc"), ks)
    naive = [rank_weight(m, small, 40, k).mean() for m in ("recall", "ndcg", "auc") for k in ks]
    np.testing.assert_allclose(got.estimate, naive, rtol=1e-12)
    p_tilde = corrections.sampled_rank_distribution(small, 40)
    weights = metric_weights("ndcg", 20, 300)
    rank_est = estimate(small, 300, 40, "rank_estimate", "ndcg", 20).estimate.item()
    assert rank_est == pytest.approx(p_tilde @ corrections.rank_estimate(weights, 300, 40))
    cls_est = estimate(small, 300, 40, "cls", "ndcg", 20).estimate.item()
    assert cls_est == pytest.approx(p_tilde @ corrections.cls(weights, 300, 40), rel=1e-9)


def test_output_layout_aliases_and_determinism(small):
    got = estimate(small, 300, 40, "mle", metrics=["hr", "MRR", "precision"], ks=[3, 1])
    assert list(got.columns) == ["metric", "k", "estimate"]
    assert got.metric.tolist() == ["recall", "recall", "ap", "ap", "precision", "precision"]
    assert got.k.dtype == "Int64" and got.k.tolist() == [3, 1, 3, 1, 3, 1]
    assert got.estimate.iloc[4] == pytest.approx(got.estimate.iloc[0] / 3)
    again = estimate(small, 300, 40, "mle", metrics=["hr", "MRR", "precision"], ks=[3, 1])
    pd.testing.assert_frame_equal(got, again)
    assert list(estimate(small, 300, 40, "mn").k) == list(range(1, 51)) * 3


def test_every_method_runs_and_accepts_scheme(small):
    for method in METHODS:
        sizes = np.full(small.size, 40) if method == "adaptive_mle" else 40
        got = estimate(small, 300, sizes, method, "recall", 10, scheme="hypergeometric")
        assert np.isfinite(got.estimate).all()
        assert "scheme" in method_options(method)


def test_package_level_estimate_works_after_importing_the_submodule(small):
    import itemsampling.estimators  # noqa: F401

    first = its.estimate(small, 300, 40, "mle", "recall", 10)
    second = its.estimate(small, 300, 40, "mle", "recall", 10)
    pd.testing.assert_frame_equal(first, second)
    assert its.METHODS == METHODS


# ----------------------------------------------------------------------------- bad input


def _expect_error(match, *args, **kwargs):
    with pytest.raises(ValueError, match=match):
        estimate(*args, **kwargs)


def test_rank_outside_one_to_n_is_rejected():
    _expect_error(r"must lie in 1\.\.n \(1-based, n = 10\); found 11", [1, 11], 50, 10, "mle")
    _expect_error(r"found 0", [0, 2], 50, 10, "bv")


def test_sample_size_larger_than_n_items_is_rejected():
    _expect_error(r"1 <= n <= n_items \(N=50\)", [1, 2], 50, 60, "mle")


def test_sample_size_one_is_rejected():
    _expect_error("sample_size must be >= 2", [1, 1], 50, 1, "mle")


def test_non_integer_ranks_are_rejected():
    _expect_error("must be whole numbers; found", [1, 1.5], 50, 10, "mle")
    _expect_error("must be integers", ["1", "2"], 50, 10, "mle")


def test_nan_ranks_are_rejected():
    _expect_error("NaN or infinite", [1.0, np.nan], 50, 10, "mn")


def test_empty_ranks_are_rejected():
    _expect_error("empty: at least one rank", [], 50, 10, "mle")


def test_prior_that_is_not_a_distribution_is_rejected():
    _expect_error("must sum to 1", [1, 2], 50, 10, "bv", prior=np.ones(50))
    _expect_error("negative entries", [1, 2], 50, 10, "mn", prior=np.r_[-0.5, np.full(49, 1.5 / 49)])
    _expect_error(r"shape \(50,\)", [1, 2], 50, 10, "cls", prior=np.full(10, 0.1))


def test_unknown_method_is_rejected():
    _expect_error("unknown method 'mle2'; allowed: sampled, rank_estimate, cls", [1], 50, 10, "mle2")


def test_unknown_metric_is_rejected():
    _expect_error("unknown metric 'hits'; allowed: recall, precision, ndcg, ap, auc",
                  [1], 50, 10, "mle", metrics=["hits"])


def test_unknown_option_is_rejected_with_the_allowed_ones():
    _expect_error(r"unknown option\(s\) 'eta' for method 'bv'; allowed: gamma, grid, n_groups, prior, scheme",
                  [1], 50, 10, "bv", eta=0.1)
    _expect_error(r"unknown option\(s\) 'prior' for method 'mn_mle'", [1], 50, 10, "mn_mle",
                  prior=np.full(50, 0.02))


def test_bad_option_values_are_rejected():
    _expect_error("unknown sampling scheme 'poisson'", [1], 50, 10, "mle", scheme="poisson")
    _expect_error("gamma must be", [1], 50, 10, "bv", gamma=-1)
    _expect_error("n_users", [1], 50, 10, "mn", n_users=0)
    _expect_error("cut-offs k must be positive integers", [1], 50, 10, "mle", ks=[0])
    _expect_error("precision needs a cut-off", [1], 50, 10, "mle", metrics="precision", ks=None)


def test_per_user_sample_sizes_need_adaptive_mle():
    _expect_error("supported by method 'adaptive_mle' only", [1, 2], 50, [10, 20], "mle")
    _expect_error("2 entries but there are 3", [1, 2, 1], 50, [10, 20], "adaptive_mle")
    _expect_error(r"1\.\.n \(1-based, n = 10\)", [11, 2], 50, [10, 20], "adaptive_mle")


def test_rank_distribution_rejects_methods_without_one():
    for method in ("sampled", "rank_estimate", "cls"):
        with pytest.raises(ValueError, match=f"{method!r} corrects each metric separately.*mle"):
            rank_distribution([1, 2], 50, 10, method)


# ---------------------------------------------------------------- impossible estimates


def _strong_recommender(n_users, seed=0):
    """Global ranks of a strong recommender (exact Recall@10 about 0.7) among N = 3,000 items."""
    rng = np.random.default_rng(seed)
    return np.minimum(np.ceil(rng.pareto(1.5, size=n_users) * 2), 3_000).astype(np.int64)


@pytest.mark.parametrize(
    ("case", "ranks"),
    [
        ("every user at r = 1", np.ones(50, dtype=np.int64)),
        ("a single user", np.array([3])),
        ("a strong recommender, 6,000 users", its.sample_ranks(_strong_recommender(6_000), 3_000, 100, rng=1)),
    ],
)
@pytest.mark.parametrize("method", ["cls", "bv"])
def test_estimates_outside_the_metric_range_warn_and_clip(case, ranks, method):
    with pytest.warns(its.ImpossibleEstimateWarning, match=r"outside \[0, 1\].*clip=True"):
        raw = its.estimate(ranks, 3_000, 100, method, metrics="recall", ks=range(1, 51))["estimate"]
    assert ((raw < 0) | (raw > 1)).any(), case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clipped = its.estimate(ranks, 3_000, 100, method, metrics="recall", ks=range(1, 51), clip=True)["estimate"]
    np.testing.assert_array_equal(clipped, np.clip(raw, 0, 1))


def test_rank_distribution_methods_stay_in_range_without_a_warning():
    ranks = its.sample_ranks(_strong_recommender(6_000), 3_000, 100, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("mle", "mes"):
            values = its.estimate(ranks, 3_000, 100, method, metrics=("recall", "ndcg"), ks=range(1, 51))["estimate"]
            assert values.between(0, 1).all()


def test_a_float_cut_off_is_rejected_clearly():
    with pytest.raises(ValueError, match="cut-offs k must be positive integers"):
        its.estimate([1, 2], 50, 10, "mle", ks=10.0)


@pytest.mark.blas_kernels
def test_estimates_of_many_draws_equal_each_draw_alone_to_rounding():
    rng = np.random.default_rng(11)
    n_items = 1_500 - rng.integers(0, 200, size=2_000)
    global_ranks = np.minimum(np.ceil(rng.pareto(0.8, size=2_000) * 3), n_items).astype(np.int64)
    draws = [its.sample_ranks(global_ranks, n_items, 60, rng=seed) for seed in range(3)]
    estimators = [Estimator("mle"), Estimator("wmle"), Estimator("mn_mle"), Estimator("bv", {"gamma": 0.1}),
                  Estimator("mes")]
    targets = [("recall", 5), ("ndcg", 20), ("ap", None)]
    tables = estimate_draws(draws, n_items, 60, estimators, targets=targets, n_groups=4, warn=False,
                                           interval=0.9)
    for draw, table in zip(draws, tables, strict=True):
        alone = estimate_many(draw, n_items, 60, estimators, targets=targets, n_groups=4, warn=False, interval=0.9)
        pd.testing.assert_frame_equal(table, alone, check_exact=False, rtol=1e-10, atol=1e-14)
        fixed = ~table["estimator"].isin(["mle", "wmle", "mn_mle", "mes"])  # no fit behind these: the same bits
        pd.testing.assert_frame_equal(table[fixed], alone[fixed], check_exact=True)
    with pytest.raises(ValueError, match="same positive number of draws"):
        estimate_draws(draws, n_items, [60], estimators, targets=targets)


@pytest.mark.blas_kernels
def test_mes_fits_of_many_draws_with_one_binomial_kernel_equal_each_draw_alone():
    """One N and a cache: the stacked MES takes its Hessians from the kernel of set size 2n - 1."""
    rng = np.random.default_rng(12)
    n_items, n = 2_500, 400
    global_ranks = np.minimum(np.ceil(rng.pareto(0.7, size=3_000) * 2), n_items).astype(np.int64)
    draws = [its.sample_ranks(global_ranks, n_items, n, rng=seed) for seed in range(4)]
    estimators = [Estimator("mes"), Estimator("bv_mes"), Estimator("mn_mes"),
                  Estimator("mes", {"eta": 0.01, "eta_scale": "code"}, name="mes_code")]
    targets = [("recall", 1), ("ndcg", 10), ("recall", 50)]
    tables = estimate_draws(draws, n_items, n, estimators, targets=targets, cache=KernelCache(), warn=False)
    for draw, table in zip(draws, tables, strict=True):
        alone = estimate_many(draw, n_items, n, estimators, targets=targets, cache=KernelCache(), warn=False)
        pd.testing.assert_frame_equal(table, alone, check_exact=False, rtol=1e-9, atol=1e-14)


@pytest.mark.blas_kernels
def test_mes_fits_of_draws_with_different_sample_sizes_are_stacked_per_size():
    rng = np.random.default_rng(13)
    n_items = 1_200
    global_ranks = np.minimum(np.ceil(rng.pareto(0.7, size=1_500) * 2), n_items).astype(np.int64)
    sizes = [50, 120, 50, 120, 200]
    draws = [its.sample_ranks(global_ranks, n_items, n, rng=seed) for seed, n in enumerate(sizes)]
    estimators = [Estimator("mes"), Estimator("bv_mes")]
    targets = [("recall", 1), ("ndcg", 10)]
    tables = estimate_draws(draws, n_items, sizes, estimators, targets=targets, cache=KernelCache(), warn=False)
    for draw, n, table in zip(draws, sizes, tables, strict=True):
        alone = estimate_many(draw, n_items, n, estimators, targets=targets, cache=KernelCache(), warn=False)
        pd.testing.assert_frame_equal(table, alone, check_exact=False, rtol=1e-9, atol=1e-14)


def test_estimate_draws_releases_each_draw_once_its_table_is_made(monkeypatch):
    """A draw's fits and operators (hundreds of MB at n = 1,000) go as soon as its table is made."""
    import gc
    import weakref

    from itemsampling import estimators as module

    refs, alive = [], []
    build, make_table = module.Batch.build, module._estimate_table

    def recording_build(cls, *args, **kwargs):
        batch = build(*args, **kwargs)
        refs.append(weakref.ref(batch))
        return batch

    def counting_table(batch, *args, **kwargs):
        gc.collect()
        alive.append(sum(ref() is not None for ref in refs))
        return make_table(batch, *args, **kwargs)

    monkeypatch.setattr(module.Batch, "build", classmethod(recording_build))
    monkeypatch.setattr(module, "_estimate_table", counting_table)
    rng = np.random.default_rng(14)
    global_ranks = np.minimum(np.ceil(rng.pareto(0.7, size=800) * 2), 900).astype(np.int64)
    draws = [its.sample_ranks(global_ranks, 900, 60, rng=seed) for seed in range(5)]
    estimate_draws(draws, 900, 60, [Estimator("mes"), Estimator("bv_mes"), Estimator("mle")],
                   targets=[("recall", 5)], cache=KernelCache(), warn=False)
    assert alive == [5, 4, 3, 2, 1]
