"""Confidence intervals: coverage on simulated data with known truth, derivatives, bootstrap, input.

What is asserted is what the construction guarantees (see :mod:`itemsampling.intervals`):

* linear corrections: the interval covers the estimator's expectation E[θ̂] at the nominal
  level (central limit theorem), which is the population metric for BV, MN and CLS with the
  true prior (unbiased on average over the prior, KDD'20 §5);
* fitted estimators: the delta-method se equals the Monte Carlo standard deviation of the
  estimate and the interval covers its Monte Carlo mean, on targets that the sampled ranks
  determine well;
* fixed users and an estimator unbiased for every user (the sampled AUC): the interval covers the
  exact value of those users at least at the nominal level.

Coverage of the exact value by biased estimators is measured, not asserted, by
``benchmarks/bench_intervals.py``.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import itemsampling as its
from itemsampling.candidates import CandidateGroups
from itemsampling.estimators import Estimator, estimate, estimate_many, influence_values
from itemsampling.intervals import interval_coverage
from itemsampling.kernels import KernelCache, rank_kernel
from itemsampling.metrics import rank_weight
from itemsampling_study.engine import repeat_estimates

N_ITEMS, SAMPLE_SIZE, N_USERS = 300, 30, 1500
LEVEL = 0.9
#: geometric global rank law, Recall@10 about 0.26
TRUE_P = 0.97 ** np.arange(N_ITEMS) / (0.97 ** np.arange(N_ITEMS)).sum()
LINEAR_TARGETS = [("recall", 10), ("ndcg", 10), ("ap", None), ("auc", None)]


def _coverage_band(repeats: int, level: float = LEVEL, alpha: float = 1e-4) -> tuple[float, float]:
    """Central binomial band of the empirical coverage of ``repeats`` intervals at ``level``."""
    lo, hi = binom.ppf([alpha / 2, 1 - alpha / 2], repeats, level) / repeats
    return lo, hi


def _population_draws(estimators, targets, repeats, seed, n_users=N_USERS):
    """Each repeat draws new users from TRUE_P and their sampled ranks; returns (E, m) arrays."""
    rng = np.random.default_rng(seed)
    cache = KernelCache()
    tables = []
    for _ in range(repeats):
        global_ranks = rng.choice(np.arange(1, N_ITEMS + 1), size=n_users, p=TRUE_P)
        sampled = its.sample_ranks(global_ranks, N_ITEMS, SAMPLE_SIZE, rng=rng)
        tables.append(estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators, targets=targets, cache=cache,
                                    interval=LEVEL, warn=False))
    shape = (repeats, len(estimators), len(targets))
    return {c: np.stack([t[c].to_numpy() for t in tables]).reshape(shape) for c in ("estimate", "se", "lower",
                                                                                   "upper")}


def _weights(targets, n_items=N_ITEMS):
    ranks = np.arange(1, n_items + 1)
    return np.column_stack([rank_weight(m, ranks, n_items, k) for m, k in targets])


# ----------------------------------------------------------------------------- coverage


@pytest.mark.slow
def test_linear_corrections_cover_their_expectation_at_the_nominal_level():
    estimators = [Estimator("sampled"), Estimator("rank_estimate"), Estimator("cls", {"prior": TRUE_P}),
                  Estimator("bv", {"prior": TRUE_P, "gamma": 0.1}), Estimator("mn", {"prior": TRUE_P})]
    repeats = 600
    runs = _population_draws(estimators, LINEAR_TARGETS, repeats, seed=0)
    # E[θ̂] = Σ_R P(R) Σ_r P(r | R) M̂(r), from each estimator's correction M̂
    sampled_pmf = TRUE_P @ rank_kernel(N_ITEMS, SAMPLE_SIZE)
    table = estimate_many(np.arange(1, SAMPLE_SIZE + 1), N_ITEMS, SAMPLE_SIZE, estimators,
                          targets=LINEAR_TARGETS, warn=False)
    corrected = np.stack([influence_values(np.arange(1, SAMPLE_SIZE + 1), N_ITEMS, SAMPLE_SIZE, e,
                                           targets=LINEAR_TARGETS) for e in estimators])
    np.testing.assert_allclose(corrected.mean(axis=1), table["estimate"].to_numpy().reshape(5, 4), atol=1e-12)
    expectation = np.einsum("r,erm->em", sampled_pmf, corrected)
    covered = (runs["lower"] <= expectation) & (expectation <= runs["upper"])
    lo, hi = _coverage_band(repeats)
    assert np.all((covered.mean(axis=0) >= lo) & (covered.mean(axis=0) <= hi)), covered.mean(axis=0)
    # with the true prior, CLS, BV and MN are unbiased for the population metric
    np.testing.assert_allclose(expectation[2:], np.tile(TRUE_P @ _weights(LINEAR_TARGETS), (3, 1)), atol=1e-9)
    # the sampled metric is not: its interval never covers the global Recall@10
    population = TRUE_P @ _weights(LINEAR_TARGETS)
    assert not ((runs["lower"][:, 0, 0] <= population[0]) & (population[0] <= runs["upper"][:, 0, 0])).any()


@pytest.mark.slow
def test_fitted_estimators_delta_method_matches_monte_carlo():
    targets = [("recall", 50), ("ndcg", 50)]
    estimators = [Estimator("mle"), Estimator("wmle"), Estimator("mes", {"eta_scale": "code"}),
                  Estimator("bv_mle"), Estimator("mn_mes", {"eta_scale": "code"})]
    repeats = 150
    runs = _population_draws(estimators, targets, repeats, seed=1)
    ratio = runs["estimate"].std(axis=0, ddof=1) / runs["se"].mean(axis=0)
    assert np.all(np.abs(ratio - 1) < 0.2), ratio
    mean = runs["estimate"].mean(axis=0)
    covered = (runs["lower"] <= mean) & (mean <= runs["upper"])
    lo, hi = _coverage_band(repeats)
    assert np.all((covered.mean(axis=0) >= lo - 0.02) & (covered.mean(axis=0) <= hi)), covered.mean(axis=0)


def test_unbiased_estimator_covers_the_exact_value_of_fixed_users_at_least_nominally():
    rng = np.random.default_rng(2)
    global_ranks = rng.choice(np.arange(1, N_ITEMS + 1), size=N_USERS, p=TRUE_P)
    exact = its.global_metrics(global_ranks, N_ITEMS, "auc", [None])["value"].item()
    lower, upper, estimates = [], [], []
    repeats = 300
    for _ in range(repeats):
        sampled = its.sample_ranks(global_ranks, N_ITEMS, SAMPLE_SIZE, rng=rng)
        row = estimate(sampled, N_ITEMS, SAMPLE_SIZE, "sampled", "auc", None, interval=LEVEL).iloc[0]
        lower.append(row["lower"]), upper.append(row["upper"]), estimates.append(row["estimate"])
    assert np.mean(estimates) == pytest.approx(exact, abs=3 * np.std(estimates) / np.sqrt(repeats))
    coverage = np.mean((np.array(lower) <= exact) & (exact <= np.array(upper)))
    assert coverage >= _coverage_band(repeats)[0], coverage


# ----------------------------------------------------------------------------- influence values


def _users_with_groups(n_users=3000, seed=3):
    rng = np.random.default_rng(seed)
    n_items = rng.integers(250, N_ITEMS + 1, size=n_users)
    global_ranks = np.minimum(rng.choice(np.arange(1, N_ITEMS + 1), size=n_users, p=TRUE_P), n_items)
    return global_ranks, n_items, rng


@pytest.mark.parametrize(
    ("method", "options", "scheme"),
    [
        ("rank_estimate", {}, "binomial"),
        ("cls", {}, "binomial"),
        ("bv", {"gamma": 0.1}, "hypergeometric"),
        ("mn", {}, "binomial"),
        ("mle", {"max_iter": 30}, "hypergeometric"),
        ("wmle", {"weight": "ap", "c": 5.0}, "binomial"),
        ("mes", {"eta_scale": "code"}, "binomial"),
        ("bv_mle", {"gamma": 0.1}, "binomial"),
        ("bv_mes", {"eta": 0.01}, "hypergeometric"),
        ("mn_mle", {}, "binomial"),
        ("mn_mes", {"eta_scale": "code"}, "binomial"),
        ("adaptive_mle", {}, "binomial"),
    ],
)
def test_influence_values_are_the_derivative_of_the_estimate(method, options, scheme):
    """Replacing one user's observation by another's changes the estimate by (ψ_v − ψ_u)/M.

    The users are repeated ten times, so that the second-order remainder is ~1e-4 of the change.
    """
    global_ranks, n_items, rng = _users_with_groups()
    if method == "adaptive_mle":
        sampled, sizes = its.adaptive_sample_ranks(global_ranks, n_items, 10, 80, rng=rng)
    else:
        sampled, sizes = its.sample_ranks(global_ranks, n_items, SAMPLE_SIZE, rng=rng, scheme=scheme), SAMPLE_SIZE
    ranks, n_items = np.tile(sampled, 10), np.tile(n_items, 10)
    sizes = np.tile(sizes, 10) if np.ndim(sizes) else sizes
    targets = [("recall", 10), ("ndcg", 20), ("ap", None)]
    estimator = Estimator(method, options)
    kwargs = dict(targets=targets, scheme=scheme, warn=False)
    base = estimate_many(ranks, n_items, sizes, [estimator], **kwargs)["estimate"].to_numpy()
    psi = influence_values(ranks, n_items, sizes, estimator, targets=targets, scheme=scheme)
    assert psi.shape == (ranks.size, 3)
    groups = CandidateGroups.build(n_items, ranks.size).index
    for u in (0, 7, 123):
        v = np.flatnonzero((groups == groups[u]) & (ranks != ranks[u]))[5]
        moved = ranks.copy()
        moved[u] = ranks[v]
        moved_sizes = sizes
        if np.ndim(sizes):
            moved_sizes = sizes.copy()
            moved_sizes[u] = sizes[v]
        change = estimate_many(moved, n_items, moved_sizes, [estimator], **kwargs)["estimate"].to_numpy() - base
        np.testing.assert_allclose(change * ranks.size, psi[v] - psi[u], rtol=2e-3, atol=1e-4 * np.abs(psi).max())


def test_linear_influence_is_the_corrected_metric_and_se_is_the_grouped_clt():
    global_ranks, n_items, rng = _users_with_groups(seed=4)
    sampled = its.sample_ranks(global_ranks, n_items, SAMPLE_SIZE, rng=rng)
    table = estimate(sampled, n_items, SAMPLE_SIZE, "bv", ["recall", "ndcg"], [10], interval=0.95, n_groups=5)
    psi = influence_values(sampled, n_items, SAMPLE_SIZE, Estimator("bv"), ["recall", "ndcg"], [10], n_groups=5)
    np.testing.assert_allclose(psi.mean(axis=0), table["estimate"], rtol=1e-12)
    groups = CandidateGroups.build(n_items, sampled.size, 5).index
    frame = pd.DataFrame(psi).assign(g=groups)
    within = (frame.drop(columns="g") - frame.groupby("g").transform("mean")).pow(2).sum().to_numpy()
    se = np.sqrt(within / (sampled.size * (sampled.size - 5)))
    np.testing.assert_allclose(table["se"], se, rtol=1e-10)
    np.testing.assert_allclose(table["upper"] - table["estimate"], 1.959963984540054 * se, rtol=1e-10)
    np.testing.assert_allclose(table["estimate"] - table["lower"], 1.959963984540054 * se, rtol=1e-10)


# ----------------------------------------------------------------------------- bootstrap


def _one_sample(seed=5, n_users=N_USERS):
    rng = np.random.default_rng(seed)
    global_ranks = rng.choice(np.arange(1, N_ITEMS + 1), size=n_users, p=TRUE_P)
    return its.sample_ranks(global_ranks, N_ITEMS, SAMPLE_SIZE, rng=rng)


def test_bootstrap_agrees_with_the_analytic_interval_and_is_reproducible():
    sampled = _one_sample()
    estimators = [Estimator("bv"), Estimator("mle"), Estimator("mn_mes", {"eta_scale": "code"})]
    targets = [("recall", 50), ("ndcg", 50)]
    kwargs = dict(targets=targets, warn=False, interval=0.9)
    analytic = estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators, **kwargs)
    boot = estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators, **kwargs, interval_method="bootstrap",
                         n_bootstrap=400, seed=7)
    pd.testing.assert_frame_equal(boot[["estimator", "metric", "k", "estimate"]],
                                  analytic[["estimator", "metric", "k", "estimate"]])
    np.testing.assert_allclose(boot["se"], analytic["se"], rtol=0.15)
    assert (boot["lower"] < boot["estimate"]).all() and (boot["estimate"] < boot["upper"]).all()
    again = estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators[:1], **kwargs, interval_method="bootstrap",
                          n_bootstrap=20, seed=np.random.default_rng(7))
    same = estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators[:1], **kwargs, interval_method="bootstrap",
                         n_bootstrap=20, seed=7)
    other = estimate_many(sampled, N_ITEMS, SAMPLE_SIZE, estimators[:1], **kwargs, interval_method="bootstrap",
                          n_bootstrap=20, seed=8)
    pd.testing.assert_frame_equal(again, same)
    assert not np.array_equal(same["se"], other["se"])


def test_bootstrap_keeps_the_groups_of_users_by_candidates():
    global_ranks, n_items, rng = _users_with_groups(n_users=1000, seed=6)
    sampled = its.sample_ranks(global_ranks, n_items, SAMPLE_SIZE, rng=rng)
    kwargs = dict(metrics="recall", ks=[10], interval=0.9, n_groups=4)
    analytic = estimate(sampled, n_items, SAMPLE_SIZE, "mn", **kwargs)
    boot = estimate(sampled, n_items, SAMPLE_SIZE, "mn", **kwargs, interval_method="bootstrap", n_bootstrap=300)
    assert boot["se"].item() == pytest.approx(analytic["se"].item(), rel=0.15)


# ----------------------------------------------------------------------------- tables and options


def test_clip_clips_the_bounds_too():
    sampled = _one_sample(n_users=40)
    raw = estimate(sampled, N_ITEMS, SAMPLE_SIZE, "bv", "recall", [1, 10], interval=0.99, gamma=0.001)
    assert (raw["lower"] < 0).any()
    clipped = estimate(sampled, N_ITEMS, SAMPLE_SIZE, "bv", "recall", [1, 10], interval=0.99, gamma=0.001,
                       clip=True)
    assert clipped[["estimate", "lower", "upper"]].to_numpy().min() >= 0
    assert clipped[["estimate", "lower", "upper"]].to_numpy().max() <= 1
    assert list(clipped.columns) == ["metric", "k", "estimate", "se", "lower", "upper"]


def test_interval_coverage_counts_covered_repeats_and_widths():
    table = pd.DataFrame({
        "estimator": ["a"] * 4 + ["b"] * 2, "metric": "recall", "k": pd.array([10] * 6, dtype="Int64"),
        "lower": [0.1, 0.2, 0.3, 0.0, 0.1, 0.25], "upper": [0.3, 0.4, 0.5, 0.2, 0.3, 0.35],
        "exact": [0.25] * 6,
    })
    got = interval_coverage(table)
    assert got[["estimator", "repeats"]].values.tolist() == [["a", 4], ["b", 2]]
    np.testing.assert_allclose(got["coverage"], [0.5, 1.0])
    np.testing.assert_allclose(got["mean_width"], [0.2, 0.15])
    with pytest.raises(ValueError, match="lacks the column"):
        interval_coverage(table.drop(columns="exact"))


def test_engine_records_intervals_and_their_coverage():
    global_ranks, n_items, _ = _users_with_groups(n_users=600, seed=8)
    args = dict(estimators=[Estimator("bv"), Estimator("mle")], targets=[("recall", 10), ("auc", None)],
                sample_sizes=[SAMPLE_SIZE], seed=1, labels={"dataset": "d", "model": "m", "protocol": "unseen"},
                repeats=3, n_groups=4)
    table = repeat_estimates(global_ranks, n_items, interval=0.8, **args)
    assert list(table.columns[table.columns.get_loc("estimate"):]) == ["estimate", "level", "se", "lower",
                                                                       "upper", "exact"]
    plain = repeat_estimates(global_ranks, n_items, **args)
    np.testing.assert_array_equal(table["estimate"], plain["estimate"])
    coverage = interval_coverage(table)
    assert len(coverage) == 4 and (coverage["repeats"] == 3).all() and (coverage["level"] == 0.8).all()
    boot = repeat_estimates(global_ranks, n_items, interval=0.8, interval_method="bootstrap",
                            **{**args, "repeats": 1, "estimators": [Estimator("bv")]})
    assert (boot["lower"] < boot["upper"]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"interval": 1.0}, "strictly between 0 and 1"),
        ({"interval": 0}, "strictly between 0 and 1"),
        ({"interval": True}, "strictly between 0 and 1"),
        ({"interval": "0.95"}, "strictly between 0 and 1"),
        ({"interval": 0.9, "interval_method": "jackknife"}, "unknown interval_method"),
        ({"interval_method": "bootstrap"}, "interval_method applies only with an interval"),
        ({"n_bootstrap": 10, "seed": 1}, "n_bootstrap and seed apply only with an interval"),
        ({"interval": 0.9, "n_bootstrap": 10}, "only with interval_method='bootstrap'"),
        ({"interval": 0.9, "interval_method": "bootstrap", "n_bootstrap": 1}, "at least 2"),
        ({"interval": 0.9, "interval_method": "bootstrap", "seed": -1}, "rng must be"),
    ],
)
def test_bad_interval_options_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        estimate([1, 2, 3], 100, 10, "mle", **kwargs)


def test_an_interval_needs_more_users_than_groups():
    with pytest.raises(ValueError, match="more users"):
        estimate([1, 2], [50, 60], 10, "bv", interval=0.9)


@pytest.mark.parametrize("method, n_items, sizes", [("mle", N_ITEMS, SAMPLE_SIZE), ("wmle", N_ITEMS, SAMPLE_SIZE),
                                                    ("mle", "per_user", SAMPLE_SIZE), ("adaptive_mle", N_ITEMS, "per_user")])
def test_the_differentiated_em_steps_are_those_of_the_estimate(method, n_items, sizes):
    """The analytic interval differentiates the EM steps that the estimate ran: the traced fit's
    weights are the estimate's P̂(R), to the bit, also with per-user N_u and n_u."""
    from itemsampling.distributions import check_sampled_ranks, em_fits_of_checked
    from itemsampling.estimators import rank_distribution

    ranks = _one_sample(n_users=300)
    rng = np.random.default_rng(3)
    n_items = rng.integers(N_ITEMS // 2, N_ITEMS, size=ranks.size) if n_items == "per_user" else n_items
    sizes = np.maximum(ranks, rng.integers(2, SAMPLE_SIZE + 1, size=ranks.size)) if sizes == "per_user" else sizes
    fitted = rank_distribution(ranks, n_items, sizes, method)
    checked = check_sampled_ranks(ranks, n_items, sizes, 20, method == "adaptive_mle")
    trace = em_fits_of_checked(checked, [(method, {})], "binomial", KernelCache.for_one_call(sizes), record=True)[0]
    assert np.array_equal(trace.result.weights, fitted)
    assert len(trace.result.steps) == trace.result.n_iter


def test_an_analytic_interval_differentiates_the_fit_it_reports_without_fitting_again(monkeypatch):
    """One EM run per fit of P̂(R) (mle and bv_mle share it): the interval reads its recorded steps."""
    from itemsampling import distributions

    runs = []
    real = distributions.em_mixture_weights_many
    monkeypatch.setattr(distributions, "em_mixture_weights_many",
                        lambda kernel, problems, **kw: runs.append(len(problems)) or real(kernel, problems, **kw))
    ranks = _one_sample(n_users=300)
    table = estimate_many(ranks, N_ITEMS, SAMPLE_SIZE, [Estimator("mle"), Estimator("bv_mle"), Estimator("wmle")],
                          "recall", [5, 10], interval=0.95)
    assert runs == [2]  # one pass of the EM loop for mle and wmle, recorded
    plain = estimate_many(ranks, N_ITEMS, SAMPLE_SIZE, [Estimator("mle"), Estimator("bv_mle"), Estimator("wmle")],
                          "recall", [5, 10])
    assert np.array_equal(table["estimate"], plain["estimate"])


def test_bootstrap_refits_take_the_checked_ranks_without_checking_them_again(monkeypatch):
    """Check once, then trust: one call checks its sampled ranks once, however many refits its
    bootstrap runs, and a refit keeps each resampled user's N_g (groups of equal N_g merged)."""
    from itemsampling import distributions

    calls = []
    check = distributions.check_sampled_ranks
    monkeypatch.setattr(distributions, "check_sampled_ranks", lambda *a, **k: calls.append(1) or check(*a, **k))
    ranks = its.sample_ranks(np.arange(1, 401).repeat(3), 400, 40, rng=1)
    n_items = np.where(np.arange(ranks.size) % 3 == 0, 400, 390)
    estimate(ranks, n_items, 40, "mle", metrics="recall", ks=[10], interval=0.9, interval_method="bootstrap",
             n_bootstrap=7)
    assert len(calls) == 1
    groups = CandidateGroups.build(n_items, ranks.size, None)
    users = np.array([0, 0, 3, 1])
    resampled = groups.of_users(users)
    np.testing.assert_array_equal(resampled.n_items[resampled.index], n_items[users])
    rebuilt = CandidateGroups.build(n_items[users], users.size, None)
    for a, b in zip((resampled.index, resampled.n_items, resampled.n_users),
                    (rebuilt.index, rebuilt.n_items, rebuilt.n_users), strict=True):
        np.testing.assert_array_equal(a, b)
