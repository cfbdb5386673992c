"""Bottom shares of held-out items (itemsampling_study.rank_tails) and the EASE sign pattern they reveal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from itemsampling.models.ease import EASE
from itemsampling_study.rank_tails import bottom_shares, held_out_context, in_bottom


def _matrix(rows: list[list[int]], n_items: int) -> sp.csr_matrix:
    users = [u for u, items in enumerate(rows) for _ in items]
    items = [i for row in rows for i in row]
    return sp.csr_matrix((np.ones(len(items), np.float32), (users, items)), shape=(len(rows), n_items))


# a chain a-b-c-d (items 0-3) seen by users 0-2, an unrelated pair e-f (items 4, 5) seen by user 3,
# and test user 4 who holds item 0 only
CHAIN = _matrix([[0, 1], [1, 2], [2, 3], [4, 5], [0]], 6)


def test_context_counts_the_paths_from_the_user_to_the_held_out_item():
    context = held_out_context(CHAIN, [4, 4, 4, 0], [1, 2, 4, 2])
    assert context["item_users"].tolist() == [2, 2, 1, 2]
    # user 4 holds item 0: item 1 shares user 0 with it; items 2 and 4 share nobody with it.
    # user 0 holds items 0 and 1: item 2 shares user 1 with item 1.
    assert context["cooccurrences"].tolist() == [1, 0, 0, 1]


def test_context_counts_every_shared_user_and_every_training_item():
    train = _matrix([[0, 1, 2], [0, 2], [1, 2], [0, 1]], 3)
    context = held_out_context(train, [3], [2], batch_size=1)
    # user 3 holds items 0 and 1; item 2 is held with item 0 by users 0, 1 and with item 1 by users 0, 2
    assert context["cooccurrences"].tolist() == [4]
    assert context["item_users"].tolist() == [3]


def test_context_rejects_pairs_outside_the_matrix():
    with pytest.raises(ValueError, match="index"):
        held_out_context(CHAIN, [9], [0])
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        held_out_context(CHAIN, [0, 1], [0])


def test_the_bottom_fifth_is_the_last_fifth_of_each_users_candidates():
    assert in_bottom([8, 9, 10, 1], [10, 10, 10, 10]).tolist() == [False, True, True, False]
    assert in_bottom([80, 81], [100, 100]).tolist() == [False, True]
    assert in_bottom([5], [10], fraction=0.5).tolist() == [False]
    with pytest.raises(ValueError, match="between 0 and 1"):
        in_bottom([1], [10], fraction=1.0)
    with pytest.raises(ValueError, match="1 <= R_u <= N_u"):
        in_bottom([11], [10])


def test_bottom_shares_split_by_popularity_and_cooccurrence():
    ranks = pd.DataFrame({"user": np.arange(8), "item": np.arange(8), "rank": [100, 1, 95, 2, 3, 90, 4, 5],
                          "n_candidates": 100})
    context = pd.DataFrame({"user": np.arange(8), "item": np.arange(8), "item_users": [1, 1, 2, 2, 10, 10, 50, 50],
                            "cooccurrences": [0, 3, 0, 4, 5, 0, 6, 7]})
    table = bottom_shares(ranks, context, popularity_groups=4).set_index(["split", "group"])
    assert table.loc[("all", "all"), "bottom_share"] == pytest.approx(3 / 8)
    assert table.loc[("popularity", "Q1"), "bottom_share"] == pytest.approx(1 / 2)
    assert table.loc[("popularity", "Q4"), "bottom_share"] == 0
    assert table.loc[("popularity", "Q1"), ["item_users_min", "item_users_max"]].tolist() == [1, 1]
    assert table.loc[("cooccurrence", "none"), ["users", "bottom_share"]].tolist() == [3, 1.0]
    assert table.loc[("cooccurrence", "some"), ["users", "bottom_share"]].tolist() == [5, 0.0]
    assert table.loc[("all", "all"), "median_relative_rank"] == pytest.approx(np.median((ranks["rank"] - 1) / 99))
    only_all = bottom_shares(ranks)
    assert only_all["split"].tolist() == ["all"]


def test_bottom_shares_refuse_a_context_of_other_items():
    ranks = pd.DataFrame({"user": [0, 1], "item": [3, 4], "rank": [1, 2], "n_candidates": [10, 10]})
    context = pd.DataFrame({"user": [0, 1], "item": [3, 5], "item_users": [1, 1], "cooccurrences": [0, 0]})
    with pytest.raises(ValueError, match="does not describe"):
        bottom_shares(ranks, context)


def test_ease_scores_items_two_steps_away_below_unrelated_items():
    """EASE's ridge regression gives an item that shares no user with the user's items (two
    steps away through another item) a negative score, below items that are not linked at all
    (score 0): the mechanism that sinks such held-out items to the bottom of the ranking."""
    model = EASE(l2=1.0).fit(CHAIN)
    scores = model.score(np.array([4]))[0]
    b, c, d, e = scores[1], scores[2], scores[3], scores[4]
    assert b > 0  # shares user 0 with item 0
    assert c < 0  # two steps: 0-b-c
    assert d > 0  # three steps: the signs alternate
    assert e == pytest.approx(0.0, abs=1e-7)  # unrelated
    assert c < e < d < b
