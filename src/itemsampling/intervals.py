"""Confidence intervals for estimated global metrics, and their coverage over repeats.

A practitioner has the sampled ranks r_u of M users and wants the global ``metric@K`` of those
users, θ = (1/M) Σ_u 1{R_u <= K} M(R_u). Every estimator of :mod:`itemsampling.estimators` is
a function θ̂ = T(c) of the numbers of users c_o at each observation o = (group of N_u,
sample size, sampled rank). Its interval comes from the per-user *influence values*
ψ_u = M ∂T/∂c_{o(u)}: to first order θ̂ is the mean of ψ_u over the users, so

    se² = Σ_u (ψ_u − ψ̄_{g(u)})² / (M (M − G)),    interval  θ̂ ± z_{(1+level)/2} se,

with ψ̄_g the mean over the users of candidate group g (G groups; users are resampled within
their group, because N_u is known and not random). This is the infinitesimal jackknife
(Jaeckel 1972; Efron 1982, ch. 6), the linearisation of the bootstrap over users.

=========================== ==============================================================
estimator                   ψ_u
=========================== ==============================================================
``sampled``,                the corrected metric M̂_g(r_u) of the user's group: the estimate
``rank_estimate``, ``cls``, is a mean over users and the interval is the central limit
``bv``, ``mn``              theorem, exact in cost (KDD'20 eq. 20, 21, 25; AAAI'23 eq. 11)
``mle``, ``wmle``,          derivative of the estimate through the EM steps actually run
``adaptive_mle``            (reverse mode; AAAI'21 eq. 21, 23; AAAI'23 App. G eq. 22)
``mes``                     implicit function theorem on the optimality conditions of the
                            dual problem (AAAI'21 eq. 26-27; :mod:`itemsampling.mes`)
``bv_mle``, ``bv_mes``,     M̂_g(r_u) plus the derivative through the fitted prior
``mn_mle``, ``mn_mes``      (AAAI'23 eq. 11 with the MLE or MES prior)
=========================== ==============================================================

Estimators fitted to the same prior share one linearisation of the fit, and its cost grows
with the rank of their targets' weights (at most 50 for any number of metrics with K <= 50).

``interval_method="bootstrap"`` instead refits every estimator on ``n_bootstrap`` resamples of
the users (within their group; percentile interval, ``se`` is the standard deviation of the
replicates). Refits start where the estimators start: the MLE family runs a fixed number of
EM steps from the uniform distribution and is not converged, so a warm start from the full
fit would be another estimator (and the MES solver always starts from its dual origin).

**What the interval covers.** It is centred on the estimate and its width is the estimate's
standard deviation when the users are a sample (of the users a recommender serves) and the
sampled items are random. Two consequences:

* *fixed users*: for the exact value of these M users only the item sampling is random, and
  its variance, Σ_u Var(ψ | R_u) / M², is smaller than se² by the spread of E[ψ | R_u] over the
  users; for an estimator that is unbiased for every user (the sampled AUC) the interval is
  then conservative;
* *bias*: the interval covers E[θ̂], the estimator's mean. It covers the metric only as far as
  the estimator is unbiased. The sampled metric estimates another quantity altogether; the
  linear corrections are unbiased on average over their prior only (KDD'20 §5), and the
  rank-distribution methods are biased towards their start or their entropy term. When the
  bias is comparable to se, coverage falls below the level (:func:`interval_coverage`
  measures it).

The normal approximation also needs enough users at the observations that carry the estimate
(e.g. at sampled rank 1 for Recall@1).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve
from scipy.special import ndtri
from tqdm import tqdm

from . import corrections
from ._validation import as_generator, check_choice, check_positive_integer
from .batch import Batch
from .distributions import DEFAULT_ETA, EMTrace, effective_eta, pooled_kernel
from .observations import Observations

__all__ = [
    "COVERAGE_KEYS",
    "DEFAULT_N_BOOTSTRAP",
    "DEFAULT_SEED",
    "INTERVAL_METHODS",
    "IntervalSpec",
    "batch_influences",
    "em_fit_influence",
    "interval_coverage",
    "interval_spec",
]

#: ``analytic``: influence values (CLT / delta method); ``bootstrap``: refits on resampled users
INTERVAL_METHODS = ("analytic", "bootstrap")
#: bootstrap replicates by default
DEFAULT_N_BOOTSTRAP = 200
#: seed of the bootstrap draws by default (the same interval every time)
DEFAULT_SEED = 0
#: columns that identify one interval in a table of repeats (those present are used)
COVERAGE_KEYS = ("dataset", "model", "protocol", "scheme", "sample_size", "estimator", "metric", "k", "level")
#: estimators whose estimate is Σ_R π̂_R W(R) for a fitted π̂
_FITTED = ("mle", "wmle", "mes", "adaptive_mle")
_BV_GAMMA = inspect.signature(corrections.bv_operator).parameters["gamma"].default


@dataclass(frozen=True)
class IntervalSpec:
    """A checked interval request: its level, method and bootstrap settings."""

    level: float
    method: str = "analytic"
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP
    seed: object = DEFAULT_SEED

    @property
    def z(self) -> float:
        """Two-sided normal quantile z_{(1+level)/2}."""
        return float(ndtri(0.5 + self.level / 2))


def interval_spec(interval=None, interval_method=None, n_bootstrap=None, seed=None) -> IntervalSpec | None:
    """Check the interval options of :func:`itemsampling.estimate` (None: no interval).

    Parameters
    ----------
    interval : float or None
        Confidence level in (0, 1), e.g. 0.95.
    interval_method : {"analytic", "bootstrap"} or None
        Default ``"analytic"``.
    n_bootstrap : int or None
        Bootstrap replicates (default 200); bootstrap only.
    seed : int, numpy.random.Generator or None
        Seed of the bootstrap draws (default 0: the same interval every time); bootstrap only.

    Raises
    ------
    ValueError
        For a level outside (0, 1), an unknown method, or an option that does not apply.
    """
    if interval is None:
        given = [name for name, value in (("interval_method", interval_method), ("n_bootstrap", n_bootstrap),
                                          ("seed", seed)) if value is not None]
        if given:
            raise ValueError(f"{_listed(given)} only with an interval: pass interval=level, e.g. 0.95")
        return None
    if isinstance(interval, bool) or not isinstance(interval, (int, float, np.integer, np.floating)) or not (
            0 < interval < 1):
        raise ValueError(f"interval must be a confidence level strictly between 0 and 1, e.g. 0.95, got {interval!r}")
    method = check_choice("interval_method", interval_method or "analytic", INTERVAL_METHODS)
    if method != "bootstrap":
        given = [name for name, value in (("n_bootstrap", n_bootstrap), ("seed", seed)) if value is not None]
        if given:
            raise ValueError(f"{_listed(given)} only with interval_method='bootstrap'")
        return IntervalSpec(float(interval), method)
    n_bootstrap = DEFAULT_N_BOOTSTRAP if n_bootstrap is None else check_positive_integer("n_bootstrap", n_bootstrap)
    if n_bootstrap < 2:
        raise ValueError(f"n_bootstrap must be at least 2 (200 or more for a stable interval), got {n_bootstrap}")
    seed = DEFAULT_SEED if seed is None else seed
    as_generator(seed)  # checked now, drawn from later
    return IntervalSpec(float(interval), method, n_bootstrap, seed)


def _listed(names: list[str]) -> str:
    return f"{' and '.join(names)} appl{'ies' if len(names) == 1 else 'y'}"


# ----------------------------------------------------------------------------- entry points


def batch_intervals(batch: Batch, estimators, pairs, values: np.ndarray, spec: IntervalSpec) -> dict[str, np.ndarray]:
    """``se``, ``lower`` and ``upper`` of every estimator and (metric, K), each ``(E, m)``.

    ``batch`` is the validated call of :func:`itemsampling.estimate_many` (its fits, kernels and
    operators are reused); ``values`` are its raw estimates.
    """
    if spec.method == "bootstrap":
        replicates = _bootstrap(batch, estimators, pairs, spec)
        tail = (1 - spec.level) / 2
        lower, upper = np.quantile(replicates, [tail, 1 - tail], axis=0)
        return {"se": replicates.std(axis=0, ddof=1), "lower": lower, "upper": upper}
    obs = batch.observations
    se = np.vstack([obs.standard_error(psi) for psi in _influences(batch, obs, estimators, pairs)])
    return {"se": se, "lower": values - spec.z * se, "upper": values + spec.z * se}


def batch_influences(batch: Batch, estimator, pairs) -> np.ndarray:
    """Influence values ψ_u of each user of a validated call (``batch``, built by
    :mod:`itemsampling.estimators`) on each (metric, K) of ``pairs`` for one estimator, shape
    ``(M, m)`` (:func:`itemsampling.estimators.influence_values` is the public form)."""
    obs = batch.observations
    return _influences(batch, obs, [estimator], pairs)[0][obs.user]


def em_fit_influence(trace: EMTrace, adjoint: np.ndarray) -> np.ndarray:
    """ψ_c = M ∂θ/∂c_c of every kernel column c of an MLE-family fit recorded with its steps
    (:func:`itemsampling.distributions.em_fits_of_checked` with ``record``), for a θ whose
    derivative with respect to the fitted π_T is ``adjoint`` (rows, m): the reverse pass of
    :class:`_EMFit` (module docstring), M the users of the fit."""
    return _EMFit(trace, np.arange(trace.counts.size)).influence(adjoint)


def interval_coverage(table: pd.DataFrame) -> pd.DataFrame:
    """Coverage and mean width of intervals over repeats, against the exact values.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per repeat and (estimator, metric, K), with columns ``lower``, ``upper`` and
        ``exact`` (e.g. from :func:`itemsampling_study.engine.repeat_estimates` with
        ``interval``); the columns of :data:`COVERAGE_KEYS` that it has identify an interval.

    Returns
    -------
    pandas.DataFrame
        The key columns, ``repeats``, ``coverage`` (share of repeats with
        lower <= exact <= upper) and ``mean_width`` (mean of upper − lower).
    """
    missing = [c for c in ("lower", "upper", "exact") if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks the column(s) {', '.join(missing)}; it needs lower, upper and exact "
                         "(estimate with interval=level)")
    keys = [c for c in COVERAGE_KEYS if c in table.columns]
    if not keys:
        raise ValueError(f"table has none of the key columns {', '.join(COVERAGE_KEYS)}")
    frame = table.assign(covered=(table["lower"] <= table["exact"]) & (table["exact"] <= table["upper"]),
                         width=table["upper"] - table["lower"])
    out = frame.groupby(keys, dropna=False, sort=False).agg(
        repeats=("covered", "size"), coverage=("covered", "mean"), mean_width=("width", "mean"))
    return out.reset_index()


# ----------------------------------------------------------------------------- observations


def _influences(batch: Batch, obs: Observations, estimators, pairs) -> list[np.ndarray]:
    """ψ (d, m) of each estimator.

    ψ = (corrected metric, for the BV/MN/CLS family) + (∂θ/∂π̂ pushed through the fit of π̂).
    Estimators whose π̂ is the same fit (``mle``, ``bv_mle``, ``mn_mle``; ``mes``, ``bv_mes``,
    ``mn_mes``) share one linearisation of it, run on all their adjoints ∂θ/∂π̂ at once.
    """
    out, requests = [], {}
    for i, est in enumerate(estimators):
        psi, fit = _linear_part(batch, obs, est, pairs)
        out.append(psi)
        if fit is not None:
            prior_est, adjoint = fit
            requests.setdefault(_fit_key(prior_est), (prior_est, []))[1].append((i, adjoint))
    for prior_est, items in requests.values():
        basis, coefficients = _column_space(np.hstack([adjoint for _, adjoint in items]))
        if prior_est.method == "mes":
            psi = _MESFit.build(batch, prior_est.options, batch.prior_fit(prior_est)).influence(obs, basis) @ coefficients
        else:
            psi = _EMFit.run(batch, obs, prior_est).influence(basis) @ coefficients
        first = 0
        for i, adjoint in items:
            out[i] = out[i] + psi[:, first:first + adjoint.shape[1]]
            first += adjoint.shape[1]
    return out


def _linear_part(batch: Batch, obs: Observations, est, pairs):
    """ψ of an estimator with its fitted π̂ held fixed, and (the estimator of π̂, ∂θ/∂π̂)."""
    if est.method in _FITTED:
        adjoint = _pad(batch.mean_weights(pairs), batch.cache.n_rows(batch.groups.max_items))
        return np.zeros((obs.rank.size, len(pairs))), (est, adjoint)
    psi = _corrected(batch, obs, est, pairs)
    family, _, prior_method = est.method.partition("_")
    if prior_method not in ("mle", "mes"):
        return psi, None  # a fixed correction: the estimate is linear in the counts
    prior_est = batch.prior_fit_of(est)
    return psi, (prior_est, _prior_adjoint(batch, est, pairs, family, batch.prior_fit(prior_est)))


def _fit_key(est) -> tuple:
    """A hashable key of a fit: its method and options (arrays by their bytes)."""
    return est.method, tuple(sorted((k, np.asarray(v).tobytes() if isinstance(v, (np.ndarray, list)) else v)
                                    for k, v in est.options.items()))


def _column_space(adjoint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``adjoint = basis @ coefficients`` with as few basis columns as its rank (thin SVD).

    Metrics with cut-offs up to K weigh only the ranks 1..K, so 150 (metric, K) targets span at
    most 50 directions: the linearisation of a fit costs in proportion to this rank.
    """
    u, s, vt = np.linalg.svd(adjoint, full_matrices=False)
    keep = s > (s[0] if s.size else 0.0) * 1e-12
    return u[:, keep] * s[keep], vt[keep]


def _corrected(batch: Batch, obs: Observations, est, pairs) -> np.ndarray:
    """M̂_g(r) of each observation: the corrections of each group at its users' ranks."""
    psi = np.empty((obs.rank.size, len(pairs)))
    for g in range(obs.groups.n_groups):
        members = obs.group == g
        psi[members] = batch.correction(est, g, pairs)[obs.rank[members] - 1]
    return psi


def _pad(weights: np.ndarray, n_rows: int) -> np.ndarray:
    out = np.zeros((n_rows, weights.shape[1]))
    out[: weights.shape[0]] = weights
    return out


# ----------------------------------------------------------------------------- EM (MLE family)


@dataclass
class _EMFit:
    """The EM steps of the fit of an MLE-family estimator (:meth:`~itemsampling.batch.Batch.em_trace`),
    differentiated backwards.

    With f the normalised observation weights, q_t = Kᵀπ_t and s_t = K (f / q_t), each step is
    π_{t+1} = π_t ⊙ s_t (AAAI'21 eq. 21; eq. 23 for WMLE). The derivative of θ = Wᵀπ_T with
    respect to f runs backwards through the steps:

        ∂θ/∂f += Kᵀ(Λ ⊙ π_t) / q_t,   Λ ← Λ ⊙ s_t − K ((Kᵀ(Λ ⊙ π_t)) ⊙ f / q_t²),   Λ_T = W.

    The fit groups users by (kernel of N_g, n, r); an observation of the intervals (by group of
    N_u) takes the derivative of its users' column.
    """

    trace: EMTrace
    column: np.ndarray  # the fit's column of each observation of the intervals

    @classmethod
    def run(cls, batch: Batch, obs: Observations, est) -> _EMFit:
        return cls(batch.em_trace(est), obs.column)

    def influence(self, adjoint: np.ndarray) -> np.ndarray:
        """ψ of each observation for θ with ∂θ/∂π_T = ``adjoint`` (N, m)."""
        kernel, c = self.trace.kernel, self.trace.obs_weights
        frac = c / c.sum()
        lam = adjoint.copy()
        grad = np.zeros((frac.size, adjoint.shape[1]))
        for pi, q in reversed(self.trace.result.steps):
            s = kernel.matvec(frac / q)
            back = kernel.rmatmat(lam * pi[:, None])
            grad += back / q[:, None]
            lam = lam * s[:, None] - kernel.matmat(back * (frac / q**2)[:, None])
        # M ∂θ/∂c_o = (w_o / mean w) (g_o − Σ f g): counts enter through f = c w / Σ c w
        weights = c / self.trace.counts
        users_per_weight = self.trace.counts.sum() / c.sum()  # M / Σ c w
        return ((weights * users_per_weight)[:, None] * (grad - frac @ grad))[self.column]


# ----------------------------------------------------------------------------- MES


@dataclass
class _MESFit:
    """The MES solution π with its user-averaged kernel K̄ and sampled rank distribution p.

    At the optimum the dual variables are λ = 2p ⊙ (q − p), q = K̄ᵀπ, and the dual optimality
    condition F(λ, p) = K̄ᵀπ(λ) − p − λ/(2p) = 0 (:mod:`itemsampling.mes`) defines λ(p). By the
    implicit function theorem, with A = (K̄ᵀ(diag π − ππᵀ)K̄)/η + diag(1/(2p)) and
    C = K̄ᵀ(diag π − ππᵀ)W/η,

        ∂θ/∂p_j = (A⁻¹C)_j (1 − (q_j − p_j)/p_j).
    """

    kernel: np.ndarray  # (N, d_r) pooled kernel at the distinct sampled ranks
    ranks: np.ndarray  # the distinct sampled ranks
    p: np.ndarray
    pi: np.ndarray
    eta: float

    @classmethod
    def build(cls, batch: Batch, options, pi) -> _MESFit:
        """The fit's own K̄ and η (:func:`~itemsampling.distributions.pooled_kernel`,
        :func:`~itemsampling.distributions.effective_eta`) at the batch's observed ranks."""
        ranks, p = batch.observations.sampled_distribution
        n = int(batch.sizes)
        kernel = pooled_kernel(batch.cache, batch.groups, n, ranks, batch.scheme, banded=False)
        eta = effective_eta(options.get("eta", DEFAULT_ETA), options.get("eta_scale", "paper"), n)
        return cls(kernel, ranks, p, pi, float(eta))

    def influence(self, obs: Observations, adjoint: np.ndarray) -> np.ndarray:
        """ψ of each observation for θ with ∂θ/∂π = ``adjoint`` (N, m)."""
        K, pi, p = self.kernel, self.pi, self.p
        q = K.T @ pi
        system = (K.T @ (pi[:, None] * K) - np.outer(q, q)) / self.eta
        system[np.diag_indices_from(system)] += 1.0 / (2.0 * p)
        rhs = (K.T @ (pi[:, None] * adjoint) - np.outer(q, pi @ adjoint)) / self.eta
        grad = cho_solve(cho_factor(system), rhs) * (1.0 - (q - p) / p)[:, None]
        psi = grad - p @ grad  # M ∂θ/∂c_r with p = c / M
        return psi[np.searchsorted(self.ranks, obs.rank)]


# ----------------------------------------------------------------------------- BV / MN priors


def _prior_adjoint(batch: Batch, est, pairs, family: str, fitted: np.ndarray) -> np.ndarray:
    """∂θ/∂π (N, m) of BV or MN with respect to the prior π they were built with.

    In group g, M̂ = x = G⁻¹ Kᵀ diag(π_g) W and θ_g = yᵀx with y = c_g / M. With z = G⁻¹y,
    ∂θ_g/∂π_g(R) = (K z)_R (W_R − a (K x)_R) − γ (K (z ⊙ x))_R, where a = 1 − γ for BV
    (G = (1−γ) Kᵀ diag(π) K + γ diag(Kᵀπ), KDD'20 eq. 25) and a = 1, γ = 0 for MN
    (G = Kᵀ diag(π − 1/M) K + Λ₁/M, AAAI'23 eq. 11); π_g = π[:N_g] / Σ π[:N_g], with π the
    ``fitted`` prior.
    """
    gamma = float(est.options.get("gamma", _BV_GAMMA)) if family == "bv" else 0.0
    counts = batch.counts()
    users = batch.ranks.size
    out = np.zeros((batch.cache.n_rows(batch.groups.max_items), len(pairs)))
    for g in range(batch.groups.n_groups):
        operator = batch.operator(est, g)[0]
        x = batch.correction(est, g, pairs)
        K, prior = operator.kernel, operator.prior
        z = cho_solve(operator.factor, counts[g] / users, check_finite=False)
        Kz = K @ z
        grad = Kz[:, None] * (_pad(batch.weights(g, pairs), K.shape[0]) - (1.0 - gamma) * (K @ x))
        if gamma:
            grad -= gamma * (K @ (z[:, None] * x))
        n_g = K.shape[0]
        out[:n_g] += (grad - prior @ grad) / fitted[:n_g].sum()
    return out


def _bootstrap(batch: Batch, estimators: Sequence, pairs, spec: IntervalSpec) -> np.ndarray:
    """(B, E, m) estimates on users resampled within their candidate group."""
    rng = as_generator(spec.seed)
    groups = batch.groups
    order = np.argsort(groups.index, kind="stable")
    slot_group = groups.index[order]
    starts = np.r_[0, np.cumsum(groups.n_users)[:-1]]
    out = np.empty((spec.n_bootstrap, len(estimators), len(pairs)))
    for b in tqdm(range(spec.n_bootstrap), desc="bootstrap", disable=None, leave=False):
        users = order[starts[slot_group] + rng.integers(0, groups.n_users[slot_group])]
        out[b] = batch.refit(users, estimators, pairs)
    return out
