"""sampled_ranks_from_scores: exact ranks, uniform tie-breaking, determinism by seed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import itemsampling as its


def test_ranks_without_ties_count_the_higher_scores():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(500, 100))
    ranks = its.sampled_ranks_from_scores(scores)
    # the position of column 0 in each row sorted by decreasing score, counted from 1
    expected = 1 + np.argmax(np.argsort(-scores, axis=1) == 0, axis=1)
    np.testing.assert_array_equal(ranks, expected)
    assert ranks.dtype == np.int64


def test_target_column_per_row():
    scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4], [0.3, 0.7, 0.6]])
    np.testing.assert_array_equal(its.sampled_ranks_from_scores(scores, target_column=[0, 0, 2]), [1, 3, 2])
    np.testing.assert_array_equal(its.sampled_ranks_from_scores(scores, target_column=1), [3, 1, 1])


def test_a_tie_takes_each_of_its_positions_equally_often():
    """Held-out item tied with three sampled items, one item above: rank 2, 3, 4 or 5."""
    scores = np.tile([1.0, 1.0, 1.0, 1.0, 0.0, 5.0, -2.0], (40_000, 1))
    ranks = its.sampled_ranks_from_scores(scores, rng=7)
    values, counts = np.unique(ranks, return_counts=True)
    np.testing.assert_array_equal(values, [2, 3, 4, 5])
    assert stats.chisquare(counts).pvalue > 1e-3


def test_exchangeable_scores_give_uniform_ranks_despite_many_ties():
    """If the held-out item scores like its sampled items, every rank 1..n is equally likely;
    with three distinct scores most items tie, so this holds only if ties are broken uniformly."""
    scores = np.random.default_rng(1).integers(0, 3, size=(60_000, 10))
    counts = np.bincount(its.sampled_ranks_from_scores(scores, rng=2), minlength=11)[1:]
    assert counts.sum() == 60_000
    assert stats.chisquare(counts).pvalue > 1e-3


def test_same_seed_same_ranks():
    scores = np.random.default_rng(3).integers(0, 4, size=(1000, 20))
    first = its.sampled_ranks_from_scores(scores, rng=11)
    np.testing.assert_array_equal(first, its.sampled_ranks_from_scores(scores, rng=11))
    np.testing.assert_array_equal(first, its.sampled_ranks_from_scores(scores, rng=np.random.default_rng(11)))
    assert (first != its.sampled_ranks_from_scores(scores, rng=12)).any()


def test_ranks_feed_the_estimators():
    """Scores in which the held-out item is as good as a random one: Recall@K is about K/N."""
    scores = np.random.default_rng(4).normal(size=(3000, 100))
    ranks = its.sampled_ranks_from_scores(scores, rng=5)
    table = its.estimate(ranks, n_items=1000, sample_size=100, method="mle", metrics="recall", ks=[100])
    assert table.estimate.item() == pytest.approx(0.1, abs=0.02)
