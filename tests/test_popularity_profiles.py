"""Popularity profiles: brute force per item, the simulated samplers against per-item simulation and
closed forms, unbiasedness of the Hansen–Hurwitz and Horvitz–Thompson rank estimates, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

from itemsampling.kernels import rank_kernel
from itemsampling.models.base import Recommender
from itemsampling.popularity_profiles import (
    PopularityProfile,
    mixture_sampled_ranks,
    popularity_classes,
    popularity_profile,
    popularity_sampled_ranks,
    read_profile,
    stratified_sampled_ranks,
    write_profile,
)
from itemsampling.ranks import global_ranks, tie_break_keys

SEED = 11


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


def skewed_problem(n_users=200, n_items=60, levels=5, seed=0):
    """Scores on a few levels (many ties); training items drawn by a skewed popularity, so that
    counts run from 0 to well above the exact classes; one held-out item per user but the last."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, levels, size=(n_users, n_items)).astype(np.float32)
    weights = 1.0 / np.arange(1, n_items + 1) ** 1.2
    weights[-5:] = 0.0  # five items nobody trained on
    weights /= weights.sum()
    rows, cols = [], []
    targets = np.full(n_users, -1, np.int64)
    for u in range(n_users):
        items = rng.choice(n_items, size=int(rng.integers(2, 12)), replace=False, p=weights)
        rows += [u] * (items.size - 1)
        cols += list(items[1:])
        if u < n_users - 1:
            targets[u] = items[0]
    train = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n_users, n_items))
    return FixedScores(table).fit(train), targets


@pytest.fixture(scope="module")
def problem():
    return skewed_problem()


def brute_force(model, targets, protocol, classes):
    """above[u, b] and pool[u, b] item by item, from the definition of the seeded total order."""
    n_classes = classes.max() + 1
    users = np.flatnonzero(targets >= 0)
    above = np.zeros((users.size, n_classes), np.int64)
    pool = np.zeros((users.size, n_classes), np.int64)
    train = model.train_.toarray() > 0
    for row, u in enumerate(users):
        t = targets[u]
        s = model.table[u]
        key_t = tie_break_keys(u, t, SEED)[0]
        for j in range(model.n_items):
            if j == t or (protocol == "unseen" and train[u, j]):
                continue
            pool[row, classes[j]] += 1
            if s[j] > s[t] or (s[j] == s[t] and tie_break_keys(u, j, SEED)[0] < key_t):
                above[row, classes[j]] += 1
    return above, pool


def test_classes_exact_then_log_spaced():
    counts = np.array([0, 1, 2, 2, 3, 4, 5, 9, 10, 12, 13, 200, 260, 1000])
    classes, rep, upper = popularity_classes(counts, exact_up_to=3, ratio=1.25)
    assert classes[0] == 0 and rep[0] == 0
    # counts 1..3 exactly, each class a range within the ratio, in increasing order, none empty
    assert np.unique(classes[1:5]).size == 3 and np.array_equal(rep[classes[1:5]], counts[1:5])
    assert np.all(np.diff(classes) >= 0) and np.array_equal(np.unique(classes), np.arange(rep.size))
    lower = np.array([counts[classes == b].min() for b in range(rep.size)])
    assert np.all(upper[1:] <= np.ceil(1.25 * lower[1:]))
    for b in range(rep.size):
        assert rep[b] == pytest.approx(counts[classes == b].mean())
        assert upper[b] == counts[classes == b].max()
    # no item of count 0: class 0 is kept, empty
    classes, rep, _ = popularity_classes(np.array([4, 4, 7]))
    assert rep[0] == 0 and 0 not in classes and rep.size == 3


@pytest.mark.parametrize("protocol", ["unseen", "all"])
def test_profile_matches_brute_force_and_global_ranks(problem, protocol):
    model, targets = problem
    profile = popularity_profile(model, targets, protocol=protocol, seed=SEED, exact_up_to=3, batch_size=7)
    counts = np.bincount(model.train_.indices, minlength=model.n_items)
    classes, rep, upper = popularity_classes(counts, exact_up_to=3)
    assert profile.n_classes == rep.size >= 8
    np.testing.assert_array_equal(profile.representative, rep)
    np.testing.assert_array_equal(profile.upper, upper)
    above, pool = brute_force(model, targets, protocol, classes)
    np.testing.assert_array_equal(profile.above, above)
    np.testing.assert_array_equal(profile.pool, pool)
    ranks = global_ranks(model, targets, protocols=[protocol], seed=SEED)[protocol]
    np.testing.assert_array_equal(profile.users, ranks["user"])
    np.testing.assert_array_equal(profile.items, ranks["item"])
    np.testing.assert_array_equal(1 + profile.above.sum(axis=1), ranks["rank"])
    np.testing.assert_array_equal(profile.ranks, ranks["rank"])
    np.testing.assert_array_equal(profile.n_candidates, ranks["n_candidates"])


def test_write_and_read_round_trip(problem, tmp_path):
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED)
    path = tmp_path / "p" / "popularity_profile.parquet"
    write_profile(profile, path)
    back = read_profile(path)
    for field in ("users", "items", "ranks", "n_candidates", "above", "pool", "representative", "upper"):
        np.testing.assert_array_equal(getattr(back, field), getattr(profile, field))
    assert back.protocol == "unseen" and not (tmp_path / "p" / "popularity_profile.parquet.tmp").exists()
    frame = pd.read_parquet(path)
    assert list(frame.columns[:4]) == ["user", "item", "rank", "n_candidates"]
    assert all(frame[c].dtype.kind in "iu" for c in frame.columns)


def per_item_probabilities(model, targets, classes, rep, alpha):
    """p_j of each candidate other than the target (zero elsewhere), item by item."""
    users = np.flatnonzero(targets >= 0)
    train = model.train_.toarray() > 0
    w = rep[classes] ** alpha
    p = np.zeros((users.size, model.n_items))
    for row, u in enumerate(users):
        ok = ~train[u]
        ok[targets[u]] = False
        p[row, ok] = w[ok]
        p[row] /= p[row].sum()
    return p


def above_matrix(model, targets):
    users = np.flatnonzero(targets >= 0)
    train = model.train_.toarray() > 0
    out = np.zeros((users.size, model.n_items), bool)
    for row, u in enumerate(users):
        t = targets[u]
        s = model.table[u]
        keys = tie_break_keys(u, np.arange(model.n_items), SEED)
        out[row] = (s > s[t]) | ((s == s[t]) & (keys < keys[t]))
        out[row, t] = False
        out[row, train[u]] = False
    return out


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_popularity_sampler_matches_per_item_simulation(problem, alpha):
    """Per user: r - 1 of the profile sampler, of a per-item simulation of the same sampler, and
    the closed form Binomial(m, Σ_{j above} p_j) agree; both HH means equal R_u (no candidate above
    has p_j = 0 for these users)."""
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED, exact_up_to=3)
    counts = np.bincount(model.train_.indices, minlength=model.n_items)
    classes, rep, _ = popularity_classes(counts, exact_up_to=3)
    p = per_item_probabilities(model, targets, classes, rep, alpha)
    above = above_matrix(model, targets)
    m, repeats = 20, 4000
    ranks, hh = popularity_sampled_ranks(profile, alpha, m, repeats=repeats, rng=1)
    assert ranks.shape == hh.shape == (repeats, profile.users.size)
    gen = np.random.default_rng(2)
    visible = ~(above & (p == 0)).any(axis=1)
    chosen = np.flatnonzero(visible & (profile.ranks > 3))[:6]
    assert chosen.size == 6
    for row in chosen:
        draws = gen.choice(model.n_items, size=(repeats, m), p=p[row])
        r_item = 1 + above[row, draws].sum(axis=1)
        hh_item = 1 + (above[row, draws] / p[row, draws]).sum(axis=1) / m
        q = p[row, above[row]].sum()
        pmf = stats.binom.pmf(np.arange(m + 1), m, q)
        for sample in (ranks[:, row], r_item):
            observed = np.bincount(sample - 1, minlength=m + 1)
            keep = pmf * repeats >= 5
            expected = np.append(pmf[keep], pmf[~keep].sum()) * repeats
            observed = np.append(observed[keep], observed[~keep].sum())
            if expected[-1] == 0:
                expected, observed = expected[:-1], observed[:-1]
            assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4
        for estimate in (hh[:, row], hh_item):
            se = estimate.std() / np.sqrt(repeats)
            assert abs(estimate.mean() - profile.ranks[row]) < 4.5 * se + 1e-9


def test_hansen_hurwitz_is_unbiased_over_all_users(problem):
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED)
    alpha = 0.8
    weights = profile.representative ** alpha
    zero_above = (profile.above[:, weights == 0] > 0).any(axis=1)
    _, hh = popularity_sampled_ranks(profile, alpha, 50, repeats=3000, rng=5)
    se = hh.std(axis=0) / np.sqrt(hh.shape[0])
    z = (hh.mean(axis=0) - (profile.ranks - profile.above[:, weights == 0].sum(axis=1))) / np.maximum(se, 1e-12)
    assert np.abs(z[se > 0]).max() < 5
    # the items that alpha > 0 never draws (count 0) are missing from the estimate, and only they
    assert zero_above.any()
    assert np.all(hh.mean(axis=0)[zero_above] < profile.ranks[zero_above])


def test_alpha_zero_is_the_binomial_kernel(problem):
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED)
    m, repeats = 10, 4000
    ranks, _ = popularity_sampled_ranks(profile, 0.0, m, repeats=repeats, rng=3)
    for row in np.flatnonzero(profile.ranks > 5)[:8]:
        kernel = rank_kernel(int(profile.n_candidates[row]), m + 1, "binomial")[profile.ranks[row] - 1]
        observed = np.bincount(ranks[:, row] - 1, minlength=m + 1)
        keep = kernel * repeats >= 5
        expected = np.append(kernel[keep], kernel[~keep].sum()) * repeats
        observed = np.append(observed[keep], observed[~keep].sum())
        if expected[-1] == 0:
            expected, observed = expected[:-1], observed[:-1]
        assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4


def test_mixture_sampler(problem):
    """Defensive mixture: per user r - 1 is Binomial(m, Σ_{j above} p_j) with p_j = λ/(N_u - 1) +
    (1 - λ) w_b/Z_u (checked on its mean), the Hansen–Hurwitz mean is R_u for every user, items of
    count 0 included (λ > 0 draws them), and λ = 1 is the binomial kernel's mean."""
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED)
    lam, alpha, m, repeats = 0.3, 1.0, 20, 3000
    ranks, hh = mixture_sampled_ranks(profile, alpha, lam, m, repeats=repeats, rng=6)
    w = profile.representative ** alpha
    p = lam / (profile.n_candidates - 1)[:, None] + (1 - lam) * w[None, :] / (profile.pool @ w)[:, None]
    q = (profile.above * p).sum(axis=1)
    se_r = np.sqrt(m * q * (1 - q) / repeats)
    assert np.all(np.abs(ranks.mean(axis=0) - 1 - m * q) <= 5 * se_r + 1e-9)
    se = hh.std(axis=0) / np.sqrt(repeats)
    assert (profile.above[:, w == 0] > 0).any()  # some targets have never-trained items above them
    assert np.all(np.abs(hh.mean(axis=0) - profile.ranks) <= 5 * se + 1e-9)
    uniform, _ = mixture_sampled_ranks(profile, alpha, 1.0, m, repeats=repeats, rng=7)
    share = (profile.ranks - 1) / (profile.n_candidates - 1)
    assert np.all(np.abs(uniform.mean(axis=0) - 1 - m * share)
                  <= 5 * np.sqrt(m * share * (1 - share) / repeats) + 1e-9)
    with pytest.raises(ValueError, match="uniform_weight"):
        mixture_sampled_ranks(profile, alpha, 1.5, m)


def test_stratified_sampler(problem):
    """Per stratum the draws above the target are hypergeometric; HT is unbiased for R_u; a stratum
    drawn in full is counted exactly."""
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED, exact_up_to=3)
    strata = np.minimum(np.arange(profile.n_classes) // 3, 2)
    n_draws = np.array([2, 5, 1000])
    member = np.eye(3, dtype=np.int64)[strata]
    good, total = profile.above @ member, profile.pool @ member
    take = np.minimum(n_draws, total)
    ranks, ht = stratified_sampled_ranks(profile, strata, n_draws, repeats=3000, rng=4)
    mean_r = 1 + (take * np.divide(good, total, out=np.zeros(good.shape), where=total > 0)).sum(axis=1)
    se_r = ranks.std(axis=0) / np.sqrt(ranks.shape[0])
    assert np.all(np.abs(ranks.mean(axis=0) - mean_r) <= 5 * se_r + 1e-9)
    se = ht.std(axis=0) / np.sqrt(ht.shape[0])
    assert np.all(np.abs(ht.mean(axis=0) - profile.ranks) <= 5 * se + 1e-9)
    # everything drawn: the sampled rank is the global rank, without error
    full_r, full_ht = stratified_sampled_ranks(profile, np.zeros(profile.n_classes, np.int64), np.array([10**6]), rng=0)
    np.testing.assert_array_equal(full_r[0], profile.ranks)
    np.testing.assert_allclose(full_ht[0], profile.ranks)


def test_bad_input(problem, tmp_path):
    model, targets = problem
    profile = popularity_profile(model, targets, seed=SEED)
    with pytest.raises(ValueError, match="non-negative integer"):
        popularity_classes(np.array([1.5, 2.0]))
    with pytest.raises(ValueError, match="non-negative integer"):
        popularity_classes(np.array([-1, 2]))
    with pytest.raises(ValueError, match="ratio"):
        popularity_classes(np.array([1, 2]), ratio=1.0)
    with pytest.raises(ValueError, match="protocol"):
        popularity_profile(model, targets, protocol="seen", seed=SEED)
    with pytest.raises(ValueError, match="alpha"):
        popularity_sampled_ranks(profile, -1, 10)
    with pytest.raises(ValueError, match="n_draws"):
        popularity_sampled_ranks(profile, 1, 0)
    with pytest.raises(ValueError, match="strata"):
        stratified_sampled_ranks(profile, np.zeros(3, np.int64), np.array([5]))
    with pytest.raises(ValueError, match="strata must lie"):
        stratified_sampled_ranks(profile, np.ones(profile.n_classes, np.int64), np.array([5]))
    with pytest.raises(ValueError, match="n_draws"):
        stratified_sampled_ranks(profile, np.zeros(profile.n_classes, np.int64), np.array([-1]))
    only_unseen = PopularityProfile(
        users=profile.users[:1], items=profile.items[:1], ranks=np.array([1]), n_candidates=np.array([3]),
        above=np.zeros((1, profile.n_classes), np.int64),
        pool=np.eye(1, profile.n_classes, dtype=np.int64) * 2, representative=profile.representative,
        upper=profile.upper, protocol="unseen")
    with pytest.raises(ValueError, match="no candidate with positive sampling weight"):
        popularity_sampled_ranks(only_unseen, 1.0, 5)
    popularity_sampled_ranks(only_unseen, 0.0, 5)  # alpha = 0 draws them
    with pytest.raises(FileNotFoundError, match="itemsampling profile"):
        read_profile(tmp_path / "missing.parquet")
    pd.DataFrame({"user": [0]}).to_parquet(tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="not a popularity profile"):
        read_profile(tmp_path / "other.parquet")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """itemknn trained on the registry's synthetic data by `itemsampling train`."""
    from itemsampling.cli import main

    root = tmp_path_factory.mktemp("trained")
    assert main(["train", "--dataset", "synthetic", "--model", "itemknn", "--set", "k=20", "--seed", "4",
                 "--out-dir", str(root), "--no-progress", "--max-state-mb", "0"]) == 0
    return root


def test_profile_command_refits_and_checks_the_ranks(trained, tmp_path, capsys):
    """`itemsampling train` writes the profile; `itemsampling profile` rewrites the same one from
    a refit, leaves the ranks and train.json alone, and refuses a fit whose ranks differ."""
    import shutil

    from itemsampling.cli import main

    written = read_profile(trained / "popularity_profile.parquet")
    ranks = pd.read_parquet(trained / "unseen.parquet")
    np.testing.assert_array_equal(written.ranks, ranks["rank"])
    np.testing.assert_array_equal(written.n_candidates, ranks["n_candidates"])
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("unseen.parquet", "all.parquet", "train.json"):
        shutil.copy2(trained / name, copy / name)
    before = {name: (copy / name).read_bytes() for name in ("unseen.parquet", "all.parquet", "train.json")}
    base = ["profile", "--dataset", "synthetic", "--model", "itemknn", "--seed", "4", "--out-dir", str(copy),
            "--no-progress"]
    assert main([*base, "--set", "k=20"]) == 0
    assert "equal the committed ones" in capsys.readouterr().out
    assert (copy / "popularity_profile.parquet").read_bytes() == (trained / "popularity_profile.parquet").read_bytes()
    assert {name: (copy / name).read_bytes() for name in before} == before
    (copy / "popularity_profile.parquet").unlink()
    assert main([*base, "--set", "k=3"]) == 2  # another fit: refused, nothing written
    assert "differs from the committed one" in capsys.readouterr().err
    assert not (copy / "popularity_profile.parquet").exists()
    assert main([*base[:-2], str(tmp_path / "empty"), "--no-progress"]) == 2  # no committed ranks
    assert "run `itemsampling train` first" in capsys.readouterr().err
