"""Sampled evaluations written by recommender frameworks, read into one typed :class:`Run`.

A run holds, for each test user u, the rank r_u of the held-out (positive) item among its n_u
candidates (the positive and its n_u - 1 sampled negatives; 1 = ranked first), the catalogue
size N, the sampling protocol and the model's name. :func:`correct` turns it into the table of
:func:`itemsampling.estimate`.

Formats (:func:`read_run`, ``format=``):

``scores``
    A score matrix, one row per user, the positive's score in column 0 (``.npy``, or a CSV/TSV
    without header). Ranks with ties broken uniformly at random, seeded (:mod:`.score_matrix`).
``ranks``
    A CSV with a ``rank`` column, and optionally ``sample_size`` (n_u) and ``user``.
``ncf`` / ``elliot``
    NCF's ``*.test.negative`` (one line per user: ``(user,item)\\tneg1\\t...``), which is also
    the layout of Elliot's fixed-negatives file, plus a score matrix in the same row and column
    order (the positive first, then the negatives as listed).
``rechorus``
    ReChorus's test file (tab-separated, columns ``user_id``, ``item_id``, ``neg_items``: a
    list of item ids), plus its predictions, one row per test row, the positive first (the
    layout of ``BaseRunner.predict``).
``recbole``
    The CSV that the ``SampledRanks`` metric of :mod:`itemsampling.recbole_metrics` writes from
    a RecBole run: ``user_id, rank, n_candidates, n_items, mode`` (``n_items``: N, or N_u), one
    row per user and positive; from a ``popN`` run scored by
    :func:`itemsampling.recbole_metrics.popularity_ranks`, also ``rank_estimate``.

**Duplicates among the negatives.** A negative listed twice was drawn with replacement. A score matrix keeps both copies, so the positive's rank counts them
twice: the rank is that of sampling with replacement, and the run's protocol is
``uniform_with_replacement`` (the binomial kernel, KDD'20 §2). A warning says how many users
have duplicates. Where a reader sees distinct candidates only (RecBole masks its score matrix,
so a duplicate is one candidate), n_u varies between users; :func:`thin` then brings every
user to the smallest n by a uniform subsample of its negatives (exact: a uniform subset of a
uniform subset is uniform, so the kernel stays hypergeometric). A line that lists its held-out
item among its own negatives (156 of the 6,040 lines of NCF's ``ml-1m.test.negative``: the sampler
left out the user's training items only) keeps that copy out of the ranking: the user has one
candidate less, and :func:`thin` brings every user to the same n (warned).

**Popularity-sampled negatives.** Under a popularity sampler the sampled rank depends on which
items score above the positive, not on its global rank alone, so no kernel P(r | R) exists and
the uniform estimators do not apply (``docs/estimators.md``, "Non-uniform samplers"). Where the
reader sees the negatives' item ids (``ncf``, ``elliot``, ``rechorus``) and is given the sampler's
per-draw probabilities p_j (``probabilities=``), each row carries the Hansen–Hurwitz estimate of
its global rank, R̂_u = 1 + (1/m) Σ_{draws above} (1 - p_t)/p_j (m draws with replacement from the
catalogue less the positive t, :func:`itemsampling.nonuniform.hansen_hurwitz_rank`), and
:func:`correct` returns the metrics at R̂_u (:func:`itemsampling.nonuniform.corrected_estimate`).
A popularity run that holds ranks only (RecBole's ``popN`` through ``SampledRanks``) cannot be
corrected: :func:`correct` says what is missing (RecBole's ``popN``:
:func:`itemsampling.recbole_metrics.popularity_ranks` adds the Hansen–Hurwitz ranks). With several
positives per user the metrics are taken at ⌊R̂⌋ of each positive
(:func:`itemsampling.multi_positive.multi_positive_metrics`).

**Several positives per user** (a ratio split: RecBole's default). A run with several rows for
a user has protocol ``several_positives``: each row's ``ranks`` is the positive's rank among
itself and its sampled negatives, the user's other positives left out (RecBole ranks them too;
``SampledRanks`` writes the rank without them), ``sample_size`` is the positive and its negatives,
and ``n_items`` is N_u, every candidate of the user's full ranking, positives included.
:func:`correct` estimates RecBole's and RecPack's metrics with several relevant items from each
positive's kernel with N = N_u - P_u + 1 (:func:`itemsampling.multi_positive.estimate_multi_positive`).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import kernels
from .estimators import estimate
from .multi_positive import (
    NOT_CARRIED_METHODS,
    OWN_SIZE_METHODS,
    estimate_multi_positive,
    multi_positive_metrics,
)
from .nonuniform import check_probabilities, corrected_estimate, hansen_hurwitz_rank, plug_in_ranks
from .score_matrix import sampled_ranks_from_scores
from .simulation import as_generator, subsample_ranks

__all__ = ["FORMATS", "PROTOCOLS", "DuplicateNegativesWarning", "Run", "correct", "positive_arguments", "read_run",
           "thin"]

#: sampling protocols a run may state, with the kernel scheme each one needs
PROTOCOLS = {
    "uniform_without_replacement": "hypergeometric",
    "uniform_with_replacement": "binomial",
    "popularity": "popularity",
    "several_positives": "hypergeometric",
}
FORMATS = ("scores", "ranks", "ncf", "elliot", "rechorus", "recbole")
#: the estimators of a popularity-sampled run
_POPULARITY_METHODS = ("hansen_hurwitz",)
#: RecBole's eval_args.mode prefix -> protocol
_RECBOLE_MODES = {"uni": "uniform_without_replacement", "pop": "popularity"}


class DuplicateNegativesWarning(UserWarning):
    """Some users' negatives list an item more than once (sampling with replacement)."""


@dataclass(frozen=True)
class Run:
    """One model's sampled evaluation: per user the positive's rank among its candidates.

    Attributes
    ----------
    ranks : numpy.ndarray
        int64, 1-based rank r_u of the positive among its n_u candidates.
    sample_size : numpy.ndarray
        int64 n_u: the positive plus its sampled negatives.
    n_items : int or numpy.ndarray
        Catalogue size N, the number of items ranked by the full evaluation; or each user's
        number of candidates N_u where the full evaluation leaves out the user's training items
        (the ``unseen`` protocol of :func:`itemsampling.estimate`). With several positives per
        user, the user's positives are among these candidates.
    protocol : str
        One of :data:`PROTOCOLS`.
    model : str
        The model's name.
    users : numpy.ndarray
        The user id of each row (several rows of one user: several positives).
    rank_estimates : numpy.ndarray or None
        For a popularity-sampled run: the Hansen–Hurwitz estimate R̂_u of each row's global rank
        (>= 1), which :func:`correct` uses in place of the ranks.
    """

    ranks: np.ndarray
    sample_size: np.ndarray
    n_items: int | np.ndarray
    protocol: str
    model: str = "model"
    users: np.ndarray = field(default=None)
    rank_estimates: np.ndarray | None = None

    def __post_init__(self):
        ranks = np.asarray(self.ranks, dtype=np.int64)
        sizes = np.broadcast_to(np.asarray(self.sample_size, dtype=np.int64), ranks.shape).copy()
        users = np.arange(ranks.size) if self.users is None else np.asarray(self.users)
        if ranks.ndim != 1 or ranks.size == 0:
            raise ValueError("a run needs a 1-D array of at least one rank")
        if users.shape != ranks.shape:
            raise ValueError(f"a run has {ranks.size} ranks but {users.size} user ids")
        if np.any(ranks < 1) or np.any(ranks > sizes):
            bad = int(np.flatnonzero((ranks < 1) | (ranks > sizes))[0])
            raise ValueError(f"row {bad}: rank {ranks[bad]} is outside 1..n_u = {sizes[bad]}; ranks are "
                             "1-based among the positive and its sampled negatives")
        n_items = np.asarray(self.n_items, dtype=np.int64)
        n_items = int(n_items) if n_items.ndim == 0 else n_items
        if np.ndim(n_items) and np.shape(n_items) != ranks.shape:
            raise ValueError(f"a run has {ranks.size} ranks but {np.size(n_items)} catalogue sizes N_u")
        if np.any(sizes < 2) or np.any(sizes > n_items):
            raise ValueError("candidate counts n_u must lie in 2..N (the catalogue size, or N_u)")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; one of {', '.join(PROTOCOLS)}")
        protocol = self.protocol
        if protocol == "uniform_without_replacement" and pd.Series(users).duplicated().any():
            protocol = "several_positives"
        if self.rank_estimates is not None:
            estimates = np.asarray(self.rank_estimates, dtype=float)
            if estimates.shape != ranks.shape or np.any(~np.isfinite(estimates)) or np.any(estimates < 1):
                raise ValueError(f"a run needs one finite rank estimate >= 1 per row ({ranks.size}), got "
                                 f"shape {estimates.shape}")
            if protocol != "popularity":
                raise ValueError(f"rank estimates belong to a popularity-sampled run, not to protocol {protocol!r}")
            object.__setattr__(self, "rank_estimates", estimates)
        object.__setattr__(self, "ranks", ranks)
        object.__setattr__(self, "sample_size", sizes)
        object.__setattr__(self, "n_items", n_items)
        object.__setattr__(self, "users", users)
        object.__setattr__(self, "protocol", protocol)

    def __len__(self) -> int:
        return int(self.ranks.size)

    @cached_property
    def several_positives(self) -> bool:
        """Whether some user has several rows (several positives)."""
        return bool(pd.Series(self.users).duplicated().any())


def thin(run: Run, rng: np.random.Generator | int | None = 0) -> Run:
    """Bring every user to the smallest candidate count n = min_u n_u.

    Keeping a uniform subset of n - 1 of user u's n_u - 1 negatives, the number of kept
    negatives that outrank the positive is hypergeometric,
    r'_u - 1 ~ Hypergeometric(n_u - 1 total, r_u - 1 successes, n - 1 draws),
    and the kept set is a uniform sample of the catalogue, so the estimators' kernel holds.

    Parameters
    ----------
    run : Run
    rng : numpy.random.Generator, int or None
        Seed of the subsample (default 0: the same ranks every time).

    Returns
    -------
    Run
        The same run with one n for every user (unchanged if it had one already).
    """
    n = int(run.sample_size.min())
    if np.all(run.sample_size == n):
        return run
    ranks, _ = subsample_ranks(run.ranks, run.sample_size, n, rng)
    return replace(run, ranks=ranks, sample_size=np.full_like(run.sample_size, n))


def correct(run: Run, method: str = "mn_mes", metrics: Sequence[str] | str = ("recall", "ndcg"),
            ks: Iterable[int | None] | int | None = (10,), interval: float | None = 0.95, seed: int = 0,
            **options) -> pd.DataFrame:
    """Estimated global metrics of a run, with intervals: :func:`itemsampling.estimate` on its ranks.

    The kernel scheme follows the run's protocol (:data:`PROTOCOLS`): hypergeometric for
    uniform sampling without replacement, binomial with replacement. Users with different
    candidate counts are first thinned to the smallest (:func:`thin`). A popularity-sampled run
    has no kernel: its metrics are taken at the Hansen–Hurwitz rank estimates it carries
    (:func:`itemsampling.nonuniform.corrected_estimate`, KDD'20 eq. 20's plug-in rule), unbiased
    for the rank but not for a metric at a cut-off, which it overstates; its interval covers the
    users' sampling, not that bias (``docs/frameworks.md`` measures both against RecBole's full
    ranking). Any ``method`` other than the default or ``hansen_hurwitz`` is warned about, and
    ``options`` other than the interval's are not used. A run with several positives per user is estimated
    positive by positive (:func:`itemsampling.multi_positive.estimate_multi_positive`, metrics
    of :data:`itemsampling.multi_positive.MULTI_METRICS`; its interval is over users, with the
    fit of P̂(R) held fixed but for ``posterior_mle``, whose influence values carry its fit, or
    with ``interval_method="bootstrap"`` the refits' percentiles). ``posterior_mle`` keeps every
    positive's own n and is for runs with several positives per user only.

    Parameters
    ----------
    run : Run
    method, metrics, ks, interval, **options
        As for :func:`itemsampling.estimate`.
    seed : int
        Seed of :func:`thin`.

    Returns
    -------
    pandas.DataFrame
        The table of :func:`itemsampling.estimate` with the columns ``model`` and ``protocol``
        in front.

    Raises
    ------
    NotImplementedError
        For a protocol whose kernel the estimators do not have yet, naming what is missing.
    """
    scheme = check_supported(run, method)
    if run.protocol == "several_positives":
        table = estimate_multi_positive(*positive_arguments(run), metrics, ks, method=method, interval=interval,
                                        seed=seed, **{"scheme": scheme, **options})
        table.insert(0, "protocol", run.protocol)
        table.insert(0, "model", run.model)
        return table
    if run.protocol == "popularity":
        if method not in ("mn_mes", *_POPULARITY_METHODS):
            warnings.warn(f"method {method!r} needs the kernel P(r | R) of uniform sampling, which a popularity "
                          "sampler does not have: the run is corrected with the Hansen–Hurwitz rank estimate",
                          stacklevel=2)
        if run.several_positives:  # the metrics of several positives at their rank estimates
            table = multi_positive_metrics(plug_in_ranks(run.rank_estimates), run.users, metrics, ks,
                                           interval=interval).rename(columns={"value": "estimate"})
        elif np.ndim(run.n_items):
            raise ValueError("a popularity-sampled run is corrected against one catalogue size N")
        else:
            table = corrected_estimate(run.rank_estimates, run.n_items, metrics, ks, interval=interval)
        table.insert(0, "protocol", run.protocol)
        table.insert(0, "model", run.model)
        return table
    run = thin(run, seed)
    table = estimate(run.ranks, run.n_items, int(run.sample_size[0]), method, metrics=metrics, ks=ks,
                     interval=interval, scheme=scheme, **options)
    table.insert(0, "protocol", run.protocol)
    table.insert(0, "model", run.model)
    return table


def check_supported(run: Run, method: str = "mn_mes") -> str:
    """The kernel scheme of the run's protocol; a clear error where the estimators lack it."""
    scheme = PROTOCOLS[run.protocol]
    if run.protocol == "popularity" and run.rank_estimates is None:
        raise NotImplementedError(
            f"run {run.model!r} samples its negatives by popularity and holds only the positives' ranks: "
            "there is no popularity kernel P(r | R), and the Hansen–Hurwitz correction needs which "
            "negatives scored above each positive and their per-draw probabilities. Read the run from "
            "its negatives and scores (format ncf, elliot or rechorus) with probabilities=p "
            "(--probabilities FILE), or evaluate with uniform sampling (RecBole: uni100, not pop100)"
        )
    if run.protocol != "popularity" and scheme not in kernels.SCHEMES:
        raise NotImplementedError(f"protocol {run.protocol!r} needs the kernel scheme {scheme!r}, which "
                                  f"itemsampling.kernels.SCHEMES = {kernels.SCHEMES} lacks")
    if run.protocol not in ("several_positives", "popularity") and run.several_positives:
        raise NotImplementedError(
            f"run {run.model!r} has several positives per user under protocol {run.protocol!r}: several "
            "positives are estimated for uniform sampling without replacement (RecBole's uniN) and, at "
            "their Hansen–Hurwitz ranks, for popularity sampling. Use a "
            "leave-one-out split (RecBole: split {'LS': 'valid_and_test'}) so each user has one test positive")
    if run.protocol == "several_positives" and method in NOT_CARRIED_METHODS:
        raise ValueError(f"method {method!r} does not estimate metrics with several positives per user "
                         f"(run {run.model!r}); use mn_mes (the default), posterior_mle (keeps every "
                         "positive's own n), mle, mes, bv, mn or rank_estimate")
    if run.protocol != "popularity" and not run.several_positives and method in OWN_SIZE_METHODS:
        raise ValueError(f"method {method!r} estimates runs with several positives per user; run {run.model!r} "
                         "has one per user: use mle (with one positive per user it is the same estimate at "
                         "the EM's fixed point) or mn_mes")
    return scheme


def positive_arguments(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sampled ranks, users, N = N_u - P_u + 1 and n of each positive of a run with several
    positives per user (:func:`itemsampling.multi_positive.estimate_multi_positive`)."""
    _, uid, p_u = np.unique(run.users, return_inverse=True, return_counts=True)
    n_u = np.broadcast_to(np.asarray(run.n_items), run.ranks.shape)
    n_items = n_u - p_u[uid.reshape(-1)] + 1
    if np.any(n_items < run.sample_size):
        raise ValueError(f"run {run.model!r}: a positive has more candidates (n) than its user has "
                         "non-relevant items plus itself (N_u - P_u + 1); n_items must be every candidate of "
                         "the user's full ranking, positives included")
    return run.ranks, run.users, n_items, run.sample_size


def read_run(source: str | Path | ArrayLike | Run, format: str = "scores", *,
             scores: str | Path | ArrayLike | None = None, n_items: int | None = None,
             model: str | None = None, protocol: str | None = None, seed: int = 0,
             probabilities: str | Path | ArrayLike | None = None) -> Run:
    """Read a framework's sampled evaluation into a :class:`Run`.

    Parameters
    ----------
    source : str, path, array or Run
        The run's file (see the module docstring for each ``format``), a score matrix, or a Run.
    format : str
        One of :data:`FORMATS`.
    scores : str, path or array, optional
        For ``ncf``, ``elliot`` and ``rechorus``: the score matrix (``.npy`` or CSV/TSV without
        header), the positive in column 0.
    n_items : int
        Catalogue size N (the ``recbole`` file carries it).
    model : str, optional
        The model's name (default: the file's stem).
    protocol : str, optional
        Overrides the protocol the reader infers (default: uniform without replacement, or with
        replacement where negatives repeat).
    seed : int
        Seed of the tie-breaking among equal scores.
    probabilities : str, path or array, optional
        For ``ncf``, ``elliot`` and ``rechorus``: the per-draw probability p_j of every item id
        under the popularity sampler that drew the negatives (``.npy`` or a one-column CSV; entry
        j belongs to item id j, so ids index it). The run becomes ``popularity`` and carries
        each row's Hansen–Hurwitz rank estimate (module docstring). The negatives are taken as
        draws with replacement from the catalogue less the positive; a sampler that also leaves
        out a user's training items draws each negative with a larger probability, so the
        correction overstates such a user's rank by at most the factor 1/(1 - their mass).

    Returns
    -------
    Run
    """
    if isinstance(source, Run):
        return source
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; one of {', '.join(FORMATS)}")
    name = model or (Path(source).stem if isinstance(source, (str, Path)) else format)
    if format == "recbole":
        return _read_recbole(source, name, protocol)
    if n_items is None:
        raise ValueError(f"format {format!r} needs the catalogue size n_items (--n-items N)")
    if format == "ranks":
        table = pd.read_csv(source)
        if "rank" not in table.columns:
            raise ValueError(f"ranks file {source!r} has no 'rank' column")
        if "sample_size" not in table.columns:
            raise ValueError(f"ranks file {source!r} has no 'sample_size' column (n_u: the positive "
                             "plus its sampled negatives)")
        users = table["user"].to_numpy() if "user" in table.columns else None
        return Run(table["rank"], table["sample_size"], n_items, protocol or "uniform_without_replacement",
                   name, users)
    if format in ("scores", "ranks") and probabilities is not None:
        raise ValueError(f"format {format!r} does not list the negatives' item ids, so the popularity "
                         "correction cannot look up their probabilities: use ncf, elliot or rechorus")
    if format == "scores":
        matrix = _matrix(source)
        return Run(sampled_ranks_from_scores(matrix, 0, seed), matrix.shape[1], n_items,
                   protocol or "uniform_without_replacement", name)
    if scores is None:
        raise ValueError(f"format {format!r} needs the score matrix of its candidates (scores=..., --scores FILE)")
    users, candidates = _read_ncf(source) if format in ("ncf", "elliot") else _read_rechorus(source)
    matrix = _matrix(scores)
    if matrix.shape != candidates.shape:
        raise ValueError(f"the scores have shape {matrix.shape} but the negatives file lists "
                         f"{candidates.shape[0]} users with {candidates.shape[1]} candidates each "
                         "(the positive first, then its negatives in the file's order)")
    if probabilities is not None:
        return _popularity_run(matrix, candidates, _probabilities(probabilities, candidates), n_items, name,
                               users, seed)
    own = candidates[:, 1:] == candidates[:, :1]
    if own.any():
        warnings.warn(
            f"{int(own.any(axis=1).sum())} of {len(users)} users list their held-out item among its own "
            "negatives (the sampler left out only the training items): that copy is not a negative, so "
            "it is left out of the ranking and those users have one candidate less",
            DuplicateNegativesWarning, stacklevel=2)
        # just below the positive's score: never above it, so the rank among the others is kept
        below = np.nextafter(matrix[:, :1], -np.inf)
        matrix = np.column_stack([matrix[:, :1], np.where(own, below, matrix[:, 1:])])
    repeated = _rows_with_duplicates(np.where(own, -1 - np.arange(own.shape[1]), candidates[:, 1:]))
    inferred = "uniform_without_replacement"
    if repeated:
        warnings.warn(
            f"{repeated} of {len(users)} users list a negative more than once: the negatives were drawn "
            "with replacement; each copy is a candidate and the binomial kernel is used",
            DuplicateNegativesWarning, stacklevel=2)
        inferred = "uniform_with_replacement"
    return Run(sampled_ranks_from_scores(matrix, 0, seed), matrix.shape[1] - own.sum(axis=1), n_items,
               protocol or inferred, name, users)


def _probabilities(source, candidates: np.ndarray) -> np.ndarray:
    """The sampler's per-draw probabilities, indexed by item id: checked against the negatives."""
    p = _matrix(source).ravel() if isinstance(source, (str, Path)) else np.asarray(source, dtype=float)
    if p.ndim != 1:
        raise ValueError("the per-draw probabilities must be one number per item id")
    p = check_probabilities(p, p.size)
    if candidates.min() < 0 or candidates.max() >= p.size:
        raise ValueError(f"the negatives list item ids up to {int(candidates.max())}, outside the "
                         f"{p.size} per-draw probabilities (entry j belongs to item id j)")
    own = candidates[:, 1:] == candidates[:, :1]
    if own.any():
        row = int(np.flatnonzero(own.any(axis=1))[0])
        raise ValueError(f"{int(own.any(axis=1).sum())} rows draw the positive as its own negative (first: row "
                         f"{row}, item {int(candidates[row, 0])}); a sampler never draws the held-out item")
    if np.any(p[candidates[:, 1:]] <= 0):
        raise ValueError("a listed negative has per-draw probability 0: these probabilities did not draw it")
    return p


def _popularity_run(matrix: np.ndarray, candidates: np.ndarray, p: np.ndarray, n_items: int, name: str,
                    users: np.ndarray, seed: int) -> Run:
    """A popularity run: sampled ranks and Hansen–Hurwitz rank estimates, ties broken at random.

    A negative tied with the positive precedes it with probability 1/2 (independent seeded
    draws), so the rank and the estimate count the same negatives above.
    """
    if not np.all(np.isfinite(matrix)):
        raise ValueError("the score matrix holds NaN or infinite values; every candidate needs a finite score")
    scores = matrix[:, 1:]
    target = matrix[:, :1]
    above = (scores > target) | ((scores == target) & (as_generator(seed).random(scores.shape) < 0.5))
    draw_p = p[candidates[:, 1:]] / (1 - p[candidates[:, :1]])
    return Run(1 + above.sum(axis=1), matrix.shape[1], n_items, "popularity", name, users,
               rank_estimates=hansen_hurwitz_rank(above, draw_p))


def _matrix(source) -> np.ndarray:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"scores file {str(path)!r} does not exist")
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        return pd.read_csv(path, header=None, sep=None, engine="python").to_numpy(dtype=np.float64)
    return np.asarray(source, dtype=np.float64)


def _read_ncf(path) -> tuple[np.ndarray, np.ndarray]:
    """``(user,item)\\tneg1\\t...`` lines -> user ids and candidate ids (positive first)."""
    users, rows = [], []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.rstrip("\n").split("\t")
            try:
                user, item = ast.literal_eval(fields[0])
                rows.append([int(item), *map(int, fields[1:])])
            except (ValueError, SyntaxError, TypeError):
                raise ValueError(f"{path}: line {number} is not '(user,item)<TAB>neg1<TAB>...'") from None
            users.append(user)
    if len({len(row) for row in rows}) != 1:
        raise ValueError(f"{path}: users have different numbers of negatives")
    return np.asarray(users), np.asarray(rows, dtype=np.int64)


def _read_rechorus(path) -> tuple[np.ndarray, np.ndarray]:
    table = pd.read_csv(path, sep="\t")
    missing = {"user_id", "item_id", "neg_items"} - set(table.columns)
    if missing:
        raise ValueError(f"ReChorus test file {path!r} lacks the column(s) {sorted(missing)}")
    negatives = [ast.literal_eval(text) if isinstance(text, str) else list(text) for text in table["neg_items"]]
    rows = [[item, *neg] for item, neg in zip(table["item_id"], negatives, strict=True)]
    if len({len(row) for row in rows}) != 1:
        raise ValueError(f"{path}: users have different numbers of negatives")
    return table["user_id"].to_numpy(), np.asarray(rows, dtype=np.int64)


def _read_recbole(source, name: str, protocol: str | None) -> Run:
    table = source if isinstance(source, pd.DataFrame) else pd.read_csv(source)
    missing = {"user_id", "rank", "n_candidates", "n_items", "mode"} - set(table.columns)
    if missing:
        raise ValueError(f"RecBole ranks file lacks the column(s) {sorted(missing)}; write it with "
                         "the SampledRanks metric of itemsampling.recbole_metrics")
    mode = str(table["mode"].iloc[0])
    if mode[:3] not in _RECBOLE_MODES:
        raise ValueError(f"RecBole mode {mode!r} is not a sampled evaluation (uniN or popN)")
    sizes = table["n_items"].to_numpy()
    estimates = table["rank_estimate"].to_numpy() if "rank_estimate" in table.columns else None
    return Run(table["rank"], table["n_candidates"], int(sizes[0]) if np.all(sizes == sizes[0]) else sizes,
               protocol or _RECBOLE_MODES[mode[:3]], name, table["user_id"].to_numpy(), rank_estimates=estimates)


def _rows_with_duplicates(candidates: np.ndarray) -> int:
    ordered = np.sort(candidates, axis=1)
    return int(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1).sum())
