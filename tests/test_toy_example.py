import numpy as np
import pandas as pd
import pytest

from itemsampling.kernels import rank_kernel
from itemsampling.metrics import global_metrics, rank_weight
from itemsampling.simulation import expected_sampled_metric, sample_ranks
from itemsampling_study.paper import paper_table
from itemsampling_study.toy import (
    TOY_METRICS,
    TOY_N_ITEMS,
    TOY_RANKS,
    TOY_SAMPLE_SIZE,
    exact_table,
    expected_sampled_table,
    simulated_sampled_table,
)

SCHEMES = ["binomial", "hypergeometric"]
PRINTED = 0.0005  # Tables 1-2 print three decimals


def _paper(name, value):
    """A paper table as the toy tables lay it out: one row per recommender, one column per metric."""
    frame = paper_table(name)
    frame["column"] = [f"{m}@{k}" if pd.notna(k) else m for m, k in zip(frame["metric"], frame["k"], strict=True)]
    return frame.pivot(index="recommender", columns="column", values=value)


PAPER_TABLE_1 = _paper("krichene2020kdd_table1", "paper")
PAPER_MEAN, PAPER_STD = _paper("krichene2020kdd_table2", "paper_mean"), _paper("krichene2020kdd_table2", "paper_std")


def test_exact_metrics_match_table_1():
    table = exact_table()
    assert list(table.index) == ["A", "B", "C"]
    np.testing.assert_allclose(table[PAPER_TABLE_1.columns], PAPER_TABLE_1, atol=PRINTED + 1e-12)


def test_exact_table_uses_global_metrics_of_the_ranks():
    # A's ranks are all 100: AUC = (N - 100)/(N - 1), AP = 1/100, NDCG = 1/log2(101)
    row = exact_table().loc["A"]
    assert row["auc"] == pytest.approx((TOY_N_ITEMS - 100) / (TOY_N_ITEMS - 1), rel=1e-15)
    assert row["ap"] == pytest.approx(0.01, rel=1e-15)
    assert row["ndcg"] == pytest.approx(1 / np.log2(101), rel=1e-15)
    c = global_metrics(np.array(TOY_RANKS["C"]), TOY_N_ITEMS, "recall", 10)["value"].iloc[0]
    assert exact_table().loc["C", "recall@10"] == c == pytest.approx(1 / 5)


def _standard_error(scheme, reps):
    """Exact standard error of the Monte Carlo mean: Var of the per-repeat average over the five
    instances is Σ_i Var[M(r_i) | R_i] / 25, with the per-instance variances from the kernel."""
    kernel = rank_kernel(TOY_N_ITEMS, TOY_SAMPLE_SIZE, scheme)
    r = np.arange(1, TOY_SAMPLE_SIZE + 1)
    out = {}
    for name, ranks in TOY_RANKS.items():
        rows = kernel[np.array(ranks) - 1]
        out[name] = {}
        for metric, k in TOY_METRICS:
            w = rank_weight(metric, r, TOY_SAMPLE_SIZE, k)
            var = rows @ w**2 - (rows @ w) ** 2
            out[name][f"{metric}@{k}" if k else metric] = np.sqrt(var.clip(0).sum() / len(ranks) ** 2 / reps)
    return pd.DataFrame.from_dict(out, orient="index")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampled_metrics_match_monte_carlo(scheme):
    reps = 4000
    expected = expected_sampled_table(TOY_SAMPLE_SIZE, scheme)
    simulated = simulated_sampled_table(reps, TOY_SAMPLE_SIZE, rng=2020, scheme=scheme)
    se = _standard_error(scheme, reps)
    gap = (simulated["mean"] - expected).abs()
    assert (gap <= 4 * se + 1e-12).all().all(), gap / se
    # the simulated spread agrees with the exact one too
    np.testing.assert_allclose(simulated["std"] / np.sqrt(reps), se, rtol=0.1, atol=1e-5)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampled_metrics_match_table_2(scheme):
    # Table 2 is a mean over 1,000 repetitions: its printed mean lies within a few standard
    # errors (printed std / sqrt(1000)) of the exact expectation, up to rounding
    expected = expected_sampled_table(TOY_SAMPLE_SIZE, scheme)[PAPER_TABLE_1.columns]
    tolerance = 4 * PAPER_STD[PAPER_TABLE_1.columns] / np.sqrt(1000) + PRINTED + 1e-12
    assert ((expected - PAPER_MEAN[PAPER_TABLE_1.columns]).abs() <= tolerance).all().all()


def test_sampled_metrics_reverse_the_order_of_recommenders():
    # K&R §4.2: exact AP ranks C first, sampled AP ranks A first and C last
    exact = exact_table()["ap"]
    sampled = expected_sampled_table()["ap"]
    assert exact.idxmax() == "C"
    assert list(sampled.sort_values(ascending=False).index) == ["A", "B", "C"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("sample_size", [2, 10, 100, 1000, TOY_N_ITEMS])
def test_sampled_auc_is_unbiased(scheme, sample_size):
    # K&R §4.4.1: E[AUC_n(r)] = AUC_N(R) because E[r] = 1 + (n - 1)(R - 1)/(N - 1)
    for ranks in TOY_RANKS.values():
        exact = global_metrics(np.array(ranks), TOY_N_ITEMS, "auc", None)["value"].iloc[0]
        assert expected_sampled_metric(ranks, TOY_N_ITEMS, sample_size, "auc", None, scheme) == \
            pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sampled_auc_is_unbiased_by_monte_carlo(scheme):
    reps = 2000
    rng = np.random.default_rng(7)
    for ranks in TOY_RANKS.values():
        r = sample_ranks(np.tile(ranks, reps), TOY_N_ITEMS, TOY_SAMPLE_SIZE, rng, scheme).reshape(reps, -1)
        per_repeat = rank_weight("auc", r, TOY_SAMPLE_SIZE).mean(axis=1)  # AUC on the sample uses n
        exact = global_metrics(np.array(ranks), TOY_N_ITEMS, "auc", None)["value"].iloc[0]
        assert abs(per_repeat.mean() - exact) <= 4 * per_repeat.std(ddof=1) / np.sqrt(reps)


def test_expected_sampled_metric_with_full_sample_is_exact():
    # n = N without replacement: the sample is every item, so r = R
    for metric, k in TOY_METRICS:
        for ranks in TOY_RANKS.values():
            exact = global_metrics(np.array(ranks), TOY_N_ITEMS, metric, k)["value"].iloc[0]
            got = expected_sampled_metric(ranks, TOY_N_ITEMS, TOY_N_ITEMS, metric, k, "hypergeometric")
            assert got == pytest.approx(exact, abs=1e-12)
