"""Estimate global top-K metrics from item-sampled ranks: the public entry points.

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
- ``eta``, ``eta_scale``: MES entropy weight η (default 0.001) and its scale, ``"paper"`` (η as
  in AAAI'21 eq. 26) or ``"code"`` (η/n, as the AAAI'23 code's n-times squared error amounts to).
- ``weight``, ``c``: WMLE weight w(r) = M(r/C), ``"ndcg"`` or ``"ap"``, C = 10.
- ``max_iter``, ``tol``: iteration cap and tolerance of EM (MLE family) or of the MES solver.
- ``init``, ``progress``: EM start distribution and progress bar (MLE family).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from . import corrections, distributions
from ._validation import (
    check_choice,
    check_distribution,
    check_n_items,
    check_ranks,
    check_sample_size,
)
from .corrections import LinearCorrection
from .kernels import SCHEMES
from .metrics import canonical_metric, rank_weight

__all__ = ["METHODS", "RANK_DISTRIBUTION_METHODS", "estimate", "method_options", "rank_distribution"]

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
    "mn": ("n_users", "prior"),
    "mle": _MLE,
    "wmle": ("weight", "c", *_MLE),
    "mes": _MES,
    "bv_mle": ("gamma", *_MLE),
    "bv_mes": ("gamma", *_MES),
    "mn_mle": ("n_users", *_MLE),
    "mn_mes": ("n_users", *_MES),
    "adaptive_mle": _MLE,
}
#: methods that define an estimate of the rank distribution P(R)
RANK_DISTRIBUTION_METHODS = tuple(m for m in METHODS if m not in ("sampled", "rank_estimate", "cls"))
_LINEAR = ("bv", "mn", "bv_mle", "bv_mes", "mn_mle", "mn_mes")


def method_options(method: str) -> tuple[str, ...]:
    """Names of the keyword options that ``method`` accepts (always including ``scheme``)."""
    method = check_choice("method", method, METHODS)
    return tuple(sorted(("scheme", *_OPTIONS[method])))


def rank_distribution(sampled_ranks, n_items: int, sample_size, method: str = "mle",
                      **opts) -> np.ndarray:
    """Estimate the global rank distribution P(R), R = 1..N, from sampled ranks.

    ``mle``, ``wmle``, ``mes`` and ``adaptive_mle`` estimate P(R) directly (Jin et al.,
    AAAI 2021, eq. 19–27; Li et al., AAAI 2023, eq. 12). The BV and MN methods give
    P̂(R) = Σ_r P̃(r) W[r, R] from their linear correction W (AAAI'21 eq. 15); it sums to one
    but can have negative entries.

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u of each user's held-out item, in 1..n.
    n_items : int
        Number of items N.
    sample_size : int or array_like of int
        Sample set size n (the target plus n - 1 sampled items), 2 <= n <= N; for
        ``adaptive_mle`` one n_u per user.
    method : str
        One of :data:`RANK_DISTRIBUTION_METHODS`.
    **opts
        Options of the method (see the module docstring and :func:`method_options`).

    Returns
    -------
    numpy.ndarray
        Shape ``(N,)``.
    """
    method = check_choice("method", method, METHODS)
    if method not in RANK_DISTRIBUTION_METHODS:
        raise ValueError(
            f"method {method!r} corrects each metric separately and does not define a rank "
            f"distribution P(R); methods that do: {', '.join(RANK_DISTRIBUTION_METHODS)}"
        )
    problem = _Problem.build(sampled_ranks, n_items, sample_size, method, opts)
    if method in _LINEAR:
        return problem.operator().rank_distribution(problem.p_tilde())
    return problem.direct_distribution()


def estimate(
    sampled_ranks,
    n_items: int,
    sample_size,
    method: str = "mn_mes",
    metrics: Sequence[str] | str = ("recall", "ndcg", "ap"),
    ks: Iterable[int | None] | int | None = range(1, 51),
    **opts,
) -> pd.DataFrame:
    """Estimate global ``metric@K`` for many metrics and cut-offs from sampled ranks.

    One estimate of P(R) (for the rank-distribution methods) or one linear operator (for BV and
    MN) serves every metric and every K; ``cls`` solves one small problem per (metric, K).

    Parameters
    ----------
    sampled_ranks : array_like of int
        1-based sampled rank r_u of each user's held-out item, in 1..n.
    n_items : int
        Number of items N.
    sample_size : int or array_like of int
        Sample set size n, 2 <= n <= N; for ``adaptive_mle`` one n_u per user.
    method : str
        One of :data:`METHODS` (default ``"mn_mes"``).
    metrics : str or sequence of str
        Metric names: ``recall`` (= hit ratio), ``precision``, ``ndcg``, ``ap`` (= reciprocal
        rank), ``auc``.
    ks : int, None or iterable
        Cut-offs K (positive integers; ``None`` for no cut-off).
    **opts
        Options of the method (see the module docstring and :func:`method_options`).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k`` (nullable integer) and ``estimate``, one row per (metric, K)
        in the order given.

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
    pairs = _metric_k_pairs(metrics, ks)
    problem = _Problem.build(sampled_ranks, n_items, sample_size, method, opts)
    if method == "sampled":
        values = problem.p_tilde() @ corrections.sampled(pairs, problem.sample_size)
    else:
        weights = _target_weights(pairs, problem.n_items)
        if method in _LINEAR:
            values = problem.p_tilde() @ problem.operator().apply(weights)
        elif method == "rank_estimate":
            values = problem.p_tilde() @ corrections.rank_estimate(
                weights, problem.n_items, problem.sample_size)
        elif method == "cls":
            values = problem.p_tilde() @ corrections.cls(
                weights, problem.n_items, problem.sample_size, **problem.opts)
        else:
            values = problem.direct_distribution()[: weights.shape[0]] @ weights
    out = pd.DataFrame({"metric": [m for m, _ in pairs], "k": [k for _, k in pairs],
                        "estimate": values})
    out["k"] = out["k"].astype("Int64")
    return out


class _Problem:
    """Validated input of one estimation: ranks, sizes, scheme and the method's options."""

    def __init__(self, ranks, n_items, sample_size, method, scheme, opts):
        self.ranks = ranks
        self.n_items = n_items
        self.sample_size = sample_size
        self.method = method
        self.scheme = scheme
        self.opts = opts

    @classmethod
    def build(cls, sampled_ranks, n_items, sample_size, method, opts) -> _Problem:
        allowed = method_options(method)
        unknown = sorted(set(opts) - set(allowed))
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for method {method!r}; "
                f"allowed: {', '.join(allowed)}"
            )
        opts = dict(opts)
        scheme = check_choice("sampling scheme", opts.pop("scheme", "binomial"), SCHEMES)
        n_items = check_n_items(n_items)
        sizes = _check_sizes(sample_size, n_items, method)
        ranks = check_ranks(sampled_ranks, n_items, name="sampled_ranks")
        if np.ndim(sizes) == 1 and sizes.size != ranks.size:
            raise ValueError(
                f"sample_size has {sizes.size} entries but there are {ranks.size} sampled ranks; "
                "give one sample size per user (or a single integer)"
            )
        check_ranks(ranks, sizes, name="sampled_ranks")  # r_u <= n_u
        if "prior" in opts:
            opts["prior"] = check_distribution(opts["prior"], n_items, name="prior")
        return cls(ranks, n_items, sizes, method, scheme, opts)

    def p_tilde(self) -> np.ndarray:
        """Empirical sampled rank distribution P̃(r)."""
        return np.bincount(self.ranks - 1, minlength=self.sample_size) / self.ranks.size

    def direct_distribution(self) -> np.ndarray:
        """P̂(R) of ``mle``, ``wmle``, ``mes`` or ``adaptive_mle``."""
        estimators = {"mle": distributions.mle, "wmle": distributions.weighted_mle,
                      "mes": distributions.mes, "adaptive_mle": distributions.adaptive_mle}
        return estimators[self.method](self.ranks, self.n_items, self.sample_size,
                                       scheme=self.scheme, **self.opts)

    def operator(self) -> LinearCorrection:
        """The BV or MN operator, with the prior the method names."""
        family, _, prior_method = self.method.partition("_")
        opts = dict(self.opts)
        if prior_method:
            own = set(_OPTIONS[prior_method])
            prior_opts = {k: opts.pop(k) for k in list(opts) if k in own}
            prior = _Problem(self.ranks, self.n_items, self.sample_size, prior_method,
                             self.scheme, prior_opts).direct_distribution()
            opts["prior"] = prior / prior.sum()
        if family == "bv":
            return corrections.bv_operator(self.n_items, self.sample_size, scheme=self.scheme,
                                           **opts)
        n_users = opts.pop("n_users", self.ranks.size)
        return corrections.mn_operator(self.n_items, self.sample_size, n_users,
                                       scheme=self.scheme, **opts)


def _check_sizes(sample_size, n_items: int, method: str):
    if np.ndim(sample_size) == 0:
        n = check_sample_size(sample_size, n_items)
        if n < 2:
            raise ValueError(
                f"sample_size must be >= 2 (and <= n_items = {n_items}): with n = 1 every "
                "sampled rank is 1 and carries no information"
            )
        return n
    if method != "adaptive_mle":
        raise ValueError(
            f"method {method!r} needs one sample_size for all users; per-user sample sizes "
            "are supported by method 'adaptive_mle' only"
        )
    sizes = check_ranks(sample_size, n_items, name="sample_size")
    if sizes.min() < 2:
        raise ValueError(f"every sample_size must lie in 2..n_items (N = {n_items}), found {sizes.min()}")
    return sizes


def _metric_k_pairs(metrics, ks) -> list[tuple[str, int | None]]:
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    ks = [ks] if ks is None or isinstance(ks, (int, np.integer)) else list(ks)
    if not metrics or not ks:
        raise ValueError("metrics and ks must each name at least one value")
    for k in ks:
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"cut-offs k must be positive integers or None (no cut-off), got {k!r}")
    names = [canonical_metric(m) for m in metrics]
    if "precision" in names and None in ks:
        raise ValueError("precision needs a cut-off k (precision@K = 1{R <= K} / K)")
    return [(name, None if k is None else int(k)) for name in names for k in ks]


def _target_weights(pairs, n_items: int) -> np.ndarray:
    """(L, m) weights 1{R <= K} M(R) for R = 1..L, with L the largest cut-off (N if none)."""
    cutoffs = [k for _, k in pairs]
    top = n_items if None in cutoffs else min(n_items, max(cutoffs))
    ranks = np.arange(1, top + 1)
    return np.column_stack([rank_weight(metric, ranks, n_items, k) for metric, k in pairs])
