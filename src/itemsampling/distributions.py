"""Estimators of the global rank distribution P(R) from sampled ranks (Jin et al. AAAI 2021).

One module past 500 lines, because the four estimators and their objectives share one grouping
of the users by observation and one checked input (:class:`CheckedRanks`).

The sampled ranks r_u are draws from the mixture P(r) = Σ_R P(r | R) P(R) (AAAI'21 eq. 18),
so P(R) can be learned from them and plugged into any metric, metric@K ≈ Σ_R P̂(R) 1{R≤K} M(R)
(AAAI'21 eq. 14). All estimators group the users by their distinct observation (sampled rank
r, and sample size n for adaptive sampling), so they cost O(N x d) per iteration with d the
number of distinct observations, independent of the number of users M.

========================= ===================================================================
``mle``                    maximum likelihood by EM (AAAI'21 eq. 19–21)
``weighted_mle``           weighted MLE by EM, w(r) = M_NDCG(r/C) or M_AP(r/C) (eq. 22–23)
``mes``                    maximal entropy with minimal distribution bias (eq. 24–27)
``adaptive_mle``           MLE with a per-user sample size n_u (Li et al. AAAI 2023, eq. 12, App. G)
``em_estimates``           several of the three above on the same ranks, computed together
``em_estimates_of_draws``  the same for many draws of the users' sampled ranks (e.g. repeats)
``log_likelihood``         the objective of ``mle`` / ``adaptive_mle`` (eq. 19)
``weighted_log_likelihood`` the objective of ``weighted_mle`` (eq. 22)
``mes_objective``          the objective minimised by ``mes`` (eq. 25–26)
========================= ===================================================================

Ranks are 1-based. ``scheme`` selects the rank kernel: ``"binomial"`` (sampling with
replacement, as in the papers) or ``"hypergeometric"`` (without replacement).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ._validation import (
    check_choice,
    check_distribution,
    check_positive_integer,
    check_ranks,
    check_sample_size,
)
from .banded_kernel import BandedKernel
from .binomial_gram import BinomialGram
from .candidates import DEFAULT_N_GROUPS, CandidateGroups
from .em import (
    DEFAULT_MAX_ITER,
    DEFAULT_TOL,
    EMProblem,
    EMResult,
    em_mixture_weights_many,
    mixture_log_likelihood,
)
from .kernels import SCHEMES, KernelCache, kernel_columns
from .mes import DEFAULT_TOL as MES_DEFAULT_TOL
from .mes import mes_objective_value, solve_mes, solve_mes_stacked
from .metrics import rank_weight
from .observations import Observations, codes_of, keys_of

__all__ = [
    "DEFAULT_C",
    "DEFAULT_ETA",
    "EM_METHODS",
    "ETA_SCALES",
    "WMLE_WEIGHTS",
    "EMTrace",
    "adaptive_mle",
    "em_estimates",
    "em_estimates_of_draws",
    "em_fits_of_checked",
    "log_likelihood",
    "mes",
    "mes_objective",
    "mle",
    "weighted_log_likelihood",
    "weighted_mle",
    "wmle_weights",
]

#: entropy weight η of MES used in the papers' experiments (AAAI'21 §Experiments; AAAI'23 §5)
DEFAULT_ETA = 1e-3
#: constant C of the WMLE weight w(r) = M(r / C) used in the AAAI'21 experiments
DEFAULT_C = 10.0
#: metric functions allowed as WMLE weights (AAAI'21, text after eq. 23)
WMLE_WEIGHTS = ("ndcg", "ap")
#: ``"paper"``: η as in AAAI'21 eq. 26; ``"code"``: η / n, which is what multiplying the
#: squared error by n (as the AAAI'23 authors' code does) amounts to
ETA_SCALES = ("paper", "code")
#: the MLE family that :func:`em_estimates` fits together, with the options of each
EM_METHODS = ("mle", "wmle", "adaptive_mle")
_EM_OPTIONS = {"mle": ("max_iter", "tol", "init", "progress"),
               "wmle": ("weight", "c", "max_iter", "tol", "init", "progress"),
               "adaptive_mle": ("max_iter", "tol", "init", "progress")}


# ----------------------------------------------------------------------------- input handling


class CheckedRanks(NamedTuple):
    """Sampled ranks that :func:`check_sampled_ranks` checked, the users' sample sizes and candidate
    groups: what the functions below take once the public entry point has checked its input."""

    ranks: np.ndarray
    sizes: np.ndarray
    groups: CandidateGroups


def check_sampled_ranks(sampled_ranks, n_items, sample_sizes, n_groups, per_user_sizes) -> CheckedRanks:
    """Checked sampled ranks, per-user sample sizes and the candidate groups of the users.

    ``n_items`` is one N or one N_u per user (grouped as in :mod:`itemsampling.candidates`);
    ``sample_sizes`` is one n, or with ``per_user_sizes`` one n_u per user (adaptive sampling).
    """
    ranks = check_ranks(sampled_ranks, np.iinfo(np.int64).max, name="sampled_ranks")
    groups = CandidateGroups.build(n_items, ranks.size, n_groups)
    n_items_u = np.broadcast_to(np.asarray(n_items), (ranks.size,))
    arr = np.asarray(sample_sizes)
    if arr.ndim == 0:
        sizes = np.full(ranks.size, check_sample_size(arr.item(), int(n_items_u.min())), dtype=np.int64)
    elif not per_user_sizes:
        raise ValueError("one sample_size is needed for all users; per-user sample sizes are supported "
                         "by method 'adaptive_mle' only")
    else:
        if arr.shape != (ranks.size,):
            raise ValueError(
                f"sample_sizes has {arr.size} entries but there are {ranks.size} sampled ranks; "
                "give one sample size per user (or a single integer)"
            )
        sizes = check_ranks(arr, n_items_u, name="sample_sizes")  # whole numbers in 1..N_u
    check_ranks(ranks, sizes, name="sampled_ranks")  # r_u <= n_u
    return CheckedRanks(ranks, sizes, groups)


def _columns(cache, n_items, sample_size, ranks, scheme):
    if cache is None:
        return kernel_columns(n_items, sample_size, ranks, scheme)
    return cache.columns(n_items, sample_size, ranks, scheme)


def _observed(sampled_ranks, n_items, sample_sizes, scheme, n_groups=DEFAULT_N_GROUPS,
              per_user_sizes=False) -> tuple[Observations, BandedKernel]:
    """Validate the input, group the users by kernel column (N_g, n_u, r_u) and compute those
    columns (:func:`_grouped_kernel`)."""
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    obs = Observations(*check_sampled_ranks(sampled_ranks, n_items, sample_sizes, n_groups, per_user_sizes))
    return obs, _grouped_kernel(obs.keys, obs.groups, None, scheme)


def _grouped_kernel(keys: np.ndarray, groups: CandidateGroups, cache, scheme: str) -> BandedKernel:
    """The kernel columns P(r | R; n, N_g) of the sorted distinct kernel columns ``keys``
    (:attr:`~itemsampling.observations.Observations.keys`), zero for R > N_g, banded per
    (N_g, n) block. One block is computed per distinct (N_g, n), only for the ranks observed in
    it, so the cost is independent of the number of users."""
    # each (group, n) block is contiguous
    starts = np.flatnonzero(np.r_[True, np.any(keys[1:, :2] != keys[:-1, :2], axis=1)])
    if starts.size == 1:  # one kernel and one n: the columns of the ranks observed
        return _banded_columns(cache, groups.max_items, int(keys[0, 1]), keys[:, 2], scheme)
    blocks = []
    for start, stop in zip(starts, np.r_[starts[1:], keys.shape[0]], strict=True):
        g, n = int(keys[start, 0]), int(keys[start, 1])
        blocks.append((int(start), _columns(cache, int(groups.kernel_items[g]), n, keys[start:stop, 2], scheme)))
    return BandedKernel.from_blocks(blocks, _n_rows(cache, groups.max_items), keys.shape[0])


def _banded_columns(cache, n_items: int, sample_size: int, ranks, scheme: str) -> BandedKernel:
    """The banded kernel columns at the sorted distinct ``ranks``: from the cache (shared by the
    estimators of the same ranks) when the kernel fits there, else computed."""
    if cache is None or not cache.fits(n_items, sample_size):
        return BandedKernel(_columns(cache, n_items, sample_size, ranks, scheme))
    return cache.observed(n_items, sample_size, ranks, scheme)


def _pooled_observations(sampled_ranks, n_items, sample_size, scheme, n_groups=DEFAULT_N_GROUPS,
                         cache=None, banded=False):
    """The user-averaged kernel K̄(r, R) = Σ_g (M_g/M) P(r | R; n, N_g) at the observed ranks
    (one term per distinct N_g).

    Returns its ``(max N_g, d)`` columns at the d distinct sampled ranks (a
    :class:`~itemsampling.banded_kernel.BandedKernel` with ``banded``) and their empirical probabilities
    P̃(r): Σ_R π_R K̄(r, R) is the expected sampled rank distribution of all the users together
    (with one N, K̄ is the ordinary kernel).
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    return _pooled_observations_of(check_sampled_ranks(sampled_ranks, n_items, sample_size, n_groups, False), scheme, cache,
                                   banded)


def _pooled_observations_of(checked: CheckedRanks, scheme: str, cache=None, banded=False):
    """:func:`_pooled_observations` of ranks already checked."""
    distinct, p_tilde = Observations(*checked).sampled_distribution
    return pooled_kernel(cache, checked.groups, int(checked.sizes[0]), distinct, scheme, banded), p_tilde


def pooled_kernel(cache, groups: CandidateGroups, n: int, ranks, scheme: str, banded: bool):
    """The user-averaged kernel K̄(r, R) = Σ_g (M_g/M) P(r | R; n, N_g) at the sorted distinct
    ``ranks``, one term per distinct N_g: the kernel of MES's fit (AAAI'21 eq. 26) and of its
    interval (a :class:`~itemsampling.banded_kernel.BandedKernel` with ``banded``)."""
    if groups.kernel_items.size == 1:
        if banded:
            return _banded_columns(cache, groups.max_items, n, ranks, scheme)
        return _columns(cache, groups.max_items, n, ranks, scheme)
    pooled = _pooled_columns(cache, groups, n, ranks, scheme)
    return BandedKernel(pooled) if banded else pooled


def binomial_gram_of(cache: KernelCache, n_items: int, sample_size: int) -> BinomialGram:
    """The :class:`~itemsampling.binomial_gram.BinomialGram` of (N, n), once per cache."""
    return cache.get(("binomial_gram", int(n_items), int(sample_size)),
                     lambda: BinomialGram(n_items, sample_size, cache.nodes(n_items)))


def _has_binomial_gram(checked: CheckedRanks, scheme: str, cache) -> bool:
    """Whether the MES Hessians take their Gram matrices from the kernel of set size 2n - 1
    (:mod:`itemsampling.binomial_gram`): the pooled kernel is one binomial kernel, and a cache
    keeps that kernel for other calls (else the band's own Gram)."""
    return cache is not None and scheme == "binomial" and checked.groups.kernel_items.size == 1


def _pooled_gram(checked: CheckedRanks, scheme: str, cache):
    """``w ↦ Kᵀ diag(w) K`` at the observed ranks (:func:`_has_binomial_gram`), or None."""
    if not _has_binomial_gram(checked, scheme, cache):
        return None
    ranks, sizes, groups = checked
    return binomial_gram_of(cache, groups.max_items, int(sizes[0])).at(np.unique(ranks)).gram


def _pooled_columns(cache, groups: CandidateGroups, n: int, ranks, scheme: str) -> np.ndarray:
    """Columns of K̄ at ``ranks``: from the whole K̄, computed once per grouping and n in the
    cache when it fits there (the same sums, entry by entry), else column by column."""

    def pool(columns, width):
        out = np.zeros((_n_rows(cache, groups.max_items), width))
        for n_g, share in zip(groups.kernel_items.tolist(), groups.kernel_fractions, strict=True):
            out[:_n_rows(cache, n_g)] += share * columns(n_g)
        return out

    if cache is None or _n_rows(cache, groups.max_items) * n * 8 > cache.max_bytes:
        return pool(lambda n_g: _columns(cache, n_g, n, ranks, scheme), len(ranks))
    key = ("pooled", tuple(groups.kernel_items.tolist()), tuple(groups.kernel_users.tolist()), n, scheme)
    return cache.get(key, lambda: pool(lambda n_g: cache.kernel(n_g, n, scheme), n))[:, np.asarray(ranks) - 1]


def _check_em_options(max_iter, tol) -> None:
    """Validate the EM options before any kernel is computed."""
    check_positive_integer("max_iter", max_iter)
    if not (isinstance(tol, (int, float, np.floating)) and np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")


def _em_problem(counts: np.ndarray, ranks: np.ndarray, max_items: int, method: str, cache=None, *,
                weight: str = "ndcg", c: float = DEFAULT_C, max_iter: int = DEFAULT_MAX_ITER, tol: float = DEFAULT_TOL,
                init=None, progress: bool = False) -> EMProblem:
    """The EM run of one MLE-family method on observations with ``counts`` users at sampled
    ``ranks`` (``progress`` is used by the caller); ``init`` must cover the estimated ranks
    1..``max_items``. On the nodes of a grid (``cache.grid``) the start is the uniform P(R)
    there, or the masses of ``init`` (:mod:`itemsampling.rank_grid`)."""
    weights = counts * wmle_weights(ranks, weight, c) if method == "wmle" else counts
    if init is not None:
        init = check_distribution(init, max_items, name="init")
    grid = None if cache is None else cache.grid
    if grid is not None:
        init = grid.uniform(max_items) if init is None else grid.masses(init)
    return EMProblem(weights, max_iter=max_iter, tol=tol, init=init)


def _n_rows(cache, n_items: int) -> int:
    """Rows of the kernels of N items: N, or the nodes of the cache's grid."""
    return int(n_items) if cache is None else cache.n_rows(n_items)


def em_estimates(sampled_ranks, n_items, sample_sizes, fits, *, scheme: str = "binomial",
                 n_groups: int | None = DEFAULT_N_GROUPS, cache: KernelCache | None = None) -> list[np.ndarray]:
    """Several MLE-family estimates of P(R) from the same sampled ranks, computed together.

    The runs share the grouped kernel and advance their EM steps together, reading the kernel
    once per step for all of them (:func:`itemsampling.em.em_mixture_weights_many`); each
    estimate is the one its own function returns, to the bit.

    Parameters
    ----------
    sampled_ranks, n_items, sample_sizes, scheme, n_groups, cache
        As in :func:`mle` (per-user ``sample_sizes`` only when every fit is ``adaptive_mle``).
    fits : sequence of (str, mapping)
        ``("mle", options)`` (:func:`mle`), ``("wmle", options)`` (:func:`weighted_mle`) or
        ``("adaptive_mle", options)`` (:func:`adaptive_mle`), with the keyword options of that
        function other than those above.

    Returns
    -------
    list of numpy.ndarray
        The estimates P̂(R), one per fit.
    """
    fits = check_fits(fits)
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    per_user = all(method == "adaptive_mle" for method, _ in fits)
    return em_estimates_of_checked(check_sampled_ranks(sampled_ranks, n_items, sample_sizes, n_groups, per_user), fits, scheme,
                            cache)


def em_estimates_of_checked(checked: CheckedRanks, fits, scheme: str, cache=None) -> list[np.ndarray]:
    """:func:`em_estimates` of ranks already checked, with fits checked by :func:`check_fits`."""
    return [trace.result.weights for trace in em_fits_of_checked(checked, fits, scheme, cache)]


class EMTrace(NamedTuple):
    """An MLE-family fit (:func:`em_fits_of_checked`): the grouped kernel and user counts of its
    observations, each user's observation (column), its observation weights c (counts, times
    w(r) for WMLE) and the :class:`~itemsampling.em.EMResult`, with the iterates of its steps
    when they were recorded."""

    kernel: BandedKernel
    counts: np.ndarray
    ranks: np.ndarray
    column_of_user: np.ndarray
    obs_weights: np.ndarray
    result: EMResult


def em_fits_of_checked(checked: CheckedRanks, fits, scheme: str, cache=None, record: bool = False,
                       observations: Observations | None = None) -> list[EMTrace]:
    """The fits of :func:`em_estimates` of ranks already checked (fits checked by
    :func:`check_fits`), with what differentiating them needs and, with ``record``, the iterates
    of every EM step: the same runs, to the bit (recording does not change the arithmetic).
    ``observations`` are the checked ranks' users grouped, when already done."""
    obs = Observations(*checked) if observations is None else observations
    kernel, ranks = _grouped_kernel(obs.keys, obs.groups, cache, scheme), obs.keys[:, 2]
    problems = [replace(_em_problem(obs.column_counts, ranks, obs.groups.max_items, method, cache, **options),
                        record=record) for method, options in fits]
    progress = any(options.get("progress", False) for _, options in fits)
    results = em_mixture_weights_many(kernel, problems, progress=progress)
    return [EMTrace(kernel, obs.column_counts, ranks, obs.column_of_user, np.asarray(problem.obs_weights, float),
                    result) for problem, result in zip(problems, results, strict=True)]


def em_estimates_of_draws(draws, n_items, sample_sizes, fits, *, scheme: str = "binomial",
                          n_groups: int | None = DEFAULT_N_GROUPS,
                          cache: KernelCache | None = None) -> list[list[np.ndarray]]:
    """:func:`em_estimates` of many draws of sampled ranks of the same users, computed together.

    The draws (e.g. the repeats of a study) share one kernel with a column for every
    observation (N_g, n, r) seen in any of them; every (draw, fit) pair is one EM run with its
    own weights (zero at the observations it lacks), and all runs advance as the columns of one
    matrix, each stopping by its own iteration cap and tolerance
    (:func:`itemsampling.em.em_mixture_weights_many` with matrix products). Each estimate equals
    :func:`em_estimates` of its draw up to rounding (the products sum in another order).

    Parameters
    ----------
    draws : sequence of array_like of int
        The sampled ranks r_u of each draw, of the same users (in the same order).
    n_items, scheme, n_groups, cache, fits
        As in :func:`em_estimates`.
    sample_sizes : int or sequence
        One n for every draw, or per draw its ``sample_sizes`` of :func:`em_estimates` (with
        per-user sizes only when every fit is ``adaptive_mle``).

    Returns
    -------
    list of list of numpy.ndarray
        Per draw, the estimates P̂(R), one per fit.
    """
    fits = check_fits(fits)
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    draws = list(draws)
    if not draws:
        raise ValueError("draws must hold at least one array of sampled ranks")
    sizes_of = [sample_sizes] * len(draws) if np.ndim(sample_sizes) == 0 else list(sample_sizes)
    if len(sizes_of) != len(draws):
        raise ValueError(f"sample_sizes names {len(sizes_of)} draws' sizes for {len(draws)} draws")
    per_user = all(method == "adaptive_mle" for method, _ in fits)
    checked = [check_sampled_ranks(ranks, n_items, sizes, n_groups, per_user) for ranks, sizes in zip(draws, sizes_of,
                                                                                              strict=True)]
    return em_estimates_of_checked_draws(checked, fits, scheme, cache)


def em_estimates_of_checked_draws(checked: Sequence[CheckedRanks], fits, scheme: str,
                           cache=None) -> list[list[np.ndarray]]:
    """:func:`em_estimates_of_draws` of draws already checked (of the same users), with fits
    checked by :func:`check_fits`."""
    groups = checked[0].groups  # the same users: the same candidate groups in every draw
    base = max(int(sizes.max()) for _, sizes, _ in checked) + 1
    codes = [codes_of(groups.kernel_index, sizes, ranks, base) for ranks, sizes, _ in checked]
    union = np.unique(np.concatenate(codes))
    counts = np.zeros((union.size, len(checked)))
    for i, draw_codes in enumerate(codes):
        np.add.at(counts[:, i], np.searchsorted(union, draw_codes), 1.0)
    keys = keys_of(union, base)
    kernel = _grouped_kernel(keys, groups, cache, scheme)
    problems = [_em_problem(counts[:, d], keys[:, 2], groups.max_items, method, cache, **options)
                for method, options in fits for d in range(len(checked))]
    results = iter(em_mixture_weights_many(kernel, problems, products="matrix"))
    by_fit = [[next(results).weights for _ in checked] for _ in fits]
    return [list(draw_fits) for draw_fits in zip(*by_fit, strict=True)]


def check_fits(fits) -> list[tuple[str, dict]]:
    """The (method, options) pairs of :func:`em_estimates`, checked before any kernel is computed."""
    fits = [(check_choice("MLE-family method", method, EM_METHODS), dict(options)) for method, options in fits]
    if not fits:
        raise ValueError("fits must name at least one (method, options) pair")
    for method, options in fits:
        unknown = sorted(set(options) - set(_EM_OPTIONS[method]))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for {method!r}; "
                             f"allowed: {', '.join(_EM_OPTIONS[method])}")
        _check_em_options(options.get("max_iter", DEFAULT_MAX_ITER), options.get("tol", DEFAULT_TOL))
        if method == "wmle":
            check_choice("WMLE weight", options.get("weight", "ndcg"), WMLE_WEIGHTS)
            _check_positive("c", options.get("c", DEFAULT_C))
    return fits


def _check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def effective_eta(eta, eta_scale: str, sample_size: int) -> float:
    """The η of MES's objective (AAAI'21 eq. 26): ``eta``, or ``eta / sample_size`` with
    ``eta_scale="code"`` (the squared error times n of the AAAI'23 authors' code)."""
    eta = _check_positive("eta", eta)
    eta_scale = check_choice("eta_scale", eta_scale, ETA_SCALES)
    return eta / sample_size if eta_scale == "code" else eta


def wmle_weights(sampled_ranks, weight: str = "ndcg", c: float = DEFAULT_C) -> np.ndarray:
    """WMLE weight w(r) = M(r / C) of each sampled rank (AAAI'21, text after eq. 23).

    ``weight="ndcg"`` gives w(r) = 1 / log2(r/C + 1), ``weight="ap"`` gives w(r) = C / r.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled ranks r.
    weight : {"ndcg", "ap"}
        Metric function M used as decay.
    c : float
        The constant C > 0 that slows the decay (the paper uses C = 10).
    """
    weight = check_choice("WMLE weight", weight, WMLE_WEIGHTS)
    c = _check_positive("c", c)
    return rank_weight(weight, np.asarray(sampled_ranks, dtype=np.float64) / c, n_items=2)


# ----------------------------------------------------------------------------- estimators

def mle(
    sampled_ranks,
    n_items,
    sample_size: int,
    *,
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    init=None,
    progress: bool = False,
    cache: KernelCache | None = None,
) -> np.ndarray:
    """Maximum-likelihood estimate of P(R) by EM (Jin et al. AAAI 2021, eq. 19–21).

    Maximises log L(π) = Σ_u log Σ_R π_R P(r_u | R) over the simplex with the EM update
    π_R ← Σ_r P̃(r) π_R P(r | R) / Σ_R' π_R' P(r | R') (eq. 21), starting from the uniform
    distribution. With per-user candidates the kernel of user u is P(r_u | R; n, N_u) (that of
    its group), and the same update maximises Σ_u log Σ_R π_R P(r_u | R; n, N_u).

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u of each user's held-out item, in 1..n.
    n_items : int or array_like of int
        Number of items N, or N_u per user (see :mod:`itemsampling.candidates`).
    sample_size : int
        Sample set size n (the target plus n - 1 sampled items), at most min N_u.
    scheme : {"binomial", "hypergeometric"}
        Rank kernel: sampling with or without replacement.
    n_groups : int or None
        Largest number of groups of users by N_u (default 20; ``None``: one per distinct N_u);
        irrelevant for a single N.
    max_iter : int
        Maximum number of EM steps. The default, 100, is what the AAAI'23 authors' code runs
        (a fixed 100 steps from the uniform start). When the number of distinct sampled ranks
        is below N the maximiser is not unique and EM approaches it very slowly; running it
        much longer fits the noise of P̃(r) and, in simulations, makes the metric estimates
        worse, so the default is also the better estimator, not just the faster one.
    tol : float
        Also stop when a step raises log L by at most ``tol * |log L|`` (default 1e-9; with
        the default ``max_iter`` this rarely triggers).
    init : array_like, optional
        Starting distribution over the estimated ranks (length N, or max N_g with per-user
        candidates); uniform by default.
    progress : bool
        Show a progress bar.
    cache : KernelCache, optional
        Kernels reused across calls (:class:`itemsampling.kernels.KernelCache`).

    Returns
    -------
    numpy.ndarray
        Estimate P̂(R), R = 1..N (R = 1..max N_g with per-user candidates).
    """
    options = {"max_iter": max_iter, "tol": tol, "init": init, "progress": progress}
    return em_estimates(sampled_ranks, n_items, sample_size, [("mle", options)], scheme=scheme,
                        n_groups=n_groups, cache=cache)[0]


def weighted_mle(
    sampled_ranks,
    n_items,
    sample_size: int,
    *,
    weight: str = "ndcg",
    c: float = DEFAULT_C,
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    init=None,
    progress: bool = False,
    cache: KernelCache | None = None,
) -> np.ndarray:
    """Weighted MLE of P(R) by EM (Jin et al. AAAI 2021, eq. 22–23).

    Maximises Σ_u w(r_u) log Σ_R π_R P(r_u | R) with w(r) = M_NDCG(r/C) = 1/log2(r/C + 1)
    (``weight="ndcg"``, the paper's choice, C = 10) or w(r) = M_AP(r/C) = C/r (``"ap"``).
    The EM update is eq. 23, eq. 21 with P̃(r) replaced by P̃(r) w(r) / Σ_r' P̃(r') w(r').

    Parameters
    ----------
    sampled_ranks, n_items, sample_size, scheme, n_groups, max_iter, tol, init, progress, cache
        As in :func:`mle`.
    weight : {"ndcg", "ap"}
        Metric function used as the decay of the weights.
    c : float
        Constant C > 0 in w(r) = M(r / C).

    Returns
    -------
    numpy.ndarray
        Estimate P̂(R).

    Notes
    -----
    Over all distributions q of the sampled rank, Σ_r P̃(r) w(r) log q(r) is maximal at
    q ∝ P̃ w, not at P̃: the weights tilt P̂(R) towards the top ranks, so WMLE estimates of
    top-K metrics are larger than the MLE ones (with the default 100 EM steps as well).
    """
    options = {"weight": weight, "c": c, "max_iter": max_iter, "tol": tol, "init": init, "progress": progress}
    return em_estimates(sampled_ranks, n_items, sample_size, [("wmle", options)], scheme=scheme,
                        n_groups=n_groups, cache=cache)[0]


def adaptive_mle(
    sampled_ranks,
    n_items,
    sample_sizes,
    *,
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    init=None,
    progress: bool = False,
    cache: KernelCache | None = None,
) -> np.ndarray:
    """MLE of P(R) when each user has its own sample size n_u (Li et al. AAAI 2023, eq. 12, App. G).

    Maximises Σ_u log Σ_R π_R P(r_u | R; n_u) by EM: φ_uR = π_R P(r_u | R; n_u) / Σ_R' (...),
    π_R ← (1/M) Σ_u φ_uR (App. G eq. 21–22). Users are grouped by (N_g, n_u, r_u); with a
    single sample size this is exactly :func:`mle`.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u, in 1..n_u.
    n_items : int or array_like of int
        Number of items N, or N_u per user (as in :func:`mle`).
    sample_sizes : int or array_like of int
        Sample set size n_u of each user (e.g. from adaptive sampling, AAAI'23 Algorithm 1),
        or one size for all users.
    scheme, n_groups, max_iter, tol, init, progress, cache
        As in :func:`mle` (the AAAI'23 authors' adaptive script runs 50 EM steps; the default
        here is 100, as for :func:`mle`, so that both agree when all n_u are equal).

    Returns
    -------
    numpy.ndarray
        Estimate P̂(R).
    """
    options = {"max_iter": max_iter, "tol": tol, "init": init, "progress": progress}
    return em_estimates(sampled_ranks, n_items, sample_sizes, [("adaptive_mle", options)], scheme=scheme,
                        n_groups=n_groups, cache=cache)[0]


def mes(
    sampled_ranks,
    n_items,
    sample_size: int,
    *,
    eta: float = DEFAULT_ETA,
    eta_scale: str = "paper",
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
    tol: float = MES_DEFAULT_TOL,
    max_iter: int = 500,
    cache: KernelCache | None = None,
) -> np.ndarray:
    """Maximal entropy with minimal distribution bias (Jin et al. AAAI 2021, eq. 24–27).

    Solves min_π Σ_r P̃(r) (Σ_R P(r | R) π_R − P̃(r))² − η H(π) over the simplex, with
    H(π) = −Σ_R π_R log π_R (natural log), exactly (to a certified duality gap) by Newton's
    method on the d-dimensional dual (see :mod:`itemsampling.mes`). With per-user candidates
    P(r | R) is the user-averaged kernel Σ_g (M_g/M) P(r | R; n, N_g), so that Σ_R P(r | R) π_R
    is the expected sampled rank distribution of all the users.

    Parameters
    ----------
    sampled_ranks, n_items, sample_size, scheme, n_groups, cache
        As in :func:`mle`.
    eta : float
        Entropy weight η > 0 (default 0.001, the value used in AAAI'21 and AAAI'23).
    eta_scale : {"paper", "code"}
        ``"paper"`` uses η as given (eq. 26). ``"code"`` uses η / n: the AAAI'23 authors'
        code multiplies the squared error by n, which has the same minimiser as dividing η
        by n. (That code also uses an entropy weight of 0.01 rather than the 0.001 stated in
        both papers, so ``eta=0.01, eta_scale="code"`` reproduces it.)
    tol : float
        Relative duality gap at which the solver stops (default 1e-10).
    max_iter : int
        Maximum number of Newton steps.

    Returns
    -------
    numpy.ndarray
        Estimate P̂(R) (strictly positive).
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    return mes_of_checked(check_sampled_ranks(sampled_ranks, n_items, sample_size, n_groups, False), scheme, cache=cache, eta=eta,
                   eta_scale=eta_scale, tol=tol, max_iter=max_iter)


def mes_of_checked(checked: CheckedRanks, scheme: str, *, cache=None, eta: float = DEFAULT_ETA, eta_scale: str = "paper",
            tol: float = MES_DEFAULT_TOL, max_iter: int = 500) -> np.ndarray:
    """:func:`mes` of ranks already checked (its options are checked here)."""
    _check_mes_options(eta, eta_scale, tol, max_iter)
    kernel, p_tilde = _pooled_observations_of(checked, scheme, cache, banded=True)
    eta = effective_eta(eta, eta_scale, int(checked.sizes[0]))
    return solve_mes(kernel, p_tilde, eta, tol=tol, max_iter=max_iter, gram=_pooled_gram(checked, scheme, cache),
                     base=_base(cache, checked.groups.max_items)).weights


def mes_of_checked_draws(checked: Sequence[CheckedRanks], scheme: str, *, cache=None, eta: float = DEFAULT_ETA,
                  eta_scale: str = "paper", tol: float = MES_DEFAULT_TOL, max_iter: int = 500) -> list[np.ndarray]:
    """:func:`mes` of many draws of sampled ranks of the same users with one n, solved together
    (:func:`~itemsampling.mes.solve_mes_stacked`) on the pooled kernel at every rank observed in
    any draw; each estimate equals :func:`mes` of its draw up to rounding."""
    _check_mes_options(eta, eta_scale, tol, max_iter)
    sizes = {int(c.sizes[0]) for c in checked}
    if len(sizes) != 1 or any(np.ndim(c.sizes) and np.any(c.sizes != c.sizes[0]) for c in checked):
        raise ValueError(f"the draws of a stacked MES need one sample size, got {sorted(sizes)}")
    n, groups = sizes.pop(), checked[0].groups
    union = np.unique(np.concatenate([c.ranks for c in checked]))
    p_tilde = np.zeros((union.size, len(checked)))
    ranks_of = []  # the distinct ranks of each draw
    for b, c in enumerate(checked):
        distinct, counts = np.unique(c.ranks, return_counts=True)
        p_tilde[np.searchsorted(union, distinct), b] = counts / c.ranks.size
        ranks_of.append(distinct)
    kernel = pooled_kernel(cache, groups, n, union, scheme, banded=True)
    gram = None
    if _has_binomial_gram(checked[0], scheme, cache):
        binomial = binomial_gram_of(cache, groups.max_items, n)

        def gram(pis, which):  # one product for all the draws; each Gram matrix only when its step is taken
            wide = binomial.doubled_products(pis)
            return (binomial.at(ranks_of[b]).from_doubled(wide[:, i]) for i, b in enumerate(which))

    eta = effective_eta(eta, eta_scale, n)
    return [r.weights for r in solve_mes_stacked(kernel, p_tilde, eta, tol=tol, max_iter=max_iter, gram=gram,
                                                 base=_base(cache, groups.max_items))]


def _base(cache, n_items: int) -> np.ndarray | None:
    """The ranks each row stands for (MES's entropy on a grid's nodes), None on the ranks 1..N."""
    return None if cache is None or cache.grid is None else cache.grid.weights[: cache.n_rows(n_items)]


def _check_mes_options(eta, eta_scale: str, tol, max_iter) -> None:
    _check_positive("tol", tol)
    check_positive_integer("max_iter", max_iter)
    check_choice("eta_scale", eta_scale, ETA_SCALES)
    _check_positive("eta", eta)


# ----------------------------------------------------------------------------- objectives


def log_likelihood(distribution, sampled_ranks, n_items, sample_size, *, scheme: str = "binomial",
                   n_groups: int | None = DEFAULT_N_GROUPS) -> float:
    """Log-likelihood Σ_u log Σ_R π_R P(r_u | R; n_u, N_u) of a distribution π (AAAI'21 eq. 19).

    ``sample_size`` may be one n for all users or an array of n_u (AAAI'23 eq. 12), and
    ``n_items`` one N or N_u per user; this is the objective that :func:`mle` and
    :func:`adaptive_mle` maximise.
    """
    obs, kernel = _observed(sampled_ranks, n_items, sample_size, scheme, n_groups, per_user_sizes=True)
    pi = check_distribution(distribution, obs.groups.max_items, name="distribution")
    return mixture_log_likelihood(pi, kernel, obs.column_counts)


def weighted_log_likelihood(
    distribution,
    sampled_ranks,
    n_items,
    sample_size: int,
    *,
    weight: str = "ndcg",
    c: float = DEFAULT_C,
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
) -> float:
    """Weighted log-likelihood Σ_u w(r_u) log Σ_R π_R P(r_u | R) (AAAI'21 eq. 22).

    The objective that :func:`weighted_mle` maximises; see :func:`wmle_weights` for w(r).
    """
    obs, kernel = _observed(sampled_ranks, n_items, sample_size, scheme, n_groups)
    pi = check_distribution(distribution, obs.groups.max_items, name="distribution")
    return mixture_log_likelihood(pi, kernel, obs.column_counts * wmle_weights(obs.keys[:, 2], weight, c))


def mes_objective(
    distribution,
    sampled_ranks,
    n_items,
    sample_size: int,
    *,
    eta: float = DEFAULT_ETA,
    eta_scale: str = "paper",
    scheme: str = "binomial",
    n_groups: int | None = DEFAULT_N_GROUPS,
) -> float:
    """MES objective Σ_r P̃(r) (Σ_R P(r | R) π_R − P̃(r))² − η H(π) (AAAI'21 eq. 25–26).

    The value that :func:`mes` minimises (the negative of the paper's eq. 26 objective, which
    is maximised), with η rescaled as in :func:`mes` for ``eta_scale="code"``.
    """
    kernel, p_tilde = _pooled_observations(sampled_ranks, n_items, sample_size, scheme, n_groups)
    pi = check_distribution(distribution, kernel.shape[0], name="distribution")
    eta = effective_eta(eta, eta_scale, sample_size)
    return mes_objective_value(pi, kernel, p_tilde, eta)
