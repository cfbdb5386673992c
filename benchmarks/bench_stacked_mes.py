"""The MES fits of many draws in lockstep (``solve_mes_stacked``) against one Newton solve per draw.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_stacked_mes.py           # three sizes, about 2 minutes
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_stacked_mes.py --quick   # seconds

Sizes, as in notebooks 04 and 05: (a) N = 3,706 items, n = 500 (ml-1m), (b) N = 35,351, n = 500
and (c) N = 35,351, n = 1,000 (yelp-diffnet, notebook 04's n = 500 and notebook 06's fixed n),
M users with global ranks drawn, seeded, from P(R) ∝ (R + 10)^-1.1 and binomial sampled ranks;
``--draws`` draws (100: the repeats of a study chunk).

* ``mes``: :func:`itemsampling.estimators.estimate_draws` with ``mes`` on the draws and a shared
  :class:`~itemsampling.kernels.KernelCache` (as the study engine calls it): the MES fits of all
  the draws take their Newton steps together, so ``K Λ``, ``Kᵀ Π`` and the ``K₂ᵀ Π`` of the
  Hessians' Gram matrices are matrix–matrix products; against the same call with one Newton
  solve per draw (the code before, matrix–vector products). ``value``: the largest relative
  difference of any estimate.
* ``mes + bv_mes + mn_mes``: the same with the two corrections that use the MES prior (their
  operators are built draw by draw in both).

Times are the best of ``--repeats`` calls, seconds, one BLAS thread; ``speedup`` is
``base_time_s / time_s``.
"""

from __future__ import annotations

import argparse
import sys
from unittest import mock

import numpy as np
from bench_estimators import best_time, run_sizes

import itemsampling as its
from itemsampling.batch import Batch
from itemsampling.estimators import estimate_draws
from itemsampling.kernels import KernelCache

COLUMNS = ("size", "task", "time_s", "baseline", "base_time_s", "speedup", "check", "value", "detail")
SIZES = {"a": (3_706, 500, 6_040), "b": (35_351, 500, 21_000), "c": (35_351, 1_000, 21_000)}
TASKS = {"mes": ("mes",), "mes + bv_mes + mn_mes": ("mes", "bv_mes", "mn_mes")}


def bench_size(size: str, n_items: int, n: int, n_users: int, draws: int, timings: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    R = np.arange(1, n_items + 1)
    p = (R + 10.0) ** -1.1
    global_ranks = rng.choice(R, size=n_users, p=p / p.sum())
    samples = [its.sample_ranks(global_ranks, n_items, n, rng=rng) for _ in range(draws)]
    targets = [(metric, k) for metric in ("recall", "ndcg") for k in range(1, 51)]
    rows = []
    for task, names in TASKS.items():
        estimators = [its.Estimator(name) for name in names]

        def study(estimators=estimators):
            tables = estimate_draws(samples, n_items, n, estimators, targets=targets, cache=KernelCache())
            return np.concatenate([t["estimate"].to_numpy() for t in tables])

        ours_s, ours = best_time(study, timings)
        with mock.patch.object(Batch, "mes_fits_needed", lambda self, estimators: {}):  # each draw fits alone
            base_s, base = best_time(study, timings)
        rows.append({"size": size, "task": task, "time_s": ours_s, "baseline": "a solve per draw",
                     "base_time_s": base_s, "speedup": base_s / ours_s, "check": "max_rel_diff_estimate",
                     "value": float(np.max(np.abs(ours - base) / np.maximum(np.abs(base), 1e-300))),
                     "detail": f"N={n_items} n={n}, {draws} draws of M={n_users} users, shared cache"})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 2,000, n = 200, M = 2,000, 6 draws")
    parser.add_argument("--sizes", default="abc", help="which of the sizes a, b, c to run (default: all)")
    parser.add_argument("--draws", type=int, default=100, help="draws of sampled ranks")
    parser.add_argument("--repeats", type=int, default=2, help="timed calls (best of)")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args(argv)
    problems = {"quick": (2_000, 200, 2_000, 6)} if args.quick else {s: (*SIZES[s], args.draws) for s in args.sizes}
    rows = run_sizes("stacked MES", args, problems, bench_size, COLUMNS)
    bad = [r for r in rows if not r["value"] <= 1e-6]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
