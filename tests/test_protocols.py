"""Estimators for non-uniform samplers, several positives per user, small n: closed forms and
Monte Carlo checks against the exact global values."""

import warnings

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling import nonuniform as nu
from itemsampling.multi_positive import (
    estimate_multi_positive,
    multi_positive_metrics,
    multi_positive_terms,
    positions,
)
from itemsampling.positive_sampling import sample_union_ranks
from itemsampling.small_samples import (
    candidate_duplicates,
    estimator_error,
    read_ncf_negatives,
    small_sample_study,
)

N_NEG = 400  # negatives in the catalogue (the target is item N_NEG, outside them)


def _catalogue(seed=0):
    rng = np.random.default_rng(seed)
    counts = rng.zipf(1.6, N_NEG).astype(float).clip(max=5000)
    # items above the target: a mix of popular and unpopular ones (global rank R = 1 + |A|)
    above = np.zeros(N_NEG, dtype=bool)
    above[rng.choice(N_NEG, 60, replace=False)] = True
    return counts, above


def test_ht_equals_rank_estimate_eq20_under_uniform_without_replacement():
    rng = np.random.default_rng(1)
    n_items, n = 1000, 100
    global_ranks = rng.integers(1, n_items + 1, 3000)
    r = its.sample_ranks(global_ranks, n_items, n, rng=2, scheme="hypergeometric")
    above = np.arange(n - 1)[None, :] < (r - 1)[:, None]  # the r-1 negatives above the target
    pi = nu.inclusion_probabilities("uniform", n_items - 1, n - 1)[: n - 1]
    rhat = nu.horvitz_thompson_rank(above, pi)
    np.testing.assert_allclose(rhat, 1 + (n_items - 1) * (r - 1) / (n - 1))
    ours = nu.corrected_estimate(rhat, n_items, ["recall", "ndcg"], [1, 10, 50])
    theirs = its.estimate(r, n_items, n, "rank_estimate", ["recall", "ndcg"], [1, 10, 50])
    np.testing.assert_allclose(ours["estimate"], theirs["estimate"], atol=1e-12)


def _mc_mean(rhat):
    return rhat.mean(), rhat.std(ddof=1) / np.sqrt(rhat.size)


def test_hansen_hurwitz_unbiased_under_popularity_draws_with_replacement():
    counts, above = _catalogue()
    p = nu.popularity_probabilities(counts, alpha=0.8)
    draws = nu.draw_negatives(40000, 99, 3, probabilities=p)
    rhat = nu.hansen_hurwitz_rank(above[draws], p[draws])
    mean, se = _mc_mean(rhat)
    assert abs(mean - (1 + above.sum())) < 4 * se
    # the variance of the derivation: (Σ_{j above} 1/p_j - (R-1)²)/m
    var = (np.sum(1 / p[above]) - above.sum() ** 2) / 99
    assert rhat.var() == pytest.approx(var, rel=0.05)


def test_horvitz_thompson_unbiased_on_distinct_popularity_draws():
    counts, above = _catalogue(1)
    p = nu.popularity_probabilities(counts)
    m = 99
    pi = nu.inclusion_probabilities("popularity", N_NEG, m, probabilities=p, replace=True)
    draws = nu.draw_negatives(40000, m, 4, probabilities=p)
    first = np.zeros_like(draws, dtype=bool)  # each distinct item once
    order = np.sort(draws, axis=1)
    first[:, 0] = True
    first[:, 1:] = order[:, 1:] != order[:, :-1]
    rhat = nu.horvitz_thompson_rank(above[order] & first, pi[order])
    mean, se = _mc_mean(rhat)
    assert abs(mean - (1 + above.sum())) < 4 * se


def test_horvitz_thompson_unbiased_under_stratified_sampling():
    counts, above = _catalogue(2)
    stratum, per = nu.stratified_allocation(counts, 4, 40)
    pi = nu.inclusion_probabilities("stratified", N_NEG, 40, stratum=stratum, per_stratum=per)
    assert pi.sum() == pytest.approx(40)
    draws = nu.draw_negatives(20000, 40, 5, stratum=stratum, per_stratum=per)
    assert all(len(set(row)) == 40 for row in draws[:50])
    rhat = nu.horvitz_thompson_rank(above[draws], pi[draws])
    mean, se = _mc_mean(rhat)
    assert abs(mean - (1 + above.sum())) < 4 * se


def test_corrected_auc_is_unbiased_and_recall_plugin_bias_is_measured():
    """AUC is linear in R, so M(R̂) averages to M(R); recall@10 at R̂ does not (Jensen)."""
    counts, _ = _catalogue(3)
    rng = np.random.default_rng(6)
    p = nu.popularity_probabilities(counts, alpha=0.5)
    n_items, users = N_NEG + 1, 20000
    # each user: an independent set of items above its target, R_u - 1 = |A_u|
    sizes = rng.integers(0, 40, users)
    keys = rng.random((users, N_NEG))
    above_sets = keys < (sizes / N_NEG)[:, None]
    global_ranks = 1 + above_sets.sum(axis=1)
    draws = nu.draw_negatives(users, 99, 7, probabilities=p)
    rhat = nu.hansen_hurwitz_rank(np.take_along_axis(above_sets, draws, 1), p[draws])
    exact = its.global_metrics(global_ranks, n_items, ["auc", "recall"], [None, 10])
    with warnings.catch_warnings():  # the R̂ > N counted at N + 1 (weight 0): added back below
        warnings.simplefilter("ignore")
        est = nu.corrected_estimate(rhat, n_items, ["auc", "recall"], [None, 10], interval=0.95)
    beyond = np.mean(np.maximum(np.floor(rhat) - n_items, 0)) / (n_items - 1)
    auc = est.query("metric == 'auc' and k.isna()")
    auc_exact = exact.query("metric == 'auc' and k.isna()")["value"].iloc[0]
    # floor(R̂) moves the mean by < 1 rank, i.e. < 1/(N-1) of AUC
    assert abs(auc["estimate"].iloc[0] - beyond - auc_exact) < 4 * auc["se"].iloc[0] + 1 / (n_items - 1)
    rec = est.query("metric == 'recall' and k == 10")["estimate"].iloc[0]
    rec_exact = exact.query("metric == 'recall' and k == 10")["value"].iloc[0]
    # the plug-in recall@10 is biased: a user with no drawn item above the target gets R̂ = 1
    assert rec - rec_exact > 0.05
    assert set(est.columns) == {"metric", "k", "estimate", "se", "lower", "upper"}


def test_popularity_draws_cannot_tell_apart_two_populations_that_uniform_draws_can():
    """docs/estimators.md, "Why a model of A_u fitted from the run itself does not rescue a cut-off
    metric": the numbers of its example, from the exact laws of the draws above each target."""
    from scipy.stats import binom

    m, users, share, k = 100, 6040, 0.1, 10
    counts = np.arange(m + 1)
    global_a = np.full(users, 2)  # one item above every target
    global_b = np.where(np.arange(users) < share * users, 1 + k, 1)  # k above one target in ten
    recall = [its.global_metrics(g, 3706, "recall", [5])["value"].iloc[0] for g in (global_a, global_b)]
    assert recall == pytest.approx([1.0, 0.9])
    assert (global_a - 1).mean() == pytest.approx((global_b - 1).mean())

    def laws(p):  # per user: P(C = c), C the number of draws above the target
        law_a = binom.pmf(counts, m, p)
        law_b = (1 - share) * (counts == 0) + share * binom.pmf(counts, m, k * p)
        return law_a, law_b

    law_a, law_b = laws(1e-5)  # popularity draws: items of p = 1e-5
    # the plug-in Recall@5: a user with a draw above gets R̂ >= 1 + 1/(m p) > 5, so it is P(C = 0)
    assert law_a[0] == pytest.approx(0.999, abs=5e-5) and law_b[0] == pytest.approx(0.999, abs=5e-5)
    assert users * law_a[1] == pytest.approx(6.03, abs=0.005)
    assert users * law_b[1] == pytest.approx(5.98, abs=0.005)
    assert users * law_a[2:].sum() == pytest.approx(0.003, abs=5e-4)
    assert users * law_b[2:].sum() == pytest.approx(0.030, abs=5e-4)
    per_user_tv = 0.5 * np.abs(law_a - law_b).sum()
    assert per_user_tv == pytest.approx(8.9e-6, abs=5e-8)
    assert users * per_user_tv <= 0.054  # TV of a product law <= the sum of the per-user TVs
    assert (1 - users * per_user_tv) / 2 >= 0.47  # the error of any test between the two

    law_a, law_b = laws(1 / 3705)  # uniform draws from N - 1 = 3,705 items
    assert users * law_a[2:].sum() == pytest.approx(2.1, abs=0.05)
    assert users * law_b[2:].sum() == pytest.approx(18.3, abs=0.05)
    affinity = np.sqrt(law_a * law_b).sum() ** users  # Bhattacharyya coefficient of the product laws
    assert 1 - affinity >= 0.99  # TV >= 1 - BC


def test_hansen_hurwitz_rank_given_the_draws_above_is_their_count_over_the_mean_probability():
    """docs/estimators.md: given C draws above the target and the set A above it,
    E[R̂ - 1] = C (R - 1)/(m θ), θ = Σ_{j∈A} p_j (Monte Carlo through the package's draws)."""
    counts, above = _catalogue(4)
    p = nu.popularity_probabilities(counts)
    m, runs = 20, 200_000
    draws = nu.draw_negatives(runs, m, 9, probabilities=p)
    hits = above[draws]
    excess = nu.hansen_hurwitz_rank(hits, p[draws]) - 1
    drawn_above = hits.sum(axis=1)
    theta = p[above].sum()
    for c in (1, 2, 3):
        sel = excess[drawn_above == c]
        assert sel.size > 1000
        mean, se = _mc_mean(sel)
        assert abs(mean - c * above.sum() / (m * theta)) < 4 * se


def test_corrected_estimate_bootstrap_interval_contains_estimate():
    rhat = np.random.default_rng(0).uniform(1, 50, 500)
    t = nu.corrected_estimate(rhat, 100, "ndcg", [10], interval=0.9, interval_method="bootstrap")
    assert t["lower"].iloc[0] <= t["estimate"].iloc[0] <= t["upper"].iloc[0]


def test_bad_probabilities_and_samplers_are_named():
    with pytest.raises(ValueError, match="sum to"):
        nu.inclusion_probabilities("popularity", 3, 2, probabilities=[0.2, 0.2, 0.2], replace=True)
    with pytest.raises(ValueError, match="no closed-form"):
        nu.inclusion_probabilities("popularity", 3, 2, probabilities=[0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="sampler must be"):
        nu.inclusion_probabilities("zipf", 3, 2)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        nu.horvitz_thompson_rank([[True]], [0.0])


# several positives per user ------------------------------------------------------------------

def _brute_force(scores, relevant, k):
    """Metrics from an explicit ranking of every item (ties: the relevant item below)."""
    order = np.lexsort((relevant, -scores))  # descending score, non-relevant first on ties
    rel = relevant[order][:k]
    hits, p = rel.sum(), relevant.sum()
    dcg = np.sum(rel / np.log2(np.arange(2, k + 2))[: rel.size])
    idcg = np.sum(1 / np.log2(np.arange(2, min(p, k) + 2)))
    return {"recall": hits / p, "ndcg": dcg / idcg, "hit": float(hits > 0),
            "calibrated_recall": hits / min(p, k)}


def test_multi_positive_metrics_match_an_explicit_ranking():
    rng = np.random.default_rng(8)
    n_items, users = 60, 30
    neg_ranks, owners, expected = [], [], []
    for u in range(users):
        scores = rng.normal(size=n_items)
        relevant = np.zeros(n_items, dtype=bool)
        relevant[rng.choice(n_items, rng.integers(1, 8), replace=False)] = True
        for i in np.flatnonzero(relevant):
            neg_ranks.append(1 + np.sum(scores[~relevant] >= scores[i]))
            owners.append(u)
        expected.append(_brute_force(scores, relevant, 5))
    table = multi_positive_metrics(neg_ranks, owners, ks=[5])
    for metric in ("recall", "ndcg", "hit", "calibrated_recall"):
        want = np.mean([e[metric] for e in expected])
        assert table.query("metric == @metric")["value"].iloc[0] == pytest.approx(want)


def test_positions_add_the_positives_above():
    np.testing.assert_array_equal(positions([3, 1, 3, 7], ["a", "a", "a", "b"]), [4, 1, 5, 7])


def test_multi_positive_estimate_full_sample_is_exact_and_rank_level_mc():
    rng = np.random.default_rng(9)
    n_items = 500
    users = np.repeat(np.arange(2000), 3)
    ranks = rng.integers(1, 80, users.size)
    exact = multi_positive_metrics(ranks, users, ks=[10, 50])
    full = estimate_multi_positive(ranks, users, n_items, n_items, ks=[10, 50], method="rank_estimate")
    np.testing.assert_allclose(full["estimate"], exact["value"])
    # negatives per positive, uniform with replacement: R̂ is unbiased per positive, so the
    # estimate at large n is close to the exact metric and the naive one is far above it
    r = its.sample_ranks(ranks, n_items, 250, rng=10)
    est = estimate_multi_positive(r, users, n_items, 250, ks=[50], method="rank_estimate", scheme="binomial")
    ex = exact.query("k == 50").set_index("metric")["value"]
    naive = multi_positive_metrics(r, users, ks=[50]).set_index("metric")["value"]
    got = est.set_index("metric")["estimate"]
    assert np.all(np.abs(got - ex) < 0.05)
    assert naive["recall"] - ex["recall"] > 0.2


@pytest.mark.parametrize("method", ["rank_estimate", "bv", "mn", "mle", "mes", "mn_mes", "bv_mle"])
def test_multi_positive_estimate_with_one_positive_each_is_the_one_positive_estimate(method):
    rng = np.random.default_rng(21)
    n_items, n = 400, 40
    r = its.sample_ranks(rng.integers(1, 150, 1500), n_items, n, rng=22, scheme="hypergeometric")
    got = estimate_multi_positive(r, np.arange(r.size), n_items, n, ["recall", "ndcg", "hit"], [1, 5, 20],
                                  method=method).set_index(["metric", "k"])["estimate"]
    want = its.estimate(r, n_items, n, method, metrics=["recall", "ndcg"], ks=[1, 5, 20],
                        scheme="hypergeometric").set_index(["metric", "k"])["estimate"]
    for metric, k in got.index:
        np.testing.assert_allclose(got[(metric, k)], want[("recall" if metric == "hit" else metric, k)],
                                   rtol=1e-10, atol=1e-12)


def _positives(seed, n_users=300, n_items=300, n=30):
    rng = np.random.default_rng(seed)
    p_u = rng.integers(1, 5, n_users)
    users = np.repeat(np.arange(n_users), p_u)
    global_ranks = rng.integers(1, 120, users.size)
    return users, global_ranks, its.sample_ranks(global_ranks, n_items, n, rng=seed + 1, scheme="hypergeometric")


def _shifts(r, users):
    return (positions(r, users) - r).astype(int)


def test_multi_positive_estimate_of_a_fixed_correction_sums_one_positive_corrections():
    """BV with its uniform prior corrects each positive on its own: the estimate is the mean over
    users of a_u Σ_i M̂_{K - j_i}(r_i), each term the one-positive estimate of recall@(K - j_i)."""
    n_items, n, k = 300, 30, 6
    users, _, r = _positives(5, n_users=60)
    shift = _shifts(r, users)
    terms = np.zeros(r.size)
    for i in range(r.size):
        if shift[i] < k:
            with warnings.catch_warnings():  # one user's correction may lie outside [0, 1]
                warnings.simplefilter("ignore", its.ImpossibleEstimateWarning)
                terms[i] = its.estimate([r[i]], n_items, n, "bv", metrics="recall", ks=[k - shift[i]],
                                        scheme="hypergeometric")["estimate"].iloc[0]
    p_u = np.bincount(users)
    want_recall = np.mean(np.bincount(users, weights=terms) / p_u)
    want_hit = np.mean(np.bincount(users, weights=np.where(shift == 0, terms, 0.0)))
    got = estimate_multi_positive(r, users, n_items, n, ["recall", "hit"], [k], method="bv").set_index("metric")
    np.testing.assert_allclose(got.loc["recall", "estimate"], want_recall, rtol=1e-10)
    np.testing.assert_allclose(got.loc["hit", "estimate"], want_hit, rtol=1e-10)


def test_multi_positive_mle_estimate_is_the_expected_metric_under_the_fitted_distribution():
    """MLE: Σ_u a_u Σ_i Σ_R P̂(R) f_i(R), written out with P̂ from its.rank_distribution."""
    n_items, n, k = 300, 30, 8
    users, _, r = _positives(7)
    p_hat = its.rank_distribution(r, n_items, n, "mle", scheme="hypergeometric")
    ranks = np.arange(1, n_items + 1)
    shift = _shifts(r, users)
    p_u = np.bincount(users)
    ideal = np.cumsum(1 / np.log2(np.arange(2, k + 2)))[np.minimum(p_u, k) - 1]
    dcg = np.array([p_hat @ np.where(ranks + j <= k, 1 / np.log2(ranks + j + 1), 0.0) for j in shift])
    hits = np.array([p_hat[: max(k - j, 0)].sum() for j in shift])
    want = {"ndcg": np.mean(np.bincount(users, weights=dcg) / ideal),
            "calibrated_recall": np.mean(np.bincount(users, weights=hits) / np.minimum(p_u, k))}
    got = estimate_multi_positive(r, users, n_items, n, list(want), [k], method="mle").set_index("metric")
    for metric, value in want.items():
        np.testing.assert_allclose(got.loc[metric, "estimate"], value, rtol=1e-9)


def test_multi_positive_kernel_estimates_are_close_where_the_plug_in_is_far():
    """Monte Carlo over 20 draws of shared negatives (RecBole's uniN design), M = 2,000 users
    with 1 to 4 positives: MN_MES is within 0.02 of the exact metrics on average, the plug-in
    rank estimate is off by more than 0.05 somewhere."""
    from itemsampling.positive_sampling import sample_positive_ranks

    rng = np.random.default_rng(3)
    p_u = rng.integers(1, 5, 2000)
    users = np.repeat(np.arange(p_u.size), p_u)
    n_candidates = 1000 + p_u[users]
    neg_ranks = np.minimum(rng.geometric(1 / 60, users.size), 1000)
    exact = multi_positive_metrics(neg_ranks, users, ["recall", "ndcg", "hit"], [5, 10]).set_index(["metric", "k"])
    kernel, plug_in = [], []
    for seed in range(20):
        r = sample_positive_ranks(neg_ranks, users, n_candidates, p_u[users], 99, design="shared", rng=seed)
        for out, method in ((kernel, "mn_mes"), (plug_in, "rank_estimate")):
            out.append(estimate_multi_positive(r, users, 1001, 100, ["recall", "ndcg", "hit"], [5, 10],
                                               method=method).set_index(["metric", "k"])["estimate"])
    kernel_err = (pd.concat(kernel, axis=1).mean(axis=1) - exact["value"]).abs()
    plug_in_err = (pd.concat(plug_in, axis=1).mean(axis=1) - exact["value"]).abs()
    assert kernel_err.max() < 0.02, kernel_err
    assert plug_in_err.max() > 0.05, plug_in_err


def test_multi_positive_estimate_subsamples_to_the_smallest_n():
    """Positives with n = 60 and n = 30: the n = 60 ones are subsampled to 30 (exact), so the
    MLE is close to that of the same positives all sampled at n = 30."""
    users, g, r30 = _positives(11, n_users=3000)
    r60 = its.sample_ranks(g, 300, 60, rng=12, scheme="hypergeometric")
    mixed = np.where(users % 2 == 0, r60, r30)
    sizes = np.where(users % 2 == 0, 60, 30)
    a = estimate_multi_positive(mixed, users, 300, sizes, "recall", [10], method="mle")["estimate"].iloc[0]
    b = estimate_multi_positive(r30, users, 300, 30, "recall", [10], method="mle")["estimate"].iloc[0]
    exact = multi_positive_metrics(g, users, "recall", [10])["value"].iloc[0]
    assert abs(a - exact) < 0.02 and abs(b - exact) < 0.02


def test_subsampled_ranks_have_the_kernel_of_the_smaller_sample():
    rng = np.random.default_rng(2)
    global_ranks = np.full(40000, 120)
    big = its.sample_ranks(global_ranks, 300, 80, rng=3, scheme="hypergeometric")
    small, n = its.simulation.subsample_ranks(big, 80, 20, rng)
    direct = its.sample_ranks(global_ranks, 300, 20, rng=4, scheme="hypergeometric")
    assert n == 20
    pmf = its.simulation.sampled_rank_pmf(np.eye(300)[119], 300, 20, scheme="hypergeometric")
    for draws in (small, direct):
        freq = np.bincount(draws - 1, minlength=20) / draws.size
        assert np.abs(freq - pmf).max() < 0.01


def test_multi_positive_estimate_interval_is_the_users_clt():
    users, _, r = _positives(13)
    t = estimate_multi_positive(r, users, 300, 30, "recall", [10], method="rank_estimate", interval=0.9)
    assert list(t.columns) == ["metric", "k", "estimate", "se", "lower", "upper"]
    row = t.iloc[0]
    np.testing.assert_allclose(row["upper"] - row["estimate"], 1.6448536 * row["se"], rtol=1e-6)
    assert 0 < row["se"] < 0.05


# small n and duplicates ---------------------------------------------------------------------

def test_small_sample_study_reports_each_n_and_method():
    ranks = np.random.default_rng(11).integers(1, 301, 400)
    t = small_sample_study(ranks, 300, sizes=(5, 50), methods=("sampled", "rank_estimate"), k=10, repeats=3)
    assert list(t.columns) == ["n", "method", "exact", "mean", "bias", "sd", "rmse"]
    assert len(t) == 4
    naive = t.query("method == 'sampled'").set_index("n")["bias"]
    assert naive[5] > naive[50] > 0  # the naive hit ratio inflates more as n shrinks


def test_estimator_error():
    e = estimator_error([1.0, 3.0], 1.0)
    assert e == {"mean": 2.0, "bias": 1.0, "sd": pytest.approx(np.sqrt(2)), "rmse": pytest.approx(np.sqrt(2))}


def test_candidate_duplicates_and_ncf_reader(tmp_path):
    f = tmp_path / "x.test.negative"
    f.write_text("(0,5)\t1\t2\t2\n(1,7)\t7\t3\t4\n")
    items, negs = read_ncf_negatives(f)
    np.testing.assert_array_equal(items, [5, 7])
    assert candidate_duplicates(items, negs) == {
        "rows": 2, "negatives_per_row": 3, "rows_with_duplicates": 1, "duplicate_draws": 1,
        "rows_with_positive_as_negative": 1}
    assert isinstance(pd.DataFrame([candidate_duplicates(items, negs)]), pd.DataFrame)


def _long(draws, above_rows):
    users = np.repeat(np.arange(draws.shape[0]), draws.shape[1])
    return users, draws.ravel(), np.take_along_axis(above_rows, draws, 1).ravel()


def test_estimate_sampled_matches_the_array_estimators_and_checks_input():
    counts, above = _catalogue(4)
    p = nu.popularity_probabilities(counts)
    draws = nu.draw_negatives(300, 20, 12, probabilities=p)
    above_rows = np.broadcast_to(above, (300, N_NEG))
    users, neg, ab = _long(draws, above_rows)
    n_items = N_NEG + 1  # the catalogue: the negatives and the target (item N_NEG, never drawn)
    p_all = np.append(p, 0.0)
    t = nu.estimate_sampled(users, neg, ab, n_items, method="hansen_hurwitz", probabilities=p_all,
                            metrics="ndcg", ks=[10], interval=0.95)
    want = nu.corrected_estimate(nu.hansen_hurwitz_rank(above[draws], p[draws]), n_items, "ndcg", [10],
                                 interval=0.95)
    pd.testing.assert_frame_equal(t, want)
    pi = np.append(nu.inclusion_probabilities("popularity", N_NEG, 20, probabilities=p, replace=True), 0)
    with pytest.warns(UserWarning, match="duplicated draws"):
        nu.estimate_sampled(users, neg, ab, n_items, inclusion=pi, metrics="ndcg", ks=[10])
    naive = nu.estimate_sampled(users, neg, ab, n_items, method="sampled", metrics="recall", ks=[1])
    assert naive["estimate"].iloc[0] == pytest.approx(np.mean(~above[draws].any(axis=1)))
    with pytest.raises(ValueError, match="catalogue"):
        nu.estimate_sampled(users, neg + 5, ab, n_items, probabilities=p_all, method="hansen_hurwitz")
    with pytest.raises(ValueError, match="own negative"):
        nu.estimate_sampled(users, neg, ab, n_items, inclusion=pi, positives=neg)
    with pytest.raises(ValueError, match="sum to"):
        nu.estimate_sampled(users, neg, ab, n_items, method="hansen_hurwitz", probabilities=np.append(p, 0.5))


def test_multi_positive_estimate_takes_the_order_by_score():
    """Negatives per positive: the sampled ranks of a user's positives may come out of their order
    by score. Given that order, MN_MES is close to the exact recall; the sampled order pairs the
    shifts with the wrong positives and overstates it."""
    rng = np.random.default_rng(17)
    p_u = rng.integers(2, 6, 3000)
    users = np.repeat(np.arange(p_u.size), p_u)
    neg_ranks = np.minimum(rng.geometric(1 / 40, users.size), 990)
    r = its.sample_ranks(neg_ranks, 991, 100, rng=18, scheme="hypergeometric")
    order = (positions(neg_ranks, users) - neg_ranks).astype(int)
    exact = multi_positive_metrics(neg_ranks, users, "recall", 10)["value"].iloc[0]
    ordered = estimate_multi_positive(r, users, 991, 100, "recall", 10, order=order)["estimate"].iloc[0]
    unordered = estimate_multi_positive(r, users, 991, 100, "recall", 10)["estimate"].iloc[0]
    assert abs(ordered - exact) < 0.02
    assert unordered - exact > abs(ordered - exact)
    with pytest.raises(ValueError, match=r"number each user's positives 0, 1, \.\.\., P_u - 1"):
        estimate_multi_positive(r, users, 991, 100, "recall", 10, order=np.zeros(users.size, dtype=int))


def test_multi_positive_bootstrap_matches_the_clt_for_a_fixed_correction():
    """BV with its uniform prior is linear in the users' terms, so the bootstrap's sd and the CLT se
    agree; the bootstrap is seeded."""
    users, _, r = _positives(19, n_users=1500)
    args = (r, users, 300, 30, ["recall", "ndcg"], [10])
    clt = estimate_multi_positive(*args, method="bv", interval=0.9)
    boot = estimate_multi_positive(*args, method="bv", interval=0.9, interval_method="bootstrap", n_bootstrap=300)
    np.testing.assert_allclose(boot["se"], clt["se"], rtol=0.2)
    np.testing.assert_array_equal(boot["estimate"], clt["estimate"])
    assert np.all(boot["lower"] < boot["estimate"]) and np.all(boot["estimate"] < boot["upper"])
    again = estimate_multi_positive(*args, method="bv", interval=0.9, interval_method="bootstrap", n_bootstrap=300)
    pd.testing.assert_frame_equal(boot, again)


def _shared_draws(neg_ranks, users, n_negatives, per_positive, seed):
    """Negatives shared by a user's positives, drawn without replacement from its n_negatives,
    ``per_positive`` of them for each of the user's P_u positives (RecBole's uniN draws N per
    positive for all of them): each positive's sampled rank and n = 1 + the user's draws."""
    p_u = np.bincount(users)[users]
    return sample_union_ranks(neg_ranks, users, n_negatives + p_u, p_u, per_positive, replace=False, rng=seed)


def _several_positives(seed, n_users=1500, n_negatives=800):
    rng = np.random.default_rng(seed)
    p_u = rng.integers(1, 7, n_users)
    users = np.repeat(np.arange(n_users), p_u)
    return users, np.minimum(rng.geometric(1 / 50, users.size), n_negatives)


def test_posterior_mle_keeps_each_positives_n_and_is_closer_than_thinning():
    """Monte Carlo over 8 draws of negatives shared by a user's positives, 50 per positive, so n
    runs from 51 to 301 of N = 801 (RecBole's uniN on a ratio split): the posterior mean under
    the MLE of all positives at their own n is within 0.01 of the exact metrics on average, its
    root-mean-square error is below that of MN_MES on the positives brought to n = 51, and its
    90 % interval (with the fit's part) holds the exact value in at least 75 % of the cells."""
    users, neg_ranks = _several_positives(31)
    exact = multi_positive_metrics(neg_ranks, users, ["recall", "ndcg"], [5, 10]).set_index(["metric", "k"])["value"]
    own, thinned, within = [], [], []
    for seed in range(8):
        r, n = _shared_draws(neg_ranks, users, 800, 50, seed)
        assert n.min() == 51 and n.max() == 301
        table = estimate_multi_positive(r, users, 801, n, ["recall", "ndcg"], [5, 10], method="posterior_mle",
                                        interval=0.9)
        truth = exact.loc[list(zip(table["metric"], table["k"], strict=True))].to_numpy()
        own.append(table["estimate"].to_numpy() - truth)
        within.append((table["lower"].to_numpy() <= truth) & (truth <= table["upper"].to_numpy()))
        thinned.append(estimate_multi_positive(r, users, 801, n, ["recall", "ndcg"], [5, 10], method="mn_mes",
                                               seed=seed)["estimate"].to_numpy() - truth)
    own, thinned = np.array(own), np.array(thinned)
    assert np.abs(own.mean(axis=0)).max() < 0.01, own.mean(axis=0)
    assert np.sqrt((own**2).mean()) < np.sqrt((thinned**2).mean()), (own, thinned)
    assert np.mean(within) >= 0.75, np.mean(within)


def test_posterior_mle_analytic_interval_matches_the_bootstrap():
    """The analytic se of ``posterior_mle`` (users' terms plus the derivative through the EM steps
    of the fit) against the sd of 200 bootstrap refits on resampled users: within 10 %, where the
    users' terms alone (the fit held fixed) give less than half of it."""
    users, neg_ranks = _several_positives(53, n_users=800)
    r, n = _shared_draws(neg_ranks, users, 800, 20, seed=54)
    args = (r, users, 801, n, ["recall", "ndcg"], [5, 10])
    analytic = estimate_multi_positive(*args, method="posterior_mle", interval=0.9)
    boot = estimate_multi_positive(*args, method="posterior_mle", interval=0.9, interval_method="bootstrap",
                                   n_bootstrap=200)
    np.testing.assert_array_equal(analytic["estimate"], boot["estimate"])
    np.testing.assert_allclose(analytic["se"], boot["se"], rtol=0.1)
    terms = multi_positive_terms(*args, method="posterior_mle")[1]
    assert np.all(boot["se"].to_numpy() > 2 * terms.std(axis=0, ddof=1) / np.sqrt(terms.shape[0]))


def test_posterior_mle_with_one_positive_each_is_the_adaptive_mle():
    """One positive per user: at the EM's fixed point the users' mean posterior is P̂ (AAAI'21
    eq. 22), so the estimate is the adaptive MLE's Σ_R P̂(R) f(R) at the users' own n."""
    rng = np.random.default_rng(41)
    ranks = np.minimum(rng.geometric(1 / 30, 2000), 299)
    sizes = rng.integers(10, 80, ranks.size)
    r = 1 + rng.hypergeometric(ranks - 1, 300 - ranks, sizes - 1)
    got = estimate_multi_positive(r, np.arange(r.size), 300, sizes, ["recall", "ndcg"], [1, 5, 20],
                                  method="posterior_mle", max_iter=4000, tol=0.0).set_index(["metric", "k"])["estimate"]
    want = its.estimate(r, 300, sizes, "adaptive_mle", metrics=["recall", "ndcg"], ks=[1, 5, 20], scheme="hypergeometric",
                        max_iter=4001, tol=0.0).set_index(["metric", "k"])["estimate"]
    np.testing.assert_allclose(got, want.loc[got.index], rtol=1e-9)  # the posteriors' mean is P̂'s next EM step


def test_posterior_mle_matches_a_direct_em_and_posterior():
    """An independent formulation on the exact ranks: the kernel from scipy's hypergeometric pmf,
    EM written out (AAAI'23 App. G eq. 21-22), each positive's posterior mean of its shifted
    recall and NDCG terms, averaged with RecBole's user weights."""
    from scipy.stats import hypergeom

    n_negatives, k = 59, 5
    rng = np.random.default_rng(43)
    p_u = rng.integers(1, 4, 150)
    users = np.repeat(np.arange(p_u.size), p_u)
    neg_ranks = np.minimum(rng.geometric(1 / 8, users.size), n_negatives + 1)
    r, n = _shared_draws(neg_ranks, users, n_negatives, 6, seed=44)
    grid = np.arange(1, n_negatives + 2)  # R = 1..N, N = n_negatives + 1
    lik = hypergeom.pmf(r[:, None] - 1, n_negatives, grid[None, :] - 1, n[:, None] - 1)  # (P, N)
    prior = np.full(grid.size, 1.0 / grid.size)
    for _ in range(3000):
        post = prior * lik / (lik @ prior)[:, None]
        prior = post.mean(axis=0)
    post = prior * lik / (lik @ prior)[:, None]
    shift = _shifts(r, users)
    hit = grid[None, :] <= k - shift[:, None]
    recall = np.mean(np.bincount(users, weights=(post * hit).sum(axis=1)) / p_u)
    ideal = np.cumsum(1 / np.log2(np.arange(2, k + 2)))[np.minimum(p_u, k) - 1]
    gain = (post * np.where(hit, 1 / np.log2(grid[None, :] + shift[:, None] + 1), 0.0)).sum(axis=1)
    ndcg = np.mean(np.bincount(users, weights=gain) / ideal)
    got = estimate_multi_positive(r, users, n_negatives + 1, n, ["recall", "ndcg"], [k], method="posterior_mle",
                                  max_iter=3000, tol=0.0, grid="exact").set_index("metric")["estimate"]
    np.testing.assert_allclose(got[["recall", "ndcg"]], [recall, ndcg], rtol=1e-8)


def test_posterior_mle_draws_nothing_and_checks_its_options():
    users, neg_ranks = _several_positives(47, n_users=200)
    r, n = _shared_draws(neg_ranks, users, 800, 5, seed=48)
    a, b = (estimate_multi_positive(r, users, 801, n, "recall", [10], method="posterior_mle", seed=s) for s in (0, 9))
    pd.testing.assert_frame_equal(a, b)  # no subsample: the seed has nothing to draw
    with pytest.raises(ValueError, match=r"unknown option.*'eta'.*posterior_mle"):
        estimate_multi_positive(r, users, 801, n, "recall", [10], method="posterior_mle", eta=1.0)
    with pytest.raises(ValueError, match="n_groups must be"):
        estimate_multi_positive(r, users, 801, n, "recall", [10], n_groups="all")
    with pytest.raises(ValueError, match="n_groups"):
        estimate_multi_positive(r, users, 801, n, "recall", [10], n_groups=0)
