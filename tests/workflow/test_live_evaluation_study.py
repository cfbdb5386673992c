"""The live evaluation of notebook 06 (rule live_evaluation): models refitted from train.json,
adaptive evaluation against their own scores and full ranking; checked against a run by hand,
for determinism, the check of the committed ranks, and the notebook's layouts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.adaptive_evaluation import evaluate_adaptive
from itemsampling.cli import main as cli
from itemsampling.data import load_dataset
from itemsampling.metrics import global_metrics
from itemsampling.models.trained import load_trained
from itemsampling_study import live_evaluation as le
from itemsampling_study.engine import derive_seed
from itemsampling_study.tables import read_model_ranks

from .conftest import json_file

MODELS = ["popularity", "itemknn", "ease"]
CONFIG = {"dataset": "synthetic", "models": MODELS, "protocol": "all", "scheme": "binomial", "n0": 10,
          "n_max": [10, 80, 640], "repeats": 3, "fit_threads": 1, "metrics": ["recall", "ndcg"], "max_k": 10}
SEED = 5


@pytest.fixture(scope="module")
def study(tmp_path_factory, train_synthetic):
    """Three models trained on the synthetic data (1,000 items, 2,000 users; no saved states) and the tables."""
    root = train_synthetic(tmp_path_factory.mktemp("live"), MODELS)
    return root, le.study_tables(CONFIG, SEED, None, root)


def test_config_takes_metrics_and_max_k_of_the_section():
    section = {"metrics": ["ndcg"], "max_k": 7, "live": {"dataset": "d", "n0": 3}}
    assert le.study_config({"adaptive_sampling": section}) == {"dataset": "d", "n0": 3, "metrics": ["ndcg"],
                                                               "max_k": 7}
    assert le.chunks(CONFIG) == []
    assert le.sample_sizes(CONFIG) == {("synthetic", "all"): 640}
    assert le.inputs(CONFIG)[:2] == ["results/ranks/synthetic/popularity/train.json",
                                     "results/ranks/synthetic/popularity/all.parquet"]


@pytest.mark.parametrize(("change", "match"), [
    ({"n_max": [5, 80]}, "at least n0 = 10"),
    ({"scheme": "actual"}, "unknown scheme"),
    ({"models": ["ease", "ease"]}, "distinct models"),
])
def test_bad_configurations_are_rejected(change, match):
    with pytest.raises(ValueError, match=match):
        le.chunks({**CONFIG, **change})


def test_tables_equal_a_run_by_hand(study):
    """Each adaptive row from evaluate_adaptive with the documented seed, exact values from the
    committed ranks, relative errors averaged over K by hand; full ranking: M x N, no error."""
    root, tables = study
    evaluation = tables["live_evaluation"]
    assert list(evaluation.columns) == list(le.EVALUATION_COLUMNS)
    dataset = load_dataset("synthetic")
    ks = np.arange(1, CONFIG["max_k"] + 1)
    for model_name in MODELS:
        model, record = load_trained(root / "results" / "ranks" / "synthetic" / model_name, dataset)
        committed = read_model_ranks("synthetic", model_name, "all", root)
        exact = global_metrics(committed["rank"], committed["n_candidates"].to_numpy(), CONFIG["metrics"], ks)
        for n_max in CONFIG["n_max"]:
            errors, items = {m: [] for m in CONFIG["metrics"]}, []
            for repeat in range(CONFIG["repeats"]):
                rng = np.random.default_rng(derive_seed(SEED, "synthetic", model_name, "all", "binomial", n_max, repeat))
                live = evaluate_adaptive(model.score_items, dataset.test_items, dataset.n_items, n0=CONFIG["n0"],
                                         n_max=n_max, metrics=CONFIG["metrics"], ks=ks, rng=rng,
                                         tie_seed=record["seed"], progress=False)
                items.append(live.ranks["sample_size"].mean())
                for metric in CONFIG["metrics"]:
                    estimate = live.estimates[live.estimates["metric"] == metric]["estimate"].to_numpy()
                    truth = exact[exact["metric"] == metric]["value"].to_numpy()
                    errors[metric].append(np.mean(np.abs(estimate - truth) / truth))
            rows = evaluation[(evaluation["model"] == model_name) & (evaluation["n_max"] == n_max)]
            assert list(rows["metric"]) == CONFIG["metrics"]
            np.testing.assert_allclose(rows["mean"], [np.mean(errors[m]) for m in CONFIG["metrics"]], rtol=1e-12)
            np.testing.assert_allclose(rows["std"], [np.std(errors[m], ddof=1) for m in CONFIG["metrics"]], rtol=1e-10)
            np.testing.assert_allclose(rows["items_per_user"], np.mean(items), rtol=1e-12)
            np.testing.assert_allclose(rows["share_of_full_ranking"], np.mean(items) / dataset.n_items, rtol=1e-12)
            assert (rows["repeats"] == CONFIG["repeats"]).all() and (rows["n0"] == CONFIG["n0"]).all()
        full = evaluation[(evaluation["model"] == model_name) & (evaluation["method"] == "full_ranking")]
        assert list(full["metric"]) == CONFIG["metrics"] and full["n_max"].isna().all()
        assert (full["items_per_user"] == dataset.n_items).all() and (full["share_of_full_ranking"] == 1).all()
        assert (full["mean"] == 0).all()


def test_adaptive_errors_are_small_and_items_grow_with_n_max(study):
    _, tables = study
    adaptive = tables["live_evaluation"].query("method == 'adaptive'")
    largest = adaptive[adaptive["n_max"] == max(CONFIG["n_max"])]["mean"]
    assert largest.max() < 0.15  # 640 of the 1,000 items at most: a few percent (n_max = n0 = 10: up to 0.45)
    assert largest.mean() < adaptive[adaptive["n_max"] == CONFIG["n0"]]["mean"].mean() / 3
    items = adaptive.drop_duplicates(["model", "n_max"]).pivot(index="n_max", columns="model", values="items_per_user")
    assert (items.iloc[0] == CONFIG["n0"]).all()  # n_max = n0: one fixed sample, no doubling
    assert (items.diff().iloc[1:] > 0).all().all()


def test_times_hold_every_run(study):
    _, tables = study
    times = tables["live_times"]
    assert list(times.columns) == list(le.TIMES_COLUMNS)
    per_model = CONFIG["repeats"] * (len(CONFIG["n_max"]) + 1)
    assert times.groupby("model").size().to_dict() == dict.fromkeys(MODELS, per_model)
    assert (times["seconds"] > 0).all()
    adaptive = times[times["method"] == "adaptive"]
    assert (adaptive["scoring_seconds"] > 0).all() and (adaptive["scoring_seconds"] <= adaptive["seconds"]).all()
    assert times.loc[times["method"] == "full_ranking", "scoring_seconds"].isna().all()


def _committed_as(root, tmp_path, change):
    """A root whose committed itemknn ranks are ``change(committed)``; the same train.json."""
    committed = read_model_ranks("synthetic", "itemknn", "all", root)
    folder = tmp_path / "results" / "ranks" / "synthetic" / "itemknn"
    folder.mkdir(parents=True)
    change(committed).to_parquet(folder / "all.parquet")
    (folder / "train.json").write_bytes((root / "results" / "ranks" / "synthetic" / "itemknn" / "train.json").read_bytes())
    return committed


def test_a_refit_that_is_another_model_is_rejected(study, tmp_path):
    root, _ = study
    _committed_as(root, tmp_path, lambda c: c.assign(rank=c["rank"].iloc[::-1].to_numpy()))
    with pytest.raises(ValueError, match=r"not the committed model: \d+ of 2000 held-out items moved"):
        le.study_tables({**CONFIG, "models": ["itemknn"], "n_max": [10], "repeats": 2}, SEED, None, tmp_path)


def test_a_refit_a_rank_away_is_evaluated_and_reported(study, tmp_path, capsys):
    """Other BLAS kernels move a near-tied held-out item by a rank: reported, not an error."""
    root, _ = study
    _committed_as(root, tmp_path, lambda c: c.assign(rank=np.where(c.index == 3, c["rank"] + 1, c["rank"])))
    tables = le.study_tables({**CONFIG, "models": ["itemknn"], "n_max": [10], "repeats": 2}, SEED, None, tmp_path)
    assert "moves 1 of 2000 held-out items from their committed ranks, by at most 1" in capsys.readouterr().err
    assert len(tables["live_evaluation"]) > 0


def test_cli_writes_the_same_evaluation_twice(study, tmp_path):
    root, _ = study
    config = json_file(tmp_path / "config.json",
                       {**CONFIG, "models": ["popularity", "ease"], "n_max": [20, 80], "repeats": 2})
    for folder in ("a", "b"):
        assert cli(["study", "tables", "--study", "live_evaluation", "--config", config, "--seed", "1", "--root",
                    str(root), "--tables", "live_evaluation", "live_times", "--out-dir", str(tmp_path / folder)]) == 0
    first = (tmp_path / "a" / "live_evaluation.csv").read_bytes()
    assert first == (tmp_path / "b" / "live_evaluation.csv").read_bytes()
    assert b",full_ranking,,,1,1000,1,recall,0,0\n" in first


def test_summary_and_comparison_with_the_simulation_by_hand():
    labels = {"dataset": "d", "protocol": "all", "scheme": "binomial"}
    evaluation = pd.DataFrame([
        {**labels, "model": "m", "method": "adaptive", "n0": 10, "n_max": 40, "repeats": 4, "items_per_user": 12.0,
         "share_of_full_ranking": 0.12, "metric": "recall", "mean": 0.2, "std": 0.1},
        {**labels, "model": "m", "method": "full_ranking", "n0": pd.NA, "n_max": pd.NA, "repeats": 1,
         "items_per_user": 100.0, "share_of_full_ranking": 1.0, "metric": "recall", "mean": 0.0, "std": 0.0},
    ]).astype({"n0": "Int64", "n_max": "Int64"})
    times = pd.DataFrame([
        {**labels, "model": "m", "method": "adaptive", "n_max": 40, "repeat": r, "seconds": s, "scoring_seconds": c}
        for r, (s, c) in enumerate([(1.0, 0.5), (3.0, 0.3), (2.0, 0.4)])] + [
        {**labels, "model": "m", "method": "full_ranking", "n_max": pd.NA, "repeat": r, "seconds": s,
         "scoring_seconds": np.nan} for r, s in enumerate([4.0, 8.0])]).astype({"n_max": "Int64"})
    summary = le.live_summary(evaluation, times).set_index("method")
    assert summary.loc["adaptive", "seconds"] == 2.0 and summary.loc["full_ranking", "seconds"] == 6.0
    assert summary.loc["adaptive", "scoring_share"] == 0.2 and np.isnan(summary.loc["full_ranking", "scoring_share"])
    assert summary.loc["adaptive", "time_ratio"] == pytest.approx(1 / 3)
    assert summary.loc["adaptive", "error_recall"] == 0.2 and summary.loc["full_ranking", "time_ratio"] == 1.0
    frontier = pd.DataFrame([
        {**labels, "model": "m", "sampling": s, "estimator": e, "sample_size": 40, "metric": "recall",
         "items_per_user": 12.5, "fraction_of_items": 0.125, "mean": 0.14, "std": 0.2, "repeats": 16}
        for s, e in (("adaptive", "adaptive_mle"), ("fixed", "mle"))])
    both = le.compare_with_simulation(evaluation, frontier, n0=10)
    assert len(both) == 1
    assert both["z"].iloc[0] == pytest.approx(0.06 / np.sqrt(0.01 / 4 + 0.04 / 16))
    assert le.compare_with_simulation(evaluation, frontier, n0=20).empty


def test_only_ease_scores_single_items():
    assert le.scores_single_items("ease")
    assert not any(le.scores_single_items(m) for m in ("popularity", "itemknn", "ials"))
