"""The adaptive-sampling study of notebook 06: exact curves, errors, winners and the reuse of notebook 04's
tables, checked against independent formulations; determinism and the command line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling.cli import main as cli
from itemsampling_study import adaptive_sampling as ad
from itemsampling_study.paper import paper_table
from itemsampling_study.tables import write_table

from .conftest import json_file

CONFIG = {"datasets": {"tiny": ["m1", "m2"]}, "protocol": "unseen", "scheme": "binomial",
          "metrics": ["recall", "ndcg"], "max_k": 8, "winner_metrics": ["recall", "ndcg", "ap"], "winner_ks": [5, 8],
          "n_item_groups": 2, "n0": 10, "n_max": {"tiny": 80}, "repeats": 3,
          "fixed_estimators": ["bv_mes", "bv_mle", "mn_mes", "mn_mle"], "fixed_sample_size": {"tiny": 40},
          "fixed_reused": [], "blind_spot_sample_size": 10, "blind_spot_model": "m1",
          "frontier_sample_sizes": [20, 40, 5000], "frontier_n_max": [20, 40, 80, 5000], "frontier_repeats": 2}


def _chunks(root, config=CONFIG, seed=1):
    frames = [ad.chunk_table(config, seed, c, pd.read_parquet(
        root / "results" / "ranks" / c["dataset"] / c["model"] / f"{c['protocol']}.parquet")) for c in ad.chunks(config)]
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Tiny ranks (two models, 300 users with N_u in 300..400, some at R = 1) and the study's runs."""
    root = tmp_path_factory.mktemp("adaptive")
    for j, (model, scale) in enumerate((("m1", 30.0), ("m2", 80.0))):
        rng = np.random.default_rng(20 + j)
        n_candidates = 400 - rng.integers(0, 100, 300)
        ranks = np.minimum(rng.geometric(1.0 / scale, 300), n_candidates)
        out = root / "results" / "ranks" / "tiny" / model
        out.mkdir(parents=True)
        pd.DataFrame({"user": np.arange(300), "item": rng.integers(0, 400, 300), "rank": ranks,
                      "n_candidates": n_candidates}).to_parquet(out / "unseen.parquet")
    return root, _chunks(root)


# ----------------------------------------------------------------------------- exact curves


def test_cost_curve_runs_from_n0_to_the_smallest_number_of_candidates(fake_ranks):
    frame = fake_ranks(300, 400, 30.0, 1)
    R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
    curve = ad.cost_curve(R, N, 10)
    assert curve["sample_size"].iloc[0] == 10 and curve["sample_size"].iloc[-1] == N.min()
    np.testing.assert_allclose(curve["fraction_of_items"], curve["sample_size"] / N.mean())
    pd.testing.assert_frame_equal(curve.drop(columns="fraction_of_items"),
                                  its.simulation.expected_sampling_cost(R, N, 10, int(N.min())))


# ----------------------------------------------------------------------------- runs


def test_chunks_hold_every_setting_and_drop_frontier_sizes_above_the_candidates(study):
    _, runs = study
    draws = runs.drop_duplicates(["model", "sample_size", "estimator", "repeat"])
    counts = draws.groupby(["estimator", "sample_size"])["repeat"].nunique().to_dict()
    assert counts == {("adaptive_mle", 20): 2, ("adaptive_mle", 40): 2, ("adaptive_mle", 80): 3,
                      ("mle", 10): 2, ("mle", 20): 2, ("mle", 40): 2,
                      **{(e, 40): 3 for e in CONFIG["fixed_estimators"]}}
    fixed = runs[runs["estimator"] != "adaptive_mle"]
    assert (fixed["mean_sample_size"] == fixed["sample_size"]).all()
    adaptive = runs[runs["estimator"] == "adaptive_mle"]
    assert (adaptive["mean_sample_size"] <= adaptive["sample_size"]).all() and (adaptive["mean_sample_size"] >= 10).all()
    assert set(zip(runs["metric"], runs["k"], strict=True)) == set(ad.targets(CONFIG))


def test_a_reused_dataset_has_no_fixed_size_estimator_runs(study):
    root, runs = study
    reused = _chunks(root, {**CONFIG, "fixed_reused": ["tiny"]})
    assert not reused["estimator"].isin(CONFIG["fixed_estimators"]).any()
    same = runs[~runs["estimator"].isin(CONFIG["fixed_estimators"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(reused, same, check_exact=True)


# ----------------------------------------------------------------------------- errors and winners


def test_repeat_errors_by_hand():
    rows = []
    for repeat, estimates in enumerate(([0.2, 0.5, 0.9], [0.1, 0.3, 0.6])):
        for k, (estimate, exact) in enumerate(zip(estimates, [0.0, 0.4, 0.8], strict=True), start=1):
            rows.append({"dataset": "d", "model": "m", "protocol": "all", "scheme": "binomial", "sample_size": 50,
                         "estimator": "mle", "repeat": repeat, "metric": "recall", "k": k, "estimate": estimate,
                         "exact": exact, "mean_sample_size": 50.0})
    runs = pd.DataFrame(rows).astype({"k": "Int64"})
    errors = ad.repeat_errors(runs, ["recall"], 3)
    # K = 1 has exact value 0: no relative error, left out of the average
    np.testing.assert_allclose(errors["average_relative_error"], [(0.1 / 0.4 + 0.1 / 0.8) / 2,
                                                                  (0.1 / 0.4 + 0.2 / 0.8) / 2])
    summary = ad.summarize_errors(errors)
    assert summary["mean"].item() == pytest.approx(errors["average_relative_error"].mean())
    assert summary["std"].item() == pytest.approx(errors["average_relative_error"].std(ddof=1))
    assert summary["repeats"].item() == 2
    with pytest.raises(ValueError, match="lack some of the cut-offs"):
        ad.repeat_errors(runs[runs["k"] != 2], ["recall"], 3)


def _notebook_04_tables(runs, config):
    """Notebook 04's tables relative_error and winners, computed here from first principles (and with
    rows that notebook 06 must ignore: another estimator and another sample size)."""
    sel = runs[runs["estimator"].isin(config["fixed_estimators"])]
    sel = pd.concat([sel, sel.assign(sample_size=100), sel[sel["estimator"] == "bv_mes"].assign(estimator="mle")])
    keys = ["dataset", "model", "protocol", "scheme", "sample_size", "estimator", "metric"]
    errors = []
    for key, part in sel[sel["k"] <= config["max_k"]].groupby(keys):
        part = part[part["exact"] != 0]
        per_repeat = (abs(part["estimate"] - part["exact"]) / part["exact"]).groupby(part["repeat"]).mean()
        errors.append({**dict(zip(keys, key, strict=True)), "mean": per_repeat.mean(), "std": per_repeat.std(),
                       "repeats": per_repeat.size})
    wins = []
    settings = ["dataset", "protocol", "scheme", "sample_size", "estimator", "metric", "k"]
    for key, part in sel.groupby(settings):
        truth = part.groupby("model")["exact"].first().idxmax()
        picked = part.loc[part.groupby("repeat")["estimate"].idxmax(), "model"]
        wins.append({**dict(zip(settings, key, strict=True)), "correct": int((picked == truth).sum()),
                     "repeats": picked.size})
    return pd.DataFrame(errors), pd.DataFrame(wins)


def test_fixed_rows_read_from_notebook_04_equal_those_computed_here(study, tmp_path):
    root, runs = study
    here = ad.study_tables(CONFIG, 1, runs, root)
    errors, wins = _notebook_04_tables(runs, CONFIG)
    for name, frame in (("relative_error", errors), ("winners", wins)):
        write_table(frame, root / "results" / "tables" / "04_estimators" / f"{name}.csv")
    reused = {**CONFIG, "fixed_reused": ["tiny"]}
    assert ad.inputs(reused)[-2:] == ["results/tables/04_estimators/relative_error.csv",
                                      "results/tables/04_estimators/winners.csv"]
    assert not [p for p in ad.inputs(CONFIG) if "04_estimators" in p]
    there = ad.study_tables(reused, 1, runs[~runs["estimator"].isin(CONFIG["fixed_estimators"])], root)
    for name in ("fixed_vs_adaptive", "winners"):
        pd.testing.assert_frame_equal(here[name], there[name], check_dtype=False, rtol=1e-12)
    for name in set(here) - {"fixed_vs_adaptive", "winners"}:
        pd.testing.assert_frame_equal(here[name], there[name])
    one = (errors["model"] == "m2") & (errors["estimator"] == "mn_mle") & (errors["metric"] == "ndcg") & \
        (errors["sample_size"] == 40)
    write_table(errors[~one], root / "results" / "tables" / "04_estimators" / "relative_error.csv")
    with pytest.raises(ValueError, match=r"lacks 1 rows.*fixed_reused"):
        ad.study_tables(reused, 1, runs, root)


def test_table_contents(study):
    root, runs = study
    tables = ad.study_tables(CONFIG, 1, runs, root)
    fva = tables["fixed_vs_adaptive"]
    assert tuple(fva.columns) == ad.FIXED_VS_ADAPTIVE_COLUMNS
    assert fva["method"].tolist()[:5] == [*CONFIG["fixed_estimators"], "adaptive_mle"]
    assert len(fva) == 2 * 2 * 5 and set(fva.loc[fva["method"] != "adaptive_mle", "mean_sample_size"]) == {40.0}
    assert tuple(tables["winners"].columns) == ad.WINNER_COLUMNS and len(tables["winners"]) == 3 * 2 * 5
    blind = tables["blind_spot_sampled_ranks"]
    np.testing.assert_allclose(blind.groupby("model")["probability"].sum(), 1.0)
    by_k = tables["relative_error_by_k"]
    assert set(zip(by_k["estimator"], by_k["sample_size"], strict=True)) == {("mle", 10), ("adaptive_mle", 80)}
    sizes = tables["adaptive_sizes"]
    assert sizes["n_max"].tolist() == [20, 40, 80] * 2
    assert ((sizes["mean_sample_size"] - sizes["expected_sample_size"]).abs() < 0.15 * sizes["expected_sample_size"]).all()
    assert (sizes["first_at_ceiling"] <= sizes["at_ceiling"]).all()
    front = tables["frontier"]
    assert front["items_per_user"].between(10, 80).all()


def test_most_accurate_and_frontier_savings_by_hand():
    table = pd.DataFrame({"dataset": "d", "model": ["a"] * 3 + ["b"] * 3, "metric": "ndcg",
                          "method": ["bv_mes", "mn_mes", "adaptive_mle"] * 2,
                          "mean_sample_size": [500, 500, 250] * 2, "mean": [0.04, 0.03, 0.015, 0.02, 0.05, 0.03]})
    best = ad.most_accurate(table).set_index("model")
    assert best.loc["a", "best_fixed"] == "mn_mes" and best.loc["a", "error_ratio"] == pytest.approx(0.5)
    assert bool(best.loc["a", "adaptive_best"]) and not bool(best.loc["b", "adaptive_best"])
    front = pd.DataFrame({"dataset": "d", "model": "a", "metric": "ndcg",
                          "sampling": ["fixed"] * 3 + ["adaptive"] * 2, "sample_size": [100, 500, 1000, 800, 3200],
                          "items_per_user": [100, 500, 1000, 150, 200], "mean": [0.1, 0.04, 0.02, 0.06, 0.03]})
    savings = ad.frontier_savings(front, {"d": 3200}).iloc[0]
    assert savings["fixed_n_as_accurate"] == 1000 and savings["items_ratio"] == pytest.approx(5.0)
    assert pd.isna(ad.frontier_savings(front.assign(mean=[0.1, 0.1, 0.1, 0.06, 0.03]), {"d": 3200})
                   ["fixed_n_as_accurate"].iloc[0])


def test_layouts(study):
    root, runs = study
    tables = ad.study_tables(CONFIG, 1, runs, root)
    layout = ad.fixed_vs_adaptive_layout(tables["fixed_vs_adaptive"], "ndcg")
    assert list(layout.columns) == [*CONFIG["fixed_estimators"], "adaptive items per user", "adaptive_mle"]
    assert layout.index.tolist() == [("tiny", "m1"), ("tiny", "m2")] and " ± " in layout.iloc[0, 0]
    wins = ad.winners_layout(tables["winners"])
    assert list(wins.columns) == [*CONFIG["fixed_estimators"], "adaptive_mle"] and len(wins) == 2 * 3


def test_paper_tables_of_the_adaptive_experiments():
    table = paper_table("li2023aaai_adaptive")
    assert len(table) == 2 * 3 * 5 * 5 and table["source"].str.contains("Table 7|Table 11").all()
    row = table.query("paper_dataset == 'pinterest-20' and model == 'ease' and metric == 'ndcg' "
                      "and method == 'adaptive_mle'").iloc[0]
    assert (row["mean_sample_size"], row["paper_percent"], row["paper_std_percent"]) == (307.74, 1.46, 0.63)
    wins = paper_table("li2023aaai_winners")
    assert len(wins) == 3 * 2 * 3 * 5 and wins["paper_correct"].between(0, 100).all()
    assert set(wins.loc[wins["method"] == "adaptive_mle", "sample_size"]) == {3200}


# ----------------------------------------------------------------------------- configuration and CLI


@pytest.mark.parametrize(("change", "match"), [
    ({"n0": 1}, "n0 must be >= 2"),
    ({"n_max": {"other": 80}}, "n_max names no size for the dataset"),
    ({"n_max": {"tiny": 5}}, "at least n0"),
    ({"fixed_reused": ["other"]}, "not studied"),
    ({"blind_spot_model": "m9"}, "not a model of"),
    ({"scheme": "poisson"}, "unknown scheme"),
])
def test_bad_configurations_are_rejected(change, match):
    with pytest.raises(ValueError, match=match):
        ad.chunks({**CONFIG, **change})


def test_sample_sizes_name_the_largest_n_drawn():
    assert ad.sample_sizes(CONFIG) == {("tiny", "unseen"): 80}
    assert ad.sample_sizes({**CONFIG, "fixed_sample_size": {"tiny": 90}}) == {("tiny", "unseen"): 90}
    assert ad.sample_sizes({**CONFIG, "fixed_sample_size": {"tiny": 90}, "fixed_reused": ["tiny"]}) == \
        {("tiny", "unseen"): 80}


def test_cli_writes_identical_tables_twice(study, tmp_path):
    root, _ = study
    settings = {**CONFIG, "repeats": 2, "frontier_repeats": 2}
    config = json_file(tmp_path / "config.json", settings)
    runs = []
    for model in ("m1", "m2"):
        out = tmp_path / f"{model}.parquet"
        assert cli(["study", "chunk", "--study", "adaptive_sampling", "--config", config, "--seed", "4", "--root",
                    str(root), "--dataset", "tiny", "--model", model, "--protocol", "unseen", "--output", str(out)]) == 0
        runs.append(str(out))
    names = list(ad.study_tables(settings, 4, pd.concat(pd.read_parquet(p) for p in runs), root))
    for folder in ("a", "b"):
        assert cli(["study", "tables", "--study", "adaptive_sampling", "--config", config, "--seed", "4",
                    "--root", str(root), "--runs", *runs, "--tables", *names, "--out-dir", str(tmp_path / folder)]) == 0
    for name in names:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
