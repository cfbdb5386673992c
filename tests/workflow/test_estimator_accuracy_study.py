"""The study of notebook 04: parts and chunks, pooled priors, and every aggregation against
hand-computed examples or an independent formulation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemsampling import estimate, rank_distribution
from itemsampling.cli import main as cli
from itemsampling_study import estimator_accuracy as ea
from itemsampling_study.engine import draw_sampled_ranks
from itemsampling_study.paper import paper_table
from itemsampling_study.tables import chunk_path, read_runs, write_table

from .conftest import json_file

CONFIG = {
    "datasets": ["tiny"], "models": {"A": "m1", "B": "m2"}, "protocol": "all", "repeats": 3, "max_k": 5,
    "table_k": 3, "winner_ks": [1, 5], "n_item_groups": 2,
    "sample_sizes": [{"sample_size": 20, "estimators": ["sampled", "bv_0.1", "mle", "wmle", "mes", "bv_mes", "mn_mle"]},
                     {"sample_size": 40, "estimators": ["bv_0.1", "mle", "mn_mle"]}],
    "rank_distribution": {"max_rank": 12, "estimators": ["bv_0.1", "mle"],
                          "by_model": {"dataset": "tiny", "models": ["m1"]},
                          "by_sample_size": {"dataset": "tiny", "model": "m1"}},
    "pooled_prior": {"sample_sizes": [20], "estimators": ["bv_mes", "mn_mle"], "datasets": ["tiny"]},
    "candidates": {"sample_size": 20, "estimators": ["mle", "bv_0.1"], "n_item_groups": 3, "datasets": ["tiny"]},
    "schemes": {"scheme": "actual", "sample_sizes": [40], "estimators": ["mle"], "datasets": ["tiny"]},
    "intervals": {"level": 0.9, "method": "analytic", "sample_size": 20, "estimators": ["sampled", "mle", "bv_mes"],
                  "ks": [1, 5], "datasets": ["tiny"]},
}
LABELS = {"dataset": "tiny", "model": "m1", "protocol": "all"}


@pytest.fixture
def ranks(fake_ranks):
    frame = fake_ranks(400, 300, 15.0, 3)
    frame.loc[:40, "rank"] = 1  # some held-out items on top: no exact metric is 0
    return frame


def _chunk(ranks, part, config=CONFIG, seed=5, protocol="all"):
    return ea.chunk_table(config, seed, {**LABELS, "protocol": protocol, "part": part}, ranks)


# ----------------------------------------------------------------------------- configuration


def test_estimator_names_follow_the_papers():
    assert ea.estimator("bv_0.01").options["gamma"] == 0.01 and ea.estimator("bv_0.01").label == "bv_0.01"
    assert ea.estimator("bv_1").options["gamma"] == 1.0
    assert ea.estimator("mn_mes").method == "mn_mes" and dict(ea.estimator("wmle").options) == {}
    code = ea.estimator("mn_mes_code")
    assert (code.method, dict(code.options), code.label) == ("mn_mes", ea.CODE_MES, "mn_mes_code")
    assert [ea.estimator_label(n) for n in ("bv_0.1", "mn_mes_code", "wmle", "sampled")] == [
        "BV 0.1", "MN_MES (code)", "WMLE", "sampled"]
    for bad in ("bv", "bv_0.010", "bv_x", "mn", "nosuch", "bv_-1", "mle_code"):
        with pytest.raises(ValueError, match="unknown estimator"):
            ea.estimator(bad)


def test_parts_chunks_and_sample_sizes():
    parts = ea.parts(CONFIG)
    assert list(parts) == ["n20", "n40", "pooled_n20", "per_user_n20", "common_n20", "actual_n40", "interval_n20"]
    assert (parts["interval_n20"]["level"], parts["interval_n20"]["ks"]) == (0.9, [1, 5])
    assert parts["common_n20"]["n_item_groups"] == 1 and parts["per_user_n20"]["n_item_groups"] == 3
    assert parts["per_user_n20"]["protocol"] == "unseen" and parts["actual_n40"]["scheme"] == "actual"
    chunks = ea.chunks(CONFIG)
    assert len(chunks) == len(parts) * 2
    assert {"dataset": "tiny", "model": "m2", "protocol": "unseen", "part": "common_n20"} in chunks
    assert ea.sample_sizes(CONFIG) == {("tiny", "all"): 40, ("tiny", "unseen"): 20}
    off = {**CONFIG, "candidates": {**CONFIG["candidates"], "datasets": []}}
    assert not [c for c in ea.chunks(off) if c["protocol"] == "unseen"]


@pytest.mark.parametrize(("key", "value", "message"), [
    ("pooled_prior", {"sample_sizes": [30], "estimators": ["bv_mes"], "datasets": ["tiny"]}, "no run in sample_sizes"),
    ("pooled_prior", {"sample_sizes": [40], "estimators": ["bv_mes"], "datasets": ["tiny"]}, "not run at n = 40"),
    ("pooled_prior", {"sample_sizes": [20], "estimators": ["mle"], "datasets": ["tiny"]}, "no fitted prior"),
    ("schemes", {"scheme": "actual", "sample_sizes": [40], "estimators": ["mes"], "datasets": ["tiny"]}, "not run"),
    ("candidates", {"sample_size": 20, "estimators": ["mle"], "n_item_groups": 3, "datasets": ["big"]},
     "not among the study's datasets"),
    ("sample_sizes", [{"sample_size": 20, "estimators": ["bv_0.100"]}], "unknown estimator"),
    ("intervals", {**CONFIG["intervals"], "sample_size": 30}, "no run in sample_sizes"),
    ("intervals", {**CONFIG["intervals"], "estimators": ["cls"]}, "not run at n = 20"),
    ("intervals", {**CONFIG["intervals"], "ks": [6]}, r"must lie in 1..max_k = 5"),
])
def test_inconsistent_configurations_are_rejected(key, value, message):
    with pytest.raises(ValueError, match=message):
        ea.parts({**CONFIG, key: value})


def test_targets_reach_the_largest_rank_only_for_the_figures_models():
    recall = [k for m, k in ea.targets(CONFIG, "tiny", "m1") if m == "recall"]
    assert recall == list(range(1, 13))
    assert [k for m, k in ea.targets(CONFIG, "tiny", "m2") if m == "recall"] == [1, 2, 3, 4, 5]
    assert [k for m, k in ea.targets(CONFIG, "tiny", "m1", "pooled") if m == "recall"] == [1, 2, 3, 4, 5]
    assert {m for m, _ in ea.targets(CONFIG, "tiny", "m2")} == set(ea.METRICS)


# ----------------------------------------------------------------------------- runs


def test_chunks_estimate_as_the_package_does_on_the_same_draws(ranks):
    table = _chunk(ranks, "n20")
    assert {"part", "seconds", "setup_seconds"} <= set(table.columns) and (table["part"] == "n20").all()
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    r = draw_sampled_ranks(R, N, 20, seed=5, labels=LABELS, scheme="binomial", repeat=2)
    want = estimate(r, N, 20, "wmle", metrics="ndcg", ks=[3], n_groups=2)["estimate"].item()
    got = table.query("repeat == 2 and estimator == 'wmle' and metric == 'ndcg' and k == 3")["estimate"].item()
    assert got == pytest.approx(want, rel=1e-12)


def test_the_interval_part_adds_intervals_to_the_estimates_of_the_papers_run(ranks):
    paper, interval = _chunk(ranks, "n20"), _chunk(ranks, "interval_n20")
    assert set(interval["estimator"]) == {"sampled", "mle", "bv_mes"} and set(interval["k"]) == {1, 5}
    assert (interval["level"] == 0.9).all() and (interval["lower"] <= interval["upper"]).all()
    keys = ["repeat", "estimator", "metric", "k"]
    both = interval.merge(paper, on=keys, suffixes=("", "_paper"))
    assert len(both) == len(interval)  # the same draws: the same estimates
    np.testing.assert_allclose(both["estimate"], both["estimate_paper"], rtol=1e-12)
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    r = draw_sampled_ranks(R, N, 20, seed=5, labels=LABELS, scheme="binomial", repeat=1)
    want = estimate(r, N, 20, "bv_mes", metrics="ap", ks=[5], n_groups=2, interval=0.9)
    got = interval.query("repeat == 1 and estimator == 'bv_mes' and metric == 'ap' and k == 5")
    np.testing.assert_allclose(got[["lower", "upper"]].to_numpy(), want[["lower", "upper"]].to_numpy(), rtol=1e-10)


def test_interval_coverage_by_hand():
    runs = _runs({"a": [[0.2, 0.5], [0.4, 0.3]]}, {"a": [0.25, 0.4]}, models=("a",))
    runs = runs.assign(level=0.9, se=[0.05, 0.1, 0.1, 0.2], lower=[0.1, 0.3, 0.3, 0.0], upper=[0.3, 0.45, 0.5, 0.6])
    table = ea.interval_coverage_table(runs).set_index("k")
    assert table.loc[1, "coverage"] == 0.5 and table.loc[2, "coverage"] == 1.0  # [0.3, 0.5] misses 0.25
    assert table.loc[2, "mean_width"] == pytest.approx((0.15 + 0.6) / 2)
    assert table.loc[1, "bias"] == pytest.approx((0.3 - 0.25) / 0.25)
    assert table.loc[1, "spread"] == pytest.approx(np.std([0.2, 0.4], ddof=1) / 0.25)
    assert table.loc[2, "mean_se"] == pytest.approx(0.15 / 0.4) and (table["repeats"] == 2).all()


def test_common_n_is_one_group_and_per_user_n_the_configured_groups(fake_ranks):
    ranks = fake_ranks(400, 300, 15.0, 4)
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    labels = {**LABELS, "protocol": "unseen"}
    r = draw_sampled_ranks(R, N, 20, seed=5, labels=labels, scheme="binomial", repeat=0)
    for part, groups in (("common_n20", 1), ("per_user_n20", 3)):
        table = _chunk(ranks, part, protocol="unseen").query("repeat == 0 and estimator == 'mle' and metric == 'ap'")
        want = estimate(r, N, 20, "mle", metrics="ap", ks=range(1, 6), n_groups=groups)["estimate"].to_numpy()
        np.testing.assert_allclose(table["estimate"].to_numpy(), want, rtol=1e-12)


def test_pooled_prior_is_fitted_once_to_the_ranks_of_all_repeats(ranks):
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    draws = [draw_sampled_ranks(R, N, 20, seed=5, labels=LABELS, scheme="binomial", repeat=i) for i in range(3)]
    prior = rank_distribution(np.concatenate(draws), np.tile(N, 3), 20, "mes", n_groups=2)
    table = _chunk(ranks, "pooled_n20")
    for i, r in enumerate(draws):
        want = estimate(r, N, 20, "bv", metrics="recall", ks=[4], prior=prior, n_groups=2)["estimate"].item()
        got = table.query(f"repeat == {i} and estimator == 'bv_mes' and metric == 'recall' and k == 4")["estimate"]
        assert got.item() == pytest.approx(want, rel=1e-9)
    own = _chunk(ranks, "n20").query("estimator == 'bv_mes' and metric == 'recall' and k == 4")["estimate"]
    assert not np.allclose(own.to_numpy(), table.query("estimator == 'bv_mes' and metric == 'recall' and k == 4")
                           ["estimate"].to_numpy())
    with pytest.raises(ValueError, match="no fitted prior"):
        ea.pooled_estimators(["mle"], R, N, 20, seed=5, labels=LABELS, scheme="binomial", repeats=2, n_groups=2)


def test_the_learned_cdf_is_the_estimated_recall(ranks):
    """Recall@1..max_rank of an estimator that learns P(R) gives its P̂(R) (AAAI'21 eq. 14-15)."""
    table = ea.rank_distribution_table(_chunk(ranks, "n20").query("repeat == 1"), 12, ["bv_0.1", "mle"])
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    r = draw_sampled_ranks(R, N, 20, seed=5, labels=LABELS, scheme="binomial", repeat=1)
    for method, options in (("mle", {}), ("bv", {"gamma": 0.1})):
        p_hat = rank_distribution(r, N, 20, method, n_groups=2, **options)[:12]
        sel = table[table["estimator"] == ("mle" if method == "mle" else "bv_0.1")]
        np.testing.assert_allclose(sel["pmf"].to_numpy(), p_hat, atol=1e-10)
        np.testing.assert_allclose(sel["cdf"].to_numpy(), np.cumsum(p_hat), atol=1e-10)
    exact = np.array([(R <= k).mean() for k in range(1, 13)])
    np.testing.assert_allclose(sel["exact_cdf"].to_numpy(), exact)
    np.testing.assert_allclose(sel["exact_pmf"].to_numpy(), np.diff(exact, prepend=0.0))
    with pytest.raises(ValueError, match="do not define a rank distribution"):
        ea.rank_distribution_table(table, 12, ["cls"])


# ----------------------------------------------------------------------------- aggregation, by hand


def _runs(values, exact, models=("a", "b"), repeats=2, ks=(1, 2), **columns):
    """A runs table: ``values[model][repeat][k]`` estimates of recall, ``exact[model][k]``."""
    rows = []
    for m in models:
        for i in range(repeats):
            for j, k in enumerate(ks):
                rows.append({"dataset": "d", "model": m, "protocol": "all", "scheme": "binomial", "sample_size": 10,
                             "part": "n10", "estimator": "e", "repeat": i, "metric": "recall", "k": k,
                             "estimate": values[m][i][j], "exact": exact[m][j], **columns})
    out = pd.DataFrame(rows)
    out["k"] = out["k"].astype("Int64")
    return out


def test_relative_error_by_hand():
    runs = _runs({"a": [[0.2, 0.5], [0.1, 0.3]], "b": [[0.0, 0.2], [0.1, 0.2]]}, {"a": [0.1, 0.4], "b": [0.0, 0.2]})
    errors = ea.relative_errors(runs, 2).set_index("model")
    per_repeat = [(1.0 + 0.25) / 2, (0.0 + 0.25) / 2]
    assert errors.loc["a", "mean"] == pytest.approx(np.mean(per_repeat))
    assert errors.loc["a", "std"] == pytest.approx(np.std(per_repeat, ddof=1))
    assert errors.loc["b", "mean"] == 0.0  # K = 1 has exact 0 and is left out; K = 2 is exact
    assert (errors["repeats"] == 2).all()
    with pytest.raises(ValueError, match="lack some of the cut-offs"):
        ea.relative_errors(runs, 3)


def test_winners_and_true_winners_by_hand():
    runs = _runs({"a": [[0.3, 0.5], [0.1, 0.5]], "b": [[0.2, 0.6], [0.2, 0.4]], "c": [[0.0, 0.0], [0.0, 0.9]]},
                 {"a": [0.3, 0.5], "b": [0.2, 0.6], "c": [0.1, 0.1]}, models=("a", "b", "c"))
    table = ea.winners(runs, [1, 2]).set_index("k")
    assert list(table.columns) == ["dataset", "protocol", "scheme", "sample_size", "estimator", "metric", "correct",
                                   "repeats"]
    assert table.loc[1, "correct"] == 1 and table.loc[2, "correct"] == 1 and (table["repeats"] == 2).all()
    truth = ea.true_winners(runs, [1, 2]).set_index("k")
    assert truth.loc[1, "winner"] == "a" and truth.loc[1, "runner_up"] == "b"
    assert truth.loc[2, "winner"] == "b" and truth.loc[2, "gap"] == pytest.approx((0.6 - 0.5) / 0.6)


def test_metrics_at_k_by_hand():
    runs = _runs({"a": [[0.2, 0.5], [0.1, 0.3]], "b": [[0.0, 0.2], [0.1, 0.2]]}, {"a": [0.1, 0.4], "b": [0.0, 0.2]})
    row = ea.metrics_at_k(runs, 2).set_index("model").loc["a"]
    assert (row["exact"], row["mean"], row["std"], row["repeats"]) == pytest.approx((0.4, 0.4, np.std([0.5, 0.3],
                                                                                                      ddof=1), 2))


def test_rank_distribution_pmf_is_the_difference_of_the_mean_cdf():
    runs = _runs({"a": [[0.2, 0.5, 0.6], [0.4, 0.5, 0.8]]}, {"a": [0.25, 0.5, 0.75]}, models=("a",), ks=(1, 2, 3))
    table = ea.rank_distribution_table(runs.assign(estimator="mle"), 3, ["mle"])
    np.testing.assert_allclose(table["cdf"], [0.3, 0.5, 0.7])
    np.testing.assert_allclose(table["pmf"], [0.3, 0.2, 0.2])
    np.testing.assert_allclose(table["exact_pmf"], [0.25, 0.25, 0.25])
    assert ea.rank_distribution_table(runs.assign(estimator="mle"), 4, ["mle"]).empty  # Recall@4 was not estimated


def test_chunk_times_add_the_draws_of_each_chunk():
    runs = _runs({"a": [[0.2, 0.5], [0.1, 0.3]], "b": [[0.0, 0.2], [0.1, 0.2]]}, {"a": [0.1, 0.4], "b": [0.0, 0.2]},
                 setup_seconds=0.5)
    runs["seconds"] = np.where(runs["repeat"] == 0, 1.0, 3.0)
    times = ea.chunk_times(runs).set_index("model")
    assert times.loc["a", "draws"] == 2 and times.loc["a", "estimators"] == 1
    assert times.loc["a", "seconds"] == 4.5 and times.loc["a", "seconds_per_draw"] == 2.0


def test_comparison_tables_pair_each_variant_with_its_counterpart(ranks):
    frames = [_chunk(ranks, part) for part in ("n20", "n40", "pooled_n20", "actual_n40")]
    frames += [_chunk(ranks, part, protocol="unseen") for part in ("per_user_n20", "common_n20")]
    tables = ea.comparison_tables(ea.relative_errors(pd.concat(frames), 5), CONFIG)
    pooled = tables["pooled_prior"]
    assert set(pooled["prior"]) == {"own", "pooled"} and set(pooled["estimator"]) == {"bv_mes", "mn_mle"}
    assert len(pooled) == 2 * 2 * 3 and set(pooled["sample_size"]) == {20}
    assert set(tables["candidates"]["n_items"]) == {"per_user", "common"}
    assert (tables["candidates"]["protocol"] == "unseen").all()
    schemes = tables["schemes"]
    assert set(schemes["scheme"]) == {"binomial", "actual"} and set(schemes["estimator"]) == {"mle"}
    assert set(schemes["sample_size"]) == {40}


# ----------------------------------------------------------------------------- against the papers


def test_comparisons_with_the_papers_by_hand():
    methods = sorted(set(paper_table("jin2021aaai_metrics_at_10").query("dataset == 'ml-1m'")["method"]) - {"exact"})
    ours = pd.concat([pd.DataFrame({"dataset": "ml-1m", "model": ["ease", "ials"], "protocol": "all",
                                    "scheme": "binomial", "sample_size": 100, "estimator": method, "metric": "recall",
                                    "k": 10, "exact": [0.4, 0.2], "mean": [0.5, 0.2], "std": [0.1, 0.05],
                                    "repeats": 100}) for method in methods], ignore_index=True)
    bias = ea.bias_comparison(ours, paper_table("jin2021aaai_metrics_at_10")).set_index("estimator").loc["mle"]
    assert bias["bias"] == pytest.approx((0.25 + 0.0) / 2) and bias["spread"] == pytest.approx((0.25 + 0.25) / 2)
    paper = paper_table("jin2021aaai_metrics_at_10").query("dataset == 'ml-1m'")
    exact = paper[paper["method"] == "exact"].set_index(["model", "metric"])["paper_percent"]
    mle = paper[paper["method"] == "mle"].set_index(["model", "metric"])
    assert bias["paper_bias"] == pytest.approx(((mle["paper_percent"] - exact).abs() / exact).mean())

    # every row the paper reports for yelp at n = 500 (80 of 100 right), ours differing for MN_MES, plus
    # an (estimator, metric, K) the paper does not report
    reported = paper_table("li2023aaai_winners").query("dataset == 'yelp-diffnet' and sample_size == 500")
    wins = reported.rename(columns={"method": "estimator"})[["dataset", "sample_size", "estimator", "metric", "k"]]
    wins = wins.assign(protocol="all", scheme="binomial", correct=80, repeats=100)
    mine = wins["estimator"] == "mn_mes"
    wins.loc[mine & (wins["metric"] == "recall") & (wins["k"] == 10), "correct"] = 90
    wins.loc[mine & (wins["metric"] == "ap") & (wins["k"] == 20), "correct"] = 70
    extra = wins[mine].iloc[[0]].assign(k=5, correct=50)
    wins = pd.concat([wins, extra], ignore_index=True)
    row = ea.winner_comparison(wins, paper_table("li2023aaai_winners")).set_index("estimator").loc["mn_mes"]
    assert row["correct"] == pytest.approx((90 + 70 + 4 * 80 + 50) / 700)
    assert row["correct_where_reported"] == pytest.approx((90 + 70 + 4 * 80) / 600)
    assert row["paper_correct"] == pytest.approx(1.0)  # MN_MES: 100 of 100 in every yelp row of Table 8

    errors = pd.DataFrame({"dataset": "yelp-diffnet", "model": "ease", "sample_size": 500, "metric": "ndcg",
                           "estimator": ["mle", "mn_mes", "bv_0.01", "mes", "bv_mes", "bv_mle", "mn_mle"],
                           "mean": [0.03, 0.02, 0.05, 0.04, 0.045, 0.046, 0.035]})
    table = ea.relative_error_comparison(errors, paper_table("li2023aaai_relative_error")).set_index("estimator")
    assert table.loc["mn_mes", "best_two"] == 1 and table.loc["bv_0.01", "best_two"] == 0
    assert table.loc["mn_mes", "paper_mean"] == pytest.approx(np.mean([4.03, 5.77, 8.43, 3.65, 12.57]) / 100)
    assert table.loc["mn_mes", "paper_best_two"] == 5  # MN_MES is among the best two of each yelp row (Table 10)


def test_variant_comparison_by_hand():
    table = pd.DataFrame({"dataset": "d", "model": ["a", "a", "b", "b"], "sample_size": 100, "estimator": "mle",
                          "metric": "recall", "prior": ["own", "pooled"] * 2, "mean": [0.2, 0.1, 0.3, 0.4]})
    row = ea.variant_comparison(table, "prior", "own", "pooled").iloc[0]
    assert (row["base"], row["other"], row["other_lower"], row["settings"]) == pytest.approx((0.25, 0.25, 0.5, 2))
    assert ea.variant_comparison(table.iloc[:0], "prior", "own", "pooled").empty


def test_paper_tables_are_complete():
    at10 = paper_table("jin2021aaai_metrics_at_10")
    assert len(at10) == 2 * 5 * 3 * 7 + 2 * 5 * 3 * 6 and at10["source"].str.contains("AAAI 2021").all()
    assert len(paper_table("jin2021aaai_winners")) == 12 * 6 + 3 * 12 * 5
    assert len(paper_table("li2023aaai_relative_error")) == 3 * 2 * 5 * 7 + 5 * 7  # Table 10 also on ml-20m
    fixed = paper_table("li2023aaai_winners").query("method != 'adaptive_mle' and dataset.notna()")
    assert len(fixed) == 2 * 6 * 4


# ----------------------------------------------------------------------------- files and command line


def test_chunk_files_have_a_part_folder_when_the_chunk_has_a_part():
    assert str(chunk_path("01_x", {"dataset": "d", "model": "m", "protocol": "all"})) == "results/runs/01_x/d/m/all.parquet"
    assert str(chunk_path("04_x", {**LABELS, "part": "n20"})) == "results/runs/04_x/tiny/m1/all/n20.parquet"
    with pytest.raises(ValueError, match="without '/'"):
        chunk_path("04_x", {**LABELS, "part": "a/b"})


def test_cli_runs_a_part_and_checks_it(tiny_results, tmp_path):
    settings = {**CONFIG, "rank_distribution": {**CONFIG["rank_distribution"],
                                                "by_model": {"dataset": "tiny", "models": ["m1"]}}}
    config = json_file(tmp_path / "config.json", settings)
    common = ["study", "chunk", "--study", "estimator_accuracy", "--config", config, "--seed", "2",
              "--root", str(tiny_results), "--dataset", "tiny", "--model", "m1", "--protocol", "all"]
    out = tmp_path / "n40.parquet"
    assert cli([*common, "--part", "n40", "--output", str(out)]) == 0
    assert set(pd.read_parquet(out)["part"]) == {"n40"}
    assert cli([*common, "--part", "nosuch", "--output", str(out)]) == 2
    assert cli([*common, "--output", str(out)]) == 2  # a chunk of this study needs its part
    names = list(ea.study_tables(CONFIG, 2, pd.read_parquet(out), tiny_results))
    assert cli(["study", "tables", "--study", "estimator_accuracy", "--config", config, "--seed", "2", "--runs", str(out),
                "--root", str(tiny_results), "--tables", *names, "--out-dir", str(tmp_path / "tables")]) == 0
    assert pd.read_csv(tmp_path / "tables" / "relative_error.csv")["sample_size"].eq(40).all()
    assert json.loads((tmp_path / "tables" / "estimator_accuracy.record.json").read_text())["tables"].keys() == {
        f"{name}.csv" for name in names}
    # the models in another key order: the same rows in the same order (the config is read with sorted keys)
    reordered = {**settings, "models": dict(reversed(settings["models"].items()))}
    assert cli(["study", "tables", "--study", "estimator_accuracy", "--config",
                json_file(tmp_path / "reordered.json", reordered), "--seed", "2",
                "--runs", str(out), "--root", str(tiny_results), "--tables", *names,
                "--out-dir", str(tmp_path / "reordered")]) == 0
    for name in ("metric_levels", "relative_error", "winners"):
        assert (tmp_path / "reordered" / f"{name}.csv").read_bytes() == (tmp_path / "tables" / f"{name}.csv").read_bytes()


def test_tables_are_the_same_bytes_when_the_chunks_are_rerun(tiny_results, tmp_path):
    """Only chunk_times (wall times) may change between two runs of the same configuration, read
    in any order, as text or as categoricals."""
    config = {**CONFIG, "rank_distribution": {**CONFIG["rank_distribution"],
                                               "by_model": {"dataset": "tiny", "models": ["m1", "m2"]}}}
    outputs = []
    for run in ("a", "b"):
        paths = []
        for i, chunk in enumerate(ea.chunks(config)):
            ranks = tiny_results / "results" / "ranks" / "tiny" / chunk["model"] / f"{chunk['protocol']}.parquet"
            paths.append(tmp_path / f"{run}{i}.parquet")
            ea.chunk_table(config, 9, chunk, pd.read_parquet(ranks)).to_parquet(paths[-1])
        # in order and as text, then in reverse order and as categoricals (as the command line reads them)
        runs = pd.concat(pd.read_parquet(p) for p in paths) if run == "a" else read_runs(paths[::-1], categorical=True)
        tables = ea.study_tables(config, 9, runs, tiny_results)
        for name, frame in tables.items():
            write_table(frame, tmp_path / run / f"{name}.csv")
        outputs.append({name: (tmp_path / run / f"{name}.csv").read_bytes() for name in tables})
    assert set(outputs[0]) == {"metrics_at_k", "winners", "true_winners", "rank_distribution", "relative_error",
                               "pooled_prior", "candidates", "schemes", "interval_coverage", "metric_levels",
                               "chunk_times"}
    for name in outputs[0]:
        if name != "chunk_times":
            assert outputs[0][name] == outputs[1][name], name
    assert all(table.count(b"\n") > 1 for table in outputs[0].values())  # a header and rows


# ----------------------------------------------------------------------------- levels against the papers


def test_metric_levels_by_hand(tiny_results):
    """Exact Recall@K and E[SHR@1] of every model and protocol, against a direct computation
    and a Monte Carlo draw of the sampled ranks."""
    levels = ea.metric_levels(CONFIG, tiny_results).set_index(["model", "protocol"])
    assert list(levels.index) == [("m1", "unseen"), ("m1", "all"), ("m2", "unseen"), ("m2", "all")]
    assert (levels["sample_size"] == 20).all() and (levels["k"] == CONFIG["table_k"]).all()
    for (model, protocol), row in levels.iterrows():
        ranks = pd.read_parquet(tiny_results / "results" / "ranks" / "tiny" / model / f"{protocol}.parquet")
        R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
        assert row["exact_recall"] == pytest.approx(np.mean(R <= CONFIG["table_k"]))
        assert row["n_items"] == N.max() and row["users"] == len(R)
        assert row["sampled_hit_ratio"] == pytest.approx(np.mean((1 - (R - 1) / (N - 1)) ** 19))
        # Monte Carlo: r = 1 when none of the 19 items drawn with replacement beats the held-out item
        draws = np.random.default_rng(3).binomial(19, (R - 1) / (N - 1), size=(400, len(R)))
        assert row["sampled_hit_ratio"] == pytest.approx(np.mean(draws == 0), abs=0.01)


def test_min_sampled_hit_ratio_is_a_bound_attained_at_its_extreme_ranks():
    rng = np.random.default_rng(0)
    n_items, k, n = 500, 10, 100
    for _ in range(20):
        ranks = np.minimum(rng.geometric(rng.uniform(0.005, 0.3), size=300), n_items)
        recall = np.mean(ranks <= k)
        exact = np.mean((1 - (ranks - 1) / (n_items - 1)) ** (n - 1))
        assert ea.min_sampled_hit_ratio(recall, k, n_items, n) <= exact + 1e-12
    extreme = np.r_[np.full(30, k), np.full(70, n_items)]  # Recall@k = 0.3, every user as low as allowed
    exact = np.mean((1 - (extreme - 1) / (n_items - 1)) ** (n - 1))
    assert ea.min_sampled_hit_ratio(0.3, k, n_items, n) == pytest.approx(exact)
    for bad in ({"recall_at_k": 30.0}, {"recall_at_k": np.nan}, {"k": 0}, {"k": 501}, {"sample_size": 0}):
        args = {"recall_at_k": 0.3, "k": k, "n_items": n_items, "sample_size": n, **bad}
        with pytest.raises(ValueError):
            ea.min_sampled_hit_ratio(**args)


def test_level_comparison_against_the_papers():
    levels = pd.DataFrame({
        "dataset": ["ml-1m"] * 2 + ["yelp-diffnet"] * 2, "model": "ease", "protocol": ["unseen", "all"] * 2,
        "scheme": "binomial", "sample_size": 100, "k": 10, "users": 50, "n_items": [3700, 3706, 35000, 35351],
        "exact_recall": [0.11, 0.03, 0.02, 0.01], "sampled_hit_ratio": [0.23, 0.11, 0.2, 0.19]})
    hits = ea.li2020kdd_hit_ratios(paper_table("li2020kdd_table3"), paper_table("li2020kdd_table5"))
    assert hits.set_index(["dataset", "model"]).loc[("ml-1m", "multivae"), "paper_hit_ratio"] == 0.1031
    assert hits.set_index(["dataset", "model"]).loc[("citeulike-a", "ease"), "protocol"] == "unseen"
    assert not hits.duplicated(["dataset", "model"]).any()
    table = ea.level_comparison(levels, paper_table("jin2021aaai_metrics_at_10"), hits)
    assert list(table["dataset"]) == ["ml-1m"]  # yelp-diffnet is another yelp: other items, other N
    row = table.iloc[0]
    assert (row["exact_all"], row["exact_unseen"], row["hit_ratio_all"]) == (0.03, 0.11, 0.11)
    assert row["paper_exact"] == pytest.approx(0.3477)
    assert row["paper_min_hit_ratio"] == pytest.approx(0.3477 * (1 - 9 / 3705) ** 99)
    assert (row["paper_hit_ratio"], row["paper_hit_protocol"]) == (0.223, "unseen")
