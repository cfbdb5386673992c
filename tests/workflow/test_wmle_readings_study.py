"""The readings of WMLE (AAAI'21 eq. 22-23): itemsampling_study.wmle_readings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.estimators import Estimator, estimate_many
from itemsampling.kernels import rank_kernel
from itemsampling.metrics import rank_weight
from itemsampling.simulation import sample_ranks
from itemsampling_study import wmle_readings as wr

N, n = 300, 20
TARGETS = [("recall", 5), ("ndcg", 5), ("ap", 5)]


@pytest.fixture(scope="module")
def sampled():
    rng = np.random.default_rng(1)
    return sample_ranks(np.minimum(N, rng.geometric(0.03, 500)), N, n, rng=rng)


def _naive_em(ranks, weights_of, steps, normalise):
    """EM of eq. 23 written out on the full kernel: π ← Σ_u c_u γ_u / (Σ_u c_u if normalise else M)."""
    K = rank_kernel(N, n)
    pi = np.full(N, 1.0 / N)
    c = weights_of(ranks.astype(float))
    for _ in range(steps):
        post = pi[:, None] * K[:, ranks - 1]
        post /= post.sum(axis=0)
        pi = post @ c / (c.sum() if normalise else ranks.size)
    return pi


def _metrics(pi):
    R = np.arange(1, N + 1)
    return np.array([pi @ rank_weight(m, R, N, k) for m, k in TARGETS])


def test_the_printed_reading_and_mle_are_the_package_estimators(sampled):
    ours = wr.reading_estimates(sampled, N, n, ["mle", "as_printed"], TARGETS)
    package = estimate_many(sampled, N, n, [Estimator("mle"), Estimator("wmle")], targets=TARGETS)
    assert ours.ravel() == pytest.approx(package["estimate"].to_numpy(), rel=1e-9)


@pytest.mark.parametrize("name", ["as_printed", "ap_weight", "ceil", "times_c", "unnormalised"])
def test_each_reading_is_its_em_written_out(sampled, name):
    reading = wr.READINGS[name]
    pi = _naive_em(sampled, lambda r: reading.weight(r, n, 10.0), 100, reading.normalisation == "printed")
    (ours,) = wr.reading_estimates(sampled, N, n, [name], TARGETS)
    assert ours == pytest.approx(_metrics(pi), rel=1e-6)


def test_the_weight_sum_reading_divides_by_the_weights_of_all_sampled_ranks(sampled):
    printed, summed = wr.reading_estimates(sampled, N, n, ["as_printed", "weight_sum"], TARGETS)
    w = wr.READINGS["as_printed"].weight(np.arange(1, n + 1, dtype=float), n, 10.0)
    mass = np.mean(wr.READINGS["as_printed"].weight(sampled.astype(float), n, 10.0))
    assert summed == pytest.approx(printed * mass / w.sum(), rel=1e-12)


def test_decreasing_weights_raise_the_top_of_the_estimate(sampled):
    values = dict(zip(wr.READINGS, wr.reading_estimates(sampled, N, n, list(wr.READINGS), TARGETS), strict=True))
    for name in ("as_printed", "ap_weight", "ceil", "at_least_one", "times_c", "converged"):
        assert values[name][0] > values["mle"][0], name


def test_power_ranks_have_the_recall_they_are_made_with():
    ranks = wr.power_ranks(0.3, 10, 3000, 200_000, np.random.default_rng(0))
    share = np.mean(ranks <= 10)
    assert abs(share - 0.3) < 4 * np.sqrt(0.3 * 0.7 / ranks.size)
    assert ranks.min() >= 1 and ranks.max() <= 3000
    with pytest.raises(ValueError):
        wr.power_ranks(1.2, 10, 3000, 10, np.random.default_rng(0))


def test_the_paper_gap_is_read_from_its_table():
    gaps = wr.paper_gaps(["ml-1m"]).set_index(["model", "metric"])["paper_gap"]
    assert gaps["ease", "recall"] == pytest.approx((36.30 - 35.33) / 34.77)
    assert len(gaps) == 15


def test_the_summary_holds_our_gap_next_to_the_papers():
    rows = [{"source": "ranks", "dataset": "ml-1m", "model": m, "reading": r, "metric": x, "k": 10, "level": 0.1,
             "exact": 0.1, "mean": 0.1, "std": 0.01, "repeats": 3, "mle_mean": 0.1, "gap": g}
            for m in ("ease", "multivae", "neumf", "itemknn", "ials") for x in ("recall", "ndcg", "ap")
            for r, g in (("mle", 0.0), ("as_printed", 0.5))]
    summary = wr.reading_summary(pd.DataFrame(rows)).set_index("reading")
    assert list(summary.index) == ["as_printed"]
    assert summary.loc["as_printed", "gap"] == pytest.approx(0.5)
    assert summary.loc["as_printed", "ratio"] == pytest.approx(0.5 / wr.paper_gaps(["ml-1m"])["paper_gap"].mean())
    with pytest.raises(ValueError, match="no partner"):  # a model of the paper missing from ours
        wr.reading_summary(pd.DataFrame([r for r in rows if r["model"] != "ials"]))


def test_the_table_on_constant_n_ranks(tmp_path):
    rng = np.random.default_rng(2)
    for model in ("ease", "neumf"):
        out = tmp_path / "results" / "ranks" / "ml-1m" / model
        out.mkdir(parents=True)
        pd.DataFrame({"user": np.arange(400), "item": 0, "rank": np.minimum(N, rng.geometric(0.05, 400)),
                      "n_candidates": N}).to_parquet(out / "all.parquet")
    config = {"repeats": 2, "sample_size": n, "datasets": ["ml-1m"], "sources": ["ranks", "simulated_paper"],
              "readings": ["mle", "as_printed"], "k": 10, "c": 10, "converged_steps": 50,
              "models": {"EASE": "ease", "NeuMF": "neumf"}}
    table = wr.study_tables(config, 5, None, tmp_path)["wmle_readings"]
    assert list(table.columns) == list(wr.COLUMNS)
    assert len(table) == 2 * 2 * 2 * 3
    assert (table.loc[table["reading"] == "mle", "gap"] == 0).all()
    paper_level = table[table["source"] == "simulated_paper"].groupby("model")["level"].first()
    assert paper_level["ease"] == pytest.approx(0.3477)
    again = wr.study_tables(config, 5, None, tmp_path)["wmle_readings"]
    pd.testing.assert_frame_equal(table, again)
