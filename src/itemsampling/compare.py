"""Compare models evaluated on the same users and the same sampled negatives, with paired intervals.

Two runs A and B of one sampled evaluation share each user's held-out item and negatives, so
their estimates err together: the paired interval uses this (common random numbers). To first
order an estimate is the mean of its users' influence values ψ_u
(:func:`itemsampling.estimators.influence_values`), so the difference is

    Δ̂ = θ̂_A − θ̂_B ≈ Δ + (1/M) Σ_u (ψ_{A,u} − ψ_{B,u}),                           (1)

and by the central limit theorem over users (delta method for the fitted estimators)

    se(Δ̂) = sd_u(ψ_{A,u} − ψ_{B,u}) / √M,   Δ̂ ± z_{1−α/2} se(Δ̂),                  (2)

    P(A > B) ≈ Φ(Δ̂ / se(Δ̂)),   p = 2 (1 − Φ(|Δ̂| / se(Δ̂))).                         (3)

Positively correlated ψ_A and ψ_B (a user whose item both models rank well) make (2) much
narrower than the unpaired sqrt(se_A² + se_B²). (3) reads the normal approximation of (1) as
the probability that the true difference is positive (a flat-prior reading). Several models:
every pair, with Holm's step-down adjustment of the p-values, which controls the
family-wise error rate at α for any dependence between the pairs. Two popularity-sampled
runs (:mod:`itemsampling.runs`) are compared on their plug-in values ψ_u = M(⌊R̂_u⌋), whose mean
is the corrected estimate itself, and two runs with several positives per user on the users'
influence values of :func:`itemsampling.multi_positive.multi_positive_terms`: their terms, whose
mean is the estimate (the fit of P̂(R) held fixed), plus, for ``posterior_mle``, the part through
its fit. See docs/estimators.md, "Comparing two models".
"""

from __future__ import annotations

from itertools import combinations
from statistics import NormalDist

import numpy as np
import pandas as pd

from .estimators import Estimator, estimate, influence_values
from .metrics import metric_weights
from .multi_positive import multi_positive_metrics, multi_positive_terms, multi_positive_values
from .nonuniform import plug_in_ranks, plug_in_values
from .runs import Run, check_supported, positive_arguments, thin

__all__ = ["compare", "compare_many", "holm", "paired_difference"]


def compare(run_a: Run, run_b: Run, metric: str = "recall", k: int = 10, method: str = "mn_mes",
            level: float = 0.95, **options) -> dict:
    """Estimated difference θ_A − θ_B of a global metric, its paired interval and P(A > B).

    Parameters
    ----------
    run_a, run_b : Run
        Two models' runs on the same users, in the same order, with the same candidate counts.
    metric, k : str, int
        The metric and its cut-off.
    method : str
        Estimator (default ``mn_mes``).
    level : float
        Confidence level of the interval (2).
    **options
        Options of the estimator.

    Returns
    -------
    dict
        ``model_a, model_b, metric, k, estimate_a, estimate_b, difference, se, lower, upper,
        p_a_better, p_value, sampled_difference, disagree`` (the last: the sampled metrics and the
        corrected estimates order A and B differently).
    """
    _check_paired(run_a, run_b)
    scheme = check_supported(run_a, method)
    check_supported(run_b, method)
    if run_a.protocol != run_b.protocol:
        raise ValueError(f"runs {run_a.model!r} ({run_a.protocol}) and {run_b.model!r} ({run_b.protocol}) "
                         "were sampled differently: they are not the same sampled evaluation")
    if run_a.protocol == "several_positives":
        return _compare_positives(run_a, run_b, metric, k, method, level, scheme, options)
    run_a, run_b = thin(run_a), thin(run_b)
    n = int(run_a.sample_size[0])
    if run_a.protocol == "popularity" and run_a.several_positives:  # each user's metrics at the estimates
        psi = [multi_positive_values(plug_in_ranks(run.rank_estimates), run.users, metric, k)[1][:, 0]
               for run in (run_a, run_b)]
        theta = [float(values.mean()) for values in psi]
    elif run_a.protocol == "popularity":  # the plug-in mean is linear in its per-user terms
        psi = [plug_in_values(run.rank_estimates, run.n_items, metric, k) for run in (run_a, run_b)]
        theta = [float(values.mean()) for values in psi]
    else:
        args = dict(metrics=[metric], ks=[k], scheme=scheme)
        theta = [float(estimate(run.ranks, run.n_items, n, method, **args, **options)["estimate"].iloc[0])
                 for run in (run_a, run_b)]
        estimator = Estimator(method, options)
        psi = [influence_values(run.ranks, run.n_items, n, estimator, **args)[:, 0] for run in (run_a, run_b)]
    if run_a.several_positives:
        sampled = float(np.subtract(*[multi_positive_metrics(run.ranks, run.users, metric, k)["value"].iloc[0]
                                      for run in (run_a, run_b)]))
    else:
        weights = metric_weights(metric, k, n)
        sampled = float(weights[run_a.ranks - 1].mean() - weights[run_b.ranks - 1].mean())
    return _comparison(run_a, run_b, metric, k, theta, paired_difference(*theta, *psi, level), sampled)


def _compare_positives(run_a: Run, run_b: Run, metric: str, k: int, method: str, level: float, scheme: str,
                       options) -> dict:
    """:func:`compare` of two runs with several positives per user, paired on the users' influence
    values of :func:`itemsampling.multi_positive.multi_positive_terms` (their terms, whose mean is
    the estimate, plus the part through the fit for ``posterior_mle``)."""
    theta, psi, sampled = [], [], []
    for run in (run_a, run_b):
        ranks, users, n_items, sizes = positive_arguments(run)
        _, terms, influences = multi_positive_terms(ranks, users, n_items, sizes, metric, k, method=method,
                                                    influences=True, **{"scheme": scheme, **options})
        theta.append(float(terms[:, 0].mean()))
        psi.append(influences[:, 0])
        sampled.append(float(multi_positive_metrics(ranks, users, metric, k)["value"].iloc[0]))
    return _comparison(run_a, run_b, metric, k, theta, paired_difference(*theta, *psi, level),
                       sampled[0] - sampled[1])


def _comparison(run_a: Run, run_b: Run, metric: str, k: int, theta, paired: dict, sampled: float) -> dict:
    """The row of :func:`compare`: the estimates, their paired difference and the sampled one."""
    return {
        "model_a": run_a.model, "model_b": run_b.model, "metric": metric, "k": k,
        "estimate_a": theta[0], "estimate_b": theta[1], **paired,
        "sampled_difference": sampled, "disagree": bool(np.sign(sampled) * np.sign(paired["difference"]) < 0),
    }


def paired_difference(estimate_a: float, estimate_b: float, psi_a, psi_b, level: float = 0.95) -> dict:
    """The difference θ̂_A − θ̂_B with its paired interval (2) and P(A > B), p-value (3).

    Parameters
    ----------
    estimate_a, estimate_b : float
        The two models' estimates θ̂_A and θ̂_B.
    psi_a, psi_b : array_like of float, shape (M,)
        Their users' influence values (:func:`itemsampling.estimators.influence_values`), the
        same users in the same order.
    level : float
        Confidence level of the interval.

    Returns
    -------
    dict
        ``difference, se, lower, upper, p_a_better, p_value``.
    """
    psi_a, psi_b = np.asarray(psi_a, dtype=np.float64), np.asarray(psi_b, dtype=np.float64)
    if psi_a.shape != psi_b.shape or psi_a.ndim != 1 or psi_a.size < 2:
        raise ValueError(f"psi_a and psi_b must be the influence values of the same >= 2 users, got shapes "
                         f"{psi_a.shape} and {psi_b.shape}")
    diff = float(estimate_a) - float(estimate_b)
    se = float(np.std(psi_a - psi_b, ddof=1) / np.sqrt(psi_a.size))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    ratio = diff / se if se > 0 else (0.0 if diff == 0 else np.sign(diff) * np.inf)  # identical runs: 0
    return {"difference": diff, "se": se, "lower": diff - z * se, "upper": diff + z * se,
            "p_a_better": _normal_cdf(ratio), "p_value": 2 * _normal_cdf(-abs(ratio))}


def compare_many(runs: list[Run], metric: str = "recall", k: int = 10, method: str = "mn_mes",
                 level: float = 0.95, **options) -> pd.DataFrame:
    """Every pair of models (:func:`compare`), with Holm-adjusted p-values (:func:`holm`).

    Returns
    -------
    pandas.DataFrame
        One row per pair (A before B in the order given), the columns of :func:`compare` plus
        ``p_holm`` and ``significant`` (``p_holm < 1 − level``: the family-wise error rate of all
        the pairs' claims is at most 1 − level).
    """
    names = [run.model for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"models need distinct names to be compared (got {names})")
    table = pd.DataFrame([compare(a, b, metric, k, method, level, **options) for a, b in combinations(runs, 2)])
    table["p_holm"] = holm(table["p_value"].to_numpy())
    table["significant"] = table["p_holm"] < 1 - level
    return table


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: p̃_(i) = max_{j<=i} min(1, (m − j + 1) p_(j)).

    Rejecting the hypotheses with p̃ < α controls the family-wise error rate at α
    (Holm, Scand. J. Statist. 1979).
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def _normal_cdf(x: float) -> float:
    """Φ(x), with Φ(±∞) = 1 or 0."""
    return float(x > 0) if np.isinf(x) else NormalDist().cdf(x)


def _check_paired(run_a: Run, run_b: Run) -> None:
    if len(run_a) != len(run_b) or not np.array_equal(run_a.users, run_b.users):
        raise ValueError(f"runs {run_a.model!r} and {run_b.model!r} must hold the same users in the same "
                         "order (a paired comparison needs the same users and negatives)")
    if not np.array_equal(run_a.sample_size, run_b.sample_size) or not np.array_equal(run_a.n_items, run_b.n_items):
        raise ValueError(f"runs {run_a.model!r} and {run_b.model!r} have different candidate counts or "
                         "catalogue sizes: they are not the same sampled evaluation")
