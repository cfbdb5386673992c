"""The adaptive MLE of the public functions reads its kernels at the observed columns only.

With one sample size n_u per user (AAAI'23 Algorithm 1) a call of ``rank_distribution`` or
``estimate`` computes P(r | R; n_u, N_g) at the ranks observed with each (N_g, n_u)
(:func:`itemsampling.kernels.kernel_columns`), never the whole kernel of every n_u; a
:class:`~itemsampling.kernels.KernelCache` shared across calls (the study engine) still keeps the
whole kernels and reuses them.
"""

import numpy as np
import pytest

import itemsampling as its
from itemsampling import kernels
from itemsampling.kernels import KernelCache, kernel_columns


def _adaptive_draw(n_items, seed=0, n_users=400, n0=10, n_max=160, scheme="binomial"):
    rng = np.random.default_rng(seed)
    top = int(np.min(n_items))
    weights = (np.arange(1, top + 1) + 5.0) ** -1.1
    global_ranks = rng.choice(np.arange(1, top + 1), size=n_users, p=weights / weights.sum())
    return its.adaptive_sample_ranks(global_ranks, n_items, n0, n_max, rng=rng, scheme=scheme)


def _per_user_em(ranks, sizes, n_items, scheme, steps):
    """EM of AAAI'23 App. G (eq. 21-22) with one uncached column P(r_u | R; n_u, N_u) per user."""
    n_items = np.broadcast_to(n_items, ranks.shape)
    L = np.zeros((int(n_items.max()), ranks.size))
    for u in range(ranks.size):
        L[: n_items[u], u] = kernel_columns(int(n_items[u]), int(sizes[u]), [ranks[u]], scheme)[:, 0]
    pi = np.full(L.shape[0], 1.0 / L.shape[0])
    for _ in range(steps):
        pi = pi * (L @ (1.0 / (L.T @ pi))) / ranks.size
        pi /= pi.sum()
    return pi


@pytest.mark.parametrize("scheme", ["binomial", "hypergeometric"])
@pytest.mark.parametrize("per_user_items", [False, True])
def test_public_adaptive_mle_is_the_em_on_uncached_columns(scheme, per_user_items):
    rng = np.random.default_rng(1)
    n_items = rng.integers(450, 501, size=400) if per_user_items else 500
    ranks, sizes = _adaptive_draw(n_items, scheme=scheme)
    assert np.unique(sizes).size > 2  # several sample sizes on the ladder
    expected = _per_user_em(ranks, sizes, n_items, scheme, steps=20)
    got = its.rank_distribution(ranks, n_items, sizes, "adaptive_mle", scheme=scheme, n_groups=None,
                                max_iter=20, tol=0)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)


def test_one_call_computes_no_whole_kernel(monkeypatch):
    ranks, sizes = _adaptive_draw(500)

    def whole_kernel(*args, **kwargs):
        raise AssertionError("rank_kernel called")

    monkeypatch.setattr(kernels, "rank_kernel", whole_kernel)
    pi = its.rank_distribution(ranks, 500, sizes, "adaptive_mle")
    table = its.estimate(ranks, 500, sizes, "adaptive_mle", "ndcg", 10, interval=0.95)
    assert pi.shape == (500,) and np.isfinite(table[["estimate", "se"]].to_numpy()).all()


def test_a_shared_cache_reuses_whole_kernels_and_agrees_to_rounding(monkeypatch):
    ranks, sizes = _adaptive_draw(500)
    built = []
    monkeypatch.setattr(kernels, "rank_kernel", lambda *args, **kw: built.append(args) or its.rank_kernel(*args, **kw))
    one_call = its.estimate(ranks, 500, sizes, "adaptive_mle")
    assert not built
    cache = KernelCache()
    shared = [its.estimate_many(ranks, 500, sizes, [its.Estimator("adaptive_mle")], cache=cache) for _ in range(2)]
    assert sorted(n for _, n, _ in built) == np.unique(sizes).tolist()  # once per n_u, reused by the second call
    assert shared[0]["estimate"].equals(shared[1]["estimate"])
    np.testing.assert_allclose(one_call["estimate"], shared[0]["estimate"], rtol=1e-11, atol=1e-15)


def test_columns_of_a_one_call_cache_are_the_uncached_columns_computed_once():
    cache, ranks = KernelCache(full_kernels=False), np.array([1, 4, 9])
    assert not cache.fits(300, 40)
    first = cache.columns(300, 40, ranks, "hypergeometric")
    np.testing.assert_array_equal(first, kernel_columns(300, 40, ranks, "hypergeometric"))
    assert cache.columns(300, 40, ranks.copy(), "hypergeometric") is first
    whole = KernelCache().columns(300, 40, ranks, "hypergeometric")
    np.testing.assert_array_equal(whole, its.rank_kernel(300, 40, "hypergeometric")[:, ranks - 1])
    assert KernelCache.for_one_call(40).full_kernels and not KernelCache.for_one_call([40, 80]).full_kernels
