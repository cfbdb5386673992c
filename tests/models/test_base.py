"""The Recommender base class: input checks, batch scoring, state."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from itemsampling._validation import check_seed
from itemsampling.models.base import Recommender, check_interactions, score_batches


class RowSums(Recommender):
    name = "rowsums"
    state_attributes = ("item_weights_",)

    def _fit(self, train, seed, progress):
        self.item_weights_ = np.arange(train.shape[1], dtype=np.float32)

    def _score(self, users):
        return np.asarray(self.train_[users].sum(axis=1)) + self.item_weights_


def test_check_interactions_binarises_and_copies():
    raw = sp.csr_matrix(np.array([[0, 3, 0], [2, 0, 0]], dtype=np.float64))
    out = check_interactions(raw)
    assert out.dtype == np.float32 and (out.data == 1).all() and out.nnz == 2
    assert raw.data.max() == 3  # the input is untouched
    with pytest.raises(ValueError, match=r"scipy\.sparse"):
        check_interactions(np.ones((2, 3)))
    with pytest.raises(ValueError, match="two items"):
        check_interactions(sp.csr_matrix((3, 1)))
    with pytest.raises(ValueError, match="non-negative"):
        check_interactions(sp.csr_matrix(np.array([[0, -1.0]])))


def test_check_seed():
    assert check_seed(None) is None and check_seed(np.int64(4)) == 4
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed"):
            check_seed(bad)


def test_score_checks_fitted_and_users():
    model = RowSums(a=1)
    assert model.hyperparameters == {"a": 1} and repr(model) == "RowSums(a=1)"
    with pytest.raises(RuntimeError, match="not fitted"):
        model.score([0])
    model.fit(sp.random(6, 4, density=0.5, format="csr", rng=0))
    with pytest.raises(ValueError, match=r"0\.\.5"):
        model.score([6])
    with pytest.raises(ValueError, match="integer"):
        model.score([0.5])
    scores = model.score(np.array([1, 3]))
    assert scores.dtype == np.float32 and scores.shape == (2, 4)


def test_score_batches_covers_users_in_order():
    train = sp.random(10, 5, density=0.4, format="csr", rng=1)
    model = RowSums().fit(train)
    users = np.array([9, 0, 3, 3, 7, 1, 2])
    batches = list(score_batches(model, users, batch_size=3, progress=False))
    assert [b.size for b, _ in batches] == [3, 3, 1]
    np.testing.assert_array_equal(np.concatenate([b for b, _ in batches]), users)
    np.testing.assert_array_equal(np.vstack([s for _, s in batches]), model.score(users))
    with pytest.raises(ValueError, match="batch_size"):
        list(score_batches(model, users, batch_size=0))


def test_state_round_trip():
    train = sp.random(8, 5, density=0.4, format="csr", rng=2)
    model = RowSums().fit(train)
    restored = RowSums().load_state(train, model.state())
    np.testing.assert_array_equal(restored.score(np.arange(8)), model.score(np.arange(8)))
    assert model.state_nbytes() == 5 * 4
    with pytest.raises(ValueError, match="lacks"):
        RowSums().load_state(train, {})


def test_score_items_are_the_scores_at_those_items():
    model = RowSums().fit(sp.random(10, 6, density=0.4, format="csr", rng=3))
    users = np.array([4, 0, 4, 9])
    items = np.array([[5, 0, 5], [1, 2, 3], [0, 0, 1], [5, 4, 3]])
    out = model.score_items(users, items)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, model.score(users)[np.arange(4)[:, None], items])
    with pytest.raises(ValueError, match=r"shape \(len\(users\), m\)"):
        model.score_items(users, items[:3])
    with pytest.raises(ValueError, match=r"0\.\.5"):
        model.score_items(users, items + 1)
    with pytest.raises(ValueError, match="integer"):
        model.score_items(users, items * 0.5)
