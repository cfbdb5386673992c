"""Estimate global top-K metrics from item-sampled ranks: the public entry points.

One module past 500 lines, because every entry point builds the same batch of checked ranks
(:class:`_Batch`), whose fits, operators and corrections share one cache keyed by the options
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

import hashlib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import corrections, distributions, intervals
from ._validation import (
    check_choice,
    check_distribution,
    check_positive_integer,
)
from .banded_kernel import BandedKernel
from .candidates import DEFAULT_N_GROUPS
from .corrections import LinearCorrection
from .kernels import SCHEMES, KernelCache
from .metrics import canonical_metric, rank_weight

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

METHODS = (
    "sampled",
    "rank_estimate",
    "cls",
    "bv",
    "mn",
    "mle",
    "wmle",
    "mes",
    "bv_mle",
    "bv_mes",
    "mn_mle",
    "mn_mes",
    "adaptive_mle",
)

_MLE = ("max_iter", "tol", "init", "progress")
_MES = ("eta", "eta_scale", "max_iter", "tol")
_OPTIONS = {
    "sampled": (),
    "rank_estimate": (),
    "cls": ("prior",),
    "bv": ("gamma", "prior"),
    "mn": ("n_users", "m_scope", "prior"),
    "mle": _MLE,
    "wmle": ("weight", "c", *_MLE),
    "mes": _MES,
    "bv_mle": ("gamma", *_MLE),
    "bv_mes": ("gamma", *_MES),
    "mn_mle": ("n_users", "m_scope", *_MLE),
    "mn_mes": ("n_users", "m_scope", *_MES),
    "adaptive_mle": _MLE,
}
#: MN's M with per-user candidates: each group's own M_g (the default) or the whole M
M_SCOPES = ("group", "total")
#: options every method accepts; they describe the sampling, not the estimator
_COMMON = ("scheme", "n_groups")
#: methods that define an estimate of the rank distribution P(R)
RANK_DISTRIBUTION_METHODS = tuple(m for m in METHODS if m not in ("sampled", "rank_estimate", "cls"))
_DIRECT = ("mle", "wmle", "mes", "adaptive_mle")


def method_options(method: str) -> tuple[str, ...]:
    """Names of the keyword options that ``method`` accepts (always ``scheme`` and ``n_groups``)."""
    method = check_choice("method", method, METHODS)
    return tuple(sorted((*_COMMON, *_OPTIONS[method])))


@dataclass(frozen=True)
class Estimator:
    """One estimator of :func:`estimate_many`: a method, its options and a label.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    options : mapping, optional
        Options of the method (see :func:`method_options`), except ``scheme`` and
        ``n_groups``, which describe the sampling and are given to :func:`estimate_many`.
    name : str, optional
        Label in result tables (default: the method), e.g. ``"bv_0.1"``.
    """

    method: str
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self):
        method = check_choice("method", self.method, METHODS)
        allowed = _OPTIONS[method]
        unknown = sorted(set(self.options) - set(allowed))
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for method {method!r}; "
                f"allowed: {', '.join(allowed) or '(none)'}"
                + ("; scheme and n_groups apply to all estimators of a call" if set(unknown) & set(_COMMON) else "")
            )
        options = dict(self.options)
        if "prior" in options:
            options["prior"] = np.asarray(options["prior"], dtype=np.float64)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "options", MappingProxyType(options))

    @property
    def label(self) -> str:
        """The name, or the method when no name was given."""
        return self.name or self.method


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
    scheme, n_groups, opts = _split_common(opts)
    batch = _Batch.build(sampled_ranks, n_items, sample_size, scheme, n_groups, KernelCache.for_one_call(sample_size),
                         per_user_sizes=method == "adaptive_mle")
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
    scheme, n_groups, opts = _split_common(opts)
    unknown = sorted(set(opts) - set(_OPTIONS[method]))
    if unknown:  # reported before any computation, with the common options in the list
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for method {method!r}; "
            f"allowed: {', '.join(method_options(method))}"
        )
    table = estimate_many(sampled_ranks, n_items, sample_size, [Estimator(method, opts)], metrics, ks,
                          scheme=scheme, n_groups=n_groups, clip=clip, interval=interval,
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
    estimators, labels = _checked_estimators(estimators)
    pairs = _metric_k_pairs(metrics, ks) if targets is None else _explicit_pairs(targets)
    spec = intervals.interval_spec(interval, interval_method, n_bootstrap, seed)
    per_user = any(e.method == "adaptive_mle" for e in estimators)
    batch = _Batch.build(sampled_ranks, n_items, sample_size, scheme, n_groups,
                         KernelCache.for_one_call(sample_size) if cache is None else cache,
                         per_user_sizes=per_user)
    batch.fit_priors(estimators)
    return _estimate_table(batch, estimators, labels, pairs, spec, clip, warn)


def estimate_draws(
    draws: Sequence[ArrayLike],
    n_items: int | ArrayLike,
    sample_sizes: int | Sequence[int | ArrayLike],
    estimators: Sequence[Estimator],
    *,
    targets: Sequence[tuple[str, int | None]],
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    cache: KernelCache | None = None,
    warn: bool = True,
    interval: float | None = None,
    interval_method: str | None = None,
    seeds: Sequence[int | np.random.Generator | None] | None = None,
) -> list[pd.DataFrame]:
    """:func:`estimate_many` on many draws of sampled ranks of the same users (e.g. the repeats
    of a study), with the EM fits of all draws computed together.

    The MLE-family fits (``mle``, ``wmle``, ``adaptive_mle`` and the priors of ``bv_mle`` and
    ``mn_mle``) of every draw advance as the columns of one matrix
    (:func:`~itemsampling.distributions.em_estimates_of_draws`), and the MES fits (``mes`` and
    the priors of ``bv_mes``, ``mn_mes``) take their Newton steps in lockstep
    (:func:`~itemsampling.mes.solve_mes_stacked`); everything else is computed draw by draw, as
    :func:`estimate_many` does. Each table equals :func:`estimate_many` on its draw up to the
    rounding of these fits (the same terms summed in another order), and the same draws give
    the same tables to the bit.

    Parameters
    ----------
    draws : sequence of array_like of int
        The sampled ranks of each draw, of the same users in the same order.
    n_items, estimators, targets, scheme, n_groups, cache, warn, interval, interval_method
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
    specs = [intervals.interval_spec(interval, interval_method, None, seed) for seed in seeds]
    per_user = any(e.method == "adaptive_mle" for e in estimators)
    cache = KernelCache.for_one_call(sizes_of[0]) if cache is None else cache
    batches = [_Batch.build(ranks, n_items, sizes, scheme, n_groups, cache, per_user_sizes=per_user)
               for ranks, sizes in zip(draws, sizes_of, strict=True)]
    wanted = batches[0].em_fits_needed(estimators)
    if wanted:
        fits = distributions._em_estimates_of_draws(
            [batch.checked for batch in batches], distributions._checked_fits([(e.method, e.options)
                                                                                for e in wanted.values()]),
            batches[0].scheme, cache)
        for batch, draw_fits in zip(batches, fits, strict=True):
            batch.add_fits(dict(zip(wanted, draw_fits, strict=True)))
    _add_stacked_mes_fits(batches, estimators, cache)
    tables = []
    for spec in specs:  # each batch is dropped once its table is made: its fits and operators go with it
        tables.append(_estimate_table(batches.pop(0), estimators, labels, pairs, spec, False, warn))
    return tables


def _add_stacked_mes_fits(batches: Sequence[_Batch], estimators, cache) -> None:
    """The MES fits that the batches need, the draws of each sample size solved together
    (:func:`~itemsampling.distributions._mes_of_draws`). Holds no batch after it returns, so
    that :func:`estimate_draws` can release each one once its table is made."""
    wanted = batches[0].mes_fits_needed(estimators)
    same_size: dict[int, list[_Batch]] = {}  # -1: per-user sizes, which _mes_of_draws refuses
    for batch in batches if wanted else ():
        same_size.setdefault(int(batch.sizes) if np.ndim(batch.sizes) == 0 else -1, []).append(batch)
    for key, est in wanted.items():
        for group in same_size.values():
            fits = distributions._mes_of_draws([batch.checked for batch in group], batches[0].scheme, cache=cache,
                                               **est.options)
            for batch, fit in zip(group, fits, strict=True):
                batch.add_fits({key: fit})


def _checked_estimators(estimators) -> tuple[list[Estimator], list[str]]:
    estimators = list(estimators)
    labels = [e.label for e in estimators]
    if not estimators or len(set(labels)) != len(labels):
        raise ValueError(f"estimators must be a non-empty sequence of Estimator with distinct labels, got {labels}")
    return estimators, labels


def _estimate_table(batch: _Batch, estimators, labels, pairs, spec, clip: bool, warn: bool) -> pd.DataFrame:
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
                     n_groups: int | None = DEFAULT_N_GROUPS, cache: KernelCache | None = None) -> np.ndarray:
    """Influence value ψ_u = M ∂θ̂/∂c_{o(u)} of each user on each estimated metric.

    To first order the estimate is the mean of ψ_u over the users: replacing user u's
    observation by user v's changes it by about (ψ_v − ψ_u)/M. For the linear corrections ψ_u is
    the corrected metric of the user's sampled rank, and their mean is the estimate exactly.
    See the module docstring for how each estimator's ψ is computed.

    Parameters
    ----------
    sampled_ranks, n_items, sample_size, metrics, ks, targets, scheme, n_groups, cache
        As in :func:`itemsampling.estimate_many`.
    estimator : Estimator
        The estimator.

    Returns
    -------
    numpy.ndarray
        Shape ``(M, m)``: one row per user, one column per (metric, K).
    """
    pairs = _metric_k_pairs(metrics, ks) if targets is None else _explicit_pairs(targets)
    batch = _Batch.build(sampled_ranks, n_items, sample_size, scheme, n_groups,
                         KernelCache.for_one_call(sample_size) if cache is None else cache,
                         per_user_sizes=estimator.method == "adaptive_mle")
    return intervals.batch_influences(batch, estimator, pairs)


# ----------------------------------------------------------------------------- one batch of ranks


class _Batch:
    """Validated sampled ranks of one call, with the fits and operators they need."""

    def __init__(self, checked: distributions.CheckedRanks, sizes, n_items, scheme: str, n_groups,
                 cache: KernelCache):
        self.checked = checked  # the input, checked once: the fits below take it as it is
        self.ranks, self.groups, self.sizes = checked.ranks, checked.groups, sizes
        self.n_items, self.scheme, self.n_groups, self.cache = n_items, scheme, n_groups, cache
        self._fits: dict = {}

    @classmethod
    def build(cls, sampled_ranks, n_items, sample_size, scheme, n_groups, cache, per_user_sizes=False) -> _Batch:
        scheme = check_choice("sampling scheme", scheme, SCHEMES)
        checked = distributions._validated(sampled_ranks, n_items, sample_size, n_groups, per_user_sizes)
        per_user = checked.sizes
        if per_user.min() < 2:
            raise ValueError(
                "sample_size must be >= 2 (and <= n_items): with n = 1 every sampled rank is 1 and "
                "carries no information"
            )
        sizes = int(per_user[0]) if np.ndim(sample_size) == 0 else per_user
        return cls(checked, sizes, n_items, scheme, n_groups, cache)

    def refit(self, users: np.ndarray, estimators: Sequence[Estimator], pairs) -> np.ndarray:
        """Estimates ``(E, m)`` of ``estimators`` on the users ``users`` of this call (indices,
        with repeats: a bootstrap resample), with this call's kernels; every user keeps its own
        N_g, so the resample keeps the candidate groups."""
        groups = self.groups
        n_items = self.n_items if np.ndim(self.n_items) == 0 else groups.n_items[groups.index]
        sizes = self.sizes if np.ndim(self.sizes) == 0 else self.sizes[users]
        table = estimate_many(self.ranks[users], n_items if np.ndim(n_items) == 0 else n_items[users], sizes,
                              estimators, targets=pairs, scheme=self.scheme, n_groups=None, cache=self.cache,
                              warn=False)
        return table["estimate"].to_numpy().reshape(len(estimators), len(pairs))

    def prior_fit_of(self, est: Estimator) -> Estimator:
        """The fit of P̂(R) behind a BV or MN estimator with a fitted prior (``bv_mle`` ...
        ``mn_mes``), with the options of ``est`` that the fit accepts."""
        _, _, prior_method = est.method.partition("_")
        own = method_options(prior_method)
        return Estimator(prior_method, {k: v for k, v in est.options.items() if k in own})

    # -------------------------------------------------------------- shared pieces

    def _counts(self) -> np.ndarray:
        """``(G, n)`` number of users of each group at each sampled rank."""
        key = "counts"
        if key not in self._fits:
            counts = np.zeros((self.groups.n_groups, self.sizes))
            np.add.at(counts, (self.groups.index, self.ranks - 1), 1.0)
            self._fits[key] = counts
        return self._fits[key]

    def _weights(self, g: int, pairs) -> np.ndarray:
        """Target weights 1{R <= K} M(R) of group g, for R = 1..L (L: largest cut-off, N_g if none)."""
        n_g = int(self.groups.n_items[g])
        return self.cache.get(("weights", n_g, tuple(pairs)), lambda: _target_weights(pairs, n_g))

    def em_fits_needed(self, estimators: Sequence[Estimator]) -> dict[tuple, Estimator]:
        """The MLE-family fits of P̂(R) that ``estimators`` need and this batch lacks, by key."""
        return self._fits_needed(estimators, distributions.EM_METHODS)

    def mes_fits_needed(self, estimators: Sequence[Estimator]) -> dict[tuple, Estimator]:
        """The MES fits of P̂(R) (``mes`` and the priors of ``bv_mes``, ``mn_mes``) that
        ``estimators`` need and this batch lacks, by key."""
        return self._fits_needed(estimators, ("mes",))

    def _fits_needed(self, estimators: Sequence[Estimator], methods) -> dict[tuple, Estimator]:
        wanted = {}
        for est in map(_prior_estimator, estimators):
            if est is not None and est.method in methods and (
                    np.ndim(self.sizes) == 0 or est.method == "adaptive_mle"):
                wanted.setdefault((est.method, _freeze(est.options)), est)
        return {key: est for key, est in wanted.items() if key not in self._fits}

    def add_fits(self, fits: Mapping[tuple, np.ndarray]) -> None:
        """Take fits of P̂(R) made elsewhere (keys of :meth:`em_fits_needed`)."""
        self._fits.update(fits)

    def fit_priors(self, estimators: Sequence[Estimator]) -> None:
        """Fit the MLE-family P̂(R) that ``estimators`` need, all together
        (:func:`~itemsampling.distributions.em_estimates`: one kernel, one pass per EM step)."""
        todo = self.em_fits_needed(estimators)
        if todo:
            fits = distributions._em_estimates_of(
                self.checked, distributions._checked_fits([(e.method, e.options) for e in todo.values()]),
                self.scheme, self.cache)
            self._fits.update(zip(todo, fits, strict=True))

    def _prior(self, est: Estimator) -> np.ndarray:
        """The fitted P̂(R) of a direct method, once per call for the same options."""
        key = (est.method, _freeze(est.options))
        if np.ndim(self.sizes) and est.method != "adaptive_mle":
            raise ValueError(f"method {est.method!r} needs one sample_size for all users; per-user sample "
                             "sizes are supported by method 'adaptive_mle' only")
        if key not in self._fits and est.method == "mes":
            self._fits[key] = distributions._mes_of(self.checked, self.scheme, cache=self.cache, **est.options)
        elif key not in self._fits:
            self.fit_priors([est])
        return self._fits[key]

    def _given_prior(self, prior, g: int) -> np.ndarray | None:
        """A user-given prior on 1..max N_g, restricted to group g's ranks 1..N_g."""
        if prior is None:
            return None
        prior = check_distribution(prior, self.groups.max_items, name="prior")
        return _restrict(prior, int(self.groups.n_items[g]))

    def _operator(self, est: Estimator, g: int) -> tuple[LinearCorrection, tuple | None]:
        """The BV or MN operator of group g, with the prior the method names, and its cache key
        (None when the prior was fitted to this call's ranks)."""
        family, _, prior_method = est.method.partition("_")
        n_g, n = int(self.groups.n_items[g]), self.sizes
        if prior_method:
            prior_est = _prior_estimator(est)
            opts = {k: v for k, v in est.options.items() if k not in prior_est.options}
            prior = _restrict(self._prior(prior_est), n_g)
            key = None  # a data-dependent prior: built for this call only
            gram_key = ("gram", prior_est.method, _freeze(prior_est.options), n_g)
        else:
            opts = dict(est.options)
            prior = self._given_prior(opts.pop("prior", None), g)
            key = (family, n_g, n, self.scheme, _freeze(opts), _digest(prior))
            gram_key = None
        if family == "mn":
            scope = check_choice("m_scope", opts.pop("m_scope", "group"), M_SCOPES)
            users = int(self.groups.n_users[g]) if scope == "group" else self.ranks.size
            if "n_users" in opts:  # the given M (shared out in proportion to the groups' users)
                given = check_positive_integer("n_users (the number of test users M)", opts.pop("n_users"))
                users = max(1, round(given * users / self.ranks.size))
            opts["n_users"] = users
            if key is not None:
                key = (*key, users)

        def build():
            kernel = self.cache.kernel(n_g, n, self.scheme)
            gram = self._gram(g, prior, gram_key)
            if family == "bv":
                return corrections.bv_operator(n_g, n, scheme=self.scheme, prior=prior, kernel=kernel, gram=gram,
                                               **opts)
            spread = self.cache.get(("spread", n_g, n, self.scheme),
                                    lambda: corrections.variance_gram(kernel, banded=self._banded(g)))
            return corrections.mn_operator(n_g, n, scheme=self.scheme, prior=prior, kernel=kernel, gram=gram,
                                           spread=spread, **opts)  # opts holds n_users

        if key is None:  # one per call and distinct N_g (and M_g for MN)
            memo = ("operator", est.method, _freeze(est.options), n_g, opts.get("n_users"))
            if memo not in self._fits:
                self._fits[memo] = build()
            return self._fits[memo], None
        return self.cache.get(("operator", *key), build), key

    def _banded(self, g: int) -> BandedKernel:
        """The rank kernel of group g, banded (for the Gram matrices of BV and MN)."""
        return self.cache.banded(int(self.groups.n_items[g]), self.sizes, self.scheme)

    def _gram(self, g: int, prior: np.ndarray | None, memo: tuple | None) -> np.ndarray:
        """Kᵀ diag(prior) K of group g, shared by the BV and MN operators with the same prior and
        N_g: ``memo`` names a prior fitted in this call, None a fixed one (uniform if None)."""
        n_g, n = int(self.groups.n_items[g]), self.sizes
        p = np.full(n_g, 1.0 / n_g) if prior is None else prior

        def build():
            if self.scheme == "binomial":  # one product with the kernel of set size 2n - 1
                return distributions._binomial_gram(self.cache, n_g, n).gram(p)
            return corrections.weighted_gram(self.cache.kernel(n_g, n, self.scheme), p, banded=self._banded(g))

        if memo is None:
            return self.cache.get(("gram", n_g, n, self.scheme, _digest(prior)), build)
        if memo not in self._fits:
            self._fits[memo] = build()
        return self._fits[memo]

    def _correction(self, est: Estimator, g: int, pairs) -> np.ndarray:
        """M̂ of group g for every (metric, K), shape (n, m): cached across calls when the
        correction does not depend on the sampled ranks, kept for this call when its prior was
        fitted to them."""
        n_g, n, method = int(self.groups.n_items[g]), self.sizes, est.method
        targets = tuple(pairs)
        if method == "sampled":
            return self.cache.get(("sampled", n, targets), lambda: corrections.sampled(pairs, n))
        if method == "rank_estimate":
            return self.cache.get(("rank_estimate", n_g, n, targets),
                                  lambda: corrections.rank_estimate(self._weights(g, pairs), n_g, n))
        if method == "cls":
            prior = self._given_prior(est.options.get("prior"), g)
            return self.cache.get(
                ("cls", n_g, n, self.scheme, targets, _digest(prior)),
                lambda: corrections.cls(self._weights(g, pairs), n_g, n, prior=prior, scheme=self.scheme,
                                        kernel=self.cache.kernel(n_g, n, self.scheme)))
        operator, key = self._operator(est, g)
        if key is None:  # a prior fitted to this call's ranks: kept for this call only
            memo = ("applied", est.method, _freeze(est.options), g, targets)
            if memo not in self._fits:
                self._fits[memo] = operator.apply(self._weights(g, pairs))
            return self._fits[memo]
        return self.cache.get(("applied", *key, targets), lambda: operator.apply(self._weights(g, pairs)))

    # -------------------------------------------------------------- results

    def values(self, est: Estimator, pairs) -> np.ndarray:
        """Estimates of every (metric, K) of ``pairs``, shape (m,)."""
        if est.method in _DIRECT:
            p_hat = self._prior(est)
            return p_hat[: _top(pairs, self.groups.max_items)] @ self._mean_weights(pairs)
        if np.ndim(self.sizes):
            raise ValueError(f"method {est.method!r} needs one sample_size for all users; per-user "
                             "sample sizes are supported by method 'adaptive_mle' only")
        counts = self._counts()
        if _prior_estimator(est) is None:
            total = sum(counts[g] @ self._correction(est, g, pairs) for g in range(self.groups.n_groups))
        else:  # an operator built for these ranks: Σ_r c(r) M̂(r) with one solve per group
            total = sum(self._operator(est, g)[0].estimate(counts[g], self._weights(g, pairs))
                        for g in range(self.groups.n_groups))
        return total / self.ranks.size

    def _mean_weights(self, pairs) -> np.ndarray:
        """Σ_g (M_g/M) weights of group g, zero-padded to the longest: the metric weight of
        global rank R averaged over the users (it differs between groups only for AUC and for
        metrics without cut-off, whose weights stop at N_g)."""
        top = _top(pairs, self.groups.max_items)
        out = np.zeros((top, len(pairs)))
        for g, share in enumerate(self.groups.fractions):
            w = self._weights(g, pairs)
            out[: w.shape[0]] += share * w
        return out

    def rank_distribution(self, est: Estimator) -> np.ndarray:
        """P̂(R) for R = 1..max N_g (AAAI'21 eq. 15 for BV and MN)."""
        if est.method in _DIRECT:
            return self._prior(est)
        counts = self._counts()
        out = np.zeros(self.groups.max_items)
        for g in range(self.groups.n_groups):
            part = self._operator(est, g)[0].rank_distribution(counts[g] / counts[g].sum())
            out[: part.size] += self.groups.fractions[g] * part
        return out


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


def _prior_estimator(est: Estimator) -> Estimator | None:
    """The direct fit of P̂(R) that ``est`` uses: itself for ``mle`` ... ``adaptive_mle``, the
    prior of ``bv_mle`` ... ``mn_mes`` (with the options that belong to it), else None."""
    if est.method in _DIRECT:
        return est
    family, _, prior_method = est.method.partition("_")
    if family not in ("bv", "mn") or not prior_method:
        return None
    own = set(_OPTIONS[prior_method])
    return Estimator(prior_method, {k: v for k, v in est.options.items() if k in own})


def _split_common(opts: dict) -> tuple[str, int | None, dict]:
    opts = dict(opts)
    scheme = opts.pop("scheme", "binomial")
    n_groups = opts.pop("n_groups", DEFAULT_N_GROUPS)
    return scheme, n_groups, opts


def _restrict(prior: np.ndarray, n_items: int) -> np.ndarray:
    """P(R) on 1..n_items: the prior restricted to the ranks a group can have, renormalised."""
    part = prior[:n_items]
    total = part.sum()
    if not total > 0:
        raise ValueError(f"the prior puts no mass on the ranks 1..{n_items} of a group of users")
    return part if part.size == prior.size and total == 1.0 else part / total


def _freeze(options: Mapping) -> tuple:
    return tuple(sorted((k, _digest(v) if isinstance(v, np.ndarray) else v) for k, v in options.items()))


def _digest(array) -> str | None:
    if array is None:
        return None
    return hashlib.sha1(np.ascontiguousarray(array, dtype=np.float64).tobytes()).hexdigest()


def _top(pairs, n_items: int) -> int:
    cutoffs = [k for _, k in pairs]
    return n_items if None in cutoffs else min(n_items, max(cutoffs))


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


def _target_weights(pairs, n_items: int) -> np.ndarray:
    """(L, m) weights 1{R <= K} M(R) for R = 1..L, with L the largest cut-off (N if none)."""
    ranks = np.arange(1, _top(pairs, n_items) + 1)
    return np.column_stack([rank_weight(metric, ranks, n_items, k) for metric, k in pairs])
