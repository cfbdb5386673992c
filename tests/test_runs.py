"""Readers of framework runs (:mod:`itemsampling.runs`) and the ``correct`` command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import itemsampling.runs as runs
from itemsampling import estimate, sampled_ranks_from_scores
from itemsampling.cli import main


def _negatives(rng, n_users=50, n_items=300, n_neg=19, duplicate_rows=()):
    """Positive item and n_neg distinct negatives per user; the rows in duplicate_rows repeat one."""
    rows = np.stack([rng.choice(n_items, n_neg + 1, replace=False) for _ in range(n_users)])
    for row in duplicate_rows:
        rows[row, 2] = rows[row, 1]
    return rows


def _write_ncf(path, rows):
    with open(path, "w") as handle:
        for user, row in enumerate(rows):
            handle.write(f"({user},{row[0]})\t" + "\t".join(map(str, row[1:])) + "\n")


def test_ncf_reader_matches_the_ranks_of_its_scores(tmp_path):
    rng = np.random.default_rng(0)
    rows = _negatives(rng)
    _write_ncf(tmp_path / "x.test.negative", rows)
    scores = rng.normal(size=rows.shape)
    run = runs.read_run(tmp_path / "x.test.negative", "ncf", scores=scores, n_items=300, model="m")
    assert run.protocol == "uniform_without_replacement"
    np.testing.assert_array_equal(run.ranks, sampled_ranks_from_scores(scores, 0, 0))
    np.testing.assert_array_equal(run.users, np.arange(50))
    assert run.sample_size.tolist() == [20] * 50


def test_duplicate_negatives_warn_and_mean_sampling_with_replacement(tmp_path):
    rng = np.random.default_rng(1)
    rows = _negatives(rng, duplicate_rows=(3, 7))
    _write_ncf(tmp_path / "x.test.negative", rows)
    with pytest.warns(runs.DuplicateNegativesWarning, match="2 of 50 users"):
        run = runs.read_run(tmp_path / "x.test.negative", "elliot", scores=rng.normal(size=rows.shape),
                            n_items=300)
    assert run.protocol == "uniform_with_replacement"
    table = runs.correct(run, metrics=["recall"], ks=[5], interval=None)
    expected = estimate(run.ranks, 300, 20, "mn_mes", metrics=["recall"], ks=[5], scheme="binomial")
    assert table["estimate"].iloc[0] == expected["estimate"].iloc[0]


def test_rechorus_reader(tmp_path):
    rng = np.random.default_rng(2)
    rows = _negatives(rng)
    pd.DataFrame({"user_id": np.arange(50) + 1, "item_id": rows[:, 0], "time": 0,
                  "neg_items": [str(list(map(int, row[1:]))) for row in rows]}).to_csv(
        tmp_path / "test.csv", sep="\t", index=False)
    scores = rng.normal(size=rows.shape)
    np.save(tmp_path / "pred.npy", scores)
    run = runs.read_run(tmp_path / "test.csv", "rechorus", scores=tmp_path / "pred.npy", n_items=300)
    np.testing.assert_array_equal(run.ranks, sampled_ranks_from_scores(scores, 0, 0))
    np.testing.assert_array_equal(run.users, np.arange(50) + 1)


def _recbole_file(path, ranks, n_candidates, mode="uni100", users=None):
    users = np.arange(len(ranks)) if users is None else users
    pd.DataFrame({"user_id": users, "rank": ranks, "n_candidates": n_candidates, "n_items": 1000,
                  "mode": mode}).to_csv(path, index=False)


def test_recbole_file_with_distinct_candidates_is_thinned_exactly(tmp_path):
    """Thinning n_u -> min n keeps r - 1 hypergeometric: its mean is (r_u - 1)(n - 1)/(n_u - 1)."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(95, 102, size=20000)
    ranks = rng.integers(1, sizes + 1)
    _recbole_file(tmp_path / "r.csv", ranks, sizes)
    run = runs.read_run(tmp_path / "r.csv", "recbole")
    thinned = runs.thin(run, 0)
    assert np.all(thinned.sample_size == 95)
    expected = (ranks - 1) * 94 / (sizes - 1)
    assert abs((thinned.ranks - 1).mean() - expected.mean()) < 4 * (thinned.ranks - 1).std() / np.sqrt(20000)
    np.testing.assert_array_equal(runs.thin(run, 0).ranks, thinned.ranks)  # seeded


def test_unsupported_protocols_name_what_is_missing(tmp_path):
    _recbole_file(tmp_path / "pop.csv", [1, 2, 3], 101, mode="pop100")
    with pytest.raises(NotImplementedError, match="popularity kernel"):
        runs.correct(runs.read_run(tmp_path / "pop.csv", "recbole"))
    _recbole_file(tmp_path / "multi.csv", [1, 2, 3], 101, users=[0, 0, 1])
    with pytest.raises(NotImplementedError, match=r"several positives per user .*leave-one-out"):
        runs.correct(runs.read_run(tmp_path / "multi.csv", "recbole"))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"outside 1\.\.n_u"):
        runs.Run([0, 1], 10, 100, "uniform_without_replacement")
    with pytest.raises(ValueError, match="needs the catalogue size"):
        runs.read_run(np.zeros((3, 4)), "scores")
    with pytest.raises(ValueError, match="unknown format"):
        runs.read_run("x", "surprise")


def test_correct_command(tmp_path, capsys):
    rng = np.random.default_rng(4)
    _recbole_file(tmp_path / "r.csv", rng.integers(1, 102, size=500), 101)
    assert main(["correct", str(tmp_path / "r.csv"), "--format", "recbole", "--k", "5,10"]) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert table.columns.tolist()[:4] == ["model", "protocol", "metric", "k"]
    assert len(table) == 4 and {"lower", "upper"} <= set(table.columns)
    _recbole_file(tmp_path / "p.csv", [1, 2], 101, mode="pop100")
    assert main(["correct", str(tmp_path / "p.csv"), "--format", "recbole"]) == 2
    assert "popularity kernel" in capsys.readouterr().err


def test_recbole_metrics_inside_recbole():
    pytest.importorskip("recbole")
    from itemsampling import recbole_metrics

    recbole_metrics.register()
    import recbole.evaluator.register as reg

    assert reg.metrics_dict["correctedrecall"] is recbole_metrics.CorrectedRecall


def test_a_generated_recbole_run_is_corrected_to_its_full_ranking(tmp_path):
    """A file shaped like SampledRanks' (uni100 ranks, each user's N_u from the full run): the
    corrected Recall@10 interval holds the exact full-ranking value the file was drawn from."""
    rng = np.random.default_rng(5)
    n_u = rng.integers(1400, 1682, size=3000)  # the catalogue less each user's history
    global_ranks = np.minimum(np.ceil(rng.lognormal(3.5, 1.5, size=3000)), n_u).astype(int)
    sampled = 1 + rng.hypergeometric(global_ranks - 1, n_u - global_ranks, 100)
    pd.DataFrame({"user_id": np.arange(3000), "rank": sampled, "n_candidates": 101, "n_items": n_u,
                  "mode": "uni100"}).to_csv(tmp_path / "uni100.csv", index=False)
    table = runs.correct(runs.read_run(tmp_path / "uni100.csv", "recbole"), metrics=["recall"], ks=[10])
    exact = (global_ranks <= 10).mean()
    assert table["lower"].iloc[0] <= exact <= table["upper"].iloc[0]
    assert abs((sampled <= 10).mean() - exact) > table["upper"].iloc[0] - table["lower"].iloc[0]
