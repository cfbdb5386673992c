"""Synthetic data: determinism, leave-one-out split, planted latent and popularity structure."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from itemsampling.data import load_dataset, make_synthetic
from itemsampling.data.synthetic import planted_model


def test_same_seed_same_bytes_other_seed_other_data():
    a = make_synthetic(300, 200, seed=7)
    b = make_synthetic(300, 200, seed=7)
    for x, y in [(a.train.indptr, b.train.indptr), (a.train.indices, b.train.indices), (a.test_items, b.test_items)]:
        assert x.tobytes() == y.tobytes()
    c = make_synthetic(300, 200, seed=8)
    assert (a.train != c.train).nnz > 0


def test_leave_one_out_split():
    data = make_synthetic(500, 120, avg_items=10, seed=1)
    assert data.train.dtype == np.float32 and np.all(data.train.data == 1)
    assert np.all(data.test_items >= 0) and data.test_users.size == 500
    assert np.all(data.train[np.arange(500), data.test_items].A1 == 0)
    per_user = np.diff(data.train.indptr) + 1
    assert per_user.min() >= 2
    # n_u = 2 + Poisson(avg - 2): mean avg_items within 4 standard errors
    assert abs(per_user.mean() - 10) < 4 * np.sqrt(8 / 500)


def test_planted_factors_predict_the_held_out_item():
    n_users, n_items = 400, 300
    data = make_synthetic(n_users, n_items, popularity_skew=0.0, strength=3.0, seed=3)
    logits = planted_model(n_users, n_items, popularity_skew=0.0, strength=3.0, seed=3).logits()
    logits[data.train.nonzero()] = -np.inf  # rank among unseen items
    target = logits[np.arange(n_users), data.test_items]
    rank = 1 + (logits > target[:, None]).sum(axis=1)
    unseen = n_items - np.diff(data.train.indptr)
    # random scores give a mean normalised rank of 1/2; the planted scores do much better
    assert np.mean((rank - 1) / (unseen - 1)) < 0.2


def test_popularity_skew_is_planted():
    n_items = 200
    skewed = make_synthetic(2000, n_items, popularity_skew=1.5, strength=0.0, seed=4)
    degree = np.bincount(skewed.train.indices, minlength=n_items)
    bias = planted_model(2000, n_items, popularity_skew=1.5, strength=0.0, seed=4).item_bias
    assert spearmanr(degree, bias).statistic > 0.9
    flat = make_synthetic(2000, n_items, popularity_skew=0.0, strength=0.0, seed=4)
    flat_degree = np.bincount(flat.train.indices, minlength=n_items)
    top_share = np.sort(degree)[::-1][: n_items // 10].sum() / degree.sum()
    flat_share = np.sort(flat_degree)[::-1][: n_items // 10].sum() / flat_degree.sum()
    assert top_share > 2 * flat_share


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_items": 2}, "n_items must be an integer >= 3"), ({"avg_items": 1}, "avg_items must lie in"),
     ({"popularity_skew": -1.0}, "popularity_skew must be"), ({"n_users": 0}, "n_users must be")],
)
def test_bad_arguments(kwargs, message):
    args = {"n_users": 10, "n_items": 50, **kwargs}
    with pytest.raises(ValueError, match=message):
        make_synthetic(args.pop("n_users"), args.pop("n_items"), **args)


def test_registry_name_synthetic_needs_no_files():
    data = load_dataset("synthetic", n_users=50, n_items=40, avg_items=5, seed=2)
    assert data.name == "synthetic" and data.train.shape == (50, 40)
    assert data.test_items.tobytes() == make_synthetic(50, 40, avg_items=5, seed=2).test_items.tobytes()
