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

__all__ = ["sampled_ranks_from_scores"]


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
