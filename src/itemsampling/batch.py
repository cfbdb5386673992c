"""The sampled ranks of one call, checked once, with the fits and operators its estimators need.

:class:`Batch` is what :mod:`itemsampling.estimators` computes every estimate with and what
:mod:`itemsampling.intervals` linearises or refits on resampled users: the users' sampled ranks,
sample sizes and candidate groups (checked by :func:`itemsampling.distributions.check_sampled_ranks`),
the kernels shared through a :class:`~itemsampling.kernels.KernelCache`, the fitted P̂(R) of the
rank-distribution methods (AAAI'21 eq. 19–27; AAAI'23 eq. 12) and the BV and MN operators built
on them (KDD'20 eq. 24–26; AAAI'23 eq. 10–11). :class:`Estimator` names one estimator: a method of
:data:`METHODS` with its options.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from . import corrections, distributions
from ._validation import check_choice, check_distribution, check_positive_integer
from .banded_kernel import BandedKernel
from .corrections import LinearCorrection
from .kernels import SCHEMES, KernelCache
from .metrics import rank_weight
from .observations import Observations
from .rank_grid import choose_grid

__all__ = ["DIRECT_METHODS", "METHODS", "M_SCOPES", "RANK_DISTRIBUTION_METHODS", "Batch", "Estimator",
           "method_options", "top_rank"]

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
#: options every method accepts; they describe the sampling (and the grid of global ranks), not
#: the estimator
_COMMON = ("scheme", "n_groups", "grid")
#: methods that define an estimate of the rank distribution P(R)
RANK_DISTRIBUTION_METHODS = tuple(m for m in METHODS if m not in ("sampled", "rank_estimate", "cls"))
#: methods that fit P̂(R) directly
DIRECT_METHODS = ("mle", "wmle", "mes", "adaptive_mle")


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


class Batch:
    """Sampled ranks checked once (:func:`~itemsampling.distributions.check_sampled_ranks`), with
    the fits of P̂(R) and the operators their estimators need, each computed once: ``values``
    gives an estimator's estimates, ``refit`` those on resampled users; the pieces an interval
    linearises (``counts``, ``weights``, ``mean_weights``, ``prior_fit``, ``operator``,
    ``correction``) are public."""

    def __init__(self, checked: distributions.CheckedRanks, sizes, n_items, scheme: str, n_groups,
                 cache: KernelCache):
        self.checked = checked  # the input, checked once: the fits below take it as it is
        self.ranks, self.groups, self.sizes = checked.ranks, checked.groups, sizes
        self.n_items, self.scheme, self.n_groups, self.cache = n_items, scheme, n_groups, cache
        self.grid = cache.grid  # the rows of every kernel and fit: ranks 1..N, or a grid's nodes
        self._fits: dict = {}

    @classmethod
    def build(cls, sampled_ranks, n_items, sample_size, scheme, n_groups, cache, per_user_sizes=False, *,
              grid: str = "exact", top: int = 0) -> Batch:
        """The batch of checked ranks, on the grid that ``grid`` names (:func:`~itemsampling.rank_grid.choose_grid`,
        exact ranks up to the largest cut-off ``top`` at least)."""
        scheme = check_choice("sampling scheme", scheme, SCHEMES)
        checked = distributions.check_sampled_ranks(sampled_ranks, n_items, sample_size, n_groups, per_user_sizes)
        per_user = checked.sizes
        if per_user.min() < 2:
            raise ValueError(
                "sample_size must be >= 2 (and <= n_items): with n = 1 every sampled rank is 1 and "
                "carries no information"
            )
        sizes = int(per_user[0]) if np.ndim(sample_size) == 0 else per_user
        chosen = choose_grid(grid, checked.groups.max_items, int(per_user.max()), top, checked.groups.kernel_items)
        return cls(checked, sizes, n_items, scheme, n_groups, cache.on(chosen))

    @cached_property
    def observations(self) -> Observations:
        """The users grouped by kernel column, by observation and by sampled rank
        (:class:`~itemsampling.observations.Observations`), shared by the fits and the intervals."""
        return Observations(*self.checked)

    def refit(self, users: np.ndarray, estimators: Sequence[Estimator], pairs) -> np.ndarray:
        """Estimates ``(E, m)`` of ``estimators`` on the users ``users`` of this batch (indices,
        with repeats: a bootstrap resample), with this batch's kernels; every user keeps its own
        N_g, so the resample keeps the candidate groups."""
        groups = self.groups
        n_items = self.n_items if np.ndim(self.n_items) == 0 else groups.n_items[groups.index][users]
        sizes = self.sizes if np.ndim(self.sizes) == 0 else self.sizes[users]
        checked = distributions.CheckedRanks(self.ranks[users], self.checked.sizes[users], groups.of_users(users))
        resampled = Batch(checked, sizes, n_items, self.scheme, None, self.cache)  # checked once, by build
        resampled.fit_priors(estimators)
        return np.vstack([resampled.values(e, pairs) for e in estimators])

    def prior_fit_of(self, est: Estimator) -> Estimator:
        """The fit of P̂(R) behind a BV or MN estimator with a fitted prior (``bv_mle`` ...
        ``mn_mes``), with the options of ``est`` that the fit accepts."""
        _, _, prior_method = est.method.partition("_")
        own = method_options(prior_method)
        return Estimator(prior_method, {k: v for k, v in est.options.items() if k in own})

    # -------------------------------------------------------------- shared pieces

    def counts(self) -> np.ndarray:
        """``(G, n)`` number of users of each group at each sampled rank."""
        key = "counts"
        if key not in self._fits:
            counts = np.zeros((self.groups.n_groups, self.sizes))
            np.add.at(counts, (self.groups.index, self.ranks - 1), 1.0)
            self._fits[key] = counts
        return self._fits[key]

    def weights(self, g: int, pairs) -> np.ndarray:
        """Target weights 1{R <= K} M(R) of group g, for R = 1..L (L: largest cut-off, N_g if none)."""
        n_g = int(self.groups.n_items[g])
        return self.cache.get(("weights", n_g, tuple(pairs)),
                              lambda: _target_weights(pairs, n_g, self.cache.nodes(top_rank(pairs, n_g))))

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

    def fit_priors(self, estimators: Sequence[Estimator], record: bool = False) -> None:
        """Fit the MLE-family P̂(R) that ``estimators`` need, all together
        (:func:`~itemsampling.distributions.em_fits_of_checked`: one kernel, one pass per EM step),
        keeping each fit's EM steps with ``record`` (for :meth:`em_trace`)."""
        todo = self.em_fits_needed(estimators)
        if todo:
            traces = distributions.em_fits_of_checked(
                self.checked, distributions.check_fits([(e.method, e.options) for e in todo.values()]),
                self.scheme, self.cache, record=record, observations=self.observations)
            for key, trace in zip(todo, traces, strict=True):
                self._fits[key] = trace.result.weights
                if record:
                    self._fits[("trace", *key)] = trace

    def em_trace(self, est: Estimator) -> distributions.EMTrace:
        """The fit of an MLE-family ``est`` with its EM steps: the one :meth:`fit_priors` recorded,
        else a run of its own (the same arithmetic as the fit, to the bit)."""
        key = ("trace", est.method, _freeze(est.options))
        if key not in self._fits:
            self._fits[key] = distributions.em_fits_of_checked(
                self.checked, distributions.check_fits([(est.method, est.options)]), self.scheme, self.cache,
                record=True, observations=self.observations)[0]
        return self._fits[key]

    def prior_fit(self, est: Estimator) -> np.ndarray:
        """The fitted P̂(R) of a direct method, once per call for the same options."""
        key = (est.method, _freeze(est.options))
        if np.ndim(self.sizes) and est.method != "adaptive_mle":
            raise ValueError(f"method {est.method!r} needs one sample_size for all users; per-user sample "
                             "sizes are supported by method 'adaptive_mle' only")
        if key not in self._fits and est.method == "mes":
            self._fits[key] = distributions.mes_of_checked(self.checked, self.scheme, cache=self.cache, **est.options)
        elif key not in self._fits:
            self.fit_priors([est])
        return self._fits[key]

    def _given_prior(self, prior, g: int) -> np.ndarray | None:
        """A user-given prior on 1..max N_g, restricted to group g's ranks 1..N_g."""
        if prior is None:
            return None
        prior = check_distribution(prior, self.groups.max_items, name="prior")
        part = _restrict(prior, int(self.groups.n_items[g]))
        return part if self.grid is None else self.grid.masses(part)

    def operator(self, est: Estimator, g: int) -> tuple[LinearCorrection, tuple | None]:
        """The BV or MN operator of group g, with the prior the method names, and its cache key
        (None when the prior was fitted to this call's ranks)."""
        family, _, prior_method = est.method.partition("_")
        n_g, n = int(self.groups.n_items[g]), self.sizes
        if prior_method:
            prior_est = _prior_estimator(est)
            opts = {k: v for k, v in est.options.items() if k not in prior_est.options}
            prior = _restrict(self.prior_fit(prior_est), self.cache.n_rows(n_g))
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

        base = None if self.grid is None else self.grid.weights[: self.cache.n_rows(n_g)]

        def build():
            kernel = self.cache.kernel(n_g, n, self.scheme)
            gram = self._gram(g, prior, gram_key)
            if family == "bv":
                return corrections.bv_operator(n_g, n, scheme=self.scheme, prior=prior, kernel=kernel, gram=gram,
                                               base=base, **opts)
            spread = self.cache.get(("spread", n_g, n, self.scheme),
                                    lambda: corrections.variance_gram(kernel, banded=self._banded(g), base=base))
            return corrections.mn_operator(n_g, n, scheme=self.scheme, prior=prior, kernel=kernel, gram=gram,
                                           spread=spread, base=base, **opts)  # opts holds n_users

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
        p = self.cache.uniform(n_g) if prior is None else prior

        def build():
            if self.scheme == "binomial":  # one product with the kernel of set size 2n - 1
                return distributions.binomial_gram_of(self.cache, n_g, n).gram(p)
            return corrections.weighted_gram(self.cache.kernel(n_g, n, self.scheme), p, banded=self._banded(g))

        if memo is None:
            return self.cache.get(("gram", n_g, n, self.scheme, _digest(prior)), build)
        if memo not in self._fits:
            self._fits[memo] = build()
        return self._fits[memo]

    def correction(self, est: Estimator, g: int, pairs) -> np.ndarray:
        """M̂ of group g for every (metric, K), shape (n, m): cached across calls when the
        correction does not depend on the sampled ranks, kept for this call when its prior was
        fitted to them."""
        n_g, n, method = int(self.groups.n_items[g]), self.sizes, est.method
        targets = tuple(pairs)
        if method == "sampled":
            return self.cache.get(("sampled", n, targets), lambda: corrections.sampled(pairs, n))
        if method == "rank_estimate":  # the metric at one estimated rank: on the ranks themselves
            return self.cache.get(("rank_estimate", n_g, n, targets),
                                  lambda: corrections.rank_estimate(_target_weights(pairs, n_g), n_g, n))
        if method == "cls" and self.grid is not None:
            raise ValueError(f"method 'cls' solves on the exact global ranks (N = {n_g}); pass grid='exact'")
        if method == "cls":
            prior = self._given_prior(est.options.get("prior"), g)
            return self.cache.get(
                ("cls", n_g, n, self.scheme, targets, _digest(prior)),
                lambda: corrections.cls(self.weights(g, pairs), n_g, n, prior=prior, scheme=self.scheme,
                                        kernel=self.cache.kernel(n_g, n, self.scheme)))
        operator, key = self.operator(est, g)
        if key is None:  # a prior fitted to this call's ranks: kept for this call only
            memo = ("applied", est.method, _freeze(est.options), g, targets)
            if memo not in self._fits:
                self._fits[memo] = operator.apply(self.weights(g, pairs))
            return self._fits[memo]
        return self.cache.get(("applied", *key, targets), lambda: operator.apply(self.weights(g, pairs)))

    # -------------------------------------------------------------- results

    def values(self, est: Estimator, pairs) -> np.ndarray:
        """Estimates of every (metric, K) of ``pairs``, shape (m,)."""
        if est.method in DIRECT_METHODS:
            p_hat = self.prior_fit(est)
            return p_hat[: self.top_rows(pairs)] @ self.mean_weights(pairs)
        if np.ndim(self.sizes):
            raise ValueError(f"method {est.method!r} needs one sample_size for all users; per-user "
                             "sample sizes are supported by method 'adaptive_mle' only")
        counts = self.counts()
        if _prior_estimator(est) is None:
            total = sum(counts[g] @ self.correction(est, g, pairs) for g in range(self.groups.n_groups))
        else:  # an operator built for these ranks: Σ_r c(r) M̂(r) with one solve per group
            total = sum(self.operator(est, g)[0].estimate(counts[g], self.weights(g, pairs))
                        for g in range(self.groups.n_groups))
        return total / self.ranks.size

    def mean_weights(self, pairs) -> np.ndarray:
        """Σ_g (M_g/M) weights of group g, zero-padded to the longest: the metric weight of
        global rank R averaged over the users (it differs between groups only for AUC and for
        metrics without cut-off, whose weights stop at N_g)."""
        out = np.zeros((self.top_rows(pairs), len(pairs)))
        for g, share in enumerate(self.groups.fractions):
            w = self.weights(g, pairs)
            out[: w.shape[0]] += share * w
        return out

    def top_rows(self, pairs) -> int:
        """The rows that the metrics of ``pairs`` weigh: the ranks up to the largest cut-off (all
        with one without), or the grid's nodes there."""
        top = top_rank(pairs, self.groups.max_items)
        return top if self.grid is None else self.grid.rows(top)

    def rank_distribution(self, est: Estimator) -> np.ndarray:
        """P̂(R) for R = 1..max N_g (AAAI'21 eq. 15 for BV and MN), spread from the nodes of the
        grid to the ranks (:meth:`~itemsampling.rank_grid.RankGrid.expand`) on a grid."""
        if est.method in DIRECT_METHODS:
            out = self.prior_fit(est)
        else:
            counts = self.counts()
            out = np.zeros(self.cache.n_rows(self.groups.max_items))
            for g in range(self.groups.n_groups):
                part = self.operator(est, g)[0].rank_distribution(counts[g] / counts[g].sum())
                out[: part.size] += self.groups.fractions[g] * part
        return out if self.grid is None else self.grid.expand(out)


def _prior_estimator(est: Estimator) -> Estimator | None:
    """The direct fit of P̂(R) that ``est`` uses: itself for ``mle`` ... ``adaptive_mle``, the
    prior of ``bv_mle`` ... ``mn_mes`` (with the options that belong to it), else None."""
    if est.method in DIRECT_METHODS:
        return est
    family, _, prior_method = est.method.partition("_")
    if family not in ("bv", "mn") or not prior_method:
        return None
    own = set(_OPTIONS[prior_method])
    return Estimator(prior_method, {k: v for k, v in est.options.items() if k in own})


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


def top_rank(pairs, n_items: int) -> int:
    """The largest rank any (metric, K) of ``pairs`` weighs: the largest cut-off, N if one has none."""
    cutoffs = [k for _, k in pairs]
    return n_items if None in cutoffs else min(n_items, max(cutoffs))


def _target_weights(pairs, n_items: int, nodes=None) -> np.ndarray:
    """(L, m) weights 1{R <= K} M(R) for R = 1..L, with L the largest cut-off (N if none), or at
    a grid's ``nodes`` of those ranks (a node's weight is the metric at its position: the
    quadrature of the sum over the ranks it stands for)."""
    ranks = np.arange(1, top_rank(pairs, n_items) + 1) if nodes is None else nodes
    return np.column_stack([rank_weight(metric, ranks, n_items, k) for metric, k in pairs])
