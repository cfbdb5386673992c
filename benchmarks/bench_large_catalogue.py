"""Speed and memory of the estimators on catalogues of millions of items (the coarse grid).

Run from the repository root::

    .venv/bin/python benchmarks/bench_large_catalogue.py            # M = 10^6 users; N = 10^6 and 10^7
    .venv/bin/python benchmarks/bench_large_catalogue.py --quick    # M = 10^4; N = 10^5 and 10^6
    /usr/bin/time -v .venv/bin/python benchmarks/bench_large_catalogue.py --items 10000000 --method mle

Problem: M users with global ranks drawn from P(R) ∝ (R + 10)^-1.1 on 1..N (by inverting its
continuous CDF), sampled ranks from :func:`itemsampling.sample_ranks` with n = 100 (binomial), and
for ``adaptive_mle`` from :func:`itemsampling.adaptive_sample_ranks` with n_0 = 100, n_max = 3,200.
Each timed call is one :func:`itemsampling.estimate` of Recall and NDCG at K = 10 and 50:

- ``exact``: ``grid="exact"``, every global rank 1..N (the baseline), at the smaller N only
  (at N = 10^7 it takes minutes and gigabytes);
- ``coarse``: ``grid="auto"``, which takes the coarse-to-fine grid of
  :mod:`itemsampling.rank_grid` from N = 10^5 on.

Times are the best of ``--repeats`` wall times (``time.perf_counter``) with the inputs made
beforehand; ``peak_MiB`` is the ``tracemalloc`` peak of one further traced call (numpy reports its
buffers to tracemalloc), not counting the inputs. ``ratio`` is the exact path's time over the
coarse one's at the same N; ``max_diff`` the largest absolute difference of their estimates.
Run with one BLAS thread (``make bench`` sets it).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import timed

import itemsampling as its

METHODS = ("mle", "mn_mes", "adaptive_mle")


def global_ranks(n_users: int, n_items: int, rng: np.random.Generator) -> np.ndarray:
    """Ranks from P(R) ∝ (R + 10)^-1.1 on 1..N, by the inverse of the continuous CDF."""
    a = 0.1
    lo, hi = 10.5 ** -a, (n_items + 10.5) ** -a
    x = (lo - rng.random(n_users) * (lo - hi)) ** (-1.0 / a) - 10.0
    return np.clip(np.ceil(x), 1, n_items).astype(np.int64)


def problem(n_users: int, n_items: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    ranks = global_ranks(n_users, n_items, rng)
    adaptive, sizes = its.adaptive_sample_ranks(ranks, n_items, 100, 3200, rng=rng)
    return {"ranks": its.sample_ranks(ranks, n_items, 100, rng=rng), "adaptive": adaptive, "sizes": sizes}


def call(prob: dict, n_items: int, method: str, grid: str):
    ranks, sizes = (prob["adaptive"], prob["sizes"]) if method == "adaptive_mle" else (prob["ranks"], 100)
    return lambda: its.estimate(ranks, n_items, sizes, method, ("recall", "ndcg"), (10, 50), grid=grid)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 10^4; N = 10^5 and 10^6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--items", type=int, metavar="N",
                        help="only this N, on the grid (no exact baseline): for the peak resident memory "
                             "of one process under /usr/bin/time -v")
    parser.add_argument("--method", choices=METHODS, action="append", help="only these methods (repeatable)")
    args = parser.parse_args(argv)
    n_users, small, large = (10_000, 100_000, 1_000_000) if args.quick else (1_000_000, 1_000_000, 10_000_000)
    compared, alone = ((small,), (large,)) if args.items is None else ((), (args.items,))
    methods = args.method or METHODS
    warnings.simplefilter("ignore", its.ImpossibleEstimateWarning)
    print(f"M = {n_users:,} users, n = 100 (adaptive: 100..3,200), Recall and NDCG at K = 10, 50")
    print("| N items | method | grid | time_s | peak_MiB | ratio | max_diff |")
    print("|---|---|---|---|---|---|---|")
    for n_items in compared + alone:
        prob = problem(n_users, n_items)
        for method in methods:
            coarse_s, coarse_mib, coarse = timed(call(prob, n_items, method, "auto"), args.repeats)
            if n_items in compared:
                exact_s, exact_mib, exact = timed(call(prob, n_items, method, "exact"), 1)
                diff = float(np.abs(exact["estimate"] - coarse["estimate"]).max())
                print(f"| {n_items:,} | {method} | exact | {exact_s:.3f} | {exact_mib:.0f} | 1 | |")
                print(f"| {n_items:,} | {method} | coarse | {coarse_s:.3f} | {coarse_mib:.0f} | "
                      f"{exact_s / coarse_s:.0f} | {diff:.1e} |")
            else:
                print(f"| {n_items:,} | {method} | coarse | {coarse_s:.3f} | {coarse_mib:.0f} | | |")


if __name__ == "__main__":
    main()
