"""Sampling among a user's candidate items: the primitives that the sampled ranks of a trained
model (:mod:`itemsampling.ranks`) and the live adaptive evaluation
(:mod:`itemsampling.adaptive_evaluation`) share.

* :func:`tie_break_keys` and :func:`precedes`: the seeded total order of items with equal scores
  (the same pair of user and item always gets the same key);
* :func:`test_users`: the users with a held-out item, checked;
* :func:`non_candidates`, :func:`nth_allowed` and :func:`draw_positions`: uniform draws of
  candidates by position among the items that are not excluded, with or without replacement;
* :func:`check_sample_sizes`: a sample set fits every user's candidates.

The functions trust their callers (the public functions of those two modules check the input).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ._validation import check_positive_integer, check_seed

__all__ = ["check_sample_sizes", "draw_positions", "non_candidates", "nth_allowed", "precedes", "test_users",
           "tie_break_keys"]

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014) on a uint64 array (wraps modulo 2^64)."""
    z = x + _GOLDEN
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def tie_break_keys(users, items, seed: int) -> np.ndarray:
    """Seeded random tie-break keys key(u, i), uint64, broadcast over ``users`` and ``items``.

    Among items with equal scores, the one with the smaller key ranks first. The key is a
    hash of (seed, user, item): the same pair always gets the same key, whatever array it is
    in, and for a fixed user the keys of different items behave like independent uniform draws
    (so every order of tied items is equally likely).
    """
    seed = check_seed(seed)
    if seed is None:
        raise ValueError("a tie-break seed (non-negative integer) is required")
    u = np.atleast_1d(np.asarray(users, dtype=np.int64)).astype(_U64)
    i = np.atleast_1d(np.asarray(items, dtype=np.int64)).astype(_U64)
    base = _splitmix64(_splitmix64(np.atleast_1d(_U64(seed))) ^ u)
    return _splitmix64(base + _GOLDEN * i)


def precedes(scores, target_scores, users, items, target_keys, seed) -> np.ndarray:
    """Whether items (with ``scores``) precede the targets in the seeded total order.

    ``scores``/``users``/``items`` share one shape; ``target_scores``/``target_keys`` broadcast.
    """
    out = scores > target_scores
    tied = np.nonzero(scores == target_scores)
    if tied[0].size:
        users_b = np.broadcast_to(users, scores.shape)[tied]
        items_b = np.broadcast_to(items, scores.shape)[tied]
        keys_t = np.broadcast_to(target_keys, scores.shape)[tied]
        out[tied] = tie_break_keys(users_b, items_b, seed) < keys_t
    return out


def test_users(test_items, n_users: int, users) -> tuple[np.ndarray, np.ndarray]:
    test_items = np.asarray(test_items)
    if test_items.shape != (n_users,) or not np.issubdtype(test_items.dtype, np.integer):
        raise ValueError(f"test_items must be an integer array with one entry per user ({n_users})")
    if users is None:
        users = np.flatnonzero(test_items >= 0)
    else:
        users = np.asarray(users, dtype=np.int64)
        if users.size and (users.min() < 0 or users.max() >= n_users or (test_items[users] < 0).any()):
            raise ValueError("users must be row indices of users that have a held-out item")
    if users.size == 0:
        raise ValueError("no test users: every test_items entry is -1")
    return users, test_items[users].astype(np.int64)


def non_candidates(excluded_rows, targets: np.ndarray, n_items: int) -> sp.csr_matrix:
    """``(B, N)`` pattern of the non-candidates of B users: each one's target, plus its row of
    ``excluded_rows`` (``(B, N)`` sparse, e.g. the training items under ``unseen``; ``None``
    under ``all``). Indices are sorted, as :func:`nth_allowed` needs."""
    target = sp.csr_matrix(
        (np.ones(targets.size, np.float32), (np.arange(targets.size), targets)), shape=(targets.size, n_items)
    )
    out = sp.csr_matrix(target if excluded_rows is None else target + excluded_rows)
    out.sort_indices()
    return out


def nth_allowed(excluded: sp.csr_matrix, rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Item id of the ``positions``-th (0-based) non-excluded item of row ``rows`` of ``excluded``.

    All rows are handled at once on the flattened index row * N + item: with the excluded flat
    indices E_0 < E_1 < ... and A_m = E_m - m, the g-th non-excluded flat index is
    g + #{m : A_m <= g}.
    """
    n_items = excluded.shape[1]
    ex_rows = np.repeat(np.arange(excluded.shape[0], dtype=np.int64), np.diff(excluded.indptr))
    flat = ex_rows * n_items + excluded.indices
    adjusted = flat - np.arange(flat.size)
    g = rows * n_items - excluded.indptr[rows] + positions
    return g + np.searchsorted(adjusted, g, side="right") - rows * n_items


def draw_positions(rng, pool: np.ndarray, count: int, replace: bool, existing=None) -> np.ndarray:
    """Draw ``count`` positions in 0..pool_b-1 for every row b.

    With replacement they are i.i.d. uniform. Without, they are distinct and distinct from the
    row's ``existing`` positions: duplicates are redrawn until none is left, which gives a
    uniform subset because the procedure treats all positions alike; rows that need more than
    half of their pool use a uniform random order of the pool instead.
    """
    n_rows = pool.size
    new = rng.integers(0, pool[:, None], size=(n_rows, count))
    if replace or count == 0:
        return new
    old = np.zeros((n_rows, 0), np.int64) if existing is None else existing
    dense = 2 * (old.shape[1] + count) > pool
    if dense.any():
        idx = np.flatnonzero(dense)
        keys = rng.random((idx.size, int(pool[idx].max())))
        keys[np.arange(keys.shape[1])[None, :] >= pool[idx, None]] = np.inf
        np.put_along_axis(keys, old[idx], np.inf, axis=1)
        new[idx] = np.argsort(keys, axis=1, kind="stable")[:, :count]
    sparse_rows = np.flatnonzero(~dense)
    while sparse_rows.size:
        full = np.concatenate([old[sparse_rows], new[sparse_rows]], axis=1)
        order = np.argsort(full, axis=1, kind="stable")
        ordered = np.take_along_axis(full, order, axis=1)
        dup = np.zeros_like(full, dtype=bool)
        np.put_along_axis(dup, order[:, 1:], ordered[:, 1:] == ordered[:, :-1], axis=1)
        dup = dup[:, old.shape[1]:]  # a repeated value is always a later (new) column
        hit_rows, hit_cols = np.nonzero(dup)
        if hit_rows.size == 0:
            break
        rows = sparse_rows[hit_rows]
        new[rows, hit_cols] = rng.integers(0, pool[rows])
        sparse_rows = np.unique(rows)
    return new


def check_sample_sizes(n_candidates_min: int, sizes: Sequence[tuple[str, int]]) -> None:
    for name, value in sizes:
        check_positive_integer(name, value)
        if value > n_candidates_min:
            raise ValueError(
                f"{name} = {value} exceeds the number of candidate items of some user "
                f"(smallest N_u = {n_candidates_min}); the sample set is the target plus n - 1 "
                "other candidates"
            )
