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
=========================================================== ===========================================

References: Krichene & Rendle, KDD 2020; Li, Jin, Gao & Liu, KDD 2020; Jin, Li, Mudrak, Gao &
Liu, AAAI 2021; Li, Jin, Liu, Ren, Gao & Liu, AAAI 2023.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "metric_weights": "metrics",
    "global_metrics": "metrics",
    "rank_kernel": "kernels",
    "kernel_columns": "kernels",
    "sample_ranks": "simulation",
    "adaptive_sample_ranks": "simulation",
    "sampling_cost": "simulation",
    "mapping": "mapping",
    "fit_beta": "mapping",
    "expected_sampled_hit_ratio": "mapping",
    "rank_distribution": "estimate",
    "estimate": "estimate",
    "METHODS": "estimate",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """Import public functions on first use, so ``import itemsampling`` stays light."""
    if name in _PUBLIC:
        module = importlib.import_module(f".{_PUBLIC[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'itemsampling' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
