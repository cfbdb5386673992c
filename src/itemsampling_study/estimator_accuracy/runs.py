"""Notebook 04's runs: the draws and estimates of one part of one (dataset, model), the chunk
of the workflow (:func:`chunk_table`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from itemsampling.estimators import Estimator, rank_distribution

from ..engine import STUDY_SCHEMES, draw_sampled_ranks, repeat_estimates
from .parts import PRIOR_ESTIMATORS, estimator, parts, targets

__all__ = ["chunk_table", "pooled_estimators"]


def pooled_estimators(names: Sequence[str], global_ranks, n_items, sample_size: int, *, seed: int,
                      labels: Mapping[str, str], scheme: str, repeats: int, n_groups: int) -> list[Estimator]:
    """BV and MN with a prior fitted once to the sampled ranks of all ``repeats`` repeats together.

    The draws are those of :func:`~itemsampling_study.engine.repeat_estimates` with the same
    seed, labels, scheme and n; their ranks are pooled (each user once per repeat, with its N_u)
    and MLE or MES (AAAI'21 eq. 19-21, 24-27) is fitted once. ``bv_mle`` ... ``mn_mes`` then become
    BV (KDD'20 eq. 24-26, γ = 0.01) and MN (AAAI'23 eq. 10-11) with that fixed prior. This uses the
    other repeats' ranks in every repeat (the AAAI'23 authors' code averaged the MES estimates of
    all repeats, which shares the same information): it shows how much pooling flatters them.
    """
    bad = [name for name in names if name not in PRIOR_ESTIMATORS]
    if bad:
        raise ValueError(f"{bad} have no fitted prior to pool; use {', '.join(PRIOR_ESTIMATORS)}")
    draws = [draw_sampled_ranks(global_ranks, n_items, sample_size, seed=seed, labels=labels, scheme=scheme,
                                repeat=i) for i in range(repeats)]
    pooled, pooled_items = np.concatenate(draws), np.tile(n_items, repeats) if np.ndim(n_items) else n_items
    priors = {method: rank_distribution(pooled, pooled_items, sample_size, method, scheme=STUDY_SCHEMES[scheme][1],
                                        n_groups=n_groups)
              for method in sorted({name.partition("_")[2] for name in names})}
    return [Estimator(name.partition("_")[0], {"prior": priors[name.partition("_")[2]]}, name=name)
            for name in names]


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Every run of one part of one (dataset, model): ``repeats`` draws, every estimator of the part.

    The engine's table (:data:`~itemsampling_study.engine.RUN_COLUMNS` and ``seconds``, the
    wall time of each draw; in the ``interval`` part also ``level``, ``se``, ``lower`` and
    ``upper``) with the ``part`` and ``setup_seconds`` (fitting pooled priors).
    """
    spec = parts(config)[labels["part"]]
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    start = time.perf_counter()
    if spec["role"] == "pooled":
        ests = pooled_estimators(spec["estimators"], R, N, spec["sample_size"], seed=seed, labels=labels,
                                 scheme=spec["scheme"], repeats=config["repeats"], n_groups=spec["n_item_groups"])
    else:
        ests = [estimator(name) for name in spec["estimators"]]
    setup = time.perf_counter() - start
    table = repeat_estimates(
        R, N, estimators=ests, targets=targets(config, labels["dataset"], labels["model"], spec["role"]),
        sample_sizes=[spec["sample_size"]], seed=seed, labels=labels, schemes=[spec["scheme"]],
        repeats=config["repeats"], n_groups=spec["n_item_groups"], timing=True,
        interval=spec.get("level"), interval_method=spec.get("method"),
    )
    return table.assign(part=labels["part"], setup_seconds=setup)
