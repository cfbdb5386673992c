"""Speed and memory of the study engine against one public ``estimate`` call per estimate.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_engine.py          # ml-1m-like, 100 repeats
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_engine.py --quick  # seconds

(one BLAS thread, as the workflow runs each study chunk: the many small factorizations of the
estimators are several times slower when BLAS threads compete for the cores).

Problem (full run): N = 3,706 items, M = 6,040 users (ml-1m-like; global ranks drawn, seeded,
from P(R) ∝ (R + 10)^-1.1), one sample size n = 100, sampling with replacement, the eleven
estimators of :data:`ESTIMATORS` and 150 (metric, K) targets (recall, NDCG, AP x K = 1..50).

* engine: :func:`itemsampling_study.engine.repeat_estimates` for all repeats;
* baseline: for the same sampled ranks, :func:`itemsampling.estimate` once per (repeat,
  estimator) with the 150 targets — what a study loop without the engine does. The baseline
  runs on the first ``--base-repeats`` repeats and its time is scaled to all repeats (printed).

Both must give the same estimates up to rounding (max abs difference printed; the engine fits the
EM priors of all repeats together, which sums in another order). Peak memory is the growth of
the process's peak resident set size during the engine run (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

import itemsampling as its
from itemsampling.estimators import Estimator
from itemsampling_study.engine import derive_seed, repeat_estimates

ESTIMATORS = [
    Estimator("cls"),
    Estimator("bv", {"gamma": 0.1}, name="bv_0.1"),
    Estimator("bv", {"gamma": 0.01}, name="bv_0.01"),
    Estimator("mn"),
    Estimator("mle"),
    Estimator("wmle"),
    Estimator("mes"),
    Estimator("bv_mle"),
    Estimator("bv_mes"),
    Estimator("mn_mle"),
    Estimator("mn_mes"),
]
LABELS = {"dataset": "bench", "model": "power-law", "protocol": "all"}


def global_ranks(n_items: int, n_users: int, seed: int) -> np.ndarray:
    R = np.arange(1, n_items + 1)
    p = (R + 10.0) ** -1.1
    return np.random.default_rng(seed).choice(R, size=n_users, p=p / p.sum())


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 1,000, M = 2,000, 4 repeats")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--base-repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n_items, n_users, n, repeats = (1_000, 2_000, 50, 4) if args.quick else (3_706, 6_040, 100, args.repeats)
    base_repeats = min(args.base_repeats, repeats)
    targets = [(m, k) for m in ("recall", "ndcg", "ap") for k in range(1, 51)]
    R = global_ranks(n_items, n_users, args.seed)
    print(f"# N={n_items} M={n_users} n={n} repeats={repeats} estimators={len(ESTIMATORS)} "
          f"targets={len(targets)} cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")

    before = peak_rss_mib()
    start = time.perf_counter()
    table = repeat_estimates(R, n_items, estimators=ESTIMATORS, targets=targets, sample_sizes=[n],
                             seed=args.seed, labels=LABELS, repeats=repeats, progress=False)
    engine_s = time.perf_counter() - start
    engine_peak = peak_rss_mib() - before

    start = time.perf_counter()
    diff = 0.0
    for repeat in range(base_repeats):
        rng = np.random.default_rng(derive_seed(args.seed, *LABELS.values(), "binomial", n, repeat))
        sampled = its.sample_ranks(R, n_items, n, rng=rng)
        for est in ESTIMATORS:
            one = its.estimate(sampled, n_items, n, est.method, metrics=("recall", "ndcg", "ap"),
                               ks=range(1, 51), **est.options)
            ours = table[(table["repeat"] == repeat) & (table["estimator"] == est.label)]["estimate"]
            diff = max(diff, float(np.max(np.abs(ours.to_numpy() - one["estimate"].to_numpy()))))
    base_s = (time.perf_counter() - start) * repeats / base_repeats
    print("| task | time_s | baseline_s | speedup | peak_MiB | max_abs_diff |")
    print("|---|---|---|---|---|---|")
    print(f"| engine, {repeats} repeats | {engine_s:.1f} | {base_s:.1f} (from {base_repeats} repeats) | "
          f"{base_s / engine_s:.1f} | {engine_peak:.0f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
