"""Global and sampled ranks of each test user's held-out item under a fitted recommender.

Two candidate protocols:

* ``unseen`` (Krichene & Rendle KDD 2020; Li et al. KDD 2020 "actual"): the user's training
  items are excluded from the ranking and from the sampled items, so user u has
  N_u = N - |train_u| candidates;
* ``all`` (the code of Li et al. AAAI 2023): rank among all N items, sample from all items
  but the target.

Ties. Item j precedes item i for user u when s_uj > s_ui, or s_uj = s_ui and
key(u, j) < key(u, i), where ``key`` is a 64-bit hash of (tie seed, user, item)
(:func:`tie_break_keys`). This is one seeded total order per user, independent of where an
item sits in an array; global ranks, sampled ranks and adaptive ranks all use it, so a sampled
rank is exactly 1 + (number of sampled items that precede the target in the global order).
:func:`global_ranks` (``ties``) also gives the two deterministic bounds, to measure how much
ties matter: ``pessimistic`` puts the target after every candidate with the same score,
R_u = #{candidates j with s_uj >= s_ut} (the target included), and ``optimistic`` before them,
R_u = 1 + #{s_uj > s_ut}. Under either, a sampled item precedes the target by the same rule,
so given R_u the sampled rank still follows P(r | R_u) (the kernels need no change).

* Global rank R_u = 1 + #{candidates j that precede the target}, in 1..N_u.
* "Actual" sampled rank r_u: draw n - 1 items from the candidates other than the target
  (uniformly, with or without replacement), r_u = 1 + #{drawn items that precede the target}.
  Given R_u, r_u follows P(r | R) with N_u items: binomial with replacement, hypergeometric
  without (Krichene & Rendle KDD 2020 eq. 11; :mod:`itemsampling.kernels`).
* Adaptive sampled rank (Li et al. AAAI 2023, Algorithm 1): start with n_0; while r_u = 1 and
  n_u < n_max, draw n_u more items (the last step capped at n_max) and recompute r_u.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._validation import as_generator, check_choice, check_positive_integer
from .adaptive_evaluation import sample_adaptively
from .candidate_sampling import (
    check_sample_sizes,
    draw_positions,
    non_candidates,
    nth_allowed,
    precedes,
    test_users,
    tie_break_keys,
)
from .models.base import Recommender, score_batches

__all__ = [
    "PROTOCOLS",
    "TIES",
    "adaptive_sampled_ranks",
    "global_ranks",
    "positive_ranks",
    "positive_ranks_from_scores",
    "preceding",
    "ranks_from_scores",
    "read_ranks",
    "sampled_ranks",
    "tie_break_keys",
    "write_ranks",
]

PROTOCOLS = ("unseen", "all")
#: how a target is ranked among candidates with the same score (see the module docstring)
TIES = ("random", "pessimistic", "optimistic")

def _check_protocol(protocol: str) -> str:
    return check_choice("protocol", protocol, PROTOCOLS)


def _check_scores(scores: np.ndarray) -> None:
    if np.isnan(scores).any():
        raise ValueError("the model returned NaN scores; ranks are undefined")


def preceding(scores, users, targets, *, exclude=None, seed: int, ties: str = "random") -> np.ndarray:
    """Which candidates precede each row's target: the order that defines R_u.

    ``before[b, j]`` is True when item j is a candidate of row b other than its target and
    s_bj > s_bt, or s_bj = s_bt and key(u_b, j) < key(u_b, t) (``ties="random"``; the module
    docstring gives the two deterministic bounds). The target and the items in ``exclude`` are
    never True. Parameters are those of :func:`ranks_from_scores`.

    Returns
    -------
    numpy.ndarray
        ``(B, N)`` bool; R_u = 1 + its row sum.
    """
    ties = check_choice("ties", ties, TIES)
    scores = np.asarray(scores)
    _check_scores(scores)
    n_rows, n_items = scores.shape
    users = np.asarray(users, dtype=np.int64)
    targets = np.asarray(targets, dtype=np.int64)
    rows = np.arange(n_rows)
    t_scores = scores[rows, targets][:, None]
    if ties == "random":
        t_keys = tie_break_keys(users, targets, seed)[:, None]
        before = precedes(scores, t_scores, users[:, None], np.arange(n_items)[None, :], t_keys, seed)
    else:
        before = scores >= t_scores if ties == "pessimistic" else scores > t_scores
    before[rows, targets] = False
    if exclude is not None:
        exclude = sp.csr_matrix(exclude)
        ex_rows = np.repeat(rows, np.diff(exclude.indptr))
        ex_items = exclude.indices.astype(np.int64)
        if (ex_items == targets[ex_rows]).any():
            raise ValueError("a held-out item is also an excluded (training) item of its user")
        before[ex_rows, ex_items] = False
    return before


def ranks_from_scores(scores, users, targets, *, exclude=None, seed: int,
                      ties: str = "random") -> tuple[np.ndarray, np.ndarray]:
    """Global ranks of the targets in a batch of score rows.

    Parameters
    ----------
    scores : numpy.ndarray
        ``(B, N)`` scores of the batch users.
    users : array_like of int
        ``(B,)`` user ids (for the tie-break keys).
    targets : array_like of int
        ``(B,)`` held-out item of each row.
    exclude : scipy.sparse.csr_matrix, optional
        ``(B, N)`` items that are not candidates (the training items under ``unseen``); must not
        contain the target.
    seed : int
        Tie-break seed (used by ``ties="random"``).
    ties : {"random", "pessimistic", "optimistic"}
        Rank of the target among candidates with its score: seeded random order, after all of
        them, or before all of them.

    Returns
    -------
    ranks : numpy.ndarray
        int64 1-based R_u = 1 + #{candidates preceding the target} (:func:`preceding`).
    n_candidates : numpy.ndarray
        int64 N_u (N minus the excluded items).
    """
    before = preceding(scores, users, targets, exclude=exclude, seed=seed, ties=ties)
    n_candidates = np.full(before.shape[0], before.shape[1], dtype=np.int64)
    if exclude is not None:
        n_candidates -= np.diff(sp.csr_matrix(exclude).indptr)
    return 1 + before.sum(axis=1).astype(np.int64), n_candidates


def global_ranks(
    model: Recommender,
    test_items,
    *,
    protocols: Sequence[str] = PROTOCOLS,
    seed: int = 0,
    users=None,
    batch_size: int = 1024,
    progress: bool | None = None,
    ties: str = "random",
) -> dict[str, pd.DataFrame]:
    """Global rank R_u of each test user's held-out item, for one or both protocols.

    Every batch of users is scored once and ranked under each protocol.

    Parameters
    ----------
    model : Recommender
        A fitted model; its training matrix defines the ``unseen`` exclusions.
    test_items : array_like of int
        ``(n_users,)`` held-out item per user, ``-1`` for none (``Dataset.test_items``).
    protocols : sequence of {"unseen", "all"}
        Candidate protocols.
    seed : int
        Tie-break seed (:func:`tie_break_keys`); keep it to get the same total order later.
    users : array_like of int, optional
        Users to rank (default: all users with a held-out item).
    batch_size : int
        Users scored at once.
    progress : bool or None
        Progress bar; ``None`` shows it only in an interactive terminal.
    ties : {"random", "pessimistic", "optimistic"}
        Rank among tied candidates (:func:`ranks_from_scores`); ``random`` is the seeded total
        order that sampled ranks use.

    Returns
    -------
    dict of str to pandas.DataFrame
        One frame per protocol with columns ``user``, ``item``, ``rank`` (1-based R_u) and
        ``n_candidates`` (N_u), one row per test user.
    """
    protocols = [_check_protocol(p) for p in protocols]
    ties = check_choice("ties", ties, TIES)
    users, targets = test_users(test_items, model.n_users, users)
    pos = 0
    out = {p: {"rank": np.empty(users.size, np.int64), "n": np.empty(users.size, np.int64)} for p in protocols}
    for batch, scores in score_batches(model, users, batch_size, progress):
        sl = slice(pos, pos + batch.size)
        for p in protocols:
            exclude = model.train_[batch] if p == "unseen" else None
            out[p]["rank"][sl], out[p]["n"][sl] = ranks_from_scores(
                scores, batch, targets[sl], exclude=exclude, seed=seed, ties=ties
            )
        pos += batch.size
    return {
        p: pd.DataFrame({"user": users, "item": targets, "rank": out[p]["rank"], "n_candidates": out[p]["n"]})
        for p in protocols
    }


def positive_ranks_from_scores(scores, users, positives, *, exclude=None, seed: int) -> pd.DataFrame:
    """Ranks of several held-out items (positives) per user in a batch of score rows.

    In the seeded total order of :func:`ranks_from_scores` (score, then :func:`tie_break_keys`),
    user u's candidates are the items not in ``exclude`` (the training items): N_u of them,
    among them its P_u positives. For positive i,

    * ``rank`` = 1 + #{candidates preceding i}, in 1..N_u (the other positives count: its
      position in RecBole's full sort);
    * ``negative_rank`` = 1 + #{non-positive candidates preceding i}, in 1..N_u - P_u + 1 (the
      rank R_i that a sample of negatives sees, with rank = negative_rank + #{positives
      preceding i}).

    Parameters
    ----------
    scores : numpy.ndarray
        ``(B, N)`` scores of the batch users.
    users : array_like of int
        ``(B,)`` user ids (for the tie-break keys).
    positives : scipy.sparse.csr_matrix
        ``(B, N)`` held-out items of each row.
    exclude : scipy.sparse.csr_matrix, optional
        ``(B, N)`` items that are not candidates; must not contain a positive.
    seed : int
        Tie-break seed.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``rank``, ``negative_rank``, ``n_candidates``,
        ``n_positives``, one row per positive, ordered by user then item.
    """
    scores = np.asarray(scores)
    _check_scores(scores)
    n_rows, n_items = scores.shape
    users = np.asarray(users, dtype=np.int64)
    status = np.full((n_rows, n_items), 2, dtype=np.int8)  # 0 excluded, 1 positive, 2 other candidate
    if exclude is not None:
        exclude = sp.csr_matrix(exclude)
        status[np.repeat(np.arange(n_rows), np.diff(exclude.indptr)), exclude.indices] = 0
    positives = sp.csr_matrix(positives)
    pos_rows = np.repeat(np.arange(n_rows), np.diff(positives.indptr))
    if (status[pos_rows, positives.indices] == 0).any():
        raise ValueError("a held-out item is also an excluded (training) item of its user")
    status[pos_rows, positives.indices] = 1
    keys = tie_break_keys(users[:, None], np.arange(n_items)[None, :], seed)
    order = np.lexsort((keys, -scores))
    ordered = np.take_along_axis(status, order, axis=1)
    candidate, positive = ordered > 0, ordered == 1
    before_candidates = np.cumsum(candidate, axis=1) - candidate
    before_positives = np.cumsum(positive, axis=1) - positive
    rows, cols = np.nonzero(positive)
    n_positives = positive.sum(axis=1)
    frame = pd.DataFrame({
        "user": users[rows],
        "item": order[rows, cols].astype(np.int64),
        "rank": 1 + before_candidates[rows, cols].astype(np.int64),
        "negative_rank": 1 + (before_candidates[rows, cols] - before_positives[rows, cols]).astype(np.int64),
        "n_candidates": candidate.sum(axis=1)[rows].astype(np.int64),
        "n_positives": n_positives[rows].astype(np.int64),
    })
    return frame.sort_values(["user", "item"], kind="stable", ignore_index=True)


def positive_ranks(model: Recommender, test, *, seed: int = 0, batch_size: int = 256,
                   progress: bool | None = None) -> pd.DataFrame:
    """Ranks of every held-out item of every test user (several per user) under ``unseen``.

    Each user with at least one item in ``test`` is scored once; its candidates are all items
    but its training items (``model.train_``), the other held-out items included, as in a full
    sort. See :func:`positive_ranks_from_scores` for the columns.

    Parameters
    ----------
    model : Recommender
        A fitted model.
    test : scipy.sparse.csr_matrix
        ``(n_users, n_items)`` held-out items, disjoint from the training matrix.
    seed : int
        Tie-break seed.
    batch_size : int
        Users scored at once (the batch holds a few ``batch_size x n_items`` arrays).
    progress : bool or None
        Progress bar; ``None`` shows it only in an interactive terminal.
    """
    test = sp.csr_matrix(test)
    if test.shape != model.train_.shape:
        raise ValueError(f"test has shape {test.shape}, the training matrix {model.train_.shape}")
    users = np.flatnonzero(np.diff(test.indptr))
    if users.size == 0:
        raise ValueError("no test users: the held-out matrix is empty")
    frames = [
        positive_ranks_from_scores(scores, batch, test[batch], exclude=model.train_[batch], seed=seed)
        for batch, scores in score_batches(model, users, batch_size, progress)
    ]
    return pd.concat(frames, ignore_index=True)


def _min_candidates(model: Recommender, users: np.ndarray, protocol: str) -> int:
    if protocol == "all":
        return model.n_items
    return int(model.n_items - np.diff(model.train_.indptr)[users].max())


def _sampling_setup(model, test_items, protocol, repeats, rng, users, sizes):
    """Checked protocol, repeats, generator and test users of a sampled-ranks run.

    ``sizes`` are the (name, value) sample set sizes to check against the smallest N_u.
    """
    protocol = _check_protocol(protocol)
    repeats = check_positive_integer("repeats", repeats)
    gen = as_generator(rng)
    tested, _ = test_users(test_items, model.n_users, users)
    check_sample_sizes(_min_candidates(model, tested, protocol), sizes)
    return protocol, repeats, gen, tested


def _sampling_batches(model, test_items, protocol, users, repeats, batch_size, progress):
    """Yield per batch: users, targets, scores, the non-candidate pattern, the pool size N_u - 1
    of candidates other than the target, and the batch row of each of the ``repeats`` sample
    sets per user."""
    users, targets = test_users(test_items, model.n_users, users)
    pos = 0
    for batch, scores in score_batches(model, users, batch_size, progress):
        _check_scores(scores)
        t = targets[pos : pos + batch.size]
        pos += batch.size
        excluded = non_candidates(model.train_[batch] if protocol == "unseen" else None, t, model.n_items)
        pool = model.n_items - np.diff(excluded.indptr)
        yield batch, t, scores, excluded, pool, np.tile(np.arange(batch.size), repeats)


def _count_preceding(scores, batch, targets, excluded, rows, positions, tie_seed) -> np.ndarray:
    """Number of drawn items (``positions`` of rows ``rows`` of the batch) preceding the target."""
    items = nth_allowed(excluded, rows[:, None], positions)
    s = scores[rows[:, None], items]
    t_scores = scores[rows, targets[rows]][:, None]
    t_keys = tie_break_keys(batch[rows], targets[rows], tie_seed)[:, None]
    return precedes(s, t_scores, batch[rows][:, None], items, t_keys, tie_seed).sum(axis=1)


def sampled_ranks(
    model: Recommender,
    test_items,
    *,
    protocol: str = "unseen",
    sample_size: int,
    repeats: int = 1,
    replace: bool = True,
    rng=None,
    tie_seed: int = 0,
    users=None,
    batch_size: int = 256,
    progress: bool | None = None,
) -> pd.DataFrame:
    """"Actual" sampled ranks: rank each target among n - 1 sampled items, scored by the model.

    Parameters
    ----------
    model : Recommender
        A fitted model.
    test_items : array_like of int
        ``(n_users,)`` held-out items, ``-1`` for none.
    protocol : {"unseen", "all"}
        Which items may be drawn: the user's unseen items, or all items (never the target).
    sample_size : int
        n, the target plus n - 1 sampled items; n <= N_u for every user.
    repeats : int
        Independent sample sets per user.
    replace : bool
        Sample with replacement (r | R is binomial) or without (hypergeometric).
    rng : numpy.random.Generator, int or None
        Sampling randomness. The output depends on the seed and on ``batch_size``.
    tie_seed : int
        Tie-break seed; use the one of the global ranks to share their total order.
    users : array_like of int, optional
        Users to rank (default: all users with a held-out item).
    batch_size : int
        Users scored at once.
    progress : bool or None
        Progress bar; ``None`` shows it only in an interactive terminal.

    Returns
    -------
    pandas.DataFrame
        Columns ``repeat``, ``user``, ``item``, ``rank`` (r_u in 1..n), ``sample_size`` (n) and
        ``n_candidates`` (N_u), ordered by repeat then user.
    """
    protocol, repeats, gen, tested = _sampling_setup(
        model, test_items, protocol, repeats, rng, users, [("sample_size", sample_size)]
    )
    frames = []
    for batch, targets, scores, excluded, pool, rows in _sampling_batches(
        model, test_items, protocol, tested, repeats, batch_size, progress
    ):
        positions = draw_positions(gen, pool[rows], sample_size - 1, replace)
        ranks = 1 + _count_preceding(scores, batch, targets, excluded, rows, positions, tie_seed)
        frames.append(_frame(rows, batch, targets, ranks, np.full(rows.size, sample_size), pool, repeats))
    return _combine(frames)


def adaptive_sampled_ranks(
    model: Recommender,
    test_items,
    *,
    protocol: str = "unseen",
    n0: int,
    n_max: int,
    repeats: int = 1,
    replace: bool = True,
    rng=None,
    tie_seed: int = 0,
    users=None,
    batch_size: int = 256,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Adaptive sampled ranks (Li et al. AAAI 2023, Algorithm 1 and Appendix H) under a model.

    Each user starts with n_0 - 1 sampled items (sample set size n_u = n_0). While r_u = 1 and
    n_u < n_max, n_u more items are drawn (without replacement: among the candidates not drawn
    yet), n_u doubles (the last step is capped at n_max) and r_u is recomputed on the union.
    Parameters are those of :func:`sampled_ranks`, with ``n0`` and ``n_max`` (n_0 <= n_max <=
    min N_u) instead of ``sample_size``.

    Each batch of users is scored once, in full, and
    :func:`itemsampling.adaptive_evaluation.sample_adaptively` (the Algorithm 1 of
    :func:`itemsampling.evaluate_adaptive`, which asks a live scorer for the sampled items only)
    reads the sampled items' scores from it. With ``repeats=1``, ``evaluate_adaptive`` on the
    model's ``score_items`` with the same ``rng``, ``tie_seed`` and ``batch_size`` gives the same
    ranks.

    Returns
    -------
    pandas.DataFrame
        Columns ``repeat``, ``user``, ``item``, ``rank`` (r_u), ``sample_size`` (final n_u) and
        ``n_candidates`` (N_u).
    """
    protocol, repeats, gen, tested = _sampling_setup(
        model, test_items, protocol, repeats, rng, users, [("n0", n0), ("n_max", n_max)]
    )
    if n0 > n_max:
        raise ValueError(f"n0 = {n0} must not exceed n_max = {n_max}")
    # one implementation of Algorithm 1: the live evaluation's, with the batch's scores as scorer
    frames = []
    for batch, targets, scores, excluded, pool, rows in _sampling_batches(
        model, test_items, protocol, tested, repeats, batch_size, progress
    ):
        def score_sets(sets, items, rows=rows, scores=scores):
            return scores[rows[sets][:, None], items]

        ranks, sizes = sample_adaptively(score_sets, batch[rows], targets[rows], excluded[rows], n0=n0,
                                         n_max=n_max, replace=replace, rng=gen, tie_seed=tie_seed)
        frames.append(_frame(rows, batch, targets, ranks, sizes, pool, repeats))
    return _combine(frames)


def _frame(rows, batch, targets, ranks, sizes, pool, repeats) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "repeat": np.repeat(np.arange(repeats), batch.size),
            "user": batch[rows],
            "item": targets[rows],
            "rank": ranks.astype(np.int64),
            "sample_size": np.asarray(sizes, dtype=np.int64),
            "n_candidates": (pool[rows] + 1).astype(np.int64),
        }
    )


def _combine(frames: list[pd.DataFrame]) -> pd.DataFrame:
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["repeat", "user"], kind="stable", ignore_index=True)


def write_ranks(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a ranks table as parquet (pyarrow), creating the parent folder."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    frame.to_parquet(path, engine="pyarrow", index=False)


def read_ranks(path: str | os.PathLike) -> pd.DataFrame:
    """Read a ranks table written by :func:`write_ranks` (parquet, or CSV by its suffix).

    Checks that it has the columns ``user``, ``rank`` and ``n_candidates`` and returns it
    sorted by user.
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"ranks file {os.fspath(path)!r} does not exist; run `itemsampling train` first")
    frame = pd.read_csv(path) if os.fspath(path).endswith(".csv") else pd.read_parquet(path, engine="pyarrow")
    missing = {"user", "rank", "n_candidates"} - set(frame.columns)
    if missing:
        raise ValueError(f"{os.fspath(path)}: missing column(s) {sorted(missing)}; a ranks file has "
                         "user, item, rank, n_candidates")
    return frame.sort_values("user", kind="stable").reset_index(drop=True)
