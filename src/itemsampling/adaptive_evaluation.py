"""Adaptive item-sampled evaluation of a live model: Algorithm 1 of Li et al. (AAAI 2023) against any scorer.

A *scorer* is a callable ``score(users, items) -> scores`` with ``users`` an int64 array of
shape ``(B,)`` (user indices), ``items`` an int64 array of shape ``(B, m)`` (item indices, one
row per user) and, as result, a real array of shape ``(B, m)``: the score of ``items[b, j]``
for user ``users[b]``, higher is better. It can wrap any framework (a torch module, an
``implicit`` model, a web service; a fitted :class:`~itemsampling.models.base.Recommender`
offers :meth:`~itemsampling.models.base.Recommender.score_items`). The evaluation asks it only
for the items it samples, never for the whole catalogue.

Algorithm 1 (AAAI'23 §4.1 and Appendix H), for every test user u with held-out item i_u among
its N_u candidates:

1. draw n_0 - 1 candidates other than i_u; score i_u and them; r_u = 1 + (number of drawn
   items that precede i_u); n_u = n_0;
2. while r_u = 1 and n_u < n_max: draw n_u more candidates (the last step only up to n_max;
   without replacement among those not drawn yet), score them, n_u <- min(2 n_u, n_max) and
   r_u = 1 + (number of the new items that precede i_u), since none of the earlier ones did;
3. estimate the global rank distribution P(R) from the pairs (r_u, n_u) by adaptive MLE
   (AAAI'23 eq. 12, EM of Appendix G) and every requested metric@K from it.

Using eq. 12 with the final (r_u, n_u) ignores how n_u came about, and loses nothing: with
replacement, the chance of stopping at level j (sizes n_0, n_1 = 2 n_0, ...) with rank r is
(1 - θ)^(n_{j-1} - 1) Bin(r - 1; n_j - n_{j-1}, θ) with θ = (R - 1)/(N - 1), which is
Bin(r - 1; n_j - 1, θ) times a factor that does not depend on θ (and likewise without
replacement), so both likelihoods have the same maximiser.

**Candidates.** ``exclude=None`` ranks among all N items (the ``all`` protocol of the AAAI'23
code); an ``(n_users, N)`` sparse matrix ``exclude`` (e.g. the training matrix: the ``unseen``
protocol of Krichene & Rendle) removes each user's row from its candidates, so user u has
N_u = N - |exclude_u| of them. **Ties** are broken as in :mod:`itemsampling.ranks`, by the
seeded keys of :func:`~itemsampling.candidate_sampling.tie_break_keys`: with the same ``tie_seed`` the
sampled ranks share the total order of :func:`~itemsampling.ranks.global_ranks`, so a sampled
rank is 1 + (number of sampled items that precede the target in the global order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from scipy import sparse
import pandas as pd
import scipy.sparse as sp

from ._progress import progress_bar
from ._validation import as_generator, check_n_items, check_positive_integer, check_seed
from .candidate_sampling import (
    check_sample_sizes,
    draw_positions,
    non_candidates,
    nth_allowed,
    precedes,
    test_users,
    tie_break_keys,
)
from .estimators import estimate
from .simulation import sampling_cost

__all__ = ["AdaptiveEvaluation", "ScoringCost", "evaluate_adaptive", "sample_adaptively"]

#: ``score(users (B,), items (B, m)) -> scores (B, m)``
Scorer = Callable[[np.ndarray, np.ndarray], Any]

DEFAULT_METRICS = ("recall", "ndcg", "ap")
DEFAULT_KS = (1, 5, 10, 20, 50)


@dataclass(frozen=True)
class ScoringCost:
    """What the scorer was asked for, against a full ranking of every test user.

    Attributes
    ----------
    items_scored : int
        Items scored in total, Σ_u n_u (each user's held-out item and its sampled items; with
        replacement an item drawn twice is scored twice).
    calls : int
        Calls of the scorer (one per batch of users and doubling round).
    n_users : int
        Test users M.
    n_items : int
        Items N.
    """

    items_scored: int
    calls: int
    n_users: int
    n_items: int

    @property
    def full_ranking(self) -> int:
        """M x N: the items a full ranking scores (every item for every test user)."""
        return self.n_users * self.n_items

    @property
    def fraction(self) -> float:
        """``items_scored / full_ranking``."""
        return self.items_scored / self.full_ranking


@dataclass(frozen=True)
class AdaptiveEvaluation:
    """Result of :func:`evaluate_adaptive`.

    Attributes
    ----------
    ranks : pandas.DataFrame
        One row per test user: ``user``, ``item`` (held-out item), ``rank`` (r_u in its final
        sample set), ``sample_size`` (n_u) and ``n_candidates`` (N_u) — the columns
        ``itemsampling estimate --method adaptive_mle`` reads.
    estimates : pandas.DataFrame
        Adaptive-MLE estimates, as returned by :func:`itemsampling.estimate` (columns
        ``metric``, ``k``, ``estimate``).
    cost : ScoringCost
        Items scored against M x N.
    n0, n_max : int
        Initial and terminal sample set sizes.
    scheme : str
        ``"binomial"`` (sampled with replacement) or ``"hypergeometric"`` (without).
    """

    ranks: pd.DataFrame
    estimates: pd.DataFrame
    cost: ScoringCost
    n0: int
    n_max: int
    scheme: str

    def estimate(self, metrics: Sequence[str] | str = DEFAULT_METRICS,
                 ks: Iterable[int | None] | int | None = DEFAULT_KS, **options) -> pd.DataFrame:
        """Estimate metrics from the same sampled ranks, without scoring anything again.

        ``options`` are passed to :func:`itemsampling.estimate` with method ``adaptive_mle``
        (e.g. ``max_iter``, ``tol``).
        """
        return _adaptive_estimates(self.ranks, self.scheme, metrics, ks, options)

    def sampling_cost(self) -> pd.DataFrame:
        """The sampling-cost curve C_j of the run (AAAI'23 eq. 13; :func:`itemsampling.sampling_cost`)."""
        return sampling_cost(self.ranks["sample_size"].to_numpy(), self.ranks["rank"].to_numpy(),
                             self.n0, self.n_max)


def sample_adaptively(score_sets: Callable[[np.ndarray, np.ndarray], np.ndarray], users: np.ndarray,
                      targets: np.ndarray, excluded: sp.csr_matrix, *, n0: int, n_max: int, replace: bool,
                      rng: np.random.Generator, tie_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 (AAAI'23) for S sample sets at once, scoring only the items it draws.

    The first call scores every set's target (column 0) with its n_0 - 1 drawn items; each
    doubling round then scores only the new items of the sets whose target is still first.
    Draws are made by :func:`itemsampling.candidate_sampling.draw_positions` (without replacement: a
    uniform subset of the candidates, growing), so the union of a set's draws is a uniform
    sample of its final size.

    Parameters
    ----------
    score_sets : callable
        ``score_sets(sets, items)``: scores ``(len(sets), m)`` of ``items`` ``(len(sets), m)``
        for the users of the sample sets ``sets`` (indices into ``users``).
    users, targets : numpy.ndarray
        ``(S,)`` user and held-out item of each set (a user may own several sets).
    excluded : scipy.sparse.csr_matrix
        ``(S, N)`` non-candidates of each set, its target included, with sorted indices
        (:func:`itemsampling.ranks._excluded`); n_max must not exceed any N_u.
    n0, n_max : int
        Initial and terminal sample set sizes, 1 <= n_0 <= n_max (checked by the callers).
    replace : bool
        Draw with replacement (r | R binomial) or without (hypergeometric).
    rng : numpy.random.Generator
        Source of the draws.
    tie_seed : int
        Tie-break seed (:func:`itemsampling.candidate_sampling.tie_break_keys`).

    Returns
    -------
    ranks, sizes : numpy.ndarray
        int64 r_u and final n_u of each set.
    """
    pool = excluded.shape[1] - np.diff(excluded.indptr)  # N_u - 1 candidates besides the target
    every = np.arange(targets.size)
    drawn = draw_positions(rng, pool, n0 - 1, replace)
    items = nth_allowed(excluded, every[:, None], drawn)
    scores = score_sets(every, np.column_stack([targets, items]))
    target_scores = np.array(scores[:, :1])  # a copy: kept while the scorer is called again
    target_keys = tie_break_keys(users, targets, tie_seed)[:, None]

    def preceding(sets, items, scores):
        return precedes(scores, target_scores[sets], users[sets][:, None], items, target_keys[sets],
                         tie_seed).sum(axis=1)

    ranks = 1 + preceding(every, items, scores[:, 1:])
    sizes = np.full(targets.size, n0, dtype=np.int64)
    size = n0
    active = np.flatnonzero((ranks == 1) & (size < n_max))
    drawn = None if replace else drawn[active]  # positions drawn so far, active sets only
    while active.size:
        new_size = min(2 * size, n_max)
        extra = draw_positions(rng, pool[active], new_size - size, replace, drawn)
        items = nth_allowed(excluded, active[:, None], extra)
        hits = preceding(active, items, score_sets(active, items))
        ranks[active] = 1 + hits
        sizes[active] = new_size
        size = new_size
        keep = (hits == 0) & (size < n_max)
        if not replace:
            drawn = np.concatenate([drawn, extra], axis=1)[keep]
        active = active[keep]
    return ranks.astype(np.int64), sizes


def evaluate_adaptive(
    score: Scorer,
    test_items: ArrayLike,
    n_items: int,
    *,
    n0: int,
    n_max: int,
    exclude: sparse.spmatrix | sparse.sparray | None = None,
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    ks: Iterable[int | None] | int | None = DEFAULT_KS,
    replace: bool = True,
    rng: np.random.Generator | int | None = None,
    tie_seed: int = 0,
    users: ArrayLike | None = None,
    batch_size: int = 1024,
    progress: bool | None = None,
    estimate_options: Mapping[str, Any] | None = None,
) -> AdaptiveEvaluation:
    """Evaluate a live model by adaptive item sampling (Li et al. AAAI 2023, Algorithm 1 and eq. 12).

    Runs Algorithm 1 (see the module docstring) against ``score``, asking it only for each test
    user's held-out item and the items sampled for that user, then estimates the global
    metrics by adaptive MLE.

    Parameters
    ----------
    score : callable
        ``score(users, items) -> scores``: int64 ``(B,)`` users and ``(B, m)`` items, real
        ``(B, m)`` finite scores (higher is better); anything ``numpy.asarray`` turns into such
        an array (a CPU torch tensor, a list).
    test_items : array_like of int
        ``(n_users,)`` held-out item of each user (0-based, < N), ``-1`` for none
        (``Dataset.test_items``).
    n_items : int
        Number of items N.
    n0, n_max : int
        Initial and terminal sample set sizes, 1 <= n_0 <= n_max <= min N_u (AAAI'23 §4.3
        suggests n_max around 10-15% of N).
    exclude : scipy.sparse matrix, optional
        ``(n_users, N)`` items that are not candidates of each user (its non-zero entries; e.g.
        the training matrix for the ``unseen`` protocol). ``None``: every item but the target
        is a candidate (``all``).
    metrics, ks
        Metrics and cut-offs to estimate (as in :func:`itemsampling.estimate`).
    replace : bool
        Sample with replacement (binomial kernel, as eq. 12) or without (hypergeometric).
    rng : numpy.random.Generator, int or None
        Sampling randomness; the same seed (and ``batch_size``) gives the same result.
    tie_seed : int
        Tie-break seed; use the one of the global ranks to share their total order.
    users : array_like of int, optional
        Users to evaluate (default: every user with a held-out item).
    batch_size : int
        Users sampled together; a call of the scorer gets at most this many users.
    progress : bool or None
        Progress bar over users; ``None`` shows it only in an interactive terminal.
    estimate_options : mapping, optional
        Further options of :func:`itemsampling.estimate` for method ``adaptive_mle``.

    Returns
    -------
    AdaptiveEvaluation
        Per-user ranks and sample sizes, the estimates and the scoring cost.

    Raises
    ------
    ValueError
        For bad sizes (n_0 > n_max, n_max > min N_u), test items or exclusions, and for a
        scorer that raises, returns the wrong shape, non-real, NaN or infinite scores.
    """
    n_items = check_n_items(n_items)
    n0, n_max = check_positive_integer("n0", n0), check_positive_integer("n_max", n_max)
    if n0 > n_max:
        raise ValueError(f"n0 = {n0} must not exceed n_max = {n_max}")
    batch_size = check_positive_integer("batch_size", batch_size)
    tie_seed = check_seed(tie_seed)
    if tie_seed is None:
        raise ValueError("tie_seed must be a non-negative integer")
    test_items = np.asarray(test_items)
    if test_items.ndim != 1:
        raise ValueError(f"test_items must be a 1-D array, one held-out item per user, got shape {test_items.shape}")
    users, targets = test_users(test_items, test_items.size, users)
    if targets.max() >= n_items:
        raise ValueError(f"test_items must be item indices in 0..{n_items - 1} (or -1 for no held-out item), "
                         f"found {int(targets.max())}")
    exclude = _check_exclude(exclude, test_items.size, n_items, users, targets)
    n_candidates = np.full(users.size, n_items) if exclude is None else n_items - np.diff(exclude.indptr)[users]
    check_sample_sizes(int(np.min(n_candidates)), [("n0", n0), ("n_max", n_max)])
    gen = as_generator(rng)
    scorer = _CheckedScorer(score)
    ranks = np.empty(users.size, dtype=np.int64)
    sizes = np.empty(users.size, dtype=np.int64)
    with progress_bar(total=users.size, progress=progress, desc="adaptive evaluation", unit="user") as bar:
        for start in range(0, users.size, batch_size):
            part = slice(start, start + batch_size)
            batch, batch_targets = users[part], targets[part]
            excluded = non_candidates(None if exclude is None else exclude[batch], batch_targets, n_items)

            def score_sets(sets, items, batch=batch):
                return scorer(batch[sets], items)

            ranks[part], sizes[part] = sample_adaptively(score_sets, batch, batch_targets, excluded, n0=n0,
                                                         n_max=n_max, replace=replace, rng=gen, tie_seed=tie_seed)
            bar.update(batch.size)
    table = pd.DataFrame({"user": users, "item": targets, "rank": ranks, "sample_size": sizes,
                          "n_candidates": n_candidates.astype(np.int64)})
    scheme = "binomial" if replace else "hypergeometric"
    return AdaptiveEvaluation(
        ranks=table,
        estimates=_adaptive_estimates(table, scheme, metrics, ks, dict(estimate_options or {})),
        cost=ScoringCost(scorer.items_scored, scorer.calls, int(users.size), n_items),
        n0=n0, n_max=n_max, scheme=scheme,
    )


def _adaptive_estimates(table: pd.DataFrame, scheme: str, metrics, ks, options: Mapping[str, Any]) -> pd.DataFrame:
    """Adaptive-MLE estimates from a ranks table (the one place :func:`itemsampling.estimate` is called)."""
    if "scheme" in options:
        raise ValueError("the sampling scheme follows from replace (True: binomial, False: hypergeometric); "
                         "do not pass it as an estimate option")
    return estimate(table["rank"].to_numpy(), table["n_candidates"].to_numpy(), table["sample_size"].to_numpy(),
                    "adaptive_mle", metrics, ks, scheme=scheme, **options)


def _check_exclude(exclude, n_users: int, n_items: int, users: np.ndarray, targets: np.ndarray):
    """The exclusions as a CSR matrix of their pattern (``None`` stays ``None``), checked."""
    if exclude is None:
        return None
    if not sp.issparse(exclude):
        raise ValueError(f"exclude must be a scipy.sparse (n_users, n_items) matrix or None, got {type(exclude).__name__}")
    if exclude.shape != (n_users, n_items):
        raise ValueError(f"exclude must have shape (n_users, n_items) = {(n_users, n_items)}, one row per "
                         f"entry of test_items, got {exclude.shape}")
    pattern = sp.csr_matrix(exclude, copy=True)
    pattern.eliminate_zeros()
    pattern.sum_duplicates()
    pattern.data = np.ones_like(pattern.data, dtype=np.float32)
    clash = np.asarray(pattern[users, targets]).ravel() != 0
    if clash.any():
        raise ValueError(f"the held-out item of user {int(users[clash][0])} is one of its excluded items "
                         f"({int(clash.sum())} such user(s)); a held-out item must be a candidate")
    return pattern


class _CheckedScorer:
    """The user's scorer, called with fresh int64 arrays; its output checked, its work counted."""

    def __init__(self, score: Scorer) -> None:
        if not callable(score):
            raise ValueError(f"score must be a callable score(users, items) -> scores, got {type(score).__name__}")
        self.score = score
        self.calls = 0
        self.items_scored = 0

    def __call__(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users = np.ascontiguousarray(users, dtype=np.int64)
        items = np.ascontiguousarray(items, dtype=np.int64)
        asked = f"asked for {items.shape[1]} item(s) of each of {users.size} user(s)"
        try:
            out = self.score(users, items)
        except Exception as exc:
            raise ValueError(f"the scorer raised {type(exc).__name__}: {exc} (when {asked})") from exc
        try:
            scores = np.asarray(out)
        except Exception as exc:  # e.g. a torch tensor on a GPU
            raise ValueError(f"the scorer's output ({type(out).__name__}) is not convertible to a numpy array: "
                             f"{exc}; return a numpy array or a CPU tensor") from exc
        if scores.shape != items.shape:
            raise ValueError(f"the scorer returned shape {scores.shape} when {asked}; score(users, items) must "
                             f"return one score per requested item, shape (B, m) = {items.shape}")
        if scores.dtype.kind not in "biuf":
            raise ValueError(f"the scorer returned scores of dtype {scores.dtype}; scores must be real numbers")
        if scores.dtype.kind == "f" and not np.isfinite(scores).all():
            nan, inf = int(np.isnan(scores).sum()), int(np.isinf(scores).sum())
            raise ValueError(f"the scorer returned {nan} NaN and {inf} infinite score(s) when {asked}; "
                             "scores must be finite for ranks to be defined")
        self.calls += 1
        self.items_scored += items.size
        return scores
