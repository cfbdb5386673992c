"""Leave-one-out and ratio splits, and the construction of a :class:`~itemsampling.data.dataset.Dataset`.

All four papers evaluate with one held-out item per user (leave-one-out): the rest of the
user's interactions train the model, the held-out item is ranked (Krichene & Rendle KDD'20 §2;
Li et al. KDD'20 §5; Jin et al. AAAI'21 §6; Li et al. AAAI'23 §5). :func:`ratio_split` holds
out a fraction of each user's items instead (RecBole's ``RS`` split, random order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .dataset import Dataset

__all__ = ["all_interactions", "dataset_from_indices", "dataset_from_pairs", "latest_per_user", "ratio_held_out_counts",
           "ratio_split", "unique_latest"]


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort-based ``np.unique``, much faster on large int arrays)."""
    values = np.sort(values)
    keep = np.ones(values.size, dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def unique_latest(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one row per (user, item) pair: the one with the latest ``timestamp``.

    Rows are returned in (user, timestamp, item) order; this is independent of the row
    order of the input.
    """
    order = np.lexsort((frame["item"].to_numpy(), frame["timestamp"].to_numpy(), frame["user"].to_numpy()))
    frame = frame.iloc[order]
    return frame.drop_duplicates(["user", "item"], keep="last").reset_index(drop=True)


def latest_per_user(frame: pd.DataFrame) -> np.ndarray:
    """Boolean mask of the held-out row of each user: leave-last-out by timestamp.

    The held-out interaction is the user's latest one; ties in ``timestamp`` (ratings made in
    the same second) are broken by the larger item id, so the split does not depend on the
    order of the rows in the file. Apply :func:`unique_latest` first if pairs may repeat.
    """
    users = frame["user"].to_numpy()
    order = np.lexsort((frame["item"].to_numpy(), frame["timestamp"].to_numpy(), users))
    sorted_users = users[order]
    last = np.ones(order.size, dtype=bool)
    last[:-1] = sorted_users[:-1] != sorted_users[1:]
    mask = np.zeros(order.size, dtype=bool)
    mask[order[last]] = True
    return mask


def dataset_from_indices(
    name: str,
    rows: np.ndarray,
    cols: np.ndarray,
    test_rows: np.ndarray,
    test_cols: np.ndarray,
    *,
    n_users: int,
    n_items: int,
    description: str,
    user_ids: np.ndarray,
    item_ids: np.ndarray,
) -> Dataset:
    """Build a :class:`Dataset` from 0-based interaction and held-out indices.

    ``rows, cols`` are all interactions (repeats allowed; the held-out pairs may or may not
    be among them); the training matrix is their set minus the held-out pairs, so a held-out
    item is never also a training item of its user. Each user may have at most one held-out
    item; users without one get ``-1``.
    """
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    test_rows, test_cols = np.asarray(test_rows, dtype=np.int64), np.asarray(test_cols, dtype=np.int64)
    for label, idx, bound in (("user", rows, n_users), ("item", cols, n_items), ("test user", test_rows, n_users), ("test item", test_cols, n_items)):
        if idx.size and (idx.min() < 0 or idx.max() >= bound):
            raise ValueError(f"{name}: {label} index out of range [0, {bound})")
    if _sorted_unique(test_rows).size != test_rows.size:
        raise ValueError(f"{name}: some user has more than one held-out item; leave-one-out needs exactly one")
    keys = _sorted_unique(rows * n_items + cols)
    test_keys = test_rows * n_items + test_cols
    train_keys = np.setdiff1d(keys, test_keys, assume_unique=True)
    train = sp.csr_matrix(
        (np.ones(train_keys.size, dtype=np.float32), (train_keys // n_items, train_keys % n_items)),
        shape=(n_users, n_items),
    )
    test_items = np.full(n_users, -1, dtype=np.int64)
    test_items[test_rows] = test_cols
    return Dataset(
        name=name,
        train=train,
        test_items=test_items,
        description=description,
        user_ids=np.asarray(user_ids),
        item_ids=np.asarray(item_ids),
    )


def dataset_from_pairs(
    name: str,
    users: np.ndarray,
    items: np.ndarray,
    test_users: np.ndarray,
    test_items: np.ndarray,
    *,
    description: str,
) -> Dataset:
    """Build a :class:`Dataset` from original ids: rows and columns are the sorted distinct
    users and items occurring in the interactions or held-out pairs (``user_ids``/``item_ids``)."""
    users, items = np.asarray(users, dtype=np.int64), np.asarray(items, dtype=np.int64)
    test_users, test_items = np.asarray(test_users, dtype=np.int64), np.asarray(test_items, dtype=np.int64)
    user_ids = _sorted_unique(np.concatenate([users, test_users]))
    item_ids = _sorted_unique(np.concatenate([items, test_items]))
    return dataset_from_indices(
        name,
        np.searchsorted(user_ids, users),
        np.searchsorted(item_ids, items),
        np.searchsorted(user_ids, test_users),
        np.searchsorted(item_ids, test_items),
        n_users=user_ids.size,
        n_items=item_ids.size,
        description=description,
        user_ids=user_ids,
        item_ids=item_ids,
    )


def all_interactions(dataset: Dataset) -> sp.csr_matrix:
    """Every observed (user, item) pair of a leave-one-out dataset: its training matrix plus each
    user's held-out item, as a binary float32 CSR matrix with sorted indices."""
    users = dataset.test_users
    held_out = sp.csr_matrix(
        (np.ones(users.size, dtype=np.float32), (users, dataset.test_items[users])), shape=dataset.train.shape
    )
    out = (dataset.train + held_out).tocsr()
    out.data[:] = 1.0
    out.sort_indices()
    return out


def ratio_held_out_counts(n_items_per_user: np.ndarray, test_fraction: float) -> np.ndarray:
    """Number of held-out items of a user with t items under RecBole's ratio split.

    RecBole (``Dataset._calcu_split_ids`` with ratios [1 - f, f]) holds out c = floor(f t) items,
    and one item when 0 < f t < 1 provided the training part keeps more than one item
    (t >= 2); a user with a single item keeps it for training.
    """
    t = np.asarray(n_items_per_user, dtype=np.int64)
    counts = np.floor(test_fraction * t).astype(np.int64)
    counts[(counts == 0) & (t >= 2)] = 1
    return counts


def ratio_split(interactions: sp.csr_matrix, *, test_fraction: float = 0.2,
                seed: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Hold out a fraction of each user's items, chosen at random (RecBole's ``RS`` split).

    Each user's items are put in a random order (one seeded uniform key per interaction, ties
    by item id) and the first c_u of them are held out, c_u from :func:`ratio_held_out_counts`
    (c_u = floor(0.2 t_u) for t_u >= 5 items at the default fraction). RecBole orders a user's
    interactions by time when ``order: TO`` and at random when ``order: RO``; this is the
    random order, so the split depends on the seed only, not on timestamps.

    Parameters
    ----------
    interactions : scipy.sparse.csr_matrix
        ``(n_users, n_items)`` observed pairs (non-zero entries), e.g. :func:`all_interactions`.
    test_fraction : float
        f in (0, 1), the share of each user's items held out.
    seed : int
        Seed of the random order.

    Returns
    -------
    train, test : scipy.sparse.csr_matrix
        Binary float32 matrices of the same shape with disjoint supports whose union is the
        input's support.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie strictly between 0 and 1, got {test_fraction}")
    matrix = sp.csr_matrix(interactions, dtype=np.float32, copy=True)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    matrix.sort_indices()
    per_user = np.diff(matrix.indptr)
    users = np.repeat(np.arange(matrix.shape[0]), per_user)
    keys = np.random.default_rng(seed).random(matrix.nnz)
    order = np.lexsort((matrix.indices, keys, users))
    place = np.empty(matrix.nnz, dtype=np.int64)
    place[order] = np.arange(matrix.nnz) - matrix.indptr[users[order]]
    held = place < ratio_held_out_counts(per_user, test_fraction)[users]
    parts = []
    for keep in (~held, held):
        part = sp.csr_matrix((np.ones(keep.sum(), dtype=np.float32), (users[keep], matrix.indices[keep])),
                             shape=matrix.shape)
        part.sort_indices()
        parts.append(part)
    return parts[0], parts[1]
