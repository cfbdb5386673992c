"""Where held-out items sink: the share of them in the bottom of the ranking, and why.

A model whose global ranks R_u are bimodal (many held-out items near the top, many near the
bottom of the N_u candidates) weighs on every estimator that learns P(R) from sampled ranks.
:func:`bottom_shares` measures the bottom mode: the share of test users whose held-out item is
among the last ``fraction`` of their candidates, R_u > (1 - fraction) N_u, over all test users
and split by two properties of the held-out item that :func:`held_out_context` reads from the
training data:

* ``item_users``: its number of training users (its popularity), in quantile groups;
* ``cooccurrences``: the number of (training item i of u, other user v) pairs with v holding both
  i and the held-out item t, i.e. sum_i (X^T X)_{it} over the user's training items (the
  user-item-user-item paths from u to t). Zero means that no training item of u was ever chosen
  together with t: an item-item model sees no direct link between them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

__all__ = ["bottom_shares", "held_out_context", "in_bottom"]


def held_out_context(train: sp.spmatrix, users: ArrayLike, items: ArrayLike, *,
                     batch_size: int = 2048) -> pd.DataFrame:
    """Popularity and co-occurrence of each user's held-out item in the training data.

    Parameters
    ----------
    train : scipy.sparse matrix
        Binary ``(n_users, n_items)`` training matrix X.
    users, items : array_like of int
        Test users (rows of X) and their held-out items (columns), one pair per test user.
    batch_size : int
        Users processed at once.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``item_users`` (training users of the item) and
        ``cooccurrences`` (sum over the user's training items i of the number of users holding
        both i and the item; 0 when no training item of the user co-occurs with it).
    """
    x = sp.csr_matrix(train, dtype=np.float64)
    x.data[:] = 1.0
    users = np.asarray(users, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    if users.shape != items.shape or users.ndim != 1:
        raise ValueError(f"users and items must be 1-D arrays of one length, got {users.shape} and {items.shape}")
    if users.size and (users.min() < 0 or users.max() >= x.shape[0] or items.min() < 0 or items.max() >= x.shape[1]):
        raise ValueError(f"users and items must index the {x.shape} training matrix")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    x_t = sp.csr_matrix(x.T)
    counts = np.empty(users.size, dtype=np.int64)
    for start in range(0, users.size, batch_size):
        u, t = users[start:start + batch_size], items[start:start + batch_size]
        together = x_t[t] @ x  # (B, N): how many users hold each item together with the held-out one
        counts[start:start + u.size] = np.rint(np.asarray(together.multiply(x[u]).sum(axis=1)).ravel())
    item_users = np.diff(sp.csc_matrix(x).indptr)[items]
    return pd.DataFrame({"user": users, "item": items, "item_users": item_users.astype(np.int64),
                         "cooccurrences": counts})


def in_bottom(ranks: ArrayLike, n_candidates: ArrayLike, fraction: float = 0.2) -> np.ndarray:
    """Whether each held-out item is among the last ``fraction`` of its candidates.

    True where R_u > (1 - fraction) N_u, so ``fraction = 0.2`` marks the bottom fifth.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie strictly between 0 and 1, got {fraction!r}")
    ranks = np.asarray(ranks, dtype=np.int64)
    n_candidates = np.asarray(n_candidates, dtype=np.int64)
    if ranks.shape != n_candidates.shape or (ranks < 1).any() or (ranks > n_candidates).any():
        raise ValueError("need one rank per user with 1 <= R_u <= N_u")
    return ranks > (1.0 - fraction) * n_candidates


def bottom_shares(ranks: pd.DataFrame, context: pd.DataFrame | None = None, *, fraction: float = 0.2,
                  popularity_groups: int = 4) -> pd.DataFrame:
    """Share of held-out items in the bottom ``fraction`` of the ranking, overall and by group.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Global ranks: ``user``, ``item``, ``rank``, ``n_candidates`` (one row per test user).
    context : pandas.DataFrame, optional
        :func:`held_out_context` of the same users (joined on ``user``; its ``item`` must
        agree). Without it only the row over all users is returned.
    fraction : float
        Size of the bottom, as a fraction of each user's N_u candidates.
    popularity_groups : int
        Number of quantile groups of ``item_users`` (equal items stay in one group, so there
        may be fewer groups on small data).

    Returns
    -------
    pandas.DataFrame
        One row per group: ``split`` (``all``, ``popularity``, ``cooccurrence``), ``group``
        (``all``; ``Q1`` = least popular ...; ``none``/``some``), ``item_users_min``,
        ``item_users_max`` (popularity groups only), ``users``, ``bottom_share`` (share in the
        bottom) and ``median_relative_rank`` (median of (R_u - 1)/(N_u - 1)).
    """
    if popularity_groups < 1:
        raise ValueError(f"popularity_groups must be positive, got {popularity_groups}")
    frame = ranks[["user", "item", "rank", "n_candidates"]].reset_index(drop=True)
    frame["bottom"] = in_bottom(frame["rank"], frame["n_candidates"], fraction)
    frame["relative"] = (frame["rank"] - 1) / np.maximum(frame["n_candidates"] - 1, 1)
    rows = [_row(frame, "all", "all")]
    if context is not None:
        frame = frame.merge(context, on="user", how="left", suffixes=("", "_context"), validate="one_to_one")
        if frame["item_context"].isna().any() or (frame["item_context"] != frame["item"]).any():
            raise ValueError("the context does not describe the held-out items of these ranks")
        groups = pd.qcut(frame["item_users"], popularity_groups, labels=False, duplicates="drop")
        for g in sorted(groups.unique()):
            part = frame[groups == g]
            rows.append(_row(part, "popularity", f"Q{g + 1}", int(part["item_users"].min()),
                             int(part["item_users"].max())))
        for label, part in (("none", frame[frame["cooccurrences"] == 0]), ("some", frame[frame["cooccurrences"] > 0])):
            rows.append(_row(part, "cooccurrence", label))
    return pd.DataFrame(rows)


def _row(part: pd.DataFrame, split: str, group: str, low: int | None = None, high: int | None = None) -> dict:
    return {"split": split, "group": group, "item_users_min": low, "item_users_max": high, "users": len(part),
            "bottom_share": part["bottom"].mean() if len(part) else np.nan,
            "median_relative_rank": part["relative"].median() if len(part) else np.nan}
