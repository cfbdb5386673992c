"""Global, sampled and adaptive ranks: brute force, tie-breaks and the rank kernels."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

from itemsampling.kernels import rank_kernel
from itemsampling.models.base import Recommender
from itemsampling.ranks import (
    adaptive_sampled_ranks,
    draw_positions,
    global_ranks,
    nth_allowed,
    ranks_from_scores,
    read_ranks,
    sampled_ranks,
    tie_break_keys,
    write_ranks,
)
from itemsampling.simulation import adaptive_sample_ranks


class FixedScores(Recommender):
    """A 'model' whose scores are a given (n_users, n_items) table."""

    name = "fixed"

    def __init__(self, table: np.ndarray) -> None:
        super().__init__()
        self.table = np.asarray(table, dtype=np.float32)

    def _fit(self, train, seed, progress) -> None:
        pass

    def _score(self, users: np.ndarray) -> np.ndarray:
        return self.table[users]


def tied_problem(n_users=300, n_items=40, levels=4, seed=0):
    """Scores on a few levels (many ties), random training items and one held-out item each."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, levels, size=(n_users, n_items)).astype(np.float32)
    n_train = rng.integers(1, n_items // 4, size=n_users)
    rows, cols, targets = [], [], np.empty(n_users, np.int64)
    for u in range(n_users):
        items = rng.choice(n_items, size=n_train[u] + 1, replace=False)
        rows += [u] * n_train[u]
        cols += list(items[1:])
        targets[u] = items[0]
    train = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n_users, n_items))
    model = FixedScores(table).fit(train)
    return model, targets


def brute_force_rank(scores, keys, target, candidates):
    """Position (1-based) of ``target`` after sorting ``candidates`` by (-score, key)."""
    order = candidates[np.lexsort((keys[candidates], -scores[candidates]))]
    return int(np.flatnonzero(order == target)[0]) + 1


@pytest.mark.parametrize("protocol", ["unseen", "all"])
def test_global_ranks_match_brute_force_sort_with_ties(protocol):
    model, targets = tied_problem()
    out = global_ranks(model, targets, protocols=[protocol], seed=11, batch_size=37)[protocol]
    n_items = model.n_items
    for u in range(model.n_users):
        keys = tie_break_keys(u, np.arange(n_items), 11)
        excluded = model.train_[u].indices if protocol == "unseen" else []
        candidates = np.setdiff1d(np.arange(n_items), excluded)
        assert out["rank"][u] == brute_force_rank(model.table[u], keys, targets[u], candidates)
        assert out["n_candidates"][u] == candidates.size
    assert (out["user"] == np.arange(model.n_users)).all() and (out["item"] == targets).all()


@pytest.mark.parametrize("protocol", ["unseen", "all"])
def test_pessimistic_and_optimistic_ties_bound_the_random_rank(protocol):
    """Pessimistic: the target after every candidate with its score; optimistic: before them."""
    model, targets = tied_problem(seed=2)
    ranks = {ties: global_ranks(model, targets, protocols=[protocol], seed=4, ties=ties)[protocol]["rank"].to_numpy()
             for ties in ("random", "pessimistic", "optimistic")}
    for u in range(model.n_users):
        excluded = model.train_[u].indices if protocol == "unseen" else []
        others = np.setdiff1d(np.arange(model.n_items), [*excluded, targets[u]])
        score, target = model.table[u, others], model.table[u, targets[u]]
        assert ranks["optimistic"][u] == 1 + (score > target).sum()
        assert ranks["pessimistic"][u] == 1 + (score >= target).sum()
    assert (ranks["optimistic"] <= ranks["random"]).all() and (ranks["random"] <= ranks["pessimistic"]).all()
    assert (ranks["optimistic"] < ranks["pessimistic"]).any()
    with pytest.raises(ValueError, match="ties"):
        global_ranks(model, targets, ties="worst")


def test_tie_break_is_uniform_and_not_positional():
    """With all scores equal, R_u is uniform on 1..N whichever item is the target."""
    n_users, n_items = 4000, 8
    model = FixedScores(np.zeros((n_users, n_items))).fit(sp.csr_matrix((n_users, n_items), dtype=np.float32))
    for target in (0, n_items - 1):
        ranks = global_ranks(model, np.full(n_users, target), protocols=["all"], seed=3)["all"]["rank"]
        counts = np.bincount(ranks, minlength=n_items + 1)[1:]
        assert stats.chisquare(counts).pvalue > 1e-3


def test_tie_break_is_seeded():
    model, targets = tied_problem(seed=1)
    a = global_ranks(model, targets, seed=5)
    b = global_ranks(model, targets, seed=5, batch_size=7)
    c = global_ranks(model, targets, seed=6)
    for p in ("unseen", "all"):
        pd.testing.assert_frame_equal(a[p], b[p])
        assert (a[p]["rank"] != c[p]["rank"]).any()
    np.testing.assert_array_equal(tie_break_keys([1, 2], [3, 3], 9), tie_break_keys([1, 2], 3, 9))


def test_ranks_from_scores_rejects_nan_and_target_in_training():
    scores = np.zeros((1, 5), np.float32)
    with pytest.raises(ValueError, match="held-out item"):
        ranks_from_scores(scores, [0], [2], exclude=sp.csr_matrix(np.eye(1, 5, 2)), seed=0)
    scores[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ranks_from_scores(scores, [0], [2], seed=0)


def testnth_allowed_matches_set_difference():
    rng = np.random.default_rng(0)
    n_rows, n_items = 30, 25
    excluded = sp.csr_matrix(rng.random((n_rows, n_items)) < 0.3)
    excluded.sort_indices()
    rows = np.repeat(np.arange(n_rows), 40)
    allowed = [np.setdiff1d(np.arange(n_items), excluded[r].indices) for r in range(n_rows)]
    positions = np.array([rng.integers(0, allowed[r].size) for r in rows])
    expected = np.array([allowed[r][k] for r, k in zip(rows, positions, strict=True)])
    np.testing.assert_array_equal(nth_allowed(excluded, rows, positions), expected)


@pytest.mark.parametrize(("pool", "count", "existing"), [(6, 2, 0), (12, 2, 2), (5, 3, 0), (7, 2, 2)])
def test_draws_without_replacement_are_uniform_subsets(pool, count, existing):
    """Every subset of the free positions is equally likely (rejection and, n > pool/2, dense path)."""
    rng = np.random.default_rng(12345)
    rows = 20000
    old = np.tile(np.arange(existing), (rows, 1))
    new = draw_positions(rng, np.full(rows, pool), count, replace=False, existing=old)
    full = np.sort(np.concatenate([old, new], axis=1), axis=1)
    assert (np.diff(full, axis=1) > 0).all() and new.min() >= existing and new.max() < pool
    _, counts = np.unique(np.sort(new, axis=1), axis=0, return_counts=True)
    assert counts.size == comb(pool - existing, count)
    assert stats.chisquare(counts).pvalue > 1e-3


def _kernel_chisquare(frame: pd.DataFrame, global_frame: pd.DataFrame, n: int, scheme: str) -> float:
    """p-value of the pooled sampled ranks against Σ_u P(r | R_u; N_u, n)."""
    merged = frame.merge(global_frame[["user", "rank"]].rename(columns={"rank": "R"}), on="user")
    expected = np.zeros(n)
    for (n_u, big_r), group in merged.groupby(["n_candidates", "R"]):
        expected += len(group) * rank_kernel(int(n_u), n, scheme)[big_r - 1]
    observed = np.bincount(merged["rank"], minlength=n + 1)[1:].astype(float)
    # pool sparse cells so that every expected count is at least 5
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("protocol", ["unseen", "all"])
@pytest.mark.parametrize(("replace", "scheme"), [(True, "binomial"), (False, "hypergeometric")])
def test_actual_sampled_ranks_follow_the_kernel(protocol, replace, scheme):
    model, targets = tied_problem(n_users=400, n_items=40, seed=2)
    glob = global_ranks(model, targets, protocols=[protocol], seed=4)[protocol]
    n = 25
    sampled = sampled_ranks(model, targets, protocol=protocol, sample_size=n, repeats=20, replace=replace,
                            rng=7, tie_seed=4, batch_size=64)
    assert sampled["rank"].between(1, n).all() and (sampled["sample_size"] == n).all()
    assert _kernel_chisquare(sampled, glob, n, scheme) > 1e-3
    # the test has power: the other kernel is rejected (n is close to N_u, where they differ)
    other = "hypergeometric" if scheme == "binomial" else "binomial"
    assert _kernel_chisquare(sampled, glob, n, other) < 1e-6


def test_full_sample_without_replacement_recovers_the_global_rank():
    model, targets = tied_problem(seed=3)
    glob = global_ranks(model, targets, protocols=["all"], seed=8)["all"]
    full = sampled_ranks(model, targets, protocol="all", sample_size=model.n_items, replace=False,
                         rng=0, tie_seed=8)
    np.testing.assert_array_equal(full["rank"].to_numpy(), glob["rank"].to_numpy())


def test_sampled_ranks_are_deterministic_and_validated():
    model, targets = tied_problem(seed=4)
    a = sampled_ranks(model, targets, sample_size=10, repeats=3, rng=1, tie_seed=2)
    b = sampled_ranks(model, targets, sample_size=10, repeats=3, rng=1, tie_seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["repeat", "user", "item", "rank", "sample_size", "n_candidates"]
    assert (a["repeat"].to_numpy() == np.repeat(np.arange(3), model.n_users)).all()
    with pytest.raises(ValueError, match="protocol"):
        sampled_ranks(model, targets, protocol="seen", sample_size=10)
    with pytest.raises(ValueError, match="exceeds the number of candidate items"):
        sampled_ranks(model, targets, protocol="unseen", sample_size=model.n_items)
    with pytest.raises(ValueError, match="repeats"):
        sampled_ranks(model, targets, sample_size=10, repeats=0)


@pytest.mark.parametrize(("replace", "scheme"), [(True, "binomial"), (False, "hypergeometric")])
def test_adaptive_ranks_match_the_simulation(replace, scheme):
    """Adaptive sampling on real scores has the law of the simulation given the global ranks."""
    model, targets = tied_problem(n_users=300, n_items=60, levels=30, seed=5)
    glob = global_ranks(model, targets, protocols=["unseen"], seed=1)["unseen"]
    n0, n_max, repeats = 3, 40, 30
    actual = adaptive_sampled_ranks(model, targets, n0=n0, n_max=n_max, repeats=repeats, replace=replace,
                                    rng=2, tie_seed=1)
    sizes = actual["sample_size"].to_numpy()
    assert set(np.unique(sizes)) <= {3, 6, 12, 24, 40}
    assert ((actual["rank"] > 1) | (sizes == n_max)).all()
    sim_r, sim_n = adaptive_sample_ranks(np.tile(glob["rank"], repeats), np.tile(glob["n_candidates"], repeats),
                                         n0, n_max, rng=3, scheme=scheme)
    cells = pd.crosstab(
        np.concatenate([actual["sample_size"] * 1000 + actual["rank"], sim_n * 1000 + sim_r]),
        np.repeat([0, 1], len(actual)),
    ).to_numpy()
    big = cells.sum(axis=1) >= 10
    table = np.vstack([cells[big], cells[~big].sum(axis=0)])
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_ranks_round_trip_through_parquet(tmp_path):
    model, targets = tied_problem(seed=6)
    frame = global_ranks(model, targets, seed=0)["unseen"]
    path = tmp_path / "deep" / "unseen.parquet"
    write_ranks(frame, path)
    pd.testing.assert_frame_equal(read_ranks(path), frame)
    with pytest.raises(FileNotFoundError):
        read_ranks(tmp_path / "missing.parquet")
