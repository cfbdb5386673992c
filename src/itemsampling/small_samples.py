"""How each estimator's bias and spread grow as the sample set shrinks (n = 5 ... 100), and how
many duplicates a candidate file holds (samples drawn with replacement)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .estimators import estimate
from .metrics import global_metrics
from .simulation import sample_ranks

__all__ = ["candidate_duplicates", "estimator_error", "read_ncf_negatives", "small_sample_study"]


def estimator_error(estimates, exact: float) -> dict:
    """Bias, standard deviation and RMSE of repeated estimates of one exact value."""
    est = np.asarray(estimates, dtype=float)
    bias = est.mean() - exact
    sd = est.std(ddof=1) if est.size > 1 else 0.0
    return {"mean": est.mean(), "bias": bias, "sd": sd, "rmse": float(np.sqrt(np.mean((est - exact) ** 2)))}


def small_sample_study(global_ranks, n_items: int, sizes: Sequence[int] = (5, 10, 20, 50, 100),
                       methods: Sequence[str] = ("sampled", "rank_estimate", "mle", "mes", "mn_mes"),
                       metric: str = "recall", k: int = 10, repeats: int = 20, seed: int = 0,
                       scheme: str = "binomial") -> pd.DataFrame:
    """Bias, spread and RMSE of each estimator of metric@K against the exact value, per n.

    Each repeat draws the sampled ranks r_u from R_u (:func:`itemsampling.sample_ranks`) and
    estimates with :func:`itemsampling.estimate`. Columns ``n``, ``method``, ``exact``, ``mean``,
    ``bias``, ``sd``, ``rmse``.
    """
    exact = float(global_metrics(global_ranks, n_items, [metric], [k])["value"].iloc[0])
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        draws = {m: [] for m in methods}
        for _ in range(repeats):
            r = sample_ranks(global_ranks, n_items, n, rng=rng, scheme=scheme)
            for m in methods:
                draws[m].append(float(estimate(r, n_items, n, m, metrics=metric, ks=[k],
                                               scheme=scheme)["estimate"].iloc[0]))
        rows += [{"n": n, "method": m, "exact": exact, **estimator_error(draws[m], exact)} for m in methods]
    return pd.DataFrame(rows)


def candidate_duplicates(test_items, negatives) -> dict:
    """Count duplicates in candidate sets: rows with a repeated negative, repeated draws, and
    rows whose positive is among its own negatives.

    Parameters
    ----------
    test_items : array_like, shape (M,)
        The held-out item of each row.
    negatives : array_like, shape (M, m)
        The negatives of each row.
    """
    neg = np.sort(np.asarray(negatives), axis=1)
    repeated = neg[:, 1:] == neg[:, :-1]
    own = (np.asarray(negatives) == np.asarray(test_items)[:, None]).any(axis=1)
    return {"rows": neg.shape[0], "negatives_per_row": neg.shape[1],
            "rows_with_duplicates": int(repeated.any(axis=1).sum()),
            "duplicate_draws": int(repeated.sum()), "rows_with_positive_as_negative": int(own.sum())}


def read_ncf_negatives(path) -> tuple[np.ndarray, np.ndarray]:
    """Read NCF's ``*.test.negative`` file: lines ``(user,item)<TAB>neg1<TAB>...``.

    Returns ``(test_items, negatives)``: shape (M,) and (M, m), item ids as in the file.
    """
    items, negs = [], []
    with open(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            head, *rest = line.rstrip("\n").split("\t")
            items.append(int(head.strip("()").split(",")[1]))
            negs.append([int(x) for x in rest if x])
    if len({len(x) for x in negs}) > 1:
        raise ValueError(f"{path}: rows have different numbers of negatives")
    return np.asarray(items), np.asarray(negs)
