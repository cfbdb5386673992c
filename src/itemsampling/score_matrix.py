"""Sampled ranks from the scores of another framework's sampled evaluation.

Toolkits that evaluate with sampled items score, for each test user, the held-out item and the
n - 1 items sampled for it: the "uni100" mode of common recommender libraries, or the NCF
protocol, whose ``.test.negative`` file lists 99 sampled negatives per held-out item. Such a
score matrix, one row per user, is all that the estimators need: the sampled rank of the
held-out item is

    r_u = 1 + #{sampled items scored higher} + U_u,   U_u uniform on {0, ..., t_u},

where t_u is the number of sampled items whose score equals the held-out item's (Krichene &
Rendle, KDD 2020, §2, with ties broken uniformly at random as for the global ranks of
:mod:`itemsampling.ranks`). Higher scores rank first; pass ``-distances`` for distances.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .simulation import as_generator

__all__ = ["positive_counts", "sampled_ranks_from_scores"]


def sampled_ranks_from_scores(scores: ArrayLike, target_column: int | ArrayLike = 0,
                              rng: np.random.Generator | int | None = None) -> np.ndarray:
    """1-based sampled rank of each row's held-out item, with seeded random tie-breaking.

    Parameters
    ----------
    scores : array_like, shape (M, n)
        Row u holds the scores of user u's sample set: the held-out item and its n - 1 sampled
        items (n >= 2). Higher scores rank first. Every score must be finite.
    target_column : int or array_like of int
        Column of the held-out item: one for all rows (default 0, the first column, as in the
        NCF protocol), or one per row.
    rng : numpy.random.Generator, int or None
        Generator or seed of the tie-breaking (see :func:`itemsampling.simulation.as_generator`);
        the same seed gives the same ranks.

    Returns
    -------
    numpy.ndarray
        int64 ranks r_u in 1..n, shape ``(M,)``: input for :func:`itemsampling.estimate` with
        ``sample_size=n``.

    Raises
    ------
    ValueError
        If ``scores`` is not a 2-D numeric array with at least one row and two columns, holds
        NaN or infinite values, or ``target_column`` is not a column index.

    Examples
    --------
    >>> sampled_ranks_from_scores([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4]])
    array([1, 3])
    """
    scores = _check_scores(scores)
    rows = np.arange(scores.shape[0])
    target = scores[rows, _check_target_column(target_column, scores.shape)][:, None]
    higher = (scores > target).sum(axis=1, dtype=np.int64)
    tied = (scores == target).sum(axis=1, dtype=np.int64) - 1  # the held-out item equals itself
    return 1 + higher + as_generator(rng).integers(0, tied + 1)


def _check_scores(scores) -> np.ndarray:
    arr = np.asarray(scores)
    if arr.ndim != 2:
        raise ValueError(
            f"scores must be a 2-D array, one row per user (the held-out item and its sampled items), "
            f"got an array of shape {arr.shape}"
        )
    if arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(
            f"scores must have at least one row and two columns (the held-out item and at least one "
            f"sampled item), got shape {arr.shape}"
        )
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"scores must be numbers, got dtype {arr.dtype}")
    bad = ~np.isfinite(arr)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"scores contains {int(bad.sum())} NaN or infinite value(s), the first at row {row}, "
            f"column {column}; every item of a sample set needs a finite score to be ranked"
        )
    return arr


def _check_target_column(target_column, shape: tuple[int, int]) -> np.ndarray:
    """The held-out item's column of each row, as an int64 array of shape (M,)."""
    n_rows, n_columns = shape
    column = np.asarray(target_column)
    if column.dtype == bool or not np.issubdtype(column.dtype, np.integer) or column.ndim > 1:
        raise ValueError(f"target_column must be an integer or one integer per row, got {target_column!r}")
    if column.ndim == 1 and column.size != n_rows:
        raise ValueError(f"target_column has {column.size} entries but scores has {n_rows} rows")
    if ((column < 0) | (column >= n_columns)).any():
        raise ValueError(
            f"target_column must lie in 0..{n_columns - 1} (scores has {n_columns} columns), "
            f"got {target_column!r}"
        )
    return np.broadcast_to(column, (n_rows,)).astype(np.int64)


def positive_counts(scores: ArrayLike, rows: ArrayLike, columns: ArrayLike) -> np.ndarray:
    """Per positive, how its row's non-relevant candidates compare with it (several positives per row).

    The layout of a framework that scatters each user's candidates into one row of the item
    matrix, -inf elsewhere (RecBole's ``Trainer._neg_sample_batch_eval`` and full-sort rows):
    row u's candidates are its finite entries, of which the positives ``(rows, columns)`` are
    relevant and the others are its negatives.

    Parameters
    ----------
    scores : array_like, shape (B, I)
        Score rows, -inf outside each row's candidates; NaN is an error.
    rows, columns : array_like of int, shape (P,)
        Row and column of each positive (each a finite entry).

    Returns
    -------
    numpy.ndarray, shape (P, 4), int64
        Per positive: the negatives of its row scored above it, those tied with it, the
        negatives of its row in all, and the positives of its row.
    """
    scores = np.asarray(scores, dtype=np.float64)
    rows, columns = np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)
    if scores.ndim != 2 or np.isnan(scores).any():
        raise ValueError("scores must be a 2-D array without NaN (-inf outside the candidates)")
    target = scores[rows, columns]
    if not np.all(np.isfinite(target)):
        raise ValueError("every positive must be one of its row's candidates (a finite score)")
    negatives = scores.copy()
    negatives[rows, columns] = -np.inf
    ascending = np.sort(negatives, axis=1)
    n_negatives = np.isfinite(negatives).sum(axis=1)
    out = np.empty((rows.size, 4), dtype=np.int64)
    for row in np.unique(rows):  # one sorted row, searched for all of its positives
        mine = np.flatnonzero(rows == row)
        at_most = np.searchsorted(ascending[row], target[mine], side="right")
        below = np.searchsorted(ascending[row], target[mine], side="left")
        out[mine, 0] = scores.shape[1] - at_most
        out[mine, 1] = at_most - below
        out[mine, 2] = n_negatives[row]
        out[mine, 3] = mine.size
    return out
