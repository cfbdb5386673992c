"""The in-memory form of an implicit-feedback dataset with one held-out item per test user."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Dataset:
    """Training interactions plus one held-out test item per user.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"ml-1m"``.
    train : scipy.sparse.csr_matrix
        Binary ``(n_users, n_items)`` float32 matrix of training interactions.
    test_items : numpy.ndarray
        ``(n_users,)`` int64: the held-out item of each user (0-based column of ``train``),
        ``-1`` for a user without one. A test item is never also a training item of that user.
    description : str
        One line saying what the data is and how it was split (named honestly, e.g. a subset).
    user_ids, item_ids : numpy.ndarray
        Original identifiers of rows and columns.
    """

    name: str
    train: sp.csr_matrix
    test_items: np.ndarray
    description: str = ""
    user_ids: np.ndarray = field(default=None, repr=False)
    item_ids: np.ndarray = field(default=None, repr=False)

    @property
    def n_users(self) -> int:
        """Number of users (rows)."""
        return self.train.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items N (columns)."""
        return self.train.shape[1]

    @property
    def test_users(self) -> np.ndarray:
        """Indices of the users that have a held-out item."""
        return np.flatnonzero(self.test_items >= 0)
