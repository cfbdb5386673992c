import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import comb

import itemsampling as its
from itemsampling.metrics import rank_weight
from itemsampling.simulation import (
    adaptive_sample_ranks,
    expected_sampled_metric,
    expected_sampled_rank_pmf,
    expected_sampling_cost,
    sample_ranks,
    sampled_rank_pmf,
    sampling_cost,
)

SCHEMES = ["binomial", "hypergeometric"]


# ---------------------------------------------------------------------------- sample_ranks


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sample_ranks_is_deterministic_and_in_range(scheme):
    R = np.random.default_rng(1).integers(1, 501, size=2000)
    a = sample_ranks(R, 500, 50, rng=7, scheme=scheme)
    b = sample_ranks(R, 500, 50, rng=np.random.default_rng(7), scheme=scheme)
    assert a.dtype == np.int64 and a.shape == R.shape
    assert a.tobytes() == b.tobytes()
    assert a.min() >= 1 and a.max() <= 50
    assert not np.array_equal(a, sample_ranks(R, 500, 50, rng=8, scheme=scheme))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sample_ranks_extremes(scheme):
    # R = 1: nothing outranks the target; R = N: every sampled item does
    r = sample_ranks([1, 1, 300, 300], 300, 40, rng=0, scheme=scheme)
    np.testing.assert_array_equal(r, [1, 1, 40, 40])


def test_full_sample_without_replacement_recovers_global_rank():
    R = np.arange(1, 201)
    np.testing.assert_array_equal(sample_ranks(R, 200, 200, rng=3, scheme="hypergeometric"), R)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sample_ranks_mean_matches_kernel_mean(scheme):
    # E[r | R] = 1 + (n - 1)(R - 1)/(N - 1) for both schemes (K&R §4.4.1)
    N, n, reps = 1000, 30, 20_000
    for R in (2, 17, 400, 999):
        r = sample_ranks(np.full(reps, R), N, n, rng=R, scheme=scheme)
        mean = 1 + (n - 1) * (R - 1) / (N - 1)
        se = r.std() / np.sqrt(reps)
        assert abs(r.mean() - mean) <= 4 * se + 1e-12


@pytest.mark.parametrize("scheme", SCHEMES)
def test_per_user_n_items(scheme):
    # the "unseen" protocol: user u ranks among N_u candidates
    N = np.array([50, 50, 5000, 5000] * 5000)
    R = np.array([50, 25, 50, 2500] * 5000)
    r = sample_ranks(R, N, 50, rng=0, scheme=scheme)
    assert (r[0::4] == 50).all()  # R_u = N_u: every sampled item outranks the target
    for j in (1, 2, 3):
        expected = 1 + 49 * (R[j] - 1) / (N[j] - 1)
        assert abs(r[j::4].mean() - expected) < 4 * r[j::4].std() / np.sqrt(5000) + 1e-12


def test_per_user_sample_size():
    r = sample_ranks([10, 10, 10], 10, [1, 5, 10], rng=0, scheme="hypergeometric")
    np.testing.assert_array_equal(r, [1, 5, 10])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"global_ranks": [0, 3]}, "global_ranks must lie in 1..n"),
        ({"global_ranks": [101]}, "global_ranks must lie in 1..n"),
        ({"sample_size": 101}, "n <= n_items"),
        ({"sample_size": 0}, "1 <= n"),
        ({"scheme": "poisson"}, "unknown sampling scheme"),
        ({"rng": "seed"}, "rng must be"),
        ({"n_items": [100, 100, 100]}, "one N_u per user"),
        ({"n_items": [1, 100]}, "N_u must be integers >= 2"),
        ({"sample_size": [5, 200]}, "n_u <= N_u"),
    ],
)
def test_sample_ranks_rejects_bad_input(kwargs, match):
    args = {"global_ranks": [1, 5], "n_items": 100, "sample_size": 10, "rng": 0, "scheme": "binomial"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sample_ranks(**args)


# ---------------------------------------------------------------------------- adaptive sampling


def _ladder(n0, n_max):
    levels = [n0]
    while levels[-1] < n_max:
        levels.append(min(2 * levels[-1], n_max))
    return levels


def _adaptive_pmf(R, N, n0, n_max, scheme):
    """Exact P(n_u = n_j, r_u = r) of Algorithm 1, from the kernel of the union sample set.

    At level j the union is a sample of n_j - 1 items; the user stops there with rank r iff
    the first n_{j-1} - 1 items contain no item ranked above the target and the union contains
    r - 1 of them (r >= 2, or any r at n_max).
    """
    out = {}
    levels = _ladder(n0, n_max)
    theta = (R - 1) / (N - 1)
    for j, size in enumerate(levels):
        prev = levels[j - 1] if j else 1
        for r in range(1 if size == n_max else 2, size + 1):
            hits = r - 1
            if scheme == "binomial":
                p = (1 - theta) ** (prev - 1) * stats.binom.pmf(hits, size - prev, theta)
            else:
                p = stats.hypergeom.pmf(hits, N - 1, R - 1, size - 1) * comb(
                    size - 1 - hits, prev - 1, exact=True) / comb(size - 1, prev - 1, exact=True)
            out[(size, r)] = p
    return out


def _chisquare_against(observed_pairs, pmf, reps):
    """Pearson chi-square p-value of observed (size, rank) pairs against pmf (cells pooled to >= 5)."""
    keys = sorted(pmf, key=lambda key: -pmf[key])
    expected = np.array([pmf[key] for key in keys]) * reps
    counts = pd.Series(list(map(tuple, observed_pairs))).value_counts()
    observed = np.array([counts.get(key, 0) for key in keys], dtype=float)
    assert observed.sum() == reps, "a simulated (size, rank) pair has probability zero"
    big = expected >= 5
    exp = np.append(expected[big], expected[~big].sum())
    obs = np.append(observed[big], observed[~big].sum())
    if exp[-1] == 0:
        exp, obs = exp[:-1], obs[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("R", [2, 3, 40])
def test_adaptive_distribution_matches_exact_pmf(scheme, R):
    N, n0, n_max, reps = 400, 10, 150, 20_000
    pmf = _adaptive_pmf(R, N, n0, n_max, scheme)
    assert abs(sum(pmf.values()) - 1) < 1e-12
    ranks, sizes = adaptive_sample_ranks(np.full(reps, R), N, n0, n_max, rng=R, scheme=scheme)
    assert _chisquare_against(np.column_stack([sizes, ranks]), pmf, reps) > 1e-4


def _direct_adaptive(R, N, n0, n_max, rng, scheme):
    """Algorithm 1 run literally on item ids for one user: the other N - 1 items are labelled
    0..N-2, the labels below R - 1 being the items ranked above the target."""
    if scheme == "binomial":
        items = rng.integers(0, N - 1, size=n_max - 1)
    else:
        items = rng.permutation(N - 1)[: n_max - 1]
    size = n0
    while True:
        rank = 1 + int(np.count_nonzero(items[: size - 1] < R - 1))
        if rank > 1 or size == n_max:
            return size, rank
        size = min(2 * size, n_max)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_adaptive_matches_direct_item_level_simulation(scheme):
    N, n0, n_max, reps = 300, 8, 100, 3000
    rng = np.random.default_rng(11)
    for R in (2, 12):
        direct = np.array([_direct_adaptive(R, N, n0, n_max, rng, scheme) for _ in range(reps)])
        ranks, sizes = adaptive_sample_ranks(np.full(reps, R), N, n0, n_max, rng=R, scheme=scheme)
        fast = np.column_stack([sizes, ranks])
        cells = sorted(set(map(tuple, direct)) | set(map(tuple, fast)))
        table = np.array([[np.all(x == c, axis=1).sum() for c in cells] for x in (direct, fast)])
        table = table[:, table.sum(axis=0) >= 10]  # drop rare cells for the chi-square approximation
        assert stats.chi2_contingency(table).pvalue > 1e-4


@pytest.mark.parametrize("scheme", SCHEMES)
def test_adaptive_sizes_and_ranks_structure(scheme):
    R = np.random.default_rng(0).integers(1, 2001, size=5000)
    ranks, sizes = adaptive_sample_ranks(R, 2000, 25, 300, rng=1, scheme=scheme)
    assert set(np.unique(sizes)) <= {25, 50, 100, 200, 300}  # n_max = 300 caps the ladder
    assert (ranks >= 1).all() and (ranks <= sizes).all()
    assert (ranks[sizes < 300] > 1).all()
    assert (ranks[R == 1] == 1).all() and (sizes[R == 1] == 300).all()
    again = adaptive_sample_ranks(R, 2000, 25, 300, rng=1, scheme=scheme)
    assert again[0].tobytes() == ranks.tobytes() and again[1].tobytes() == sizes.tobytes()


def test_adaptive_with_n0_equal_n_max_is_fixed_sampling():
    R = np.arange(1, 1001)
    ranks, sizes = adaptive_sample_ranks(R, 1000, 100, 100, rng=5)
    np.testing.assert_array_equal(ranks, sample_ranks(R, 1000, 100, rng=5))
    assert (sizes == 100).all()


@pytest.mark.parametrize(
    ("n0", "n_max", "match"),
    [(0, 10, "n0 must be a positive"), (20, 10, "must not exceed n_max"), (10, 2000, "exceeds the number")],
)
def test_adaptive_rejects_bad_sizes(n0, n_max, match):
    with pytest.raises(ValueError, match=match):
        adaptive_sample_ranks([1, 2], 1000, n0, n_max)


# ---------------------------------------------------------------------------- sampling cost


def test_sampling_cost_by_hand():
    sizes = [10] * 6 + [20] * 3 + [40] * 1  # M = 10, ladder 10, 20, 40, 80
    cost = sampling_cost(sizes, n_max=80)
    M = 10
    expected = [M * 10 / 6, (M - 6) * (20 - 10) / 3, (M - 9) * (40 - 20) / 1]
    np.testing.assert_allclose(cost["cost"].iloc[:3], expected)
    assert np.isnan(cost["cost"].iloc[3])  # nobody reached n = 80
    np.testing.assert_array_equal(cost["sample_size"], [10, 20, 40, 80])
    np.testing.assert_allclose(cost["cumulative_fraction"], [0.6, 0.9, 1.0, 1.0])


def test_sampling_cost_infinite_when_nobody_resolves():
    cost = sampling_cost([10, 10, 40, 40], ranks=[3, 2, 1, 5], n0=10, n_max=40)
    assert np.isinf(cost.loc[1, "cost"])  # two users sampled at n = 20, none stopped there
    assert cost.loc[2, "resolved"] == 1 and cost.loc[2, "stopped"] == 2
    assert cost.loc[2, "cost"] == pytest.approx(2 * 20 / 1)


def test_sampling_cost_matches_loop_over_simulation():
    R = np.random.default_rng(2).integers(1, 5001, size=3000)
    ranks, sizes = adaptive_sample_ranks(R, 5000, 16, 1000, rng=3)
    cost = sampling_cost(sizes, ranks, n0=16, n_max=1000)
    levels = [16, 32, 64, 128, 256, 512, 1000]
    remaining = len(R)
    for j, size in enumerate(levels):
        stopped = np.sum(sizes == size)
        resolved = np.sum((sizes == size) & (ranks > 1))
        new = size - (levels[j - 1] if j else 0)
        assert cost.loc[j, "cost"] == pytest.approx(remaining * new / resolved)
        remaining -= stopped


def test_sampling_cost_rejects_off_ladder_sizes():
    with pytest.raises(ValueError, match="n0·2"):
        sampling_cost([10, 30, 40])
    with pytest.raises(ValueError, match="r_u = 1 stopped before n_max"):
        sampling_cost([10, 20], ranks=[1, 2])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampling_cost_by_hand(scheme):
    """Two users, N = 10, levels 2, 4, 5: P(r = 1 with n items) written out with math.comb."""
    from math import comb as choose
    R, N = np.array([1, 4]), 10

    def first(rank, n):  # P(no item ranked above the target among n - 1 sampled items)
        if scheme == "binomial":
            return ((N - rank) / (N - 1)) ** (n - 1)
        return choose(N - rank, n - 1) / choose(N - 1, n - 1)

    cost = expected_sampling_cost(R, N, 2, 5, scheme)
    q = np.array([[first(r, n) for n in (2, 4, 5)] for r in R]).sum(axis=0)
    np.testing.assert_allclose(cost["users_sampled"], [2, q[0], q[1]])
    np.testing.assert_allclose(cost["resolved"], [2 - q[0], q[0] - q[1], q[1] - q[2]])
    np.testing.assert_allclose(cost["stopped"], [2 - q[0], q[0] - q[1], q[1]])
    np.testing.assert_allclose(cost["cost"], [2 * 2 / (2 - q[0]), q[0] * 2 / (q[0] - q[1]), q[1] * 1 / (q[1] - q[2])])
    assert cost["cumulative_fraction"].iloc[-1] == pytest.approx(1.0)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampling_cost_matches_monte_carlo_of_algorithm_1(scheme):
    rng = np.random.default_rng(5)
    N = rng.integers(1500, 2000, size=2000)
    R = np.minimum(1 + rng.geometric(1 / 150, size=N.size), N)
    expected = expected_sampling_cost(R, N, 10, 1000, scheme)
    draws = [sampling_cost(*adaptive_sample_ranks(R, N, 10, 1000, rng=i, scheme=scheme)[::-1], n0=10, n_max=1000)
             for i in range(200)]
    columns = ["users_sampled", "stopped", "resolved"]
    counts = np.stack([d[columns].to_numpy(dtype=float) for d in draws])
    se = counts.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(counts.mean(axis=0) - expected[columns].to_numpy()) <= 4 * se + 1e-9)
    sizes = [adaptive_sample_ranks(R, N, 10, 1000, rng=i, scheme=scheme)[1].mean() for i in range(50)]
    mean_size = float(expected["sample_size"] @ expected["stopped"]) / R.size
    assert np.mean(sizes) == pytest.approx(mean_size, abs=4 * np.std(sizes, ddof=1) / np.sqrt(50))


def test_expected_sampling_cost_extremes():
    everyone_last = expected_sampling_cost(np.full(5, 100), 100, 4, 64)  # R = N: resolved at once
    assert everyone_last["stopped"].iloc[0] == 5 and everyone_last["cost"].iloc[0] == pytest.approx(4)
    assert everyone_last["users_sampled"].iloc[1:].eq(0).all() and everyone_last["cost"].iloc[1:].isna().all()
    always_first = expected_sampling_cost(np.ones(5, dtype=int), 100, 4, 64)  # R = 1: never resolved
    assert np.isinf(always_first["cost"]).all() and always_first["stopped"].iloc[-1] == 5


def test_expected_sampling_cost_rejects_bad_sizes():
    with pytest.raises(ValueError, match="smallest number of candidates"):
        expected_sampling_cost([1, 2], [50, 30], 4, 40)
    with pytest.raises(ValueError, match="must not exceed"):
        expected_sampling_cost([1, 2], 50, 8, 4)


# ---------------------------------------------------------------------------- expectations


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sampled_rank_pmf_is_mixture_of_kernel_rows(scheme):
    N, n = 300, 25
    p = np.random.default_rng(0).dirichlet(np.ones(N) * 0.3)
    p[5:40] = 0
    p /= p.sum()
    np.testing.assert_allclose(sampled_rank_pmf(p, N, n, scheme), p @ its.rank_kernel(N, n, scheme), atol=1e-14)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampled_metric_with_per_user_n_items(scheme):
    rng = np.random.default_rng(4)
    N = rng.integers(60, 90, size=40)
    R = rng.integers(1, 61, size=40)
    n = 20
    for metric, k in [("ndcg", 10), ("ap", None), ("auc", None), ("precision", 5)]:
        w = rank_weight(metric, np.arange(1, n + 1), n, k)
        direct = np.mean([its.rank_kernel(int(Nu), n, scheme)[Ru - 1] @ w for Ru, Nu in zip(R, N, strict=True)])
        assert expected_sampled_metric(R, N, n, metric, k, scheme) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampled_rank_pmf_is_the_mean_of_each_users_kernel_row(scheme):
    rng = np.random.default_rng(8)
    N = rng.integers(60, 90, size=50)
    R = rng.integers(1, 61, size=50)
    n = 20
    direct = np.mean([its.rank_kernel(int(Nu), n, scheme)[Ru - 1] for Ru, Nu in zip(R, N, strict=True)], axis=0)
    pmf = expected_sampled_rank_pmf(R, N, n, scheme)
    np.testing.assert_allclose(pmf, direct, atol=1e-14)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    for k in (1, 7, 20):  # its cumulative sum is the expected sampled recall (hit ratio) at k
        assert pmf[:k].sum() == pytest.approx(expected_sampled_metric(R, N, n, "recall", k, scheme), rel=1e-12)


def test_expected_sampled_rank_pmf_with_one_n_is_that_of_the_rank_distribution():
    N, n = 400, 30
    R = np.random.default_rng(9).integers(1, N + 1, size=300)
    W = np.bincount(R, minlength=N + 1)[1:] / R.size  # eq. 2
    np.testing.assert_allclose(expected_sampled_rank_pmf(R, N, n), sampled_rank_pmf(W, N, n), atol=1e-14)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_expected_sampled_rank_pmf_matches_monte_carlo_with_per_user_n_items(scheme):
    rng = np.random.default_rng(10)
    N = rng.integers(300, 400, size=500)
    R = np.minimum(rng.geometric(0.02, size=500), N)
    n, repeats = 40, 400
    pmf = expected_sampled_rank_pmf(R, N, n, scheme)
    draws = np.concatenate([sample_ranks(R, N, n, rng=rng, scheme=scheme) for _ in range(repeats)])
    observed = np.bincount(draws, minlength=n + 1)[1:] / draws.size
    se = np.sqrt(pmf * (1 - pmf) / draws.size)
    assert np.all(np.abs(observed - pmf) <= 5 * se + 1e-12)


def test_expected_sampled_metric_rejects_per_user_sample_size():
    with pytest.raises(ValueError, match="single integer"):
        expected_sampled_metric([1, 2], 100, [10, 10], "recall", 5)
    with pytest.raises(ValueError, match="single integer"):
        expected_sampled_rank_pmf([1, 2], 100, [10, 10])
    with pytest.raises(ValueError, match="sample_size n=90 is out of range"):
        expected_sampled_rank_pmf([1, 2], [100, 80], 90)
