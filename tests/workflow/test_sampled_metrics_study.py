"""The K&R study of notebook 01: exactness against independent formulations, determinism, CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling import estimate
from itemsampling.cli import main as cli
from itemsampling.simulation import expected_sampled_metric, sample_ranks
from itemsampling_study import sampled_metrics as sm
from itemsampling_study.engine import derive_seed
from itemsampling_study.paper import paper_table
from itemsampling_study.tables import write_table

from .conftest import REPO, json_file

CONFIG = {"dataset": "tiny", "protocol": "unseen", "recommenders": {"X": "m1", "Y": "m2"}, "sample_size": 21,
          "repeats": 4, "scheme": "binomial", "k": 10, "gammas": [1.0, 0.1], "curve_gamma": 0.1,
          "curve_sample_sizes": [11, 21], "n_item_groups": 2, "toy_repeats": 5,
          "sensitivity": {"recommenders": [], "readings": [], "ties": ["random"]},
          "model_hyperparameters": {"m1": {}, "m2": {}}}


@pytest.fixture
def study(fake_ranks):
    return {"X": fake_ranks(400, 300, 20.0, 1), "Y": fake_ranks(400, 300, 60.0, 2)}


def _runs(study, config=CONFIG, seed=1):
    labels = {label: model for label, model in config["recommenders"].items()}
    return pd.concat([sm.chunk_table(config, seed, {"dataset": "tiny", "model": labels[label], "protocol": "unseen"},
                                     frame) for label, frame in study.items()], ignore_index=True)


def test_expected_uncorrected_curve_matches_simulation_module(study):
    curve = sm.expected_metric_curve(study, [11, 51], "ndcg", 10, (("sampled", None),), n_groups=4)
    for row in curve.itertuples():
        frame = study[row.recommender]
        want = expected_sampled_metric(frame["rank"].to_numpy(), frame["n_candidates"].to_numpy(),
                                       row.sample_size, "ndcg", 10)
        assert row.expected == pytest.approx(want, rel=1e-10)


def test_expected_corrected_curve_matches_monte_carlo(study):
    config = {**CONFIG, "gammas": [0.1], "repeats": 400, "n_item_groups": 1, "sample_size": 31}
    curve = sm.expected_metric_curve({"X": study["X"]}, [31], "recall", 10, (("bv", 0.1),), n_groups=1)
    runs = _runs({"X": study["X"]}, config, seed=3)
    sel = runs[(runs["estimator"] == "bv_0.1") & (runs["metric"] == "recall")]["estimate"]
    se = sel.std(ddof=1) / np.sqrt(sel.size)
    assert abs(sel.mean() - curve["expected"].iloc[0]) < 4 * se


def test_runs_equal_package_estimate_on_the_same_sampled_ranks(fake_ranks):
    frame = fake_ranks(500, 200, 25.0, 4).assign(n_candidates=200)  # one N: the grouping is exact
    runs = _runs({"X": frame}, {**CONFIG, "gammas": [0.1], "repeats": 2}, seed=5)
    rng = np.random.default_rng(derive_seed(5, "tiny", "m1", "unseen", "binomial", 21, 0))
    r = sample_ranks(frame["rank"].to_numpy(), 200, 21, rng)
    first = runs[runs["repeat"] == 0]
    for method, opts, label in (("sampled", {}, "sampled"), ("rank_estimate", {}, "rank_estimate"),
                                ("cls", {}, "cls"), ("bv", {"gamma": 0.1}, "bv_0.1")):
        for metric, k in sm.targets(10):
            want = estimate(r, 200, 21, method, metric, k, **opts)["estimate"].iloc[0]
            got = first[(first["estimator"] == label) & (first["metric"] == metric)]["estimate"].iloc[0]
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (label, metric)


def test_summary_and_order_agreement_recomputed_by_hand(study):
    runs = _runs(study).assign(recommender=lambda t: t["model"].map({"m1": "X", "m2": "Y"}))
    summary = sm.summarize_runs(runs)
    sel = runs[(runs["estimator"] == "cls") & (runs["metric"] == "ndcg") & (runs["recommender"] == "Y")]["estimate"]
    row = summary[(summary["method"] == "cls") & (summary["metric"] == "ndcg") & (summary["recommender"] == "Y")]
    assert row["mean"].iloc[0] == pytest.approx(sel.mean()) and row["std"].iloc[0] == pytest.approx(sel.std(ddof=1))
    table4 = sm.order_agreement(runs)
    for metric in ("recall", "auc"):
        ex = runs[runs["metric"] == metric].drop_duplicates("recommender").set_index("recommender")["exact"]
        est = runs[(runs["estimator"] == "sampled") & (runs["metric"] == metric)].pivot(
            index="repeat", columns="recommender", values="estimate")
        want = int((np.sign(est["X"] - est["Y"]) == np.sign(ex["X"] - ex["Y"])).sum())
        got = table4[(table4["method"] == "sampled") & (table4["metric"] == metric)]["agree"].iloc[0]
        assert got == want
    orders = sm.mean_orders(summary)
    assert set(orders.columns) == {"metric", "method", "order", "exact_order", "agrees"}
    assert orders["agrees"].dtype == bool


def test_smallest_correct_sample_reads_the_curve():
    curve = pd.DataFrame({"recommender": ["A", "B"] * 3, "sample_size": [11, 11, 21, 21, 51, 51],
                          "method": "sampled", "expected": [0.5, 0.4, 0.4, 0.45, 0.3, 0.6], "exact": [0.1, 0.2] * 3})
    out = sm.smallest_correct_sample(curve)
    assert out["pair"].tolist() == ["A vs B"] and out["smallest_sampled_items"].tolist() == [20]
    never = curve.assign(expected=[0.5, 0.4] * 3)
    assert sm.smallest_correct_sample(never)["smallest_sampled_items"].isna().all()
    back_and_forth = curve.assign(expected=[0.1, 0.4, 0.5, 0.4, 0.3, 0.6])  # right, wrong, right
    assert sm.smallest_correct_sample(back_and_forth)["smallest_sampled_items"].tolist() == [50]


def test_smallest_correct_sample_per_pair():
    """Three recommenders: the pairs and the full order each have their own smallest m."""
    sizes = [11, 21, 51]
    expected = {"A": [0.9, 0.8, 0.5], "B": [0.5, 0.6, 0.6], "C": [0.6, 0.65, 0.7]}
    curve = pd.DataFrame([{"recommender": r, "sample_size": n, "method": "sampled", "expected": v,
                           "exact": {"A": 0.1, "B": 0.2, "C": 0.3}[r]}
                          for r, values in expected.items() for n, v in zip(sizes, values, strict=True)])
    out = sm.smallest_correct_sample(curve).set_index("pair")["smallest_sampled_items"]
    assert out.to_dict() == {"A vs B": 50, "A vs C": 50, "B vs C": 10, "all": 50}


def test_toy_tables_match_the_paper_to_printed_precision():
    tables = sm.toy_tables(repeats=200, seed=0, scheme="binomial")
    t1 = tables["table1_toy_exact"]
    assert (t1["exact"] - t1["paper"]).abs().max() <= 0.0005 + 1e-12
    t2 = tables["table2_toy_sampled"]
    assert len(t2) == 12 and t2["paper_mean"].notna().all()
    assert ((t2["mean"] - t2["expected"]).abs() <= 5 * t2["std"] / np.sqrt(200) + 1e-6).all()


def test_paper_tables_have_their_source():
    t3, t4 = paper_table("krichene2020kdd_table3"), paper_table("krichene2020kdd_table4")
    assert set(t3["method"]) == {"exact", *sm.PAPER_METHODS} and len(t3) == 12 * 8 and len(t4) == 3 * 4 * 7
    assert t3["source"].str.contains("Table 3").all() and t4["source"].str.contains("doi").all()
    text = paper_table("krichene2020kdd_text")
    assert set(text["relation"]) <= {"=", "<", ">"} and text["source"].str.contains("Fig. [56]").all()
    with pytest.raises(ValueError, match="unknown paper table"):
        paper_table("nosuch")


def test_layouts_follow_the_paper_tables(study):
    config = {**CONFIG, "gammas": [1.0, 0.1, 0.01, 0.001]}
    runs = _runs(study, config).assign(recommender=lambda t: t["model"].map({"m1": "X", "m2": "Y"}))
    t3 = sm.table3_layout(sm.summarize_runs(runs))
    assert list(t3.columns) == ["exact", *sm.PAPER_METHODS]
    assert t3.index.get_level_values("metric").unique().tolist() == ["recall", "ndcg", "ap", "auc"]
    t4 = sm.table4_layout(sm.order_agreement(runs))
    assert list(t4.columns) == list(sm.PAPER_METHODS)


def test_cli_writes_identical_tables_twice_and_checks_the_list(tiny_results, tmp_path):
    config = json_file(tmp_path / "config.json", CONFIG)
    root = str(tiny_results)
    runs = []
    for model in ("m1", "m2"):
        out = tmp_path / f"{model}.parquet"
        assert cli(["study", "chunk", "--study", "sampled_metrics", "--config", config, "--seed", "2", "--root", root,
                    "--dataset", "tiny", "--model", model, "--protocol", "unseen", "--output", str(out)]) == 0
        runs.append(str(out))
    names = list(sm.study_tables(CONFIG, 2, pd.concat(pd.read_parquet(p) for p in runs), tiny_results))
    for folder in ("a", "b"):
        assert cli(["study", "tables", "--study", "sampled_metrics", "--config", config, "--seed", "2",
                    "--root", root, "--runs", *runs, "--tables", *names, "--out-dir", str(tmp_path / folder)]) == 0
    for name in names:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
    assert cli(["study", "tables", "--study", "sampled_metrics", "--config", config, "--seed", "2", "--root", root,
                "--runs", *runs, "--tables", "table3", "--out-dir", str(tmp_path / "c")]) == 2
    assert cli(["study", "chunk", "--study", "sampled_metrics", "--config", config, "--seed", "2", "--root", root,
                "--dataset", "tiny", "--model", "nosuch", "--protocol", "unseen",
                "--output", str(tmp_path / "x.parquet")]) == 2
    assert cli(["study", "chunk", "--study", "nosuch", "--config", config, "--seed", "2", "--dataset", "tiny",
                "--model", "m1", "--protocol", "unseen", "--output", str(tmp_path / "x.parquet")]) == 2


def test_write_table_is_deterministic_and_atomic(tmp_path):
    frame = pd.DataFrame({"a": [0.1 + 0.2, 1 / 3], "k": pd.array([10, None], dtype="Int64")})
    path = write_table(frame, tmp_path / "t" / "x.csv")
    assert path.read_text() == "a,k\n0.3,10\n0.3333333333,\n"
    assert [p.name for p in path.parent.iterdir()] == ["x.csv"]  # no temporary file left



def test_closest_reading_is_the_smallest_mean_distance_to_table_3():
    summary = pd.DataFrame({"reading": ["printed", "a", "b"], "ties": "random",
                            "paper_mean_abs_difference": [2.0, 0.5, 0.5]})
    assert sm.closest_reading(summary) == ("a", "random")  # the first of a tie, in the order of the configuration
    assert sm.closest_reading(summary.assign(paper_mean_abs_difference=np.nan)) is None  # off ml-1m
    assert sm.closest_reading(summary.iloc[:0]) is None  # no readings


def test_predicted_agreement_is_phi_of_the_gap_over_the_spread():
    from scipy.stats import norm

    table3 = pd.DataFrame({"metric": "recall", "method": "bv_0.1", "recommender": ["X", "Y"], "exact": [0.1, 0.2],
                           "mean": [0.10, 0.13], "std": [0.03, 0.04]})
    table4 = pd.DataFrame({"metric": ["recall"], "method": ["bv_0.1"], "recommender_a": ["X"],
                           "recommender_b": ["Y"], "agree": [70], "repeats": [100]})
    out = sm.predicted_agreement(table3, table4)
    assert out["predicted"].iloc[0] == pytest.approx(norm.cdf(0.03 / 0.05)) and out["fraction"].iloc[0] == 0.7
    flipped = sm.predicted_agreement(table3.assign(exact=[0.2, 0.1]), table4)  # X is the better one now
    assert flipped["predicted"].iloc[0] == pytest.approx(norm.cdf(-0.6))
    paper3, paper4 = sm.paper_with_our_spreads(table3.assign(metric="ndcg", method="cls", recommender=["Y", "Z"]))
    assert len(paper3) == 2 and paper3["std"].tolist() == [0.03, 0.04] and len(paper4) == 3 * 4 * 7


def test_the_readings_tables_hold_the_main_runs_under_the_default_reading():
    from itemsampling_study.tables import read_table

    def table(name):
        return read_table("01_sampled_metrics", name, REPO)

    for name, main in (("sensitivity_table3", "table3"), ("sensitivity_pairs", "table4")):
        default = table(name)
        default = default[default["default"]].drop(columns=["reading", "ties", "default"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(default, table(main))
    closest = table("fig6_closest_reading")
    assert (closest["reading"].iloc[0], closest["ties"].iloc[0]) == sm.closest_reading(table("sensitivity_summary"))
