"""The sensitivity step of notebook 06 (rule adaptive_sensitivity): the AAAI'23 sampler's law by
Monte Carlo, the errors of a draw against a hand computation, EM run to convergence, the rank
shape against simulation, and the tables of a tiny run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from itemsampling.estimators import estimate_many, rank_distribution
from itemsampling.simulation import sample_ranks
from itemsampling_study import adaptive_sensitivity as sens

CONFIG = {"datasets": {"tiny": ["m1", "m2"]}, "pairs": {"tiny": ["m1"]}, "protocol": "all", "scheme": "binomial",
          "metrics": ["recall", "ndcg"], "max_k": 10, "n0": 10, "n_max": {"tiny": 80},
          "fixed_sample_size": {"tiny": 40}, "blind_spot_sample_size": 10, "n_item_groups": 2, "repeats": 2,
          "em_steps": [5, 50], "converged": {"max_iter": 3000, "tol": 1e-9}, "n0_grid": [5, 10],
          "n_max_grid": [40, 80], "n0_convention": 10, "n_max_convention": 80, "convention_em_steps": [50]}


def test_config_merges_the_section_settings_and_checks_pairs():
    section = {"sensitivity": {"pairs": {"d": ["m"]}}, "datasets": {"d": ["m"]}, "protocol": "all",
               "scheme": "binomial", "metrics": ["recall"], "max_k": 5, "n0": 10, "n_max": {"d": 80},
               "fixed_sample_size": {"d": 40}, "blind_spot_sample_size": 10, "n_item_groups": 2, "live": {}}
    out = sens.study_config({"adaptive_sampling": section})
    assert out["pairs"] == {"d": ["m"]} and out["n_max"] == {"d": 80} and "live" not in out
    assert sens.chunks(CONFIG) == []
    assert sens.sample_sizes(CONFIG) == {("tiny", "all"): 81}  # the authors' sets hold n_max_convention + 1
    with pytest.raises(ValueError, match="not studied"):
        sens.chunks({**CONFIG, "pairs": {"tiny": ["m3"]}})
    with pytest.raises(ValueError, match="binomial"):
        sens.chunks({**CONFIG, "scheme": "hypergeometric"})


def test_negatives_sampler_doubles_the_drawn_items_with_the_law_of_algorithm_1():
    """With θ = (R-1)/(N-1), a user passes the level of d drawn items with probability (1-θ)^d, and
    stops with r > 1 unless it reached n_max (Monte Carlo, 4 standard errors)."""
    users, R, N, n0, n_max = 200_000, 21, 1001, 10, 80
    ranks, drawn = sens.negatives_sample_ranks(np.full(users, R), N, n0, n_max, np.random.default_rng(1))
    theta = (R - 1) / (N - 1)
    assert set(np.unique(drawn)) <= {10, 20, 40, 80}
    for d in (10, 20, 40):
        p = (1 - theta) ** d  # no hit among the first d draws
        share = np.mean(drawn > d)
        assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / users), d
    assert (ranks[drawn < n_max] > 1).all()
    # at the last level, the rank counts hits among its 40 new draws: P(r = 1 | drawn = 80) = (1-θ)^40
    last = ranks[drawn == n_max]
    p = (1 - theta) ** 40
    assert abs(np.mean(last == 1) - p) < 4 * np.sqrt(p * (1 - p) / last.size)


def test_draw_errors_match_a_hand_computation():
    targets = [("recall", 1), ("recall", 2), ("ndcg", 1), ("ndcg", 2)]
    exact = np.array([0.1, 0.2, 0.1, 0.0])  # ndcg@2 exact 0: left out
    table = pd.DataFrame({"estimator": ["a"] * 4 + ["b"] * 4, "metric": ["recall", "recall", "ndcg", "ndcg"] * 2,
                          "k": [1, 2, 1, 2] * 2, "estimate": [0.15, 0.1, 0.05, 0.3, 0.1, 0.2, 0.1, 0.0]})
    out = sens.draw_errors(table, exact, targets, max_k=2).set_index(["estimator", "metric"])
    assert out.loc[("a", "recall"), "k1"] == pytest.approx(0.5)
    assert out.loc[("a", "recall"), "average"] == pytest.approx((0.5 + 0.5) / 2)
    assert out.loc[("a", "ndcg"), "average"] == pytest.approx(0.5)  # only K = 1
    assert out.loc[("b", "recall"), "average"] == pytest.approx(0.0)


def _log_likelihood(p, sampled, N, n):
    """Σ_u log Σ_R P(R) Bin(r_u - 1; n - 1, (R - 1)/(N - 1)): the likelihood of AAAI'21 eq. 19, by scipy."""
    R = np.arange(1, p.size + 1)
    kernel = binom.pmf(np.asarray(sampled)[:, None] - 1, n - 1, (R[None, :] - 1) / (N - 1))
    return float(np.log(kernel @ p).sum())


def test_em_steps_estimators_run_exactly_or_to_convergence(fake_ranks):
    """Labels and options; more EM steps never lower the likelihood (EM is monotone), the run to
    convergence reaches the highest, and the number of steps changes the estimates."""
    frame = fake_ranks(400, 300, 20.0, seed=2)
    R, N = frame["rank"].to_numpy(), 300
    sampled = sample_ranks(np.minimum(R, N), N, 20, rng=0)
    estimators = sens.em_steps_estimators("mle", [5, 50], {"max_iter": 20000, "tol": 1e-9})
    assert [e.label for e in estimators] == ["5", "50", sens.CONVERGED]
    assert estimators[0].options == {"max_iter": 5, "tol": 0.0}
    assert estimators[2].options == {"max_iter": 20000, "tol": 1e-9}
    fits = [rank_distribution(sampled, N, 20, "mle", **e.options) for e in estimators]
    likelihoods = [_log_likelihood(p, sampled, N, 20) for p in fits]
    assert likelihoods[0] < likelihoods[1] <= likelihoods[2] + 1e-9
    out = estimate_many(sampled, N, 20, estimators, targets=[("recall", 1), ("recall", 10)], warn=False)
    wide = out.pivot(index="k", columns="estimator", values="estimate")
    assert not np.allclose(wide["5"], wide["50"])
    assert wide.loc[1, "5"] == pytest.approx(fits[0][0])  # Recall@1 = P(R = 1) of the 5-step fit


def test_rank_shape_matches_simulated_shares(fake_ranks):
    frame = fake_ranks(3000, 500, 15.0, seed=4)
    R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
    shape = sens.rank_shape(R, N, n_blind=20, n_fixed=50, n_max=200)
    assert shape["recall_at_1"] == pytest.approx(np.mean(R == 1))
    rng = np.random.default_rng(0)
    for n, key in ((20, "first_at_blind"), (50, "first_at_fixed"), (200, "first_at_n_max")):
        simulated = np.mean([np.mean(sample_ranks(R, N, n, rng=rng) == 1) for _ in range(20)])
        assert simulated == pytest.approx(shape[key], abs=4 * np.sqrt(shape[key] / (20 * R.size)) + 1e-3), key
    assert shape["rank1_of_first"] == pytest.approx(shape["recall_at_1"] / shape["first_at_blind"])
    assert shape["fixed_fraction"] == pytest.approx(50 / N.mean())


def test_tiny_study_tables(tiny_results):
    path = tiny_results / "results" / "ranks" / "tiny" / "m1" / "all.parquet"
    frame = pd.read_parquet(path)
    frame.assign(rank=frame["rank"] - 1).to_parquet(path)  # some users at R = 1: an exact Recall@1 above 0
    tables = sens.study_tables(CONFIG, 3, None, tiny_results)
    assert set(tables) == set(sens.SENSITIVITY_TABLES)
    em = tables["sensitivity_em_steps"]
    assert set(em["em_steps"]) == {"5", "50", sens.CONVERGED}
    assert set(zip(em["sampling"], em["sample_size"], strict=True)) == {("fixed", 10), ("fixed", 40), ("adaptive", 80)}
    assert (em["repeats"] == 2).all() and set(em["model"]) == {"m1"}
    sizes = tables["sensitivity_sizes"]
    assert set(zip(sizes["n0"], sizes["n_max"], strict=True)) == {(5, 40), (5, 80), (10, 40), (10, 80)}
    conv = tables["sensitivity_convention"]
    assert set(conv["convention"]) == {"negatives", "negatives_as_size"}
    for frame, keys in ((em, ["sampling", "sample_size", "em_steps"]), (sizes, ["n0", "n_max"]),
                        (conv, ["convention", "em_steps"])):
        # Recall@1 = NDCG@1 with one held-out item: the same error at K = 1
        wide = frame.pivot(index=keys, columns="metric", values="k1_mean")
        assert wide.notna().all().all()
        np.testing.assert_allclose(wide["recall"], wide["ndcg"], rtol=1e-12)
    # a larger terminal size never gives fewer items per user (common random numbers across n_max)
    items = sizes[sizes["metric"] == "recall"].set_index(["n0", "n_max"])["items_per_user"]
    assert items[(5, 80)] >= items[(5, 40)] and items[(10, 80)] >= items[(10, 40)]
    assert list(tables["rank_shape"]["model"]) == ["m1", "m2"]
    again = sens.study_tables(CONFIG, 3, None, tiny_results)
    for name, frame in tables.items():
        pd.testing.assert_frame_equal(frame, again[name])
