"""The study of notebook 05 (protocols in use) and its rule model_pairs on tiny ranks: the runs
against independent formulations, the breakdown rule, the kernels on the same draws, the equal
budgets of the designs, the paired intervals, determinism and the errors for designs it cannot run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling.compare import compare, paired_difference
from itemsampling.runs import Run
from itemsampling_study import model_pairs as mp
from itemsampling_study import protocols_in_use as piu
from itemsampling_study.engine import draw_sampled_ranks
from itemsampling_study.tables import write_table

CONFIG = {"datasets": ["tiny"], "models": ["m1", "m2", "m3"], "protocol": "unseen", "n_item_groups": 2,
          "metrics": ["recall", "ndcg"], "ks": [1, 5], "level": 0.9,
          "tiny_n": {"sample_sizes": [5, 20], "estimators": ["sampled", "mn_mes"], "estimators_without_intervals": ["mle"],
                     "schemes": ["binomial", "hypergeometric"], "repeats": 3,
                     "breakdown": {"relative_rmse": 0.5, "coverage": 0.8}},
          "kernels": {"sample_sizes": [20], "estimators": ["mle", "mn_mes"]},
          "ncf_negatives": None, "ncf_catalogue_items": 400,
          "designs": {"names": ["uniform_mn_mes", "uniform_mle"], "n0": 10, "n_max": [40], "repeats": 2},
          "pairs": {"sample_size": 20, "estimator": "mn_mes", "metrics": ["recall"], "ks": [5], "repeats": 3}}


def _ranks(root, model):
    return pd.read_parquet(root / "results" / "ranks" / "tiny" / model / "unseen.parquet")


def _runs(root, config=CONFIG, seed=1):
    return pd.concat([piu.chunk_table(config, seed, c, _ranks(root, c["model"])) for c in piu.chunks(config)],
                     ignore_index=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Tiny ranks of three models (300 users, N_u in 300..400) and the study's runs."""
    root = tmp_path_factory.mktemp("protocols")
    for j, (model, scale) in enumerate((("m1", 20.0), ("m2", 60.0), ("m3", 120.0))):
        rng = np.random.default_rng(40 + j)
        n_candidates = 400 - rng.integers(0, 100, 300)
        out = root / "results" / "ranks" / "tiny" / model
        out.mkdir(parents=True)
        pd.DataFrame({"user": np.arange(300), "item": rng.integers(0, 400, 300),
                      "rank": np.minimum(rng.geometric(1.0 / scale, 300), n_candidates),
                      "n_candidates": n_candidates}).to_parquet(out / "unseen.parquet")
    return root, _runs(root)


def test_runs_hold_every_part_with_intervals_only_where_configured(study):
    _, runs = study
    assert list(runs.columns) == list(piu.RUN_COLUMNS)
    tiny = runs[runs["part"] == "tiny_n"]
    assert set(tiny["estimator"]) == {"sampled", "mn_mes", "mle"}
    assert tiny.loc[tiny["estimator"] == "mle", "lower"].isna().all()
    assert tiny.loc[tiny["estimator"] != "mle", "lower"].notna().all()
    assert (tiny["kernel"] == tiny["scheme"]).all()
    assert set(runs["part"]) == {"tiny_n", "kernels", "designs"}


def test_sampled_estimate_is_the_metric_of_the_engines_draw(study):
    """The sampled Recall@K of a tiny_n run is the share of users with r_u <= K in the draw."""
    root, runs = study
    ranks = _ranks(root, "m2")
    labels = {"dataset": "tiny", "model": "m2", "protocol": "unseen"}
    r = draw_sampled_ranks(ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy(), 5, seed=1, labels=labels,
                           scheme="hypergeometric", repeat=2)
    row = runs[(runs["part"] == "tiny_n") & (runs["model"] == "m2") & (runs["scheme"] == "hypergeometric")
               & (runs["sample_size"] == 5) & (runs["repeat"] == 2) & (runs["estimator"] == "sampled")
               & (runs["metric"] == "recall") & (runs["k"] == 1)]
    assert row["estimate"].item() == pytest.approx(np.mean(r <= 1))


def test_kernels_part_reads_the_binomial_draws_under_the_hypergeometric_kernel(study):
    root, runs = study
    ranks = _ranks(root, "m1")
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    r = draw_sampled_ranks(R, N, 20, seed=1, labels={"dataset": "tiny", "model": "m1", "protocol": "unseen"},
                           scheme="binomial", repeat=1)
    direct = its.estimate(r, N, 20, "mn_mes", metrics=["ndcg"], ks=[5], scheme="hypergeometric", n_groups=2)
    row = runs[(runs["part"] == "kernels") & (runs["model"] == "m1") & (runs["repeat"] == 1)
               & (runs["estimator"] == "mn_mes") & (runs["metric"] == "ndcg") & (runs["k"] == 5)]
    assert row["estimate"].item() == pytest.approx(direct["estimate"].item(), rel=1e-9)
    table = piu.replacement_kernels(runs)
    binom = runs[(runs["part"] == "tiny_n") & (runs["scheme"] == "binomial") & (runs["sample_size"] == 20)
                 & (runs["model"] == "m1") & (runs["estimator"] == "mn_mes") & (runs["metric"] == "ndcg")
                 & (runs["k"] == 5)]
    hyper = runs[(runs["part"] == "kernels") & (runs["model"] == "m1") & (runs["estimator"] == "mn_mes")
                 & (runs["metric"] == "ndcg") & (runs["k"] == 5)]
    got = table[(table["model"] == "m1") & (table["estimator"] == "mn_mes") & (table["metric"] == "ndcg")
                & (table["k"] == 5)]
    assert got["mean_abs_difference"].item() == pytest.approx(
        np.mean(np.abs(hyper["estimate"].to_numpy() - binom["estimate"].to_numpy())))


def test_accuracy_against_a_direct_computation(study):
    _, runs = study
    table = piu.accuracy(runs)
    sel = runs[(runs["part"] == "tiny_n") & (runs["model"] == "m3") & (runs["scheme"] == "binomial")
               & (runs["sample_size"] == 20) & (runs["estimator"] == "mn_mes") & (runs["metric"] == "recall")
               & (runs["k"] == 5)]
    row = table[(table["model"] == "m3") & (table["scheme"] == "binomial") & (table["sample_size"] == 20)
                & (table["estimator"] == "mn_mes") & (table["metric"] == "recall") & (table["k"] == 5)]
    err = sel["estimate"].to_numpy() - sel["exact"].to_numpy()
    assert row["rmse"].item() == pytest.approx(np.sqrt(np.mean(err ** 2)))
    assert row["relative_rmse"].item() == pytest.approx(np.sqrt(np.mean(err ** 2)) / sel["exact"].iloc[0])
    covered = (sel["lower"] <= sel["exact"]) & (sel["exact"] <= sel["upper"])
    assert row["coverage"].item() == pytest.approx(covered.mean())


def test_breakdown_rule_and_the_sizes_it_gives():
    """Relative RMSE above the threshold or coverage below it breaks down; reliable_from is the
    smallest n from which on nothing breaks down."""
    rows = []
    for n, rel, cov in ((5, 0.9, 0.95), (10, 0.3, 0.5), (20, 0.2, 0.9), (50, 0.6, np.nan), (100, 0.1, 0.85)):
        rows += [{"dataset": d, "model": "m", "scheme": "binomial", "estimator": "e", "metric": "recall", "k": 1,
                  "sample_size": n, "relative_rmse": rel, "coverage": cov} for d in ("a", "b")]
    pooled = piu.breakdown(pd.DataFrame(rows), {"relative_rmse": 0.5, "coverage": 0.8})
    assert pooled["breaks_down"].tolist() == [True, True, False, True, False]
    assert pooled["error_breaks"].tolist() == [True, False, False, True, False]
    assert pooled["coverage_breaks"].tolist() == [False, True, False, False, False]
    sizes = piu.breakdown_sizes(pooled)
    assert sizes["breaks_down_at"].item() == 50 and sizes["reliable_from"].item() == 100
    assert sizes["reliable_from_error"].item() == 100 and pd.isna(sizes["reliable_from_coverage"].item())
    never = piu.breakdown_sizes(pooled.assign(breaks_down=False, error_breaks=False, coverage=0.9,
                                              coverage_breaks=[True, False, False, False, False]))
    assert pd.isna(never["breaks_down_at"].item()) and never["reliable_from"].item() == 5
    assert never["reliable_from_error"].item() == 5 and never["reliable_from_coverage"].item() == 10


def test_designs_score_the_adaptive_budget(study):
    _, runs = study
    designs = runs[runs["part"] == "designs"]
    for model, part in designs.groupby("model"):
        adaptive = part[part["design"] == "adaptive_mle"].drop_duplicates("repeat")["mean_sample_size"].mean()
        uniform = part[part["design"] != "adaptive_mle"]
        assert set(uniform["sample_size"]) == {round(float(adaptive))}, model
    table = piu.design_errors(runs)
    assert set(table["design"]) == {"adaptive_mle", "uniform_mn_mes", "uniform_mle"}
    assert (table["relative_error"].dropna() >= 0).all()


def test_designs_that_need_a_popularity_profile_are_named_in_the_error():
    bad = {**CONFIG, "designs": {**CONFIG["designs"], "names": ["popularity_corrected"]}}
    with pytest.raises(ValueError, match="popularity profile"):
        piu.chunks(bad)
    with pytest.raises(ValueError, match="design"):
        piu.chunks({**CONFIG, "designs": {**CONFIG["designs"], "names": ["uniform_bv"]}})


def test_tables_are_deterministic_byte_for_byte(study, tmp_path):
    root, runs = study
    again = _runs(root)
    pd.testing.assert_frame_equal(runs, again)
    for attempt, frame in enumerate((runs, again)):
        for name, table in piu.study_tables(CONFIG, 1, frame, root).items():
            write_table(table, tmp_path / str(attempt) / f"{name}.csv")
    for path in (tmp_path / "0").iterdir():
        assert path.read_bytes() == (tmp_path / "1" / path.name).read_bytes(), path.name
    assert list(piu.study_tables(CONFIG, 1, runs, root)["findings"].columns) == ["finding", "table"]


def test_paired_difference_is_compares_interval():
    rng = np.random.default_rng(3)
    runs = [Run(ranks=rng.integers(1, 21, 200), sample_size=20, n_items=300, protocol="uniform_with_replacement",
                model=m) for m in ("a", "b")]
    got = compare(*runs, "recall", 5, "mn_mes", 0.9)
    est = [its.estimate(run.ranks, 300, 20, "mn_mes", metrics=["recall"], ks=[5])["estimate"].item() for run in runs]
    psi = [its.estimators.influence_values(run.ranks, 300, 20, its.Estimator("mn_mes"), metrics=["recall"], ks=[5])[:, 0]
           for run in runs]
    direct = paired_difference(est[0], est[1], psi[0], psi[1], 0.9)
    assert direct == pytest.approx({k: got[k] for k in direct})
    with pytest.raises(ValueError, match="same >= 2 users"):
        paired_difference(0.1, 0.2, psi[0], psi[1][:-1])


def test_model_pairs_cover_and_count_false_alarms(study):
    root, _ = study
    config = mp.study_config({"protocols_in_use": CONFIG})
    tables = mp.study_tables(config, 1, None, root)
    pairs, same = tables["model_pairs"], tables["a_vs_a"]
    assert len(pairs) == 3 and len(same) == 3
    assert pairs["coverage"].between(0, 1).all() and (pairs["repeats"] == 3).all()
    assert np.allclose(same["nominal"], 0.1) and same["rate"].between(0, 1).all()
    exact = {m: its.global_metrics(_ranks(root, m)["rank"], _ranks(root, m)["n_candidates"], ["recall"], [5])
             ["value"].item() for m in CONFIG["models"]}
    row = pairs[(pairs["model_a"] == "m1") & (pairs["model_b"] == "m3")]
    assert row["true_difference"].item() == pytest.approx(exact["m1"] - exact["m3"])
    again = mp.study_tables(config, 1, None, root)
    for name, frame in tables.items():
        pd.testing.assert_frame_equal(frame, again[name])
