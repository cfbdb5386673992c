"""Adaptive evaluation of a live scorer (AAAI'23 Algorithm 1): law of the ranks, what is scored, bad scorers."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

import itemsampling as its
from itemsampling.adaptive_evaluation import evaluate_adaptive
from itemsampling.cli import main
from itemsampling.models.base import Recommender
from itemsampling.ranks import adaptive_sampled_ranks, ranks_from_scores


class TableScorer:
    """A live scorer reading a ``(n_users, n_items)`` score table; it records every call."""

    def __init__(self, table):
        self.table = np.asarray(table, dtype=np.float64)
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []

    def __call__(self, users, items):
        self.calls.append((users.copy(), items.copy()))
        return self.table[users[:, None], items]


def planted(global_ranks, n_items, n_excluded, seed=0):
    """Scores whose global ranks are known: user u's target has exactly R_u - 1 of its
    N_u = N - n_excluded[u] candidates above it (no ties), and its n_excluded[u] excluded
    items score above everything, so that a drawn excluded item would show in the rank.

    Returns the scorer, the targets and the exclusion matrix.
    """
    rng = np.random.default_rng(seed)
    n_users = len(global_ranks)
    table = np.empty((n_users, n_items))
    targets = np.empty(n_users, dtype=np.int64)
    rows, cols = [], []
    for u, (big_r, c) in enumerate(zip(global_ranks, n_excluded, strict=True)):
        perm = rng.permutation(n_items)
        targets[u], excluded, others = perm[0], perm[1 : 1 + c], perm[1 + c :]
        n_u = n_items - c
        table[u, others] = rng.permutation(n_u - 1)  # values 0..N_u - 2
        table[u, targets[u]] = n_u - big_r - 0.5  # R_u - 1 values lie above
        table[u, excluded] = 10.0 * n_items
        rows += [u] * c
        cols += list(excluded)
    exclude = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_users, n_items))
    return TableScorer(table), targets, exclude


def adaptive_pmf(big_r: int, n_items: int, n0: int, n_max: int, scheme: str) -> dict[tuple[int, int], float]:
    """Exact law of the final (n_u, r_u) of Algorithm 1 given R and N, written out level by level.

    Level j (sizes n_0, 2n_0, ..., n_max) is reached when none of the n_{j-1} - 1 items drawn so
    far precedes the target; there, the n_j - n_{j-1} new items hold r - 1 that do.
    """
    levels = [n0]
    while levels[-1] < n_max:
        levels.append(min(2 * levels[-1], n_max))
    better, others = big_r - 1, n_items - 1
    out = {}
    for j, size in enumerate(levels):
        before = levels[j - 1] - 1 if j else 0  # items drawn before this level
        new = size - 1 - before
        r = np.arange(1 if size == n_max else 2, size + 1)
        if scheme == "binomial":
            theta = better / others
            p = (1 - theta) ** before * stats.binom.pmf(r - 1, new, theta)
        else:
            reach = stats.hypergeom.pmf(0, others, better, before)
            p = reach * stats.hypergeom.pmf(r - 1, others - before, better, new)
        out.update({(size, int(rank)): prob for rank, prob in zip(r, p, strict=True) if prob > 0})
    return out


def expected_counts(global_ranks, n_candidates, n0, n_max, scheme) -> pd.Series:
    total: dict = {}
    pairs, counts = np.unique(np.column_stack([global_ranks, n_candidates]), axis=0, return_counts=True)
    for (big_r, n_u), count in zip(pairs, counts, strict=True):
        for cell, p in adaptive_pmf(int(big_r), int(n_u), n0, n_max, scheme).items():
            total[cell] = total.get(cell, 0.0) + count * p
    return pd.Series(total)


def gof_pvalue(sizes, ranks, expected: pd.Series) -> float:
    """Chi-square of observed (n_u, r_u) counts against expected ones, cells below 5 pooled."""
    observed = pd.Series(list(zip(sizes, ranks, strict=True))).value_counts()
    observed = observed.reindex(expected.index, fill_value=0)
    assert observed.sum() == len(sizes), "a cell outside the support of the law was observed"
    big = expected >= 5
    obs = np.append(observed[big].to_numpy(), observed[~big].sum())
    exp = np.append(expected[big].to_numpy(), expected[~big].sum())
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


N_ITEMS, N0, N_MAX = 120, 4, 96


@pytest.fixture(scope="module")
def population():
    """4,000 users with known global ranks among N_u = 100..120 candidates."""
    rng = np.random.default_rng(7)
    n_users = 4000
    n_excluded = rng.integers(0, 21, size=n_users)
    global_ranks = np.minimum(rng.choice([1, 2, 3, 6, 15, 40, 100], size=n_users), N_ITEMS - n_excluded)
    return global_ranks, n_excluded


@pytest.mark.parametrize("protocol", ["unseen", "all"])
@pytest.mark.parametrize(("replace", "scheme"), [(True, "binomial"), (False, "hypergeometric")])
def test_live_ranks_follow_the_law_of_the_simulator(population, protocol, replace, scheme):
    global_ranks, n_excluded = population
    if protocol == "all":
        n_excluded = np.zeros_like(n_excluded)
    scorer, targets, exclude = planted(global_ranks, N_ITEMS, n_excluded, seed=1)
    # the planted global ranks are the ranks the package computes from the full table
    check, n_candidates = ranks_from_scores(scorer.table, np.arange(targets.size), targets,
                                            exclude=exclude if protocol == "unseen" else None, seed=0)
    np.testing.assert_array_equal(check, global_ranks)
    result = evaluate_adaptive(scorer, targets, N_ITEMS, exclude=exclude if protocol == "unseen" else None,
                               n0=N0, n_max=N_MAX, replace=replace, rng=3, batch_size=1500, progress=False)
    ranks, sizes = result.ranks["rank"].to_numpy(), result.ranks["sample_size"].to_numpy()
    np.testing.assert_array_equal(result.ranks["n_candidates"], n_candidates)
    # exact law of Algorithm 1
    expected = expected_counts(global_ranks, n_candidates, N0, N_MAX, scheme)
    assert gof_pvalue(sizes, ranks, expected) > 1e-3
    other = "hypergeometric" if scheme == "binomial" else "binomial"  # the test has power
    assert gof_pvalue(sizes, ranks, expected_counts(global_ranks, n_candidates, N0, N_MAX, other)) < 1e-6
    # and the simulator from the global ranks
    sim_r, sim_n = its.adaptive_sample_ranks(global_ranks, n_candidates, N0, N_MAX, rng=4, scheme=scheme)
    cells = pd.crosstab(np.concatenate([sizes * 1000 + ranks, sim_n * 1000 + sim_r]),
                        np.repeat([0, 1], ranks.size)).to_numpy()
    big = cells.sum(axis=1) >= 10
    assert stats.chi2_contingency(np.vstack([cells[big], cells[~big].sum(axis=0)])).pvalue > 1e-3


def test_only_the_sampled_items_are_scored():
    rng = np.random.default_rng(2)
    n_users, n_items = 500, 80
    n_excluded = rng.integers(0, 10, size=n_users)
    global_ranks = rng.integers(1, 20, size=n_users)
    scorer, targets, exclude = planted(global_ranks, n_items, n_excluded, seed=5)
    result = evaluate_adaptive(scorer, targets, n_items, exclude=exclude, n0=3, n_max=64, replace=False, rng=0,
                               batch_size=200, progress=False)
    sizes, ranks = result.ranks["sample_size"].to_numpy(), result.ranks["rank"].to_numpy()
    asked: list[list[int]] = [[] for _ in range(n_users)]
    for users, items in scorer.calls:
        assert users.dtype == np.int64 and items.dtype == np.int64 and items.shape[0] == users.size
        for u, row in zip(users, items, strict=True):
            asked[u].extend(row.tolist())
    for u in range(n_users):
        items = np.array(asked[u])
        assert items[0] == targets[u] and items.size == sizes[u]  # the target, then n_u - 1 drawn items
        drawn = items[1:]
        assert np.unique(drawn).size == drawn.size  # without replacement
        assert not np.isin(drawn, exclude[u].indices).any() and (drawn != targets[u]).all()
        table = scorer.table[u]
        assert ranks[u] == 1 + (table[drawn] > table[targets[u]]).sum()
    # a user is asked again only while its target is first: every user but those stopped at
    # n_max ends with r_u > 1
    assert ((ranks > 1) | (sizes == 64)).all()
    cost = result.cost
    assert cost.items_scored == sizes.sum() == sum(items.size for _, items in scorer.calls)
    assert cost.calls == len(scorer.calls) <= 3 * 6  # 3 batches x sizes 3, 6, ..., 48, 64
    assert cost.full_ranking == n_users * n_items and cost.fraction == sizes.sum() / (n_users * n_items)


@pytest.mark.parametrize("protocol", ["unseen", "all"])
def test_a_full_sample_recovers_the_global_rank_with_ties(protocol):
    """Drawing all N_u - 1 other candidates without replacement gives R_u, ties broken as ranks.py."""
    rng = np.random.default_rng(4)
    n_users, n_items, c = 300, 30, 5
    table = rng.integers(0, 4, size=(n_users, n_items)).astype(float)  # many ties
    perm = np.argsort(rng.random((n_users, n_items)), axis=1)
    targets = perm[:, 0]
    exclude = sp.csr_matrix((np.ones(n_users * c), (np.repeat(np.arange(n_users), c), perm[:, 1 : 1 + c].ravel())),
                            shape=(n_users, n_items)) if protocol == "unseen" else None
    n_u = n_items - (c if protocol == "unseen" else 0)
    result = evaluate_adaptive(TableScorer(table), targets, n_items, exclude=exclude, n0=2, n_max=n_u,
                               replace=False, rng=1, tie_seed=9, progress=False)
    full = result.ranks["sample_size"] == n_u
    assert full.sum() >= 10
    expected, _ = ranks_from_scores(table, np.arange(n_users), targets, exclude=exclude, seed=9)
    np.testing.assert_array_equal(result.ranks["rank"][full], expected[full])
    once = evaluate_adaptive(TableScorer(table), targets, n_items, exclude=exclude, n0=n_u, n_max=n_u,
                             replace=False, rng=2, tie_seed=9, progress=False)
    np.testing.assert_array_equal(once.ranks["rank"], expected)


class FixedScores(Recommender):
    """A 'model' whose scores are a given table."""

    name = "fixed"

    def __init__(self, table):
        super().__init__()
        self.table = np.asarray(table, dtype=np.float32)

    def _fit(self, train, seed, progress):
        pass

    def _score(self, users):
        return self.table[users]


@pytest.mark.parametrize("protocol", ["unseen", "all"])
@pytest.mark.parametrize("replace", [True, False])
def test_one_algorithm_for_models_and_scorers(protocol, replace):
    """ranks.adaptive_sampled_ranks (a Recommender, scored in batches) gives the same ranks as
    the live evaluation of that model's score_items, with the same seeds and batches."""
    rng = np.random.default_rng(3)
    n_users, n_items = 250, 50
    table = rng.integers(0, 20, size=(n_users, n_items))
    train = sp.csr_matrix(rng.random((n_users, n_items)) < 0.1, dtype=np.float32)
    targets = np.array([rng.choice(np.flatnonzero(train[u].toarray().ravel() == 0)) for u in range(n_users)])
    targets[::7] = -1  # users without a held-out item
    model = FixedScores(table).fit(train)
    frame = adaptive_sampled_ranks(model, targets, protocol=protocol, n0=3, n_max=30, replace=replace, rng=5,
                                   tie_seed=2, batch_size=64, progress=False)
    live = evaluate_adaptive(model.score_items, targets, n_items, exclude=train if protocol == "unseen" else None,
                             n0=3, n_max=30, replace=replace, rng=5, tie_seed=2, batch_size=64, progress=False)
    columns = ["user", "item", "rank", "sample_size", "n_candidates"]
    pd.testing.assert_frame_equal(live.ranks[columns], frame[columns])


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(11)
    n_users, n_items = 300, 60
    global_ranks = rng.integers(1, 40, size=n_users)
    return planted(global_ranks, n_items, rng.integers(0, 6, size=n_users), seed=6), n_items


def test_estimates_are_adaptive_mle_of_the_ranks(small):
    (scorer, targets, exclude), n_items = small
    result = evaluate_adaptive(scorer, targets, n_items, exclude=exclude, n0=4, n_max=40, replace=False, rng=1,
                               metrics=["recall", "ndcg"], ks=[5, 10], progress=False)
    ranks = result.ranks
    expected = its.estimate(ranks["rank"], ranks["n_candidates"].to_numpy(), ranks["sample_size"].to_numpy(),
                            "adaptive_mle", ["recall", "ndcg"], [5, 10], scheme="hypergeometric")
    pd.testing.assert_frame_equal(result.estimates, expected)
    assert result.scheme == "hypergeometric" and (result.n0, result.n_max) == (4, 40)
    # options reach estimate, from the call and afterwards
    short = its.estimate(ranks["rank"], ranks["n_candidates"].to_numpy(), ranks["sample_size"].to_numpy(),
                         "adaptive_mle", "ap", 10, scheme="hypergeometric", max_iter=3)
    pd.testing.assert_frame_equal(result.estimate("ap", 10, max_iter=3), short)
    again = evaluate_adaptive(scorer, targets, n_items, exclude=exclude, n0=4, n_max=40, replace=False, rng=1,
                              metrics="ap", ks=10, estimate_options={"max_iter": 3}, progress=False)
    pd.testing.assert_frame_equal(again.estimates, short)
    with pytest.raises(ValueError, match="follows from replace"):
        result.estimate("ap", 10, scheme="binomial")
    pd.testing.assert_frame_equal(result.sampling_cost(),
                                  its.sampling_cost(ranks["sample_size"], ranks["rank"], n0=4, n_max=40))


def test_same_seed_same_result(small):
    (scorer, targets, exclude), n_items = small
    kwargs = dict(exclude=exclude, n0=2, n_max=50, progress=False)
    a = evaluate_adaptive(scorer, targets, n_items, rng=8, **kwargs)
    b = evaluate_adaptive(lambda u, i: scorer(u, i).tolist(), targets, n_items, rng=8, **kwargs)  # lists do
    c = evaluate_adaptive(scorer, targets, n_items, rng=9, **kwargs)
    pd.testing.assert_frame_equal(a.ranks, b.ranks)
    pd.testing.assert_frame_equal(a.estimates, b.estimates)
    assert a.cost == b.cost
    assert (a.ranks["rank"] != c.ranks["rank"]).any()


def _nan_later(users, items):
    """Finite scores on the first call (n_0 items), NaN once items are added."""
    return np.zeros(items.shape) if items.shape[1] == 4 else np.full(items.shape, np.nan)


@pytest.mark.parametrize(("score", "message"), [
    (lambda u, i: np.zeros(i.shape[0]), r"returned shape \(\d+,\) when asked for 4 item\(s\)"),
    (lambda u, i: np.zeros(i.shape).T, "shape"),
    (lambda u, i: np.full(i.shape, np.nan), "NaN"),
    (_nan_later, "NaN"),
    (lambda u, i: np.where(i % 2 == 0, np.inf, 0.0), "infinite"),
    (lambda u, i: np.where(i % 2 == 0, -np.inf, 0.0), "infinite"),
    (lambda u, i: np.full(i.shape, "a"), "real numbers"),
    (lambda u, i: 1 / 0, r"scorer raised ZeroDivisionError: division by zero \(when asked for 4 item"),
    ("not a function", "callable"),
])
def test_bad_scorers_are_rejected(small, score, message):
    (_, targets, exclude), n_items = small
    with pytest.raises(ValueError, match=message):
        evaluate_adaptive(score, targets, n_items, exclude=exclude, n0=4, n_max=40, rng=0, progress=False)


def test_bad_input_is_rejected(small):
    (scorer, targets, exclude), n_items = small
    smallest = int(n_items - np.diff(exclude.indptr).max())

    def run(**kwargs):
        args = dict(exclude=exclude, n0=4, n_max=40, rng=0, progress=False) | kwargs
        return evaluate_adaptive(scorer, args.pop("targets", targets), args.pop("n_items", n_items), **args)

    with pytest.raises(ValueError, match=f"exceeds the number of candidate items.*smallest N_u = {smallest}"):
        run(n_max=smallest + 1)
    run(n_max=smallest, n0=smallest)  # the largest allowed
    with pytest.raises(ValueError, match="exceeds the number of candidate items"):
        run(exclude=None, n0=2, n_max=n_items + 1)
    with pytest.raises(ValueError, match="must not exceed n_max"):
        run(n0=50)
    with pytest.raises(ValueError, match="n0 must be a positive integer"):
        run(n0=0)
    bad = targets.copy()
    bad[3] = exclude[3].indices[0]
    with pytest.raises(ValueError, match="held-out item of user 3 is one of its excluded items"):
        run(targets=bad)
    with pytest.raises(ValueError, match="exclude must have shape"):
        run(exclude=exclude[:10])
    with pytest.raises(ValueError, match=r"scipy\.sparse"):
        run(exclude=exclude.toarray())
    with pytest.raises(ValueError, match=r"item indices in 0\.\.59"):
        run(targets=np.where(np.arange(targets.size) == 0, 60, targets))
    with pytest.raises(ValueError, match="1-D"):
        run(targets=targets[:, None])
    with pytest.raises(ValueError, match="tie_seed"):
        run(tie_seed=None)


def test_progress_bar_on_request(small, capsys):
    (scorer, targets, exclude), n_items = small
    evaluate_adaptive(scorer, targets, n_items, exclude=exclude, n0=4, n_max=40, rng=0, progress=True)
    assert "adaptive evaluation" in capsys.readouterr().err


# ---------------------------------------------------------------- command line

SCORER_FILE = '''
import numpy as np


def popularity(dataset):
    counts = np.asarray(dataset.train.sum(axis=0)).ravel()
    return lambda users, items: counts[items]


def broken(dataset):
    return lambda users, items: np.full(items.shape, np.nan)
'''


@pytest.fixture(scope="module")
def trained_ease(tmp_path_factory):
    out = tmp_path_factory.mktemp("live") / "ease"
    assert main(["train", "--dataset", "synthetic", "--model", "ease", "--set", "l2=50", "--seed", "3",
                 "--out-dir", str(out), "--protocols", "unseen", "--no-progress"]) == 0
    return out


def test_command_with_a_trained_model(trained_ease, tmp_path, capsys):
    from itemsampling.data import load_dataset
    from itemsampling.models.trained import load_trained

    estimates, ranks = tmp_path / "est.csv", tmp_path / "ranks.csv"
    assert main(["evaluate-adaptive", "--dataset", "synthetic", "--model-dir", str(trained_ease), "--protocol",
                 "unseen", "--n0", "10", "--n-max", "160", "--seed", "4", "--metric", "recall", "--k", "1-20",
                 "--output", str(estimates), "--ranks-output", str(ranks), "--no-progress"]) == 0
    summary = capsys.readouterr().err
    assert "scored" in summary and "of a full ranking" in summary
    dataset = load_dataset("synthetic")
    model, record = load_trained(trained_ease, dataset)
    expected = evaluate_adaptive(model.score_items, dataset.test_items, dataset.n_items, exclude=dataset.train,
                                 n0=10, n_max=160, replace=False, rng=4, tie_seed=record["tie_break_seed"],
                                 metrics="recall", ks=range(1, 21), progress=False)
    table = pd.read_csv(estimates)
    np.testing.assert_allclose(table["estimate"], expected.estimates["estimate"], rtol=1e-12)
    pd.testing.assert_frame_equal(pd.read_csv(ranks), expected.ranks)
    # the ranks file is what `itemsampling estimate` reads
    assert main(["estimate", str(ranks), "--method", "adaptive_mle", "--scheme", "hypergeometric",
                 "--metric", "recall", "--k", "1-20", "--output", str(tmp_path / "again.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again.csv"), table)


def test_command_with_a_scorer_factory(tmp_path, capsys, monkeypatch):
    (tmp_path / "scoring.py").write_text(SCORER_FILE)
    base = ["evaluate-adaptive", "--dataset", "synthetic", "--protocol", "all", "--n0", "20", "--n-max", "100",
            "--k", "10", "--no-progress"]
    assert main([*base, "--scorer", f"{tmp_path / 'scoring.py'}:popularity", "--replace"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(out["metric"]) == ["recall", "ndcg", "ap"] and out["estimate"].between(0, 1).all()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main([*base, "--scorer", "scoring:popularity", "--replace"]) == 0
    assert pd.read_csv(io.StringIO(capsys.readouterr().out)).equals(out)
    for spec, message in [("scoring:broken", "NaN"), ("scoring", "MODULE:FACTORY"),
                          ("scoring:missing", "no callable 'missing'"), ("no_such_module:f", "cannot import"),
                          (f"{tmp_path / 'none.py'}:f", "does not exist")]:
        assert main([*base, "--scorer", spec]) == 2
        assert message in capsys.readouterr().err
    assert main([*base, "--model-dir", str(tmp_path / "nothing")]) == 2
    assert "run `itemsampling train" in capsys.readouterr().err
