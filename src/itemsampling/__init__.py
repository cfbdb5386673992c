"""itemsampling — estimate global top-K recommendation metrics from item-sampled evaluation.

The public API (ranks are 1-based everywhere):

=========================================================== ===========================================
``metric_weights(metric, k, n_items)``                       weights 1{R<=K} M(R) for R = 1..N
``global_metrics(global_ranks, n_items, metrics, ks)``       exact metrics for many K at once
``rank_kernel(n_items, sample_size, scheme)``                P(r | R), binomial or hypergeometric
``sample_ranks(global_ranks, n_items, sample_size, rng)``    simulate sampled ranks r_u from R_u
``adaptive_sample_ranks(global_ranks, n_items, n0, n_max)``  adaptive sampling (AAAI'23 Alg. 1)
``mapping(ks, n_items, sample_size, kind, a)``               mapping functions f(k) (Li et al. KDD'20)
``fit_beta(sampled_ranks, n_items, sample_size)``            Beta@P parameter a (KDD'20 eq. 19)
``rank_distribution(sampled_ranks, n_items, n, method)``     estimate of P(R) (MLE, MES, ...)
``estimate(sampled_ranks, n_items, n, method, metrics, ks)`` estimated global metrics
``estimate_many(sampled_ranks, n_items, n, estimators)``     several estimators sharing their work
``estimate(..., interval=0.95)``                             confidence intervals (:mod:`.intervals`)
``sampled_ranks_from_scores(scores, target_column, rng)``    sampled ranks r_u from a score matrix
``evaluate_adaptive(score, test_items, n_items, n0, n_max)`` adaptive evaluation of a live scorer
``read_run(path, format)``                                   a framework's sampled run (:mod:`.runs`)
``correct(run, method, metrics, ks)``                        its corrected metrics with intervals
``compare(run_a, run_b, metric, k)``                         paired difference, P(A > B) (:mod:`.compare`)
``compare_many(runs, metric, k)``                            every pair, Holm-adjusted
``estimate_sampled(users, negatives, above, n_items, ...)``  metrics from popularity-sampled negatives
``estimate_multi_positive(ranks, users, n_items, n)``        metrics with several held-out items
=========================================================== ===========================================

References: Krichene & Rendle, KDD 2020; Li, Jin, Gao & Liu, KDD 2020; Jin, Li, Mudrak, Gao &
Liu, AAAI 2021; Li, Jin, Liu, Ren, Gao & Liu, AAAI 2023.

``n_items`` may be one N or the number of candidates N_u of each user (the ``unseen``
protocol); see :func:`estimate`.
"""

from .adaptive_evaluation import evaluate_adaptive
from .compare import compare, compare_many
from .estimators import (
    METHODS,
    Estimator,
    ImpossibleEstimateWarning,
    estimate,
    estimate_many,
    rank_distribution,
)
from .kernels import kernel_columns, rank_kernel
from .mappings import expected_sampled_hit_ratio, fit_beta, mapping
from .metrics import global_metrics, metric_weights
from .multi_positive import estimate_multi_positive, multi_positive_metrics
from .nonuniform import estimate_sampled
from .runs import Run, correct, read_run
from .score_matrix import sampled_ranks_from_scores
from .simulation import adaptive_sample_ranks, sample_ranks, sampling_cost

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "Estimator",
    "ImpossibleEstimateWarning",
    "Run",
    "adaptive_sample_ranks",
    "compare",
    "compare_many",
    "correct",
    "estimate",
    "estimate_many",
    "estimate_multi_positive",
    "estimate_sampled",
    "evaluate_adaptive",
    "expected_sampled_hit_ratio",
    "fit_beta",
    "global_metrics",
    "kernel_columns",
    "mapping",
    "metric_weights",
    "multi_positive_metrics",
    "rank_distribution",
    "rank_kernel",
    "read_run",
    "sample_ranks",
    "sampled_ranks_from_scores",
    "sampling_cost",
]
