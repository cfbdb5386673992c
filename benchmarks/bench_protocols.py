"""Speed and memory of a corrected popularity-sampled estimate against the uniform MN_MES call.

Run from the repository root::

    .venv/bin/python benchmarks/bench_protocols.py            # M = 100,000, n = 100, N = 100,000
    .venv/bin/python benchmarks/bench_protocols.py --quick    # M = 5,000, N = 5,000

Problem: M users, each with n - 1 = 99 negatives drawn with replacement with per-draw
probability p_j ∝ count_j (Zipf counts) from N items, and a global rank R_u drawn from
P(R) ∝ (R + 10)^-1.1. Whether a drawn item scores above the target comes from a per-user
pseudo-random item order (item j sits at position (a·j + b·u) mod N, above iff < R_u - 1).
Timed calls, each for the 150 targets recall, ndcg, ap × K = 1..50:

- ``uniform mn_mes`` (baseline): :func:`itemsampling.estimate` with ``mn_mes`` on the sampled
  ranks r_u of a uniform sample of the same size, summing over every global rank
  (``grid="exact"``), and ``uniform mn_mes, grid`` the same call on the coarse grid of
  :mod:`itemsampling.rank_grid` (the default from N = 100,000 on);
- ``hansen_hurwitz`` and ``horvitz_thompson``: :func:`itemsampling.nonuniform.estimate_sampled`
  on the M·(n-1) drawn negatives (long format) and the items' probabilities.

Times are the best of ``--repeats`` wall times (``time.perf_counter``); ``peak_MiB`` is the
``tracemalloc`` peak of one further traced call (numpy reports its buffers to tracemalloc), not
counting the inputs. The ratio is the time over the baseline's (target: at most 5).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import timed

import itemsampling as its
from itemsampling import nonuniform as nu


def problem(n_users: int, n_items: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = (np.arange(1, n_items + 1) + 10.0) ** -1.1
    global_ranks = rng.choice(np.arange(1, n_items + 1), n_users, p=w / w.sum())
    p = nu.popularity_probabilities(rng.zipf(1.5, n_items).clip(max=10**6))
    draws = nu.draw_negatives(n_users, n - 1, rng, probabilities=p)
    position = (7919 * draws + 104729 * np.arange(n_users)[:, None]) % n_items
    above = position < (global_ranks - 1)[:, None]
    users = np.repeat(np.arange(n_users), n - 1)
    uniform_ranks = its.sample_ranks(global_ranks, n_items, n, rng=rng)
    pi = nu.inclusion_probabilities("popularity", n_items, n - 1, probabilities=p, replace=True)
    return dict(users=users, negatives=draws.ravel(), above=above.ravel(), p=p, pi=pi,
                uniform_ranks=uniform_ranks)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = N = 5,000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n_users = n_items = 5_000 if args.quick else 100_000
    n = 100
    prob = problem(n_users, n_items, n)
    ks, metrics = range(1, 51), ("recall", "ndcg", "ap")
    calls = {
        "uniform mn_mes": lambda: its.estimate(prob["uniform_ranks"], n_items, n, "mn_mes", metrics, ks,
                                               grid="exact"),
        "uniform mn_mes, grid": lambda: its.estimate(prob["uniform_ranks"], n_items, n, "mn_mes", metrics, ks,
                                                     grid="coarse"),
        "hansen_hurwitz": lambda: nu.estimate_sampled(
            prob["users"], prob["negatives"], prob["above"], n_items, method="hansen_hurwitz",
            probabilities=prob["p"], metrics=metrics, ks=ks),
        "horvitz_thompson": lambda: nu.estimate_sampled(
            prob["users"], prob["negatives"], prob["above"], n_items, method="horvitz_thompson",
            inclusion=prob["pi"], metrics=metrics, ks=ks),
    }
    print(f"M = {n_users:,} users, n = {n}, N = {n_items:,} items, 150 (metric, K) targets")
    print("| call | seconds | ratio to uniform mn_mes | peak_MiB |")
    print("|---|---|---|---|")
    base = None
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rank estimates beyond N and duplicated draws
            seconds, peak, _ = timed(call, args.repeats)
        base = base or seconds
        print(f"| {name} | {seconds:.3f} | {seconds / base:.2f} | {peak:.1f} |")


if __name__ == "__main__":
    main()
