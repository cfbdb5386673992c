"""The coarse-to-fine grid of global ranks (itemsampling.rank_grid): its quadrature, the
estimators on its nodes against the same estimators on every rank, and its choice."""

import warnings

import numpy as np
import pytest

import itemsampling as its
from itemsampling.corrections import bv_operator, mn_operator
from itemsampling.em import em_mixture_weights
from itemsampling.kernels import KernelCache, rank_kernel
from itemsampling.mes import solve_mes
from itemsampling.rank_grid import AUTO_MIN_ITEMS, MIN_EXACT_RANKS, RankGrid, choose_grid

EVERY_METHOD = ("mle", "wmle", "mes", "bv", "mn", "bv_mle", "bv_mes", "mn_mle", "mn_mes")
TARGETS = [("recall", k) for k in (1, 10, 100, 1000)] + [("ndcg", k) for k in (1, 10, 100, 1000)] + [
    ("ap", k) for k in (1, 10, 100, 1000)] + [("auc", None)]


def _global_ranks(n_users, n_items, seed=0):
    rng = np.random.default_rng(seed)
    return np.clip(np.ceil(np.exp(rng.normal(np.log(n_items * 0.01), 2.0, n_users))), 1, n_items).astype(int)


@pytest.mark.parametrize("n_items, n, breaks", [(100_000, 100, ()), (1_000_000, 100, (400_000, 999_000)),
                                                (250_000, 3200, ()), (3_000, 20, (2_500,))])
def test_the_nodes_stand_for_every_rank_once(n_items, n, breaks):
    grid = RankGrid.coarse(n_items, n, 50, breaks)
    assert grid.weights.sum() == pytest.approx(n_items, rel=1e-12)
    assert np.all(np.diff(grid.nodes) > 0) and np.all(grid.weights > 0)
    exact = min(n_items, MIN_EXACT_RANKS)
    np.testing.assert_array_equal(grid.nodes[:exact], np.arange(1, exact + 1))
    for n_g in (*breaks, n_items):  # the ranks 1..N_g are a prefix of the nodes
        rows = grid.rows(n_g)
        assert grid.weights[:rows].sum() == pytest.approx(n_g, rel=1e-12)
        assert grid.nodes[rows - 1] <= n_g + 0.5 and (rows == grid.size or grid.nodes[rows] > n_g + 0.5)
    assert np.all(grid.edges % 1 == 0.5) and np.all(np.diff(grid.edges) >= 1) and grid.edges[-1] == n_items + 0.5


def test_a_prior_keeps_its_mass_on_the_nodes_and_back():
    n_items = 200_000
    grid = RankGrid.coarse(n_items, 100)
    rng = np.random.default_rng(1)
    prior = rng.random(n_items) * (np.arange(1, n_items + 1) + 10.0) ** -1.2
    prior /= prior.sum()
    masses = grid.masses(prior)
    assert masses.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(masses[:grid.exact], prior[:grid.exact])
    np.testing.assert_allclose(grid.masses(np.full(n_items, 1.0 / n_items)), grid.uniform(n_items), rtol=1e-10)
    back = grid.expand(masses)
    assert back.shape == (n_items,) and np.all(back >= 0)
    last = (grid.edges - 0.5).astype(int)  # the last rank of each panel: the mass up to it is kept
    np.testing.assert_allclose(np.cumsum(back)[last - 1], np.cumsum(prior)[last - 1], rtol=1e-12)


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
def test_the_kernel_at_the_nodes_is_a_distribution_over_the_sampled_ranks(scheme):
    n_items, n = 150_000, 50
    grid = RankGrid.coarse(n_items, n)
    K = rank_kernel(n_items, n, scheme, nodes=grid.nodes)
    assert K.shape == (grid.size, n) and np.all(K >= 0)
    np.testing.assert_allclose(K.sum(axis=1), 1.0, rtol=1e-12)
    # at the exact nodes the rows are those of the full kernel
    np.testing.assert_allclose(K[:grid.exact], rank_kernel(n_items, n, scheme)[:grid.exact], rtol=1e-10, atol=1e-300)


def _replicated(weights):
    """Integer node weights: the index of each node, repeated as often as the ranks it stands for."""
    return np.repeat(np.arange(weights.size), weights)


def test_em_on_weighted_nodes_is_em_on_the_ranks_they_stand_for():
    """A node of weight w_j is w_j identical ranks: EM from the start w/N gives their summed mass,
    and never lowers the likelihood."""
    rng = np.random.default_rng(2)
    weights = rng.integers(1, 6, 40)
    K = rank_kernel(60, 8)[rng.integers(0, 60, 40)]
    counts = rng.integers(0, 30, 8).astype(float)
    on_nodes = em_mixture_weights(K, counts, max_iter=200, tol=0, init=weights / weights.sum())
    on_ranks = em_mixture_weights(K[_replicated(weights)], counts, max_iter=200, tol=0)
    np.testing.assert_allclose(on_nodes.weights, np.bincount(_replicated(weights), on_ranks.weights), rtol=1e-9)
    assert np.all(np.diff(on_nodes.log_likelihood) >= -1e-9 * np.abs(on_nodes.log_likelihood[1:]))


def test_mes_with_a_base_measure_is_mes_on_the_ranks_the_nodes_stand_for():
    rng = np.random.default_rng(3)
    weights = rng.integers(1, 6, 50)
    K = rank_kernel(80, 10)[np.sort(rng.integers(0, 80, 50))][:, [0, 2, 5, 9]]
    p = np.array([0.4, 0.3, 0.2, 0.1])
    on_nodes = solve_mes(K, p, 0.01, base=weights.astype(float))
    on_ranks = solve_mes(K[_replicated(weights)], p, 0.01)
    np.testing.assert_allclose(on_nodes.weights, np.bincount(_replicated(weights), on_ranks.weights), rtol=1e-7)
    assert on_nodes.objective == pytest.approx(on_ranks.objective, rel=1e-9)
    np.testing.assert_array_equal(solve_mes(K, p, 0.01, base=np.ones(50)).weights, solve_mes(K, p, 0.01).weights)


@pytest.mark.parametrize("build", [lambda **kw: bv_operator(gamma=0.05, **kw), lambda **kw: mn_operator(n_users=500, **kw)])
def test_bv_and_mn_on_weighted_nodes_are_those_of_the_ranks_they_stand_for(build):
    rng = np.random.default_rng(4)
    weights = rng.integers(1, 6, 40)
    K = rank_kernel(60, 8)[np.sort(rng.integers(0, 60, 40))]
    target = np.sort(rng.random(40))[::-1]
    n_items = int(weights.sum())
    on_nodes = build(n_items=n_items, sample_size=8, kernel=K, base=weights.astype(float))
    on_ranks = build(n_items=n_items, sample_size=8, kernel=K[_replicated(weights)])
    np.testing.assert_allclose(on_nodes.apply(target), on_ranks.apply(target[_replicated(weights)]), rtol=1e-9)


def _compare(ranks, n_items, sample_size, methods, targets=TARGETS, **kw):
    estimators = [its.Estimator(m) for m in methods]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", its.ImpossibleEstimateWarning)
        exact = its.estimate_many(ranks, n_items, sample_size, estimators, targets=targets, grid="exact", **kw)
        coarse = its.estimate_many(ranks, n_items, sample_size, estimators, targets=targets, grid="coarse", **kw)
    columns = [c for c in ("estimate", "lower", "upper") if c in exact]
    return float(np.abs(exact[columns].to_numpy() - coarse[columns].to_numpy()).max())


@pytest.mark.parametrize("n_items, methods, interval", [(100_000, EVERY_METHOD, None),
                                                        (1_000_000, ("mle", "mn_mes", "bv"), 0.95)])
def test_every_estimator_on_the_grid_is_within_1e_4_of_the_exact_ranks(n_items, methods, interval):
    ranks = its.sample_ranks(_global_ranks(3_000, n_items), n_items, 100, rng=5)
    assert _compare(ranks, n_items, 100, methods, interval=interval) < 1e-4


def test_adaptive_mle_and_per_user_candidates_on_the_grid():
    n_items = 100_000
    global_ranks = _global_ranks(3_000, n_items, seed=6)
    ranks, sizes = its.adaptive_sample_ranks(global_ranks, n_items, 100, 1600, rng=6)
    assert _compare(ranks, n_items, sizes, ["adaptive_mle"]) < 1e-4
    n_u = n_items - np.random.default_rng(7).integers(0, 20_000, global_ranks.size)
    ranks = its.sample_ranks(np.minimum(global_ranks, n_u), n_u, 100, rng=7)
    assert _compare(ranks, n_u, 100, ["mle", "mn_mes", "bv"], n_groups=4) < 1e-4


def test_a_thousand_em_steps_on_the_grid_stay_within_1e_4():
    """EM sharpens P̂(R) step by step: the default grid still resolves it after 1,000 steps."""
    n_items = 100_000
    ranks = its.sample_ranks(_global_ranks(3_000, n_items, seed=12), n_items, 100, rng=12)
    long_runs = [its.Estimator("mle", {"max_iter": 1000, "tol": 0.0})]
    exact = its.estimate_many(ranks, n_items, 100, long_runs, targets=TARGETS, grid="exact")
    coarse = its.estimate_many(ranks, n_items, 100, long_runs, targets=TARGETS, grid="coarse")
    assert np.abs(exact["estimate"] - coarse["estimate"]).max() < 1e-4


@pytest.mark.parametrize("method", ["mle", "mn_mes", "bv_mle"])
def test_analytic_intervals_on_the_grid_are_within_1e_4(method):
    n_items = 100_000
    ranks = its.sample_ranks(_global_ranks(2_000, n_items, seed=8), n_items, 100, rng=8)
    assert _compare(ranks, n_items, 100, [method], interval=0.95) < 1e-4


def test_auto_takes_the_grid_for_large_catalogues_only():
    assert choose_grid("auto", AUTO_MIN_ITEMS - 1, 100, 50) is None
    assert choose_grid("auto", AUTO_MIN_ITEMS, 100, 50).size < AUTO_MIN_ITEMS / 4
    assert choose_grid("auto", AUTO_MIN_ITEMS, 100, 30_000) is None  # a cut-off this large: more nodes than it saves
    assert choose_grid("exact", 10**7, 100, 50) is None
    assert choose_grid("coarse", 5_000, 100, 50).exact == MIN_EXACT_RANKS
    assert RankGrid.coarse(2 * 10**6, 100, 3000).exact == 3000  # the largest cut-off asked for is exact


def test_a_coarse_grid_refuses_cls_and_a_bad_grid_name():
    ranks = its.sample_ranks(_global_ranks(500, 200_000), 200_000, 50, rng=9)
    with pytest.raises(ValueError, match="grid='exact'"):
        its.estimate(ranks, 200_000, 50, "cls", "recall", 10, grid="coarse")
    with pytest.raises(ValueError, match="grid must be one of"):
        its.estimate(ranks, 200_000, 50, "mle", "recall", 10, grid="fine")


def test_the_rank_distribution_on_the_grid_covers_every_rank():
    n_items = 120_000
    ranks = its.sample_ranks(_global_ranks(2_000, n_items, seed=10), n_items, 100, rng=10)
    coarse = its.rank_distribution(ranks, n_items, 100, "mle", grid="coarse")
    exact = its.rank_distribution(ranks, n_items, 100, "mle", grid="exact")
    assert coarse.shape == (n_items,) and coarse.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(coarse[:MIN_EXACT_RANKS], exact[:MIN_EXACT_RANKS], atol=1e-9)
    assert np.abs(np.cumsum(coarse) - np.cumsum(exact)).max() < 1e-3


def test_a_cache_shares_its_budget_between_grids():
    cache = KernelCache(max_bytes=10 * 2**20)
    grid = RankGrid.coarse(200_000, 20)
    on_grid = cache.on(grid)
    assert on_grid.kernel(200_000, 20).shape == (grid.size, 20)
    assert cache.kernel(5_000, 20).shape == (5_000, 20)
    assert on_grid.n_rows(200_000) == grid.size and cache.n_rows(200_000) == 200_000


def test_the_live_adaptive_evaluation_of_a_large_catalogue_runs_on_the_grid():
    """A scorer over 300,000 items: the live evaluation's estimates are adaptive MLE on the grid
    (the default for such a catalogue), within 1e-4 of the exact ranks."""
    from itemsampling.adaptive_evaluation import evaluate_adaptive

    n_items, n_users = 300_000, 400
    offset = np.random.default_rng(11).integers(0, n_items, n_users)

    def score(users, items):  # each user's own order of the items
        return -((np.asarray(items) + offset[np.asarray(users)][:, None]) % n_items).astype(float)

    targets = (n_items - offset + _global_ranks(n_users, n_items, seed=11) - 1) % n_items
    result = evaluate_adaptive(score, targets, n_items, n0=50, n_max=800, rng=12, metrics=["recall", "ndcg"],
                               ks=[10, 100], progress=False)
    ranks = result.ranks
    exact = its.estimate(ranks["rank"], n_items, ranks["sample_size"].to_numpy(), "adaptive_mle",
                         ["recall", "ndcg"], [10, 100], grid="exact")
    assert np.abs(result.estimates["estimate"] - exact["estimate"]).max() < 1e-4
    coarse = its.estimate(ranks["rank"], n_items, ranks["sample_size"].to_numpy(), "adaptive_mle",
                          ["recall", "ndcg"], [10, 100], grid="coarse")
    np.testing.assert_array_equal(result.estimates["estimate"], coarse["estimate"])
