"""Most-popular baseline: every user gets the same item scores, the training counts."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .base import Recommender

__all__ = ["Popularity"]


class Popularity(Recommender):
    """Score each item by the number of training users who interacted with it.

    The score does not depend on the user, so the model has no hyper-parameters; it is the
    floor every personalised recommender should beat. The seed is accepted and unused (the
    model makes no random choice).
    """

    name = "popularity"
    state_attributes = ("item_counts_",)

    def __init__(self) -> None:
        super().__init__()
        self.item_counts_: np.ndarray | None = None

    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        self.item_counts_ = np.asarray(train.sum(axis=0), dtype=np.float32).ravel()

    def _score(self, users: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.item_counts_, (users.size, self.item_counts_.size)).copy()
