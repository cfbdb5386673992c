"""The adaptive MLE through the public API against the AAAI'23 authors' per-user loop.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_adaptive.py           # three sizes, minutes
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_adaptive.py --quick   # one small size, seconds

Problems: (a) N = 3,706 items, M = 6,040 users (ml-1m-like); (b) N = 20,000, the same M = 6,040;
(c) N = 20,720, M = 136,677 (pinterest-20-like, as size b of ``bench_estimators.py``). Global ranks
are drawn (seeded) from P(R) ∝ (R + 10)^-1.1, then adaptive sampling with replacement (Li et al.
AAAI 2023, Algorithm 1; :func:`itemsampling.adaptive_sample_ranks`) from n_0 = 100 doubling up to
n_max = 3,200. On the same sampled ranks and sample sizes:

1. ``rank_distribution``: :func:`itemsampling.rank_distribution` with ``adaptive_mle`` (eq. 12,
   App. G) for 50 EM steps from the uniform start (``max_iter=50, tol=0``), against

   * **the authors' per-user loop**, as their adaptive estimator script computes it (with torch
     on the CPU, :func:`authors_loop`): the whole kernel P(r | R; n) of every n of the ladder from
     ``scipy.stats.binom.pmf``, then 50 EM steps, each a Python loop over the users adding
     π ⊙ P(r_u | ·; n_u) / Σ_R π_R P(r_u | R; n_u) (App. G eq. 21-22); the time includes the
     kernels (their share is in ``detail``);
   * **whole kernels**: the same call with a :class:`~itemsampling.kernels.KernelCache` that
     builds the whole kernel of every n_u (``full_kernels=True``, what one call did before it
     computed only the observed columns).

   ``value`` is max_R |P̂_ours(R) − P̂_base(R)|.
2. ``estimate``: :func:`itemsampling.estimate` with ``adaptive_mle`` (defaults: 100 EM steps) and
   150 targets (Recall, NDCG, AP at K = 1..50), against the same call with whole kernels;
   ``value`` is the largest relative difference of the 150 estimates.
3. ``study engine``: :func:`itemsampling_study.engine.repeat_adaptive_estimates` (150 targets)
   with a cache that computes only the columns observed in any of its draws, once for all of
   them (the engine's default), against a cache that keeps whole kernels (built by the first
   call and sliced by the later ones): one draw, then the time per draw of a call with
   ``--draws`` draws on the same caches. ``value``: the largest relative difference of the
   estimates.

Times are the best wall time of ``--repeats`` calls (the authors' loop: one call), seconds, with
all BLAS/OpenMP libraries limited to one thread. ``speedup`` is ``base_time_s / time_s``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from bench_estimators import (
    best_time,
    limit_threads,
    load_average,
    print_header,
    print_table,
    rank_distribution,
)
from scipy import stats

import itemsampling as its
from itemsampling import distributions
from itemsampling.kernels import KernelCache
from itemsampling_study.engine import repeat_adaptive_estimates

COLUMNS = ("size", "task", "method", "time_s", "baseline", "base_time_s", "speedup", "check", "value", "detail")
METRICS, KS = ("recall", "ndcg", "ap"), tuple(range(1, 51))
STEPS = 50  # EM steps of the authors' adaptive estimator script
TARGET = 300.0  # the public call against the authors' per-user loop


@dataclass(frozen=True)
class Size:
    label: str
    n_items: int
    n_users: int
    n0: int
    n_max: int


FULL_SIZES = (Size("a", 3_706, 6_040, 100, 3_200), Size("b", 20_000, 6_040, 100, 3_200),
              Size("c", 20_720, 136_677, 100, 3_200))
QUICK_SIZES = (Size("q", 1_000, 2_000, 100, 800),)


def authors_loop(ranks, sizes, n_items, steps=STEPS):
    """The per-user EM of the authors' adaptive estimator script; returns P̂ and the kernel seconds.

    As there: the kernels from ``scipy.stats.binom.pmf`` as torch tensors, and in every step one
    row copy, product, normalisation and sum per user, on the CPU with one thread. Two changes
    that make it faster, not slower: a dict lookup of the kernel of n_u instead of ``eval`` of its
    name, and π in float64 (the script's ``torch.ones(N) / N`` is float32), so that both sides
    compute the same P̂.
    """
    import torch  # the authors' code runs on torch; a dependency of the package's models

    torch.set_num_threads(1)
    start = time.perf_counter()
    theta = (np.arange(1, n_items + 1) - 1) / (n_items - 1)
    kernels = {int(n): torch.tensor(stats.binom.pmf(np.arange(n)[:, None], n - 1, theta[None, :]))
               for n in np.unique(sizes)}
    kernel_s = time.perf_counter() - start
    pi = torch.ones(n_items, dtype=torch.float64) / n_items
    for _ in range(steps):
        new = torch.zeros_like(pi)
        for r, n in zip(ranks.tolist(), sizes.tolist(), strict=True):
            joint = kernels[n][r - 1].clone().detach() * pi
            new += joint / joint.sum()
        pi = new / ranks.size
    return pi.numpy(), kernel_s


def whole_kernels() -> KernelCache:
    return KernelCache(full_kernels=True)


def relative_difference(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def row(size, task, method, time_s, baseline, base_time_s, check, value, detail) -> dict:
    return {"size": size.label, "task": task, "method": method, "time_s": time_s, "baseline": baseline,
            "base_time_s": base_time_s, "speedup": base_time_s / time_s, "check": check, "value": value,
            "detail": detail}


def bench_size(size: Size, seed: int, repeats: int, draws: int) -> list[dict]:
    gen = np.random.default_rng(seed)
    global_ranks = gen.choice(size.n_items, size=size.n_users, p=rank_distribution(size.n_items)) + 1
    ranks, sizes = its.adaptive_sample_ranks(global_ranks, size.n_items, size.n0, size.n_max, rng=gen)
    N = size.n_items
    pairs = np.unique(np.stack([sizes, ranks]), axis=1).shape[1]
    ladder = np.unique(sizes)
    about = (f"{pairs} distinct (n_u, r_u) for {ranks.size} users; mean n_u {sizes.mean():.0f}; "
             f"whole kernels: {int(ladder.sum())} columns, {N * int(ladder.sum()) * 8 / 2**20:.0f} MiB")
    rows = []

    t, ours = best_time(lambda: its.rank_distribution(ranks, N, sizes, "adaptive_mle", max_iter=STEPS, tol=0),
                        repeats)
    t_base, (base, kernel_s) = best_time(lambda: authors_loop(ranks, sizes, N), 1)
    rows.append(row(size, "rank_distribution", f"public API, {STEPS} EM steps", t, "authors' per-user loop",
                    t_base, "max_abs_diff_P(R)", float(np.max(np.abs(ours - base))),
                    f"authors' kernels {kernel_s:.2f} s of it; {about}"))
    t_whole, whole = best_time(lambda: distributions.adaptive_mle(ranks, N, sizes, max_iter=STEPS, tol=0,
                                                                  cache=whole_kernels()), repeats)
    rows.append(row(size, "rank_distribution", f"public API, {STEPS} EM steps", t, "whole kernels", t_whole,
                    "max_abs_diff_P(R)", float(np.max(np.abs(ours - whole))), "the same call building every kernel"))

    def call(cache=None):
        if cache is None:
            return its.estimate(ranks, N, sizes, "adaptive_mle", METRICS, KS)
        return its.estimate_many(ranks, N, sizes, [its.Estimator("adaptive_mle")], METRICS, KS, cache=cache)

    t, table = best_time(call, repeats)
    t_whole, whole = best_time(lambda: call(whole_kernels()), repeats)
    rows.append(row(size, "estimate", "public API, 150 targets", t, "whole kernels", t_whole, "max_rel_diff",
                    relative_difference(table["estimate"], whole["estimate"]), "adaptive_mle, default 100 EM steps"))

    def engine(cache, repeats):
        return repeat_adaptive_estimates(
            global_ranks, N, targets=[(m, k) for m in METRICS for k in KS], n0=size.n0, n_max_values=[size.n_max],
            seed=seed, labels={"dataset": "synthetic", "model": "m", "protocol": "all"}, repeats=repeats,
            cache=cache, progress=False)

    shared, columns = whole_kernels(), KernelCache(full_kernels=False)
    t_shared, _ = best_time(lambda: engine(shared, 1), 1)
    t_cols, _ = best_time(lambda: engine(columns, 1), 1)
    rows.append(row(size, "study engine", "observed columns, first draw", t_cols, "whole kernels, first draw",
                    t_shared, "", float("nan"), "repeat_adaptive_estimates, 150 targets: the draw that builds the kernels"))
    t_shared, by_shared = best_time(lambda: engine(shared, draws), 1)
    t_cols, by_cols = best_time(lambda: engine(columns, draws), 1)
    rows.append(row(size, "study engine", "observed columns, later draws", t_cols / draws,
                    "whole kernels, reused", t_shared / draws, "max_rel_diff",
                    relative_difference(by_cols["estimate"], by_shared["estimate"]),
                    f"time per draw of {draws} more draws on the same cache"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 1,000, M = 2,000, n_max = 800 (seconds)")
    parser.add_argument("--sizes", default="a,b,c", help="comma-separated size labels of the full run (default a,b,c)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls of the package (default 5)")
    parser.add_argument("--draws", type=int, default=10, help="later draws of the study engine (default 10)")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args(argv)
    threads = limit_threads(1)
    labels = {s.strip() for s in args.sizes.split(",")}
    sizes = QUICK_SIZES if args.quick else [s for s in FULL_SIZES if s.label in labels]
    if not sizes:
        raise SystemExit(f"--sizes must name some of a, b, c; got {args.sizes!r}")
    print_header("adaptive MLE", args.quick, args.seed, threads)
    for s in sizes:
        print(f"# size {s.label}: N={s.n_items}, M={s.n_users}, n0={s.n0}, n_max={s.n_max}, binomial")
    rows = []
    for index, size in enumerate(sizes):
        rows += bench_size(size, args.seed + index, args.repeats, args.draws)
        print(f"# done: size {size.label}", file=sys.stderr, flush=True)
    print(f"# load average at end (1, 5, 15 min): {load_average()}")
    print_table(rows, COLUMNS)
    low = min(r["speedup"] for r in rows if r["baseline"] == "authors' per-user loop")
    verdict = "quick sizes, no target" if args.quick else f"target {TARGET:.0f}x: {'met' if low >= TARGET else 'NOT met'}"
    print(f"# public adaptive MLE vs the authors' per-user loop: {low:.0f}x at least ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
