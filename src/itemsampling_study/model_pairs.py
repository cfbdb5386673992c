"""Notebook 05, model pairs: the paired interval of a difference between two models
(:func:`itemsampling.compare.paired_difference`, eq. (2) of :mod:`itemsampling.compare`) on the
committed global ranks, rule ``model_pairs``; its tables go to notebook 05's folder.

For every dataset, every repeat draws each model's sampled ranks once (uniform, with replacement,
n = ``sample_size``, protocol ``unseen``; the draws of :func:`~.engine.draw_sampled_ranks`, so
repeat r is the draw of notebook 05's ``tiny_n`` at that n) and estimates each model's metric and
its users' influence values ψ_u with ``estimator``. Then

* ``model_pairs``: for every pair (A, B) of models, the paired interval at ``level`` of
  θ_A − θ_B: the share of repeats whose interval covers the exact difference, the mean standard
  error, and the shares of repeats whose estimate has the sign of the exact difference and that
  are significant (p < 1 − level) with the right or the wrong sign;
* ``a_vs_a``: every model against itself with independent negatives (the draw of repeat r
  against that of repeat ``repeats`` + r): the exact difference is 0, and a repeat whose interval
  excludes 0 is a false alarm (nominal rate 1 − level).

Independent negatives per model: the committed global ranks hold the rank of each held-out item,
not the items above it, so two models' sampled ranks over the *same* negatives cannot be drawn
from them; the same model with the same negatives would give the same ranks and a difference of
exactly 0. With independent draws the influence values of A and B share only the user, and (2)
estimates the variance of their difference all the same; the paired interval here is what an
evaluation that samples negatives per run (as RecBole does) would compute.

Configuration: subsection ``pairs`` of section ``protocols_in_use``.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.compare import paired_difference
from itemsampling.estimators import Estimator, estimate_draws, influence_values
from itemsampling.kernels import KernelCache

from .engine import draw_sampled_ranks, exact_values
from .tables import ranks_path, read_model_ranks

__all__ = ["chunks", "inputs", "model_draws", "sample_sizes", "study_config", "study_tables"]


def study_config(config: Mapping) -> dict:
    """Subsection ``pairs`` of ``protocols_in_use`` with the section's datasets, models, protocol,
    metrics, item groups and level."""
    section = config["protocols_in_use"]
    return {**{key: section[key] for key in ("datasets", "models", "protocol", "n_item_groups", "level")},
            **section["pairs"]}


def chunks(config: Mapping) -> list[dict]:
    """None: the pairs run in one step (rule ``model_pairs``)."""
    return []


def inputs(config: Mapping) -> list[str]:
    """The committed global ranks of every (dataset, model)."""
    return [str(ranks_path(d, m, config["protocol"])) for d in config["datasets"] for m in config["models"]]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The sample size drawn from each dataset's ranks."""
    return {(d, config["protocol"]): int(config["sample_size"]) for d in config["datasets"]}


def model_draws(ranks: pd.DataFrame, config: Mapping, seed: int, labels: Mapping[str, str], repeats: range,
                cache: KernelCache) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """One model's exact values, and per repeat its estimates and influence values (users x targets)."""
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    n, targets = config["sample_size"], [(m, int(k)) for m in config["metrics"] for k in config["ks"]]
    estimator = Estimator(config["estimator"])
    draws = [draw_sampled_ranks(R, N, n, seed=seed, labels=labels, scheme="binomial", repeat=r) for r in repeats]
    tables = estimate_draws(draws, N, n, [estimator], targets=targets, n_groups=config["n_item_groups"],
                            cache=cache, warn=False)
    psi = [influence_values(d, N, n, estimator, targets=targets, n_groups=config["n_item_groups"], cache=cache)
           for d in draws]
    return exact_values(R, N, targets), psi, np.array([t["estimate"].to_numpy() for t in tables])


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The tables ``model_pairs`` and ``a_vs_a`` (``runs`` is unused: no chunks)."""
    targets = [(m, int(k)) for m in config["metrics"] for k in config["ks"]]
    level, repeats = config["level"], config["repeats"]
    pair_rows, same_rows = [], []
    for dataset in config["datasets"]:
        cache, draws, users = KernelCache(), {}, None
        for model in config["models"]:
            ranks = read_model_ranks(dataset, model, config["protocol"], root)
            if users is None:
                users = ranks["user"].to_numpy()
            elif not np.array_equal(users, ranks["user"].to_numpy()):
                raise ValueError(f"{dataset}: the ranks of {model!r} hold other test users than those of "
                                 f"{config['models'][0]!r}; model pairs need the same users")
            labels = {"dataset": dataset, "model": model, "protocol": config["protocol"]}
            draws[model] = model_draws(ranks, config, seed, labels, range(2 * repeats), cache)
        for j, (metric, k) in enumerate(targets):
            for a, b in combinations(config["models"], 2):
                (exact_a, psi_a, est_a), (exact_b, psi_b, est_b) = draws[a], draws[b]
                truth = exact_a[j] - exact_b[j]
                stats = [paired_difference(est_a[r, j], est_b[r, j], psi_a[r][:, j], psi_b[r][:, j], level)
                         for r in range(repeats)]
                pair_rows.append({"dataset": dataset, "model_a": a, "model_b": b, "metric": metric, "k": k,
                                  "true_difference": truth, **_pair_summary(stats, truth, level)})
            for model in config["models"]:
                exact, psi, est = draws[model]
                stats = [paired_difference(est[r, j], est[repeats + r, j], psi[r][:, j], psi[repeats + r][:, j], level)
                         for r in range(repeats)]
                alarms = sum(not (s["lower"] <= 0.0 <= s["upper"]) for s in stats)
                same_rows.append({"dataset": dataset, "model": model, "metric": metric, "k": k,
                                  "exact": exact[j], "false_alarms": alarms, "repeats": repeats,
                                  "rate": alarms / repeats, "nominal": 1.0 - level})
    return {"model_pairs": pd.DataFrame(pair_rows), "a_vs_a": pd.DataFrame(same_rows)}


def _pair_summary(stats: list[dict], truth: float, level: float) -> dict:
    """Coverage of ``truth``, mean se, and the shares of right signs and of significant right and
    wrong signs over the repeats' paired intervals ``stats``."""
    diff = np.array([s["difference"] for s in stats])
    covered = np.array([s["lower"] <= truth <= s["upper"] for s in stats])
    significant = np.array([s["p_value"] < 1.0 - level for s in stats])
    right = np.sign(diff) == np.sign(truth)
    return {"coverage": covered.mean(), "level": level, "mean_se": float(np.mean([s["se"] for s in stats])),
            "right_sign": right.mean(), "significant_right": (significant & right).mean(),
            "significant_wrong": (significant & ~right).mean(), "repeats": len(stats)}
