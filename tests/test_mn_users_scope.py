"""MN's M with per-user candidates: ``m_scope="group"`` (each group's M_g) or ``"total"`` (the whole M)."""

from __future__ import annotations

import numpy as np
import pytest

from itemsampling import corrections
from itemsampling.estimators import Estimator, estimate, estimate_many
from itemsampling.metrics import rank_weight
from itemsampling.simulation import sample_ranks


@pytest.fixture(scope="module")
def two_groups():
    """200 users with N_u = 300 and 100 with N_u = 400: two candidate groups, sampled at n = 20."""
    rng = np.random.default_rng(3)
    n_items = np.r_[np.full(200, 300), np.full(100, 400)]
    global_ranks = np.minimum(n_items, rng.geometric(0.02, n_items.size))
    return sample_ranks(global_ranks, n_items, 20, rng=rng), n_items


def _by_hand(ranks, n_items, n, users_of):
    """Σ_g (M_g/M) mean over group g of M̂_g(r_u), M̂_g from corrections.mn_operator with M = users_of(M_g)."""
    total = 0.0
    for n_g in np.unique(n_items):
        mine = ranks[n_items == n_g]
        operator = corrections.mn_operator(int(n_g), n, users_of(mine.size))
        values = operator.apply(rank_weight("recall", np.arange(1, 11), int(n_g), 10))
        total += mine.size / ranks.size * np.mean(values[mine - 1])
    return total


@pytest.mark.parametrize(("scope", "users_of"), [("group", lambda m_g: m_g), ("total", lambda m_g: 300)])
def test_mn_per_group_is_the_operator_with_the_chosen_m(two_groups, scope, users_of):
    ranks, n_items = two_groups
    ours = estimate(ranks, n_items, 20, "mn", metrics="recall", ks=[10], n_groups=None, m_scope=scope)
    assert ours["estimate"].iloc[0] == pytest.approx(_by_hand(ranks, n_items, 20, users_of), rel=1e-9)


def test_group_is_the_default_and_one_group_makes_the_scopes_equal(two_groups):
    ranks, n_items = two_groups
    ests = [Estimator("mn", name="default"), Estimator("mn", {"m_scope": "group"}, name="group"),
            Estimator("mn", {"m_scope": "total"}, name="total")]
    grouped = estimate_many(ranks, n_items, 20, ests, metrics="recall", ks=[10], n_groups=None).set_index("estimator")
    assert grouped.loc["default", "estimate"] == grouped.loc["group", "estimate"]
    assert grouped.loc["total", "estimate"] != grouped.loc["group", "estimate"]
    single = estimate_many(ranks, 350, 20, ests, metrics="recall", ks=[10]).set_index("estimator")
    assert single["estimate"].nunique() == 1


def test_an_unknown_scope_is_refused(two_groups):
    ranks, n_items = two_groups
    with pytest.raises(ValueError, match="m_scope"):
        estimate(ranks, n_items, 20, "mn_mle", metrics="recall", ks=[10], m_scope="users")
    with pytest.raises(ValueError, match="unknown option"):
        Estimator("bv", {"m_scope": "total"})
