"""Readers of framework runs (:mod:`itemsampling.runs`) and the ``correct`` command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import itemsampling.runs as runs
from itemsampling import estimate, sampled_ranks_from_scores
from itemsampling.cli import main
from itemsampling.compare import compare
from itemsampling.multi_positive import multi_positive_metrics, multi_positive_terms
from itemsampling.score_matrix import positive_counts


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


def test_held_out_item_among_its_negatives_is_left_out(tmp_path):
    """NCF's file lists some users' held-out item among their negatives: that copy is no negative."""
    rng = np.random.default_rng(5)
    rows = _negatives(rng)
    rows[[4, 9], 6] = rows[[4, 9], 0]
    _write_ncf(tmp_path / "x.test.negative", rows)
    scores = rng.normal(size=rows.shape)
    scores[[4, 9], 6] = scores[[4, 9], 0]  # a model scores the copy like the item itself
    with pytest.warns(runs.DuplicateNegativesWarning, match="2 of 50 users list their held-out item"):
        run = runs.read_run(tmp_path / "x.test.negative", "ncf", scores=scores, n_items=300)
    assert run.protocol == "uniform_without_replacement"
    assert run.sample_size.tolist() == [20] * 4 + [19] + [20] * 4 + [19] + [20] * 40
    kept = np.delete(scores, 6, axis=1)
    np.testing.assert_array_equal(run.ranks[[4, 9]], 1 + (kept[[4, 9], 1:] > kept[[4, 9], :1]).sum(axis=1))
    assert runs.thin(run).sample_size.tolist() == [19] * 50


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
    with pytest.raises(NotImplementedError, match=r"holds only the positives' ranks.*probabilities=p"):
        runs.correct(runs.read_run(tmp_path / "pop.csv", "recbole"))
    _recbole_file(tmp_path / "popmulti.csv", [1, 2, 3], 101, mode="pop100", users=[0, 0, 1])
    with pytest.raises(NotImplementedError, match=r"holds only the positives' ranks"):
        runs.correct(runs.read_run(tmp_path / "popmulti.csv", "recbole"))
    with_replacement = runs.Run([1, 2, 3], 101, 1000, "uniform_with_replacement", users=[0, 0, 1])
    with pytest.raises(NotImplementedError, match=r"several positives per user under protocol "
                                                  r"'uniform_with_replacement'.*leave-one-out"):
        runs.correct(with_replacement)
    _recbole_file(tmp_path / "multi.csv", [1, 2, 3], 101, users=[0, 0, 1])
    with pytest.raises(ValueError, match=r"method 'cls' does not estimate metrics with several positives"):
        runs.correct(runs.read_run(tmp_path / "multi.csv", "recbole"), method="cls")


def _ratio_run(rng, n_users=3000, n_u=1682, m=100):
    """Several positives per user, ranked among shared negatives as RecBole's uniN ranks them: per
    positive its rank among itself and the user's negatives, the other positives left out."""
    from itemsampling.positive_sampling import sample_positive_ranks

    p_u = rng.integers(1, 8, n_users)
    users = np.repeat(np.arange(n_users), p_u)
    neg_ranks = np.minimum(np.ceil(rng.lognormal(3.8, 1.3, users.size)), n_u - 8).astype(int)
    r = sample_positive_ranks(neg_ranks, users, n_u, p_u[users], m, design="shared", rng=rng)
    table = pd.DataFrame({"user_id": users, "rank": r, "n_candidates": m + 1, "n_items": n_u,
                          "n_positives": p_u[users], "mode": f"uni{m}"})
    return table, neg_ranks, users


def test_a_run_with_several_positives_per_user_is_corrected_to_its_full_ranking(tmp_path):
    """RecBole's default ratio split: the interval of Recall@10 and NDCG@10 holds the exact value
    of the full ranking the file was drawn from, and the uncorrected one lies far outside."""
    table, neg_ranks, users = _ratio_run(np.random.default_rng(8))
    table.to_csv(tmp_path / "ratio.csv", index=False)
    run = runs.read_run(tmp_path / "ratio.csv", "recbole")
    assert run.protocol == "several_positives"
    table_out = runs.correct(run, metrics=["recall", "ndcg"], ks=[10])
    assert list(table_out.columns[:2]) == ["model", "protocol"]
    got = table_out.set_index("metric")
    exact = multi_positive_metrics(neg_ranks, users, ["recall", "ndcg"], 10).set_index("metric")["value"]
    sampled = multi_positive_metrics(table["rank"], users, ["recall", "ndcg"], 10).set_index("metric")["value"]
    for metric in ("recall", "ndcg"):
        assert got.loc[metric, "lower"] <= exact[metric] <= got.loc[metric, "upper"], metric
        assert sampled[metric] > got.loc[metric, "upper"] + 0.1


def test_two_runs_with_several_positives_are_compared_on_the_users_terms(tmp_path):
    rng = np.random.default_rng(9)
    table, _, _ = _ratio_run(rng, n_users=800)
    worse = table.assign(rank=np.minimum(table["rank"] + rng.integers(0, 6, len(table)), 101))
    a = runs.read_run(table, "recbole", model="A")
    b = runs.read_run(worse, "recbole", model="B")
    out = compare(a, b, "recall", 10)
    corrected = [runs.correct(run, metrics=["recall"], ks=[10])["estimate"].iloc[0] for run in (a, b)]
    assert out["estimate_a"] == pytest.approx(corrected[0]) and out["estimate_b"] == pytest.approx(corrected[1])
    assert out["difference"] > 0 and out["lower"] < out["difference"] < out["upper"]
    assert out["sampled_difference"] > 0


def test_positive_counts_of_score_rows_match_a_direct_count():
    rng = np.random.default_rng(4)
    scores = np.where(rng.random((6, 40)) < 0.5, rng.integers(0, 8, (6, 40)).astype(float), -np.inf)
    rows, cols = np.nonzero(np.isfinite(scores) & (rng.random((6, 40)) < 0.3))
    got = positive_counts(scores, rows, cols)
    relevant = np.zeros(scores.shape, dtype=bool)
    relevant[rows, cols] = True
    for p, (row, col) in enumerate(zip(rows, cols, strict=True)):
        negatives = scores[row][np.isfinite(scores[row]) & ~relevant[row]]
        want = [(negatives > scores[row, col]).sum(), (negatives == scores[row, col]).sum(), negatives.size,
                relevant[row].sum()]
        np.testing.assert_array_equal(got[p], want)
    with pytest.raises(ValueError, match="one of its row's candidates"):
        positive_counts(scores, [0], [int(np.flatnonzero(~np.isfinite(scores[0]))[0])])


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
    assert "holds only the positives' ranks" in capsys.readouterr().err


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


def _popularity_run_files(tmp_path, rng, n_users=4000, n_items=400, n_neg=49):
    """A model whose item scores favour popular items, its positives, and negatives drawn with
    replacement by popularity (the positive left out, the rest renormalised), as NCF's files."""
    popularity = rng.zipf(1.6, n_items).clip(max=500).astype(float)
    p = popularity / popularity.sum()
    taste = rng.normal(size=(n_users, n_items)) + 0.5 * np.log(popularity)
    positives = rng.integers(0, n_items, n_users)
    rows = np.empty((n_users, n_neg + 1), dtype=np.int64)
    rows[:, 0] = positives
    for u in range(n_users):
        q = p.copy()
        q[positives[u]] = 0
        rows[u, 1:] = rng.choice(n_items, n_neg, p=q / q.sum())
    _write_ncf(tmp_path / "pop.test.negative", rows)
    scores = np.take_along_axis(taste, rows, axis=1)
    target = taste[np.arange(n_users), positives][:, None]
    true_ranks = 1 + (taste > target).sum(axis=1)
    return p, scores, true_ranks


def test_popularity_run_carries_unbiased_rank_estimates(tmp_path):
    rng = np.random.default_rng(11)
    p, scores, true_ranks = _popularity_run_files(tmp_path, rng)
    np.save(tmp_path / "p.npy", p)
    run = runs.read_run(tmp_path / "pop.test.negative", "ncf", scores=scores, n_items=400,
                        probabilities=tmp_path / "p.npy")
    assert run.protocol == "popularity"
    error = run.rank_estimates - true_ranks
    assert abs(error.mean()) < 4 * error.std() / np.sqrt(error.size)  # Hansen–Hurwitz: unbiased
    # the uncorrected sampled rank is far from R: popular negatives crowd the top
    assert np.mean(1 + (run.ranks - 1) * 399 / 49 - true_ranks) > 8 * error.std() / np.sqrt(error.size)
    table = runs.correct(run, metrics=["recall"], ks=[10, 50])
    assert table[["model", "protocol"]].iloc[0].tolist() == ["pop.test", "popularity"]
    assert {"se", "lower", "upper"} <= set(table.columns)
    with pytest.warns(UserWarning, match="Hansen–Hurwitz"):
        runs.correct(run, "mle", metrics=["recall"], ks=[10])


def test_popularity_runs_are_compared_on_their_plug_in_values(tmp_path):
    from itemsampling.compare import compare

    rng = np.random.default_rng(12)
    p, scores, _ = _popularity_run_files(tmp_path, rng, n_users=500)
    read = dict(scores=scores, n_items=400, probabilities=p)
    a = runs.read_run(tmp_path / "pop.test.negative", "ncf", model="a", **read)
    b = runs.read_run(tmp_path / "pop.test.negative", "ncf", model="b", **{**read, "scores": scores - 0.3 * rng.random(scores.shape)})
    row = compare(a, b, "recall", 50)
    values = [runs.correct(run, metrics=["recall"], ks=[50], interval=None)["estimate"].iloc[0] for run in (a, b)]
    assert row["difference"] == pytest.approx(values[0] - values[1], abs=1e-12)
    assert row["lower"] <= row["difference"] <= row["upper"]
    assert compare(a, a, "recall", 50)["difference"] == 0


def test_popularity_input_errors_name_the_fix(tmp_path):
    rng = np.random.default_rng(13)
    p, scores, _ = _popularity_run_files(tmp_path, rng, n_users=50)
    path = tmp_path / "pop.test.negative"
    with pytest.raises(ValueError, match="sum to"):
        runs.read_run(path, "ncf", scores=scores, n_items=400, probabilities=2 * p)
    with pytest.raises(ValueError, match="outside the 300 per-draw probabilities"):
        runs.read_run(path, "ncf", scores=scores, n_items=400, probabilities=np.full(300, 1 / 300))
    with pytest.raises(ValueError, match="does not list the negatives' item ids"):
        runs.read_run(scores, "scores", n_items=400, probabilities=p)
    rows = _negatives(rng, n_users=5, n_items=400)
    rows[3, 4] = rows[3, 0]
    _write_ncf(tmp_path / "own.test.negative", rows)
    with pytest.raises(ValueError, match="positive as its own negative"):
        runs.read_run(tmp_path / "own.test.negative", "ncf", scores=np.zeros(rows.shape), n_items=400,
                      probabilities=np.full(400, 1 / 400))


def test_correct_command_reads_popularity_probabilities(tmp_path, capsys):
    rng = np.random.default_rng(14)
    p, scores, _ = _popularity_run_files(tmp_path, rng, n_users=300)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "s.npy", scores)
    assert main(["correct", str(tmp_path / "pop.test.negative"), "--format", "ncf", "--scores",
                 str(tmp_path / "s.npy"), "--n-items", "400", "--probabilities", str(tmp_path / "p.npy")]) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert set(table["protocol"]) == {"popularity"} and len(table) == 2


def test_a_popularity_run_with_several_positives_is_taken_at_its_rank_estimates():
    """Several positives per user with Hansen–Hurwitz ranks (RecBole's pop100 read by
    recbole_metrics.popularity_ranks): the metrics at ⌊R̂⌋, with the users' CLT interval, and
    compare pairs two such runs on the users' values."""
    rng = np.random.default_rng(12)
    users = np.repeat(np.arange(400), rng.integers(1, 5, 400))
    rank_estimates = 1 + rng.gamma(1.5, 20, users.size)
    run_a = runs.Run(rng.integers(1, 30, users.size), 101, 1682, "popularity", "A", users,
                     rank_estimates=rank_estimates)
    run_b = runs.Run(run_a.ranks, 101, 1682, "popularity", "B", users, rank_estimates=rank_estimates * 1.3)
    table = runs.correct(run_a, metrics=["recall", "ndcg"], ks=[10], interval=0.9)
    want = multi_positive_metrics(np.floor(rank_estimates), users, ["recall", "ndcg"], [10], interval=0.9)
    np.testing.assert_allclose(table[["estimate", "lower", "upper"]], want[["value", "lower", "upper"]])
    out = compare(run_a, run_b, "recall", 10)
    assert out["estimate_a"] == pytest.approx(want["value"].iloc[0])
    assert out["difference"] > 0 and out["lower"] > 0  # B's ranks are all worse


def test_a_recbole_popularity_file_with_rank_estimates_is_a_popularity_run(tmp_path):
    """The file of recbole_metrics.popularity_ranks: SampledRanks' columns and the Hansen–Hurwitz
    ranks; read as a popularity run and corrected at its estimates, from the command line too."""
    table = pd.DataFrame({"user_id": [0, 0, 1, 2], "rank": [3, 9, 1, 40], "n_candidates": [180, 180, 98, 99],
                          "n_items": 1682, "n_positives": [2, 2, 1, 1], "mode": "pop100",
                          "rank_estimate": [12.5, 61.0, 1.0, 700.2]})
    table.to_csv(tmp_path / "pop.csv", index=False)
    run = runs.read_run(tmp_path / "pop.csv", "recbole")
    assert run.protocol == "popularity" and run.several_positives
    got = runs.correct(run, metrics=["recall"], ks=[20], interval=None)["estimate"].iloc[0]
    assert got == pytest.approx(np.mean([1 / 2, 1.0, 0.0]))  # user 0: R̂ 12 hits, 61 + 1 does not


def test_the_correct_command_reads_a_recbole_popularity_file(tmp_path, capsys):
    table = pd.DataFrame({"user_id": [0, 0, 1], "rank": [3, 9, 1], "n_candidates": [180, 180, 98],
                          "n_items": 1682, "n_positives": [2, 2, 1], "mode": "pop100",
                          "rank_estimate": [12.5, 61.0, 1.0]})
    table.to_csv(tmp_path / "pop.csv", index=False)
    assert main(["correct", str(tmp_path / "pop.csv"), "--format", "recbole", "--metric", "recall", "--k", "20"]) == 0
    out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert out["protocol"].iloc[0] == "popularity" and out["estimate"].iloc[0] == pytest.approx(0.75)


def test_posterior_mle_corrects_several_positives_and_refuses_one_positive_runs(tmp_path):
    """``correct(run, "posterior_mle")`` on a RecBole ratio run: every positive keeps its n, the
    interval holds the exact value; a run with one positive per user is refused with the method
    to use instead."""
    table, neg_ranks, users = _ratio_run(np.random.default_rng(8))
    run = runs.read_run(table, "recbole")
    got = runs.correct(run, "posterior_mle", metrics=["recall", "ndcg"], ks=[10]).set_index("metric")
    exact = multi_positive_metrics(neg_ranks, users, ["recall", "ndcg"], 10).set_index("metric")["value"]
    for metric in ("recall", "ndcg"):
        assert got.loc[metric, "lower"] <= exact[metric] <= got.loc[metric, "upper"], metric
    one = runs.read_run(table.drop_duplicates("user_id"), "recbole")
    with pytest.raises(ValueError, match=r"several positives per user.*use mle"):
        runs.correct(one, "posterior_mle")


def test_posterior_mle_runs_are_compared_with_the_fit_in_the_paired_interval():
    """compare(..., method="posterior_mle") pairs the users' influence values, the fit's part
    included: its estimates are those of correct, and its interval is wider than one on the
    users' terms alone (the fit held fixed)."""
    rng = np.random.default_rng(9)
    table, _, _ = _ratio_run(rng, n_users=800)
    worse = table.assign(rank=np.minimum(table["rank"] + rng.integers(0, 6, len(table)), 101))
    a, b = runs.read_run(table, "recbole", model="A"), runs.read_run(worse, "recbole", model="B")
    out = compare(a, b, "recall", 10, method="posterior_mle")
    corrected = [runs.correct(run, "posterior_mle", metrics=["recall"], ks=[10])["estimate"].iloc[0] for run in (a, b)]
    assert out["estimate_a"] == pytest.approx(corrected[0]) and out["estimate_b"] == pytest.approx(corrected[1])
    terms = [multi_positive_terms(*runs.positive_arguments(run), "recall", 10, method="posterior_mle")[1][:, 0]
             for run in (a, b)]
    fixed_se = np.std(terms[0] - terms[1], ddof=1) / np.sqrt(terms[0].size)
    assert out["upper"] - out["lower"] > 2 * 1.96 * fixed_se


def test_a_popularity_run_with_posterior_mle_is_warned_and_taken_at_its_rank_estimates():
    rng = np.random.default_rng(12)
    users = np.repeat(np.arange(100), rng.integers(1, 5, 100))
    run = runs.Run(rng.integers(1, 30, users.size), 101, 1682, "popularity", "A", users,
                   rank_estimates=1 + rng.gamma(1.5, 20, users.size))
    with pytest.warns(UserWarning, match="Hansen–Hurwitz"):
        got = runs.correct(run, "posterior_mle", metrics=["recall"], ks=[10])
    pd.testing.assert_frame_equal(got, runs.correct(run, metrics=["recall"], ks=[10]))
