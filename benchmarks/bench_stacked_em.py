"""The EM fits of a study's repeats advanced together (stacked) against one EM run per repeat.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_stacked_em.py           # two sizes, about a minute
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_stacked_em.py --quick   # seconds

Problems: B = 100 repeats of the binomial sampled ranks of M users (global ranks drawn, seeded,
from P(R) ∝ (R + 10)^-1.1) at (a) N = 3,706 items, n = 100, M = 6,040 (ml-1m-like, notebook 04's
n = 100 chunks) and (b) N = 35,351, n = 500, M = 21,000 (yelp-diffnet-like, notebook 04's largest
chunks). Each repeat's MLE runs 100 EM steps from the uniform start (AAAI'21 eq. 21, the study's
default), on the banded kernel P(r | R) of the sampled ranks.

* ``one by one``: :func:`itemsampling.em.em_mixture_weights` once per repeat on the kernel
  columns of the ranks that repeat observed (what the study did per draw);
* ``stacked``: :func:`itemsampling.em.em_mixture_weights_many` with matrix products on all B repeats at once (the
  columns of the ranks observed in any repeat; what the study does now), its result checked
  against the first (``value``: the largest relative difference of any P̂(R) above 1e-12);
* ``GEMM peak``: the two matrix products of one stacked step as dense GEMMs of the same total
  size ((N, w) @ (w, B) and its transpose, w the average stored band width): the machine's
  arithmetic peak for these shapes. ``fraction`` is the GEMM time over the stacked step's time.

Times are the best of ``--repeats`` calls, seconds, one BLAS thread; ``speedup`` is
``base_time_s / time_s``; ``peak_MiB`` is the tracemalloc peak of one stacked call.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_estimators import (
    best_time,
    limit_threads,
    load_average,
    print_header,
    print_table,
    traced_peak_mib,
)

import itemsampling as its
from itemsampling.em import EMProblem, em_mixture_weights, em_mixture_weights_many
from itemsampling.kernels import KernelCache

COLUMNS = ("size", "method", "time_s", "baseline", "base_time_s", "speedup", "peak_MiB", "check", "value",
           "detail")
SIZES = {"a": (3_706, 100, 6_040), "b": (35_351, 500, 21_000)}
STEPS = 100


def sampled_counts(n_items: int, n: int, n_users: int, repeats: int, seed: int) -> np.ndarray:
    """``(n, repeats)`` number of users at each sampled rank in each repeat."""
    rng = np.random.default_rng(seed)
    R = np.arange(1, n_items + 1)
    p = (R + 10.0) ** -1.1
    global_ranks = rng.choice(R, size=n_users, p=p / p.sum())
    counts = np.zeros((n, repeats))
    for b in range(repeats):
        np.add.at(counts[:, b], its.sample_ranks(global_ranks, n_items, n, rng=rng) - 1, 1.0)
    return counts


def bench_size(size: str, n_items: int, n: int, n_users: int, repeats: int, timings: int, seed: int) -> list[dict]:
    counts = sampled_counts(n_items, n, n_users, repeats, seed)
    banded = KernelCache().banded(n_items, n)

    def one_by_one():
        out = []
        for b in range(repeats):
            seen = np.flatnonzero(counts[:, b])
            out.append(em_mixture_weights(banded.select_columns(seen), counts[seen, b], max_iter=STEPS, tol=0).weights)
        return out

    def stacked():
        problems = [EMProblem(counts[:, b], max_iter=STEPS, tol=0) for b in range(repeats)]
        return [res.weights for res in em_mixture_weights_many(banded, problems, products="matrix")]

    base_s, alone = best_time(one_by_one, max(1, timings // 2))
    ours_s, together = best_time(stacked, timings)
    worst = max(float(np.max(np.abs(a - b)[a > 1e-12] / a[a > 1e-12])) for a, b in zip(alone, together, strict=True))
    peak = traced_peak_mib(stacked)
    width = max(1, round(banded.stored_entries / n_items))
    rng = np.random.default_rng(seed)
    tile, right, left = rng.random((n_items, width)), rng.random((width, repeats)), rng.random((n_items, repeats))
    gemm_s, _ = best_time(lambda: (tile @ right, tile.T @ left), timings)
    step_s = ours_s / STEPS
    flops = 4.0 * banded.stored_entries * repeats
    detail = (f"B={repeats} repeats x {STEPS} EM steps; stored band {banded.stored_entries} entries (mean width "
              f"{width}); one stacked step {step_s * 1e3:.1f} ms = {flops / step_s / 1e9:.1f} GFlop/s")
    gemm_detail = (f"(N, w) @ (w, B) and its transpose, N={n_items} w={width} B={repeats}: "
                   f"{gemm_s * 1e3:.1f} ms = {flops / gemm_s / 1e9:.1f} GFlop/s; fraction of it reached by a stacked "
                   f"step: {gemm_s / step_s:.2f}")
    return [
        {"size": size, "method": "stacked EM", "time_s": ours_s, "baseline": "one EM per repeat",
         "base_time_s": base_s, "speedup": base_s / ours_s, "peak_MiB": peak, "check": "max_rel_diff_P(R)",
         "value": worst, "detail": detail},
        {"size": size, "method": "GEMM peak", "time_s": gemm_s, "baseline": "one stacked EM step",
         "base_time_s": step_s, "speedup": step_s / gemm_s, "peak_MiB": float("nan"), "check": "fraction",
         "value": gemm_s / step_s, "detail": gemm_detail},
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 1,000, n = 50, M = 2,000, 8 repeats")
    parser.add_argument("--sizes", default="ab", help="which of the sizes a, b to run (default: both)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls (best of)")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args(argv)
    threads = limit_threads(1)
    print_header("stacked EM", args.quick, args.seed, threads)
    problems = {"quick": (1_000, 50, 2_000, 8)} if args.quick else {
        s: (*SIZES[s], 100) for s in args.sizes}
    rows = []
    for size, (n_items, n, n_users, repeats) in problems.items():
        start = time.perf_counter()
        rows += bench_size(size, n_items, n, n_users, repeats, args.repeats, args.seed)
        print(f"# size {size}: N={n_items} n={n} M={n_users} B={repeats} ({time.perf_counter() - start:.0f} s)")
    print(f"# load average at end (1, 5, 15 min): {load_average()}")
    print_table(rows, COLUMNS)
    bad = [r for r in rows if r["check"] == "max_rel_diff_P(R)" and not r["value"] <= 1e-9]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
