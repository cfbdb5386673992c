"""Sampled ranks of several held-out items per user, drawn from their ranks in the full sort.

User u has N_u candidates, P_u of them positives (held-out items) and N_u - P_u negatives;
positive i has ``negative_rank`` R_i = 1 + #{negatives preceding it}
(:func:`itemsampling.ranks.positive_ranks`). A sampled evaluation draws m negatives and ranks a
positive among them: its sampled rank is r_i = 1 + #{drawn negatives preceding it}, in
1..m + 1. Two designs:

* ``per_positive``: every positive gets its own m negatives. Then r_i - 1 counts the draws
  among the R_i - 1 negatives above i: Binomial(m, (R_i - 1)/(N_u - P_u)) with replacement,
  Hypergeometric(R_i - 1, N_u - P_u - R_i + 1, m) without, i.e. the kernel P(r | R) of
  :mod:`itemsampling.kernels` with N = N_u - P_u + 1 items (the positive and its negatives)
  and n = m + 1;
* ``shared``: one set of m negatives per user, shared by its positives. Sorting the positives
  by R (R_(1) <= ... <= R_(P)), the negatives fall into the gaps g_0 = R_(1) - 1,
  g_j = R_(j+1) - R_(j), g_P = N_u - P_u - R_(P) + 1; the counts (c_0, ..., c_P) of drawn
  negatives per gap are multivariate hypergeometric (without replacement) or multinomial
  (with replacement) with parameters (g; m), and r_(j) = 1 + c_0 + ... + c_(j-1). They are
  drawn exactly, gap by gap: c_j | c_0..c_(j-1) is hypergeometric(g_j, G_j - g_j,
  m - c_0 - ... - c_(j-1)) (binomial with p = g_j / G_j), G_j = g_j + ... + g_P the negatives
  left. Each marginal is the per-positive kernel; the positives' sampled ranks are dependent.

RecBole's sampled evaluation (``eval_args.mode: uniN`` or ``popN``) draws N negatives per
positive (``NegSampleEvalDataLoader``: each test interaction gets ``sample_num`` negatives,
drawn with replacement and redrawn when they are one of the user's items), then scatters the
scores of all of a user's rows into one row of the item matrix
(``Trainer._neg_sample_batch_eval``) and computes the full-sort metrics on it: every positive
is ranked among the union of all negatives drawn for the user's positives (duplicates merged)
and the user's other positives. That is the ``shared`` design with up to P_u N distinct
negatives, the positives counted as in :func:`itemsampling.multi_positive.positions`.
:func:`sample_union_ranks` draws it: the number D_u of distinct negatives among the P_u N
draws is sampled first (with replacement: each draw is new with probability 1 - d/G, d the
distinct ones so far, G = N_u - P_u; without replacement D_u = P_u N); given D_u the distinct
negatives are a uniform subset of the user's negatives, so the ranks are the ``shared`` design
with D_u negatives drawn without replacement, and every positive of u has n = D_u + 1
candidates (itself and the negatives).

From sampled ranks, :func:`itemsampling.multi_positive.multi_positive_metrics` gives the
uncorrected sampled metrics (each positive at r_i plus the positives above it, as RecBole
ranks them) and :func:`itemsampling.multi_positive.estimate_multi_positive` the estimates of
any estimator of the one-positive kernel (each positive's marginal), e.g. the plug-in rank
estimate R̂_i = 1 + ⌊(N_u - P_u)(r_i - 1)/m⌋ (KDD'20 eq. 20) or MN_MES.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ._validation import as_generator, check_choice, check_positive_integer
from .multi_positive import (
    MULTI_METRICS,
    estimate_multi_positive,
    multi_positive_metrics,
    positions,
)

__all__ = ["DESIGNS", "compare_sampled_metrics", "sample_positive_ranks", "sample_union_ranks"]

#: how the negatives of a user's positives are drawn (see the module docstring)
DESIGNS = ("per_positive", "shared")


def _user_index(users: np.ndarray) -> np.ndarray:
    _, uid = np.unique(users, return_inverse=True)
    return uid.reshape(-1)


def _check_ranks(negative_ranks, users, n_candidates, n_positives):
    ranks = np.asarray(negative_ranks, dtype=np.int64)
    users = np.asarray(users)
    n_candidates = np.broadcast_to(np.asarray(n_candidates, dtype=np.int64), ranks.shape)
    n_positives = np.broadcast_to(np.asarray(n_positives, dtype=np.int64), ranks.shape)
    if ranks.ndim != 1 or users.shape != ranks.shape:
        raise ValueError("negative_ranks and users must be 1-D arrays of the same length")
    n_negatives = n_candidates - n_positives
    if np.any(n_positives < 1) or np.any(n_negatives < 1):
        raise ValueError("every user needs n_positives >= 1 and n_candidates > n_positives")
    if np.any(ranks < 1) or np.any(ranks > n_negatives + 1):
        raise ValueError("negative_rank must lie in 1..n_candidates - n_positives + 1 "
                         "(a ranks file of `itemsampling train --split ratio`)")
    uid = _user_index(users)
    first = np.zeros(uid.max() + 1, dtype=np.int64)
    first[uid[::-1]] = np.arange(uid.size)[::-1]
    if np.any(n_negatives != n_negatives[first][uid]) or np.any(n_positives != n_positives[first][uid]):
        raise ValueError("n_candidates and n_positives must be the same on every row of a user")
    if np.any(np.bincount(uid) != n_positives[first]):
        raise ValueError("each user needs exactly n_positives rows (one per positive)")
    return ranks, uid, n_negatives


def sample_positive_ranks(negative_ranks: ArrayLike, users: ArrayLike, n_candidates: ArrayLike,
                          n_positives: ArrayLike, n_negatives: int, *, design: str = "per_positive",
                          replace: bool = False, rng=None) -> np.ndarray:
    """Draw each positive's sampled rank among m sampled negatives, given its full-sort rank.

    Parameters
    ----------
    negative_ranks : array_like of int, shape (P,)
        R_i, 1 + the negatives preceding positive i (``negative_rank`` of a ratio ranks file).
    users : array_like, shape (P,)
        User of each positive.
    n_candidates, n_positives : array_like of int
        N_u and P_u of each row's user (scalars broadcast); every user has exactly P_u rows.
    n_negatives : int
        m, the negatives drawn per positive (``per_positive``) or per user (``shared``); at
        most N_u - P_u without replacement.
    design : {"per_positive", "shared"}
        Each positive its own negatives, or one set per user (see the module docstring).
    replace : bool
        Draw the negatives with replacement (binomial / multinomial) or without
        (hypergeometric / multivariate hypergeometric).
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    numpy.ndarray
        int64 sampled ranks r_i in 1..m + 1 (1 + the drawn negatives preceding i), in the input
        order.
    """
    design = check_choice("design", design, DESIGNS)
    m = check_positive_integer("n_negatives", n_negatives)
    ranks, uid, pool = _check_ranks(negative_ranks, users, n_candidates, n_positives)
    if not replace and np.any(pool < m):
        raise ValueError(f"n_negatives = {m} exceeds the {int(pool.min())} negatives of some user; "
                         "draw with replace=True or fewer negatives")
    gen = as_generator(rng)
    above = ranks - 1
    if design == "per_positive":
        if replace:
            return 1 + gen.binomial(m, above / pool)
        return 1 + gen.hypergeometric(above, pool - above, np.full(ranks.size, m))
    return _shared_ranks(above, uid, pool, np.full(uid.max() + 1, m, dtype=np.int64), replace, gen)


def sample_union_ranks(negative_ranks: ArrayLike, users: ArrayLike, n_candidates: ArrayLike,
                       n_positives: ArrayLike, per_positive: int, *, replace: bool = True,
                       rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Sampled ranks among the union of the negatives drawn for a user's positives (RecBole ``uniN``).

    Each of user u's P_u positives gets ``per_positive`` = N draws from the user's G_u = N_u - P_u
    negatives; every positive is ranked among the union of all P_u N draws, repeated items
    merged (module docstring). The number of distinct negatives D_u varies with the user, so each
    positive's candidate count n = D_u + 1 is returned with its rank.

    Parameters
    ----------
    negative_ranks, users, n_candidates, n_positives
        As :func:`sample_positive_ranks`.
    per_positive : int
        N, the draws per positive (RecBole's ``sample_num``).
    replace : bool
        Draw with replacement, as RecBole does (default; D_u <= P_u N), or without (D_u = P_u N,
        at most G_u).
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    ranks : numpy.ndarray
        int64 r_i in 1..n_i, in the input order.
    sample_sizes : numpy.ndarray
        int64 n_i = D_u + 1 of each positive.
    """
    m = check_positive_integer("per_positive", per_positive)
    ranks, uid, pool = _check_ranks(negative_ranks, users, n_candidates, n_positives)
    user_pool = np.empty(uid.max() + 1, dtype=np.int64)
    user_pool[uid] = pool  # the same on every row of a user (checked)
    draws = m * np.bincount(uid)
    if not replace and np.any(draws > user_pool):
        raise ValueError(f"per_positive = {m} draws for each of a user's positives exceed its {int(user_pool.min())} "
                         "negatives; draw with replace=True or fewer negatives")
    gen = as_generator(rng)
    distinct = draws if not replace else _distinct_draws(draws, user_pool, gen)
    return _shared_ranks(ranks - 1, uid, pool, distinct, False, gen), distinct[uid] + 1


def _distinct_draws(draws: np.ndarray, pool: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Distinct items among ``draws[u]`` uniform draws with replacement from ``pool[u]`` items:
    draw t is new with probability 1 - d/G (d distinct so far), one Bernoulli per draw."""
    distinct = np.zeros(draws.size, dtype=np.int64)
    for t in range(int(draws.max())):
        live = np.flatnonzero(draws > t)
        distinct[live] += gen.random(live.size) < 1.0 - distinct[live] / pool[live]
    return distinct


def _shared_ranks(above: np.ndarray, uid: np.ndarray, pool: np.ndarray, draws: np.ndarray, replace: bool,
                  gen: np.random.Generator) -> np.ndarray:
    """The ``shared`` design: ``draws[u]`` negatives per user placed in the gaps between its
    positives sorted by R, gap by gap (module docstring)."""
    order = np.lexsort((above, uid))
    sorted_uid, sorted_above = uid[order], above[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_uid)) + 1]
    counts = np.diff(np.r_[starts, above.size])
    left = draws[sorted_uid[starts]].copy()               # draws not yet placed, per user
    placed_above = np.zeros(starts.size, dtype=np.int64)  # negatives above the previous positive
    drawn_above = np.zeros(starts.size, dtype=np.int64)   # draws among them
    out = np.empty(above.size, dtype=np.int64)
    user_pool = pool[order][starts]
    for j in range(int(counts.max())):
        live = np.flatnonzero(counts > j)
        rows = starts[live] + j
        gap = sorted_above[rows] - placed_above[live]
        rest = user_pool[live] - placed_above[live]
        if replace:
            c = gen.binomial(left[live], np.divide(gap, rest, out=np.zeros(live.size), where=rest > 0))
        else:
            c = np.zeros(live.size, dtype=np.int64)
            go = left[live] > 0
            c[go] = gen.hypergeometric(gap[go], rest[go] - gap[go], left[live][go])
        drawn_above[live] += c
        left[live] -= c
        placed_above[live] = sorted_above[rows]
        out[order[rows]] = 1 + drawn_above[live]
    return out


def compare_sampled_metrics(ranks: pd.DataFrame, n_negatives: int, *, design: str = "per_positive",
                            replace: bool = False, repeats: int = 1, rng=None,
                            metrics=("recall", "ndcg", "hit"), ks=(1, 5, 10, 20, 50),
                            methods=("rank_estimate", "mn_mes")) -> pd.DataFrame:
    """Exact, uncorrected sampled and corrected metrics of a ratio ranks table.

    ``exact`` are the metrics of the full sort (each positive at its ``rank``, RecBole's full
    evaluation: :func:`itemsampling.multi_positive.positions` of the ``negative_rank`` column
    are a user's ``rank`` values); per repeat, ``sampled`` are the metrics among the sampled
    candidates, each positive at r_i plus the user's positives with a smaller r (with shared
    negatives exactly its place among them and the other positives, as RecBole's ``uniN`` mode
    ranks it; with negatives per positive there is no common list and this is the same rule) and
    ``corrected`` the estimates of :func:`itemsampling.multi_positive.estimate_multi_positive`
    with N = N_u - P_u + 1 and n = m + 1.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Columns ``user``, ``negative_rank``, ``n_candidates``, ``n_positives`` (a ratio ranks
        file).
    n_negatives, design, replace, rng
        As :func:`sample_positive_ranks`.
    repeats : int
        Independent draws.
    metrics, ks
        Metrics of :data:`itemsampling.multi_positive.MULTI_METRICS` and cut-offs.
    methods : sequence of str
        Estimators of :func:`itemsampling.multi_positive.estimate_multi_positive`.

    Returns
    -------
    pandas.DataFrame
        Columns ``repeat`` (-1 for ``exact``), ``kind`` (``exact``, ``sampled`` or a method),
        ``metric``, ``k``, ``value``.
    """
    missing = {"user", "negative_rank", "n_candidates", "n_positives"} - set(ranks.columns)
    if missing:
        raise ValueError(f"ranks table lacks column(s) {sorted(missing)}; use a ratio ranks file")
    bad = sorted(set(metrics) - set(MULTI_METRICS))
    if bad:
        raise ValueError(f"unknown metric(s) {bad}; choose from {', '.join(MULTI_METRICS)}")
    repeats = check_positive_integer("repeats", repeats)
    gen = as_generator(rng)
    users = ranks["user"].to_numpy()
    rank_cols = ranks["negative_rank"].to_numpy()
    n_items = (ranks["n_candidates"] - ranks["n_positives"] + 1).to_numpy()
    frames = [multi_positive_metrics(rank_cols, users, metrics, ks).assign(repeat=-1, kind="exact")]
    # the positives' order by score, which an evaluation that scores them all knows
    order = (positions(rank_cols, users) - rank_cols).astype(np.int64) if design == "per_positive" else None
    for repeat in range(repeats):
        r = sample_positive_ranks(rank_cols, users, ranks["n_candidates"].to_numpy(),
                                  ranks["n_positives"].to_numpy(), n_negatives, design=design,
                                  replace=replace, rng=gen)
        frames.append(multi_positive_metrics(r, users, metrics, ks).assign(repeat=repeat, kind="sampled"))
        for method in methods:
            estimates = estimate_multi_positive(r, users, n_items, n_negatives + 1, metrics, ks, method=method,
                                                order=order, scheme="binomial" if replace else "hypergeometric")
            frames.append(estimates.rename(columns={"estimate": "value"}).assign(repeat=repeat, kind=method))
    return pd.concat(frames, ignore_index=True)[["repeat", "kind", "metric", "k", "value"]]
