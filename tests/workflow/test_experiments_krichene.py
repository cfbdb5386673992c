"""The K&R real-data study: exactness against independent formulations, determinism, CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling import estimate
from itemsampling import experiments_krichene as ek
from itemsampling.simulation import expected_sampled_metric, sample_ranks


@pytest.fixture
def study(fake_ranks):
    return {"X": fake_ranks(400, 300, 20.0, 1), "Y": fake_ranks(400, 300, 60.0, 2)}


def test_item_groups_keep_equal_n_together_and_use_the_mean():
    N = np.array([10, 10, 10, 20, 20, 30, 31, 32, 40, 40])
    group, group_n = ek.item_groups(N, 3)
    assert group_n.size <= 3
    for value in np.unique(N):
        assert np.unique(group[N == value]).size == 1
    for g, n_g in enumerate(group_n):
        assert n_g == round(N[group == g].mean())
    one, one_n = ek.item_groups(N, 1)
    assert np.all(one == 0) and one_n.tolist() == [round(N.mean())]
    with pytest.raises(ValueError, match="n_groups"):
        ek.item_groups(N, 0)


def test_expected_uncorrected_curve_matches_simulation_module(study):
    curve = ek.expected_metric_curve(study, [11, 51], "ndcg", 10, (("sampled", None),), n_groups=4)
    for row in curve.itertuples():
        frame = study[row.recommender]
        want = expected_sampled_metric(frame["rank"].to_numpy(), frame["n_candidates"].to_numpy(),
                                       row.sample_size, "ndcg", 10)
        assert row.expected == pytest.approx(want, rel=1e-10)


def test_expected_corrected_curve_matches_monte_carlo(study):
    curve = ek.expected_metric_curve({"X": study["X"]}, [31], "recall", 10, (("bv", 0.1),), n_groups=1)
    runs = ek.sampled_metric_runs({"X": study["X"]}, 31, 400, seed=3, k=10, gammas=[0.1], n_groups=1)
    sel = runs[(runs["method"] == "bv_0.1") & (runs["metric"] == "recall")]["estimate"]
    se = sel.std(ddof=1) / np.sqrt(sel.size)
    assert abs(sel.mean() - curve["expected"].iloc[0]) < 4 * se


def test_runs_equal_package_estimate_on_the_same_sampled_ranks(fake_ranks):
    frame = fake_ranks(500, 200, 25.0, 4).assign(n_candidates=200)  # one N: the grouping is exact
    runs = ek.sampled_metric_runs({"X": frame}, 21, 2, seed=5, k=10, gammas=[0.1], n_groups=3)
    gen = np.random.default_rng(np.random.SeedSequence(5).spawn(1)[0])
    r = sample_ranks(frame["rank"].to_numpy(), frame["n_candidates"].to_numpy(), 21, gen)
    first = runs[runs["run"] == 0]
    for method, opts, label in (("sampled", {}, "sampled"), ("rank_estimate", {}, "rank_estimate"),
                                ("cls", {}, "cls"), ("bv", {"gamma": 0.1}, "bv_0.1")):
        want = pd.concat([estimate(r, 200, 21, method, ["recall", "ndcg"], [10], **opts),
                          estimate(r, 200, 21, method, "ap", None, **opts)])
        got = first[(first["method"] == label) & (first["metric"] != "auc")]
        np.testing.assert_allclose(got["estimate"].to_numpy(), want["estimate"].to_numpy(), rtol=1e-9, atol=1e-12)
        auc = estimate(r, 200, 21, method, "auc", None, **opts)["estimate"].iloc[0]
        assert first[(first["method"] == label) & (first["metric"] == "auc")]["estimate"].iloc[0] == pytest.approx(auc)


def test_runs_are_deterministic_and_streams_are_per_recommender(study):
    a = ek.sampled_metric_runs(study, 21, 3, seed=9, gammas=[0.1], n_groups=2)
    b = ek.sampled_metric_runs(study, 21, 3, seed=9, gammas=[0.1], n_groups=2)
    pd.testing.assert_frame_equal(a, b)
    c = ek.sampled_metric_runs(study, 21, 3, seed=10, gammas=[0.1], n_groups=2)
    assert not np.array_equal(a["estimate"], c["estimate"])
    alone = ek.sampled_metric_runs({"X": study["X"]}, 21, 3, seed=9, gammas=[0.1], n_groups=2)
    pd.testing.assert_frame_equal(alone, a[a["recommender"] == "X"].reset_index(drop=True))


def test_summary_and_order_agreement_recomputed_by_hand(study):
    runs = ek.sampled_metric_runs(study, 21, 6, seed=1, gammas=[0.1], n_groups=2)
    exact = ek.exact_metrics(study, 10)
    summary = ek.summarize_runs(runs, exact)
    sel = runs[(runs["method"] == "cls") & (runs["metric"] == "ndcg") & (runs["recommender"] == "Y")]["estimate"]
    row = summary[(summary["method"] == "cls") & (summary["metric"] == "ndcg") & (summary["recommender"] == "Y")]
    assert row["mean"].iloc[0] == pytest.approx(sel.mean()) and row["std"].iloc[0] == pytest.approx(sel.std(ddof=1))
    table4 = ek.order_agreement(runs, exact)
    for metric in ("recall", "auc"):
        ex = exact[exact["metric"] == metric].set_index("recommender")["value"]
        est = runs[(runs["method"] == "sampled") & (runs["metric"] == metric)].pivot(
            index="run", columns="recommender", values="estimate")
        want = int((np.sign(est["X"] - est["Y"]) == np.sign(ex["X"] - ex["Y"])).sum())
        got = table4[(table4["method"] == "sampled") & (table4["metric"] == metric)]["agree"].iloc[0]
        assert got == want


def test_bad_inputs_are_rejected(study):
    with pytest.raises(ValueError, match="sample_size"):
        ek.sampled_metric_runs(study, 10_000, 2)
    with pytest.raises(ValueError, match="sampling scheme"):
        ek.sampled_metric_runs(study, 21, 2, scheme="poisson")
    with pytest.raises(ValueError, match="no sample size"):
        ek.expected_metric_curve(study, [5000])


def test_cli_writes_identical_tables_twice(study, tmp_path):
    paths = []
    for label, frame in study.items():
        path = tmp_path / f"{label}.parquet"
        frame.to_parquet(path)
        paths.append(f"{label}={path}")
    args = ["--ranks", *paths, "--sample-size", "21", "--repeats", "3", "--seed", "2", "--gammas", "1", "0.1",
            "--n-groups", "2", "--curve-sample-sizes", "11", "21"]
    assert ek.main([*args, "--out-dir", str(tmp_path / "a")]) == 0
    assert ek.main([*args, "--out-dir", str(tmp_path / "b")]) == 0
    for name in ("table3_runs", "table3", "table4", "fig6_expected_recall"):
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
    assert ek.main(["--ranks", "nolabel", "--out-dir", str(tmp_path / "c")]) == 2


def test_layouts_follow_the_paper_tables(study):
    runs = ek.sampled_metric_runs(study, 21, 3, seed=1, n_groups=2)
    exact = ek.exact_metrics(study, 10)
    t3 = ek.table3_layout(ek.summarize_runs(runs, exact))
    assert list(t3.columns) == ["exact", *ek.PAPER_METHODS]
    assert t3.index.get_level_values("metric").unique().tolist() == ["recall", "ndcg", "ap", "auc"]
    t4 = ek.table4_layout(ek.order_agreement(runs, exact))
    assert list(t4.columns) == list(ek.PAPER_METHODS)
    assert set(ek.PAPER_TABLE_3["method"]) == {"exact", *ek.PAPER_METHODS}
    assert len(ek.PAPER_TABLE_3) == 12 * 8 and len(ek.PAPER_TABLE_4) == 3 * 4 * 7


def test_write_table_is_deterministic(tmp_path):
    frame = pd.DataFrame({"a": [0.1 + 0.2, 1 / 3], "k": pd.array([10, None], dtype="Int64")})
    path = ek.write_table(frame, tmp_path / "t" / "x.csv")
    assert path.read_text() == "a,k\n0.3,10\n0.3333333333,\n"
