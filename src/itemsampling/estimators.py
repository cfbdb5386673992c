"""Estimate global top-K metrics from item-sampled ranks: the public entry points.

One module past 500 lines, because every entry point builds the same batch of checked ranks
(:class:`Batch`), whose fits, operators and corrections share one cache keyed by the options
defined here; the mathematics lives in the modules it calls.

Two families of estimators turn the sampled ranks r_u of M users into estimates of global
metrics ``metric@K = (1/M) Σ_u 1{R_u <= K} M(R_u)``:

* **corrections** (:mod:`itemsampling.corrections`) choose a metric function M̂ on the sampled
  ranks and average it, ``Σ_r P̃(r) M̂(r)`` (Krichene & Rendle, KDD 2020, §5; Li et al.,
  AAAI 2023, §3);
* **rank distributions** (:mod:`itemsampling.distributions`) estimate P(R) once and plug it into
  every metric, ``Σ_R P̂(R) 1{R <= K} M(R)`` (Jin et al., AAAI 2021, eq. 14).

Methods (reference; whether the method defines an estimate of P(R)):

- ``sampled``: the naive metric on the sampled rank (KDD'20 §2; no P(R)).
- ``rank_estimate``: the metric at the rank estimate 1 + (N-1)(r-1)/(n-1) (KDD'20 eq. 20; no).
- ``cls``: least squares with a monotone constraint, uniform or given prior (KDD'20 eq. 21; no).
- ``bv``: bias² + γ variance, uniform or given prior (KDD'20 eq. 24-26; P(R) by eq. 15).
- ``mn``: minimal MSE bound with M users, uniform or given prior (AAAI'23 eq. 10-11; eq. 15).
- ``mle``: maximum likelihood by EM (AAAI'21 eq. 19-21; yes).
- ``wmle``: weighted maximum likelihood (AAAI'21 eq. 22-23; yes).
- ``mes``: maximal entropy with squared distribution distance (AAAI'21 eq. 24-27; yes).
- ``bv_mle``, ``bv_mes``: BV whose prior is the MLE / MES estimate (AAAI'23 App. I; eq. 15).
- ``mn_mle``, ``mn_mes``: MN whose prior is the MLE / MES estimate (AAAI'23 §3.2; eq. 15).
- ``adaptive_mle``: MLE with a per-user sample size n_u (AAAI'23 eq. 12, App. G; yes).

"eq. 15" means that the linear correction W defines P̂(R) = Σ_r P̃(r) W[r, R] (Jin et al.,
AAAI 2021, eq. 15). The priors of ``bv_mle`` ... ``mn_mes`` are always estimated from the same
sampled ranks that are then corrected.

Options (keyword arguments; each method accepts only those it uses, see
:func:`method_options`):

- ``scheme``: ``"binomial"`` (default; sampling with replacement) or ``"hypergeometric"``;
  every method accepts it, but ``sampled`` and ``rank_estimate`` do not depend on it.
- ``gamma``: BV variance weight γ >= 0 (default 0.01).
- ``prior``: an (N,) prior P(R) for ``cls``, ``bv`` and ``mn`` (default uniform).
- ``n_users``: MN's number of users M (default: the number of sampled ranks).
- ``m_scope``: with per-user candidates, the M of each group's MN operator: ``"group"``
  (default: the group's own number of users M_g, its share of ``n_users`` when given) or
  ``"total"`` (every group's operator with the whole M; see :func:`estimate`).
- ``eta``, ``eta_scale``: MES entropy weight η (default 0.001) and its scale, ``"paper"`` (η as
  in AAAI'21 eq. 26) or ``"code"`` (η/n, as the AAAI'23 code's n-times squared error amounts to).
- ``weight``, ``c``: WMLE weight w(r) = M(r/C), ``"ndcg"`` or ``"ap"``, C = 10.
- ``max_iter``, ``tol``: iteration cap and tolerance of EM (MLE family) or of the MES solver.
- ``init``, ``progress``: EM start distribution and progress bar (MLE family).
- ``n_groups``: with per-user candidates N_u, the largest number of groups of users by N_u
  (default 20; see :func:`estimate`).
- ``grid``: the global ranks the estimators sum over: ``"auto"`` (default), ``"exact"`` or
  ``"coarse"`` (see "Large catalogues" in :func:`estimate`).

**Impossible estimates.** Every metric lies in [0, 1]. The rank-distribution methods (``mle``,
``wmle``, ``mes``, ``adaptive_mle``) always give values in that range; the linear corrections
(``rank_estimate``, ``cls``, ``bv``, ``mn`` and the BV/MN variants) are unbiased on average over
their prior, not constrained, and can leave it — with few users, a sampled rank distribution far
from the prior (e.g. a strong recommender under the uniform prior), or small γ. :func:`estimate`
returns the value of the method's definition, as in the papers, and warns with
:class:`ImpossibleEstimateWarning`; ``clip=True`` clips to [0, 1] instead.

:func:`estimate_many` runs several :class:`Estimator` on the same ranks at once, sharing their
fits, kernels and fixed-prior operators (and, through a :class:`~itemsampling.kernels.KernelCache`,
across calls); :func:`estimate_draws` does so for many draws of the same users' sampled ranks,
with the EM fits of all draws advanced together as matrix products.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import distributions, intervals
from ._validation import (
    check_choice,
)
from .batch import M_SCOPES, METHODS, RANK_DISTRIBUTION_METHODS, Batch, Estimator, method_options
from .candidates import DEFAULT_N_GROUPS
from .kernels import KernelCache
from .metrics import canonical_metric

__all__ = [
    "METHODS",
    "M_SCOPES",
    "RANK_DISTRIBUTION_METHODS",
    "Estimator",
    "ImpossibleEstimateWarning",
    "estimate",
    "estimate_draws",
    "estimate_many",
    "influence_values",
    "method_options",
    "rank_distribution",
]

def rank_distribution(sampled_ranks: ArrayLike, n_items: int | ArrayLike, sample_size: int | ArrayLike,
                      method: str = "mle", **opts) -> np.ndarray:
    """Estimate the global rank distribution P(R), R = 1..N, from sampled ranks.

    ``mle``, ``wmle``, ``mes`` and ``adaptive_mle`` estimate P(R) directly (Jin et al.,
    AAAI 2021, eq. 19–27; Li et al., AAAI 2023, eq. 12). The BV and MN methods give
    P̂(R) = Σ_r P̃(r) W[r, R] from their linear correction W (AAAI'21 eq. 15); it sums to one
    but can have negative entries. With per-user candidates, P̂ of BV and MN is the
    user-weighted average of the groups' P̂_g.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u of each user's held-out item, in 1..n.
    n_items : int or array_like of int
        Number of items N, or the number of candidates N_u of each user (see :func:`estimate`).
    sample_size : int or array_like of int
        Sample set size n (the target plus n - 1 sampled items), 2 <= n <= min N_u; for
        ``adaptive_mle`` one n_u per user.
    method : str
        One of :data:`RANK_DISTRIBUTION_METHODS`.
    **opts
        Options of the method (see the module docstring and :func:`method_options`).

    Returns
    -------
    numpy.ndarray
        Shape ``(N,)`` (``(max N_g,)`` with per-user candidates).
    """
    method = check_choice("method", method, METHODS)
    if method not in RANK_DISTRIBUTION_METHODS:
        raise ValueError(
            f"method {method!r} corrects each metric separately and does not define a rank "
            f"distribution P(R); methods that do: {', '.join(RANK_DISTRIBUTION_METHODS)}"
        )
    scheme, n_groups, grid, opts = _split_common(opts)
    batch = Batch.build(sampled_ranks, n_items, sample_size, scheme, n_groups, KernelCache.for_one_call(sample_size),
                        per_user_sizes=method == "adaptive_mle", grid=grid)
    return batch.rank_distribution(Estimator(method, opts))


def estimate(
    sampled_ranks: ArrayLike,
    n_items: int | ArrayLike,
    sample_size: int | ArrayLike,
    method: str = "mn_mes",
    metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
    ks: Iterable[int | None] | int | None = range(1, 51),
    clip: bool = False,
    *,
    interval: float | None = None,
    interval_method: str | None = None,
    n_bootstrap: int | None = None,
    seed: int | np.random.Generator | None = None,
    **opts,
) -> pd.DataFrame:
    """Estimate global ``metric@K`` for many metrics and cut-offs from sampled ranks.

    One estimate of P(R) (for the rank-distribution methods) or one linear operator (for BV and
    MN) serves every metric and every K; ``cls`` solves one small problem per (metric, K).

    **Per-user candidates.** Under the ``unseen`` protocol user u is ranked among its own
    N_u candidates; pass them as an array ``n_items``. Users are then grouped by N_u (at most
    ``n_groups`` quantile groups, default 20, each with the rounded mean N_g of its users, or
    all with the mean N of all users when every N_u is within 0.5 % of it;
    :mod:`itemsampling.candidates`): the rank-distribution methods use each group's kernel
    P(r | R; n, N_g) (zero for R > N_g) in one likelihood (MES: the user-averaged kernel),
    and the corrections (rank estimate, CLS, BV, MN) are computed per group and averaged with
    the groups' user shares. MN uses each group's number of users M_g as its M by default
    (``m_scope="group"``); ``m_scope="total"`` gives every group's operator the whole M. The
    second minimises the bound of AAAI'23 eq. 10 for the average over all users: that average
    is Σ_g (M_g/M) θ̂_g, its variance (1/M) Σ_g (M_g/M) V̄_g (V̄_g: the mean variance of a
    group-g user), and by Jensen its squared bias is at most Σ_g (M_g/M) b_g², so the MSE is at
    most Σ_g (M_g/M) (b_g² + V̄_g/M): group by group, MN with M. With M_g the variance term of
    each group weighs M/M_g times more, so the estimate moves with the number of groups. An
    array of equal values gives exactly the result of the scalar.

    **Large catalogues.** Every method but ``cls`` sums over the global ranks through a
    coarse-to-fine grid (:mod:`itemsampling.rank_grid`) when ``grid="coarse"``, and by default
    (``grid="auto"``) from N = 100,000 items on: the ranks up to the largest cut-off (at least
    1,000) exactly, Gauss–Legendre panels beyond, so that time and memory are set by n and K,
    not by N, and every metric@K, AUC and interval bound stays within 1e-4 of the exact ranks
    (measured: about 1e-8). ``grid="exact"`` sums over every rank 1..N.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u of each user's held-out item, in 1..n.
    n_items : int or array_like of int
        Number of items N, or N_u per user.
    sample_size : int or array_like of int
        Sample set size n, 2 <= n <= min N_u; for ``adaptive_mle`` one n_u per user.
    method : str
        One of :data:`METHODS` (default ``"mn_mes"``).
    metrics : str or sequence of str
        Metric names: ``recall`` (= hit ratio), ``precision``, ``ndcg``, ``ap`` (= reciprocal
        rank), ``auc``. The aliases ``hr``, ``hit_ratio`` and ``hitrate`` name ``recall``, ``rr``
        and ``mrr`` name ``ap``; the result's rows carry the canonical name.
    ks : int, None or iterable
        Cut-offs K (positive integers; ``None`` for no cut-off).
    clip : bool
        Clip estimates to the range [0, 1] of every metric. By default the value of the
        method's definition is returned, and an :class:`ImpossibleEstimateWarning` says which
        estimates lie outside [0, 1] (see "Impossible estimates" in the module docstring).
    interval : float, optional
        Confidence level in (0, 1), e.g. 0.95: add the columns ``se``, ``lower`` and ``upper``
        (:mod:`itemsampling.intervals`, which says what the interval covers).
    interval_method : {"analytic", "bootstrap"}, optional
        ``analytic`` (default): θ̂ ± z·se from the users' influence values (the central limit
        theorem for the linear corrections, the delta method for fitted estimators);
        ``bootstrap``: percentile interval of refits on resampled users.
    n_bootstrap : int, optional
        Bootstrap replicates (default 200).
    seed : int or numpy.random.Generator, optional
        Seed of the bootstrap (default 0: the same interval every time).
    **opts
        Options of the method (see the module docstring and :func:`method_options`).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k`` (nullable integer) and ``estimate`` (and with ``interval``
        ``se``, ``lower``, ``upper``), one row per (metric, K) in the order given.

    Examples
    --------
    >>> import numpy as np, itemsampling as its
    >>> global_ranks = np.arange(1, 1001).repeat(10)  # P(R) uniform on 1..1000
    >>> ranks = its.sample_ranks(global_ranks, 1000, 100, rng=0)
    >>> its.estimate(ranks, 1000, 100, "mle", metrics="recall", ks=[100]).round(2)
       metric    k  estimate
    0  recall  100       0.1
    """
    method = check_choice("method", method, METHODS)
    scheme, n_groups, grid, opts = _split_common(opts)
    unknown = sorted(set(opts) - set(method_options(method)))
    if unknown:  # reported before any computation, with the common options in the list
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for method {method!r}; "
            f"allowed: {', '.join(method_options(method))}"
        )
    table = estimate_many(sampled_ranks, n_items, sample_size, [Estimator(method, opts)], metrics, ks,
                          scheme=scheme, n_groups=n_groups, grid=grid, clip=clip, interval=interval,
                          interval_method=interval_method, n_bootstrap=n_bootstrap, seed=seed)
    return table.drop(columns="estimator")


def estimate_many(
    sampled_ranks: ArrayLike,
    n_items: int | ArrayLike,
    sample_size: int | ArrayLike,
    estimators: Sequence[Estimator],
    metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
    ks: Iterable[int | None] | int | None = range(1, 51),
    *,
    targets: Sequence[tuple[str, int | None]] | None = None,
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    grid: str = "auto",
    cache: KernelCache | None = None,
    clip: bool = False,
    warn: bool = True,
    interval: float | None = None,
    interval_method: str | None = None,
    n_bootstrap: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Several estimators on the same sampled ranks, sharing all the work they have in common.

    Each prior is fitted once per call (``mle`` and ``bv_mle`` share one EM run) and kernels
    and fixed-prior corrections (``rank_estimate``, ``cls``, ``bv``, ``mn`` with a uniform or
    given prior) are taken from ``cache``: pass the same :class:`~itemsampling.kernels.KernelCache`
    to many calls (repeats, models) with the same N and n to compute them once. Every estimate
    equals that of :func:`estimate` with the same method and options.

    Parameters
    ----------
    sampled_ranks, n_items, sample_size, metrics, ks
        As in :func:`estimate`.
    estimators : sequence of Estimator
        The estimators, with distinct labels.
    targets : sequence of (str, int or None), optional
        Explicit (metric, K) pairs, instead of every combination of ``metrics`` and ``ks``.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement, for every estimator.
    n_groups : int or None
        Groups of users by N_u (see :func:`estimate`).
    grid : {"auto", "exact", "coarse"}
        The global ranks the estimators sum over (see "Large catalogues" in :func:`estimate`).
    cache : KernelCache, optional
        Kernels and fixed-prior corrections reused across calls (a new one by default).
    clip : bool
        Clip every estimate to [0, 1] (see :func:`estimate`).
    warn : bool
        Warn (:class:`ImpossibleEstimateWarning`) when unclipped estimates lie outside [0, 1];
        studies that record the methods' raw values turn this off.
    interval, interval_method, n_bootstrap, seed
        Confidence intervals, as in :func:`estimate` (the bootstrap refits all the estimators
        on the same resamples of the users).

    Returns
    -------
    pandas.DataFrame
        Columns ``estimator`` (the labels), ``metric``, ``k`` and ``estimate`` (and with
        ``interval`` ``se``, ``lower``, ``upper``), one row per estimator and (metric, K).
    """
    pairs = _metric_k_pairs(metrics, ks) if targets is None else _explicit_pairs(targets)
    return estimate_draws([sampled_ranks], n_items, [sample_size], estimators, targets=pairs, scheme=scheme,
                          n_groups=n_groups, grid=grid, cache=cache, clip=clip, warn=warn, interval=interval,
                          interval_method=interval_method, n_bootstrap=n_bootstrap, seeds=[seed])[0]


def estimate_draws(
    draws: Sequence[ArrayLike],
    n_items: int | ArrayLike,
    sample_sizes: int | Sequence[int | ArrayLike],
    estimators: Sequence[Estimator],
    *,
    targets: Sequence[tuple[str, int | None]],
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    grid: str = "auto",
    cache: KernelCache | None = None,
    clip: bool = False,
    warn: bool = True,
    interval: float | None = None,
    interval_method: str | None = None,
    n_bootstrap: int | None = None,
    seeds: Sequence[int | np.random.Generator | None] | None = None,
) -> list[pd.DataFrame]:
    """:func:`estimate_many` on many draws of sampled ranks of the same users (e.g. the repeats
    of a study), with the fits of all draws computed together; :func:`estimate_many` is this
    function on one draw.

    With several draws, the MLE-family fits (``mle``, ``wmle``, ``adaptive_mle`` and the priors of
    ``bv_mle`` and ``mn_mle``) of every draw advance as the columns of one matrix
    (:func:`~itemsampling.distributions.em_estimates_of_draws`), and the MES fits (``mes`` and
    the priors of ``bv_mes``, ``mn_mes``) take their Newton steps in lockstep
    (:func:`~itemsampling.mes.solve_mes_stacked`); everything else is computed draw by draw.
    Each table then equals that of its draw alone up to the rounding of these fits (the same
    terms summed in another order), and the same draws give the same tables to the bit. One draw
    is fitted alone, with the steps of its EM fits recorded when an analytic interval will
    differentiate them (:meth:`~itemsampling.batch.Batch.fit_priors`).

    Parameters
    ----------
    draws : sequence of array_like of int
        The sampled ranks of each draw, of the same users in the same order.
    n_items, estimators, targets, scheme, n_groups, grid, cache, clip, warn, interval, interval_method, n_bootstrap
        As in :func:`estimate_many` (``cache`` is shared by all draws).
    sample_sizes : int or sequence
        One n for all draws, or one ``sample_size`` of :func:`estimate_many` per draw.
    seeds : sequence, optional
        The bootstrap ``seed`` of :func:`estimate_many` for each draw.

    Returns
    -------
    list of pandas.DataFrame
        The table of :func:`estimate_many` for each draw, in order.
    """
    estimators, labels = _checked_estimators(estimators)
    pairs = _explicit_pairs(targets)
    draws = list(draws)
    sizes_of = [sample_sizes] * len(draws) if np.ndim(sample_sizes) == 0 else list(sample_sizes)
    seeds = [None] * len(draws) if seeds is None else list(seeds)
    if not draws or len(sizes_of) != len(draws) or len(seeds) != len(draws):
        raise ValueError(f"draws ({len(draws)}), sample_sizes ({len(sizes_of)}) and seeds ({len(seeds)}) "
                         "must name the same positive number of draws")
    specs = [intervals.interval_spec(interval, interval_method, n_bootstrap, seed) for seed in seeds]
    per_user = any(e.method == "adaptive_mle" for e in estimators)
    cache = KernelCache.for_one_call(sizes_of[0]) if cache is None else cache
    batches = [Batch.build(ranks, n_items, sizes, scheme, n_groups, cache, per_user_sizes=per_user,
                           grid=_grid_for(grid, estimators), top=_largest_cutoff(pairs))
               for ranks, sizes in zip(draws, sizes_of, strict=True)]
    if len(batches) == 1:  # its interval's steps recorded, for an analytic interval
        batches[0].fit_priors(estimators, record=specs[0] is not None and specs[0].method == "analytic")
    else:
        _add_stacked_em_fits(batches, estimators)
        _add_stacked_mes_fits(batches, estimators, batches[0].cache)
    tables = []
    for spec in specs:  # each batch is dropped once its table is made: its fits and operators go with it
        tables.append(_estimate_table(batches.pop(0), estimators, labels, pairs, spec, clip, warn))
    return tables


def _add_stacked_em_fits(batches: Sequence[Batch], estimators) -> None:
    """The MLE-family fits that the batches need, all draws advancing as the columns of one matrix
    (:func:`~itemsampling.distributions.em_estimates_of_checked_draws`), on the batches' grid."""
    wanted = batches[0].em_fits_needed(estimators)
    if not wanted:
        return
    fits = distributions.em_estimates_of_checked_draws(
        [batch.checked for batch in batches], distributions.check_fits([(e.method, e.options) for e in wanted.values()]),
        batches[0].scheme, batches[0].cache)
    for batch, draw_fits in zip(batches, fits, strict=True):
        batch.add_fits(dict(zip(wanted, draw_fits, strict=True)))


def _add_stacked_mes_fits(batches: Sequence[Batch], estimators, cache) -> None:
    """The MES fits that the batches need, the draws of each sample size solved together
    (:func:`~itemsampling.distributions.mes_of_checked_draws`). Holds no batch after it returns, so
    that :func:`estimate_draws` can release each one once its table is made."""
    wanted = batches[0].mes_fits_needed(estimators)
    same_size: dict[int, list[Batch]] = {}  # -1: per-user sizes, which mes_of_checked_draws refuses
    for batch in batches if wanted else ():
        same_size.setdefault(int(batch.sizes) if np.ndim(batch.sizes) == 0 else -1, []).append(batch)
    for key, est in wanted.items():
        for group in same_size.values():
            fits = distributions.mes_of_checked_draws([batch.checked for batch in group], batches[0].scheme, cache=cache,
                                               **est.options)
            for batch, fit in zip(group, fits, strict=True):
                batch.add_fits({key: fit})


def _checked_estimators(estimators) -> tuple[list[Estimator], list[str]]:
    estimators = list(estimators)
    labels = [e.label for e in estimators]
    if not estimators or len(set(labels)) != len(labels):
        raise ValueError(f"estimators must be a non-empty sequence of Estimator with distinct labels, got {labels}")
    return estimators, labels


def _estimate_table(batch: Batch, estimators, labels, pairs, spec, clip: bool, warn: bool) -> pd.DataFrame:
    """The table of :func:`estimate_many` from a batch whose EM priors are fitted."""
    values = np.vstack([batch.values(e, pairs) for e in estimators])
    bounds = {} if spec is None else intervals.batch_intervals(batch, estimators, pairs, values, spec)
    outside = (values < -_RANGE_TOL) | (values > 1 + _RANGE_TOL)
    if clip:
        values = np.clip(values, 0.0, 1.0)
        bounds.update({k: np.clip(bounds[k], 0.0, 1.0) for k in ("lower", "upper") if k in bounds})
    elif warn and outside.any():
        _warn_impossible(values, outside, labels, pairs)
    out = pd.DataFrame({
        "estimator": np.repeat(labels, len(pairs)),
        "metric": [m for m, _ in pairs] * len(estimators),
        "k": [k for _, k in pairs] * len(estimators),
        "estimate": values.ravel(),
        **{name: column.ravel() for name, column in bounds.items()},
    })
    out["k"] = out["k"].astype("Int64")
    return out


def influence_values(sampled_ranks: ArrayLike, n_items: int | ArrayLike, sample_size: int | ArrayLike,
                     estimator: Estimator, metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
                     ks: Iterable[int | None] | int | None = range(1, 51), *,
                     targets: Sequence[tuple[str, int | None]] | None = None, scheme: str = "binomial",
                     n_groups: int | None = DEFAULT_N_GROUPS, grid: str = "auto",
                     cache: KernelCache | None = None) -> np.ndarray:
    """Influence value ψ_u = M ∂θ̂/∂c_{o(u)} of each user on each estimated metric.

    To first order the estimate is the mean of ψ_u over the users: replacing user u's
    observation by user v's changes it by about (ψ_v − ψ_u)/M. For the linear corrections ψ_u is
    the corrected metric of the user's sampled rank, and their mean is the estimate exactly.
    See the module docstring for how each estimator's ψ is computed.

    Parameters
    ----------
    sampled_ranks, n_items, sample_size, metrics, ks, targets, scheme, n_groups, grid, cache
        As in :func:`itemsampling.estimate_many`.
    estimator : Estimator
        The estimator.

    Returns
    -------
    numpy.ndarray
        Shape ``(M, m)``: one row per user, one column per (metric, K).
    """
    pairs = _metric_k_pairs(metrics, ks) if targets is None else _explicit_pairs(targets)
    batch = Batch.build(sampled_ranks, n_items, sample_size, scheme, n_groups,
                        KernelCache.for_one_call(sample_size) if cache is None else cache,
                        per_user_sizes=estimator.method == "adaptive_mle", grid=_grid_for(grid, [estimator]),
                        top=_largest_cutoff(pairs))
    return intervals.batch_influences(batch, estimator, pairs)


#: rounding error allowed beyond [0, 1] before an estimate counts as outside the metric's range
_RANGE_TOL = 1e-9


class ImpossibleEstimateWarning(UserWarning):
    """An estimate lies outside [0, 1], the range of every metric (see the module docstring)."""


def _warn_impossible(values, outside, labels, pairs) -> None:
    rows, cols = np.nonzero(outside)
    worst = int(np.argmax(np.maximum(-values[rows, cols], values[rows, cols] - 1)))
    i, j = rows[worst], cols[worst]
    metric, k = pairs[j]
    warnings.warn(
        f"{rows.size} estimate(s) lie outside [0, 1], the range of every metric, e.g. {labels[i]} "
        f"{metric}@{'' if k is None else k} = {values[i, j]:.4g}: linear corrections (rank_estimate, cls, bv, "
        "mn and their variants) can do this by construction, mostly with few users or an unsuitable "
        "prior. Pass clip=True to clip to [0, 1], or prefer a rank-distribution method (mle, mes).",
        ImpossibleEstimateWarning, stacklevel=3)


def _split_common(opts: dict) -> tuple[str, int | None, str, dict]:
    opts = dict(opts)
    scheme = opts.pop("scheme", "binomial")
    n_groups = opts.pop("n_groups", DEFAULT_N_GROUPS)
    grid = opts.pop("grid", "auto")
    return scheme, n_groups, grid, opts


def _grid_for(grid: str, estimators: Sequence[Estimator]) -> str:
    """``grid``, with ``"auto"`` kept to the exact ranks for ``cls`` (which solves on them)."""
    return "exact" if grid == "auto" and any(e.method == "cls" for e in estimators) else grid


def _largest_cutoff(pairs) -> int:
    """The largest finite cut-off of ``pairs`` (0 if none): a grid's exact ranks cover it."""
    return max((k for _, k in pairs if k is not None), default=0)


def _metric_k_pairs(metrics, ks) -> list[tuple[str, int | None]]:
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    ks = [ks] if ks is None or np.isscalar(ks) else list(ks)
    if not metrics or not ks:
        raise ValueError("metrics and ks must each name at least one value")
    for k in ks:
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"cut-offs k must be positive integers or None (no cut-off), got {k!r}")
    names = [canonical_metric(m) for m in metrics]
    if "precision" in names and None in ks:
        raise ValueError("precision needs a cut-off k (precision@K = 1{R <= K} / K)")
    return [(name, None if k is None else int(k)) for name in names for k in ks]


def _explicit_pairs(targets) -> list[tuple[str, int | None]]:
    pairs = []
    for target in targets:
        if not isinstance(target, (tuple, list)) or len(target) != 2:
            raise ValueError(f"targets must be (metric, k) pairs, got {target!r}")
        pairs.extend(_metric_k_pairs(target[0], target[1]))
    if not pairs:
        raise ValueError("targets must name at least one (metric, k) pair")
    return pairs


