"""The ratio split, the ranks of several held-out items per user, and their sampled ranks."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from itemsampling.cli import main
from itemsampling.data.splits import all_interactions, ratio_held_out_counts, ratio_split
from itemsampling.kernels import rank_kernel
from itemsampling.multi_positive import multi_positive_metrics
from itemsampling.positive_sampling import (
    compare_sampled_metrics,
    sample_positive_ranks,
    sample_union_ranks,
)
from itemsampling.ranks import positive_ranks_from_scores, ranks_from_scores


def recbole_split_ids(tot, ratios):
    """RecBole's ``Dataset._calcu_split_ids``, transcribed: the training and test counts."""
    cnt = [int(ratios[i] * tot) for i in range(len(ratios))]
    cnt[0] = tot - sum(cnt[1:])
    for i in range(1, len(ratios)):
        if cnt[0] <= 1:
            break
        if 0 < ratios[-i] * tot < 1:
            cnt[-i] += 1
            cnt[0] -= 1
    return cnt


@pytest.mark.parametrize("fraction", [0.1, 0.2, 0.3])
def test_held_out_counts_follow_recbole(fraction):
    t = np.arange(1, 400)
    expected = [recbole_split_ids(int(x), [1 - fraction, fraction])[1] for x in t]
    np.testing.assert_array_equal(ratio_held_out_counts(t, fraction), expected)


def random_interactions(seed, n_users=40, n_items=30):
    rng = np.random.default_rng(seed)
    dense = rng.random((n_users, n_items)) < rng.uniform(0.02, 0.6, size=(n_users, 1))
    dense[:, 0] |= ~dense.any(axis=1)
    return sp.csr_matrix(dense.astype(np.float32))


def test_ratio_split_partitions_each_user_and_is_seeded():
    full = random_interactions(0)
    train, test = ratio_split(full, test_fraction=0.2, seed=5)
    assert train.multiply(test).nnz == 0
    assert ((train + test) != full).nnz == 0
    per_user = np.diff(full.indptr)
    np.testing.assert_array_equal(np.diff(test.indptr), ratio_held_out_counts(per_user, 0.2))
    again_train, again_test = ratio_split(full, test_fraction=0.2, seed=5)
    assert (again_test != test).nnz == 0 and (again_train != train).nnz == 0
    other = ratio_split(full, test_fraction=0.2, seed=6)[1]
    assert (other != test).nnz > 0


def test_ratio_split_is_uniform_over_items():
    full = sp.csr_matrix(np.ones((4000, 10), dtype=np.float32))
    test = ratio_split(full, test_fraction=0.2, seed=1)[1]
    share = np.asarray(test.sum(axis=0)).ravel() / 4000
    np.testing.assert_allclose(share, 0.2, atol=0.03)  # 2 held out of 10: each item with prob 0.2


def test_ratio_split_rejects_a_bad_fraction():
    with pytest.raises(ValueError, match="test_fraction"):
        ratio_split(random_interactions(0), test_fraction=1.0, seed=0)


def test_positive_ranks_match_single_target_ranks():
    """rank: the target among all non-training items; negative_rank: with the other positives
    excluded too (both by ranks_from_scores, one target at a time, ties included)."""
    rng = np.random.default_rng(3)
    n_users, n_items = 12, 25
    scores = rng.integers(0, 4, size=(n_users, n_items)).astype(np.float32)  # many ties
    train, test = ratio_split(random_interactions(4, n_users, n_items), test_fraction=0.3, seed=2)
    users = np.arange(n_users) + 100
    frame = positive_ranks_from_scores(scores, users, test, exclude=train, seed=9)
    assert len(frame) == test.nnz
    for row in frame.itertuples():
        u = row.user - 100
        others = test[u].indices[test[u].indices != row.item]
        exclude = sp.csr_matrix(train[u])
        rank, n = ranks_from_scores(scores[u:u + 1], [row.user], [row.item], exclude=exclude, seed=9)
        assert row.rank == rank[0] and row.n_candidates == n[0]
        both = exclude + sp.csr_matrix((np.ones(others.size), (np.zeros(others.size, int), others)),
                                       shape=exclude.shape)
        neg_rank, _ = ranks_from_scores(scores[u:u + 1], [row.user], [row.item], exclude=both, seed=9)
        assert row.negative_rank == neg_rank[0]
        assert row.n_positives == test[u].nnz
    # the full-sort positions of a user's positives are their ranks (positions of multi_positive)
    from itemsampling.multi_positive import positions
    pos = positions(frame["negative_rank"], frame["user"])
    for _, group in frame.assign(pos=pos).groupby("user"):
        assert sorted(group["pos"]) == sorted(group["rank"])


def test_positive_ranks_reject_a_positive_in_training():
    scores = np.zeros((1, 4))
    pos = sp.csr_matrix(np.array([[1, 0, 0, 0]]))
    with pytest.raises(ValueError, match="training"):
        positive_ranks_from_scores(scores, [0], pos, exclude=pos, seed=0)


def test_train_command_writes_ratio_ranks(tmp_path):
    out = tmp_path / "ratio"
    assert main(["train", "--dataset", "synthetic", "--model", "popularity", "--split", "ratio", "--seed", "3",
                 "--out-dir", str(out), "--no-progress"]) == 0
    frame = pd.read_parquet(out / "popularity.parquet")
    record = json.loads((out / "popularity.json").read_text())
    assert list(frame.columns) == ["user", "item", "rank", "negative_rank", "n_candidates", "n_positives"]
    assert (frame["rank"] >= frame["negative_rank"]).all()
    assert (frame["negative_rank"] <= frame["n_candidates"] - frame["n_positives"] + 1).all()
    assert record["split"]["test_fraction"] == 0.2 and record["n_positives"] == len(frame)
    exact = multi_positive_metrics(frame["negative_rank"], frame["user"], ("recall", "ndcg", "hit"), 10)
    assert record["metrics"]["recall@10"] == pytest.approx(exact["value"].iloc[0], abs=0)


@pytest.mark.parametrize(("option", "message"), [(["--protocols", "all"], "unseen protocol only"),
                                               (["--test-fraction", "1.5"], "strictly between 0 and 1")])
def test_train_command_rejects_bad_ratio_options(option, message, tmp_path, capsys):
    assert main(["train", "--dataset", "no-such-dataset", "--model", "popularity", "--split", "ratio", *option,
                 "--out-dir", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


# ----- sampled ranks of several positives -------------------------------------------------------

#: one user: 9 candidates, 3 positives at negative ranks 1, 3, 3 (a tie: adjacent positives) and
#: 6 negatives; another with 2 positives at 4 and 7 among 6 negatives
TINY = pd.DataFrame({"user": [0, 0, 0, 1, 1], "negative_rank": [3, 1, 3, 7, 4],
                     "n_candidates": [9, 9, 9, 8, 8], "n_positives": [3, 3, 3, 2, 2]})


def brute_force_shared(negative_ranks, n_neg, m, replace):
    """Exact joint law of a user's sampled ranks: enumerate every sample of m of its negatives
    (negative j = 1..n_neg precedes positive i when j < R_i)."""
    law = {}
    draws = itertools.product(range(1, n_neg + 1), repeat=m) if replace else itertools.combinations(range(1, n_neg + 1), m)
    draws = list(draws)
    for sample in draws:
        key = tuple(1 + sum(j < r for j in sample) for r in negative_ranks)
        law[key] = law.get(key, 0) + 1 / len(draws)
    return law


@pytest.mark.parametrize("replace", [False, True])
def test_shared_design_joint_law_matches_enumeration(replace):
    m, repeats = 3, 40000
    users = np.tile(TINY["user"].to_numpy(), repeats)
    reps = np.repeat(np.arange(repeats), len(TINY))
    draws = sample_positive_ranks(np.tile(TINY["negative_rank"], repeats), users * repeats + reps,
                                  np.tile(TINY["n_candidates"], repeats), np.tile(TINY["n_positives"], repeats),
                                  m, design="shared", replace=replace, rng=11).reshape(repeats, len(TINY))
    for user, cols in ((0, [0, 1, 2]), (1, [3, 4])):
        exact = brute_force_shared(TINY["negative_rank"].to_numpy()[cols], 6, m, replace)
        seen = pd.Series(list(map(tuple, draws[:, cols]))).value_counts(normalize=True)
        assert set(seen.index) <= set(exact)
        for key, p in exact.items():
            assert abs(seen.get(key, 0.0) - p) < 4.5 * np.sqrt(p * (1 - p) / repeats) + 1e-12, (user, key)


@pytest.mark.parametrize("design", ["per_positive", "shared"])
@pytest.mark.parametrize("replace", [False, True])
def test_each_marginal_is_the_kernel(design, replace):
    """Whatever the design, positive i's sampled rank follows P(r | R_i) with N_u - P_u + 1 items."""
    n_users, m = 20000, 4
    ranks = np.tile([2, 5, 5, 9], n_users)  # 4 positives among 12 negatives: N = 13 for the kernel
    users = np.repeat(np.arange(n_users), 4)
    r = sample_positive_ranks(ranks, users, 16, 4, m, design=design, replace=replace, rng=5).reshape(n_users, 4)
    kernel = rank_kernel(13, m + 1, "binomial" if replace else "hypergeometric")
    for col, big_r in enumerate([2, 5, 5, 9]):
        freq = np.bincount(r[:, col] - 1, minlength=m + 1) / n_users
        np.testing.assert_allclose(freq, kernel[big_r - 1], atol=4.5 * np.sqrt(0.25 / n_users))
    if design == "shared":  # dependent: a shared sample keeps the order of the positives
        assert (np.diff(r, axis=1) >= 0).all()
    else:
        assert (np.diff(r, axis=1) < 0).any()


@pytest.mark.parametrize("replace", [True, False])
def test_union_design_matches_recbole_style_draws(replace):
    """RecBole's uniN drawn item by item (per_positive draws for each of the user's positives,
    from its negatives, the union ranked, repeats merged) against sample_union_ranks: the same
    joint law of the positives' ranks and their common n."""
    n_neg, per_positive, repeats = 9, 2, 30000
    negative_ranks = np.array([2, 4, 8])  # 3 positives among 9 negatives (N_u = 12)
    rng = np.random.default_rng(21)
    brute = []
    for _ in range(repeats):
        drawn = np.unique(rng.choice(n_neg, negative_ranks.size * per_positive, replace=replace))
        brute.append((*(1 + np.searchsorted(drawn, negative_ranks - 1)), drawn.size + 1))
    r, n = sample_union_ranks(np.tile(negative_ranks, repeats), np.repeat(np.arange(repeats), 3), 12, 3,
                              per_positive, replace=replace, rng=22)
    assert np.all(n.reshape(repeats, 3) == n[::3, None])  # one n per user
    ours = pd.Series(list(map(tuple, np.column_stack([r.reshape(repeats, 3), n[::3]])))).value_counts(normalize=True)
    theirs = pd.Series(brute).value_counts(normalize=True)
    assert all(key in theirs.index for key in ours.index[ours >= 5 / repeats])  # no law of its own
    for key, p in theirs.items():
        assert abs(ours.get(key, 0.0) - p) < 4.5 * np.sqrt(p * (1 - p) / repeats) + 2 / repeats, key
    if not replace:
        assert np.all(n == 3 * per_positive + 1)
    else:
        assert n.min() < n.max() == 3 * per_positive + 1


def test_per_positive_design_matches_brute_force_sampling():
    """Drawing each positive's negatives from a tiny score matrix gives the same law."""
    rng = np.random.default_rng(8)
    scores = rng.random((1, 14))
    train = sp.csr_matrix(np.isin(np.arange(14), [0, 1])[None, :].astype(float))
    test = sp.csr_matrix(np.isin(np.arange(14), [2, 7, 11])[None, :].astype(float))
    frame = positive_ranks_from_scores(scores, [0], test, exclude=train, seed=1)
    negatives = np.setdiff1d(np.arange(14), [0, 1, 2, 7, 11])
    repeats, m = 20000, 5
    brute = np.empty((repeats, 3), dtype=int)
    for rep in range(repeats):
        for col, item in enumerate(frame["item"]):
            drawn = rng.choice(negatives, m, replace=False)
            brute[rep, col] = 1 + (scores[0, drawn] > scores[0, item]).sum()
    drawn = sample_positive_ranks(np.tile(frame["negative_rank"], repeats), np.repeat(np.arange(repeats), 3),
                                  frame["n_candidates"].iloc[0], 3, m, rng=2).reshape(repeats, 3)
    for col in range(3):
        a = np.bincount(brute[:, col], minlength=m + 2) / repeats
        b = np.bincount(drawn[:, col], minlength=m + 2) / repeats
        np.testing.assert_allclose(a, b, atol=0.025)


def test_sampling_every_negative_recovers_the_exact_metrics():
    frame = TINY.assign(user=TINY["user"])
    table = compare_sampled_metrics(frame, 6, design="shared", repeats=2, rng=0, ks=(1, 2, 3),
                                    methods=("rank_estimate",))
    exact = table[table["kind"] == "exact"].set_index(["metric", "k"])["value"]
    for kind in ("sampled", "rank_estimate"):
        got = table[(table["kind"] == kind) & (table["repeat"] == 1)].set_index(["metric", "k"])["value"]
        pd.testing.assert_series_equal(got, exact, check_names=False)


def test_uncorrected_sampled_recall_is_inflated():
    """Among 50 sampled negatives a positive at R = 150 of 300 still lands near the top: the
    uncorrected Recall@10 is far above the exact one, the estimated ones are not."""
    rng = np.random.default_rng(0)
    n_users = 300
    p_u = rng.integers(1, 6, n_users)
    users = np.repeat(np.arange(n_users), p_u)
    n_cand = np.repeat(rng.integers(200, 400, n_users), p_u)
    neg_ranks = 1 + rng.integers(0, 150, users.size)
    frame = pd.DataFrame({"user": users, "negative_rank": neg_ranks, "n_candidates": n_cand,
                          "n_positives": np.repeat(p_u, p_u)})
    table = compare_sampled_metrics(frame, 50, repeats=5, rng=1, metrics=("recall",), ks=(10,))
    exact = table.loc[table["kind"] == "exact", "value"].iloc[0]
    sampled = table.loc[table["kind"] == "sampled", "value"].mean()
    assert sampled > 2 * exact
    for method in ("rank_estimate", "mn_mes"):
        estimated = table.loc[table["kind"] == method, "value"].mean()
        assert abs(estimated - exact) < abs(sampled - exact) / 2, method


def test_all_interactions_adds_the_held_out_item():
    from itemsampling.data import load_dataset

    dataset = load_dataset("synthetic")
    full = all_interactions(dataset)
    assert full.nnz == dataset.train.nnz + dataset.test_users.size
    assert (full[dataset.test_users, dataset.test_items[dataset.test_users]] == 1).all()


def test_bad_sampling_input_is_named():
    with pytest.raises(ValueError, match="negative_rank must lie"):
        sample_positive_ranks([8], [0], 8, 2, 3)
    with pytest.raises(ValueError, match="exceeds"):
        sample_positive_ranks([1, 2], [0, 0], 8, 2, 7)
    with pytest.raises(ValueError, match="same on every row"):
        sample_positive_ranks([1, 2], [0, 0], [8, 9], 2, 3)
    with pytest.raises(ValueError, match="exactly n_positives rows"):
        sample_positive_ranks([1, 2], [0, 0], 8, 3, 3)
    with pytest.raises(ValueError, match="ratio ranks file"):
        compare_sampled_metrics(pd.DataFrame({"user": [0], "rank": [1]}), 3)
    with pytest.raises(ValueError, match="exceed its 6 negatives"):
        sample_union_ranks([1, 2], [0, 0], 8, 2, 4, replace=False)
    with pytest.raises(ValueError, match="per_positive"):
        sample_union_ranks([1, 2], [0, 0], 8, 2, 0)
