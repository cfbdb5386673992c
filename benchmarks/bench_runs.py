"""Reading and correcting a RecBole uni100 run of many users: :func:`itemsampling.read_run` and
:func:`itemsampling.correct` against the baseline of reading the same ranks with pandas and calling
:func:`itemsampling.estimate` on them (the readers' overhead is the ratio). Then a run with several
positives per user as RecBole's ratio split gives it (100 negatives drawn with replacement for each
positive, ranked among the union of the user's draws, so n grows with the user's positives):
``posterior_mle``, which keeps every positive's n, against ``mn_mes`` on positives brought to the
smallest n, both with the analytic interval.

    python benchmarks/bench_runs.py            # 100,000 users; 20,000 users with 1-9 positives
    python benchmarks/bench_runs.py --quick    # 10,000 users; 2,000 users
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import itemsampling as its
from itemsampling.positive_sampling import sample_union_ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--users", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    users = args.users or (10_000 if args.quick else 100_000)
    n_items, n = 3706, 101
    rng = np.random.default_rng(args.seed)
    global_ranks = np.minimum(np.ceil(rng.lognormal(4.0, 1.5, size=users)), n_items).astype(int)
    ranks = its.sample_ranks(global_ranks, n_items, n, rng=rng, scheme="hypergeometric")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sampled_ranks.csv"
        pd.DataFrame({"user_id": np.arange(users), "rank": ranks, "n_candidates": n, "n_items": n_items,
                      "mode": "uni100"}).to_csv(path, index=False)
        options = dict(metrics=["recall", "ndcg"], ks=[10, 20], interval=0.95)
        start = time.perf_counter()
        ours = its.correct(its.read_run(path, "recbole"), "mn_mes", **options)
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        table = pd.read_csv(path)
        base = its.estimate(table["rank"].to_numpy(), n_items, n, "mn_mes", scheme="hypergeometric", **options)
        base_s = time.perf_counter() - start
    diff = float(np.abs(ours["estimate"].to_numpy() - base["estimate"].to_numpy()).max())
    print(f"# bench_runs: {users:,} users, N = {n_items}, n = {n}; cpus {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print("| task | users | time_s | base_time_s | ratio | max_abs_diff_estimate |")
    print("|---|---|---|---|---|---|")
    print(f"| read_run + correct | {users} | {ours_s:.2f} | {base_s:.2f} | {ours_s / base_s:.2f} | {diff:.1e} |")
    ratio_run = _ratio_split_run(2_000 if args.quick else 20_000, n_items, rng)
    times = {}
    for method in ("posterior_mle", "mn_mes"):
        start = time.perf_counter()
        its.correct(ratio_run, method, **options)
        times[method] = time.perf_counter() - start
    sizes = ratio_run.sample_size
    print(f"\n# several positives: {ratio_run.ranks.size:,} positives of {np.unique(ratio_run.users).size:,} users, "
          f"n from {sizes.min()} to {sizes.max()} (median {int(np.median(sizes))}); load {os.getloadavg()[0]:.1f}")
    print("| task | positives | time_s | base_time_s | ratio |")
    print("|---|---|---|---|---|")
    print(f"| correct posterior_mle (base: mn_mes, thinned) | {ratio_run.ranks.size} | {times['posterior_mle']:.2f} | "
          f"{times['mn_mes']:.2f} | {times['posterior_mle'] / times['mn_mes']:.2f} |")


def _ratio_split_run(users: int, n_items: int, rng) -> its.Run:
    """A RecBole uni100 run of a ratio split: 1-9 positives per user, 100 negatives drawn with
    replacement for each from the user's other items, each positive ranked among the union
    (:func:`itemsampling.positive_sampling.sample_union_ranks`)."""
    p_u = rng.integers(1, 10, users)
    user_ids = np.repeat(np.arange(users), p_u)
    pool = n_items - p_u[user_ids]  # each user's non-relevant items
    negative_ranks = np.minimum(np.ceil(rng.lognormal(3.5, 1.5, user_ids.size)), pool).astype(int)
    ranks, sizes = sample_union_ranks(negative_ranks, user_ids, n_items, p_u[user_ids], 100, rng=rng)
    table = pd.DataFrame({"user_id": user_ids, "rank": ranks, "n_candidates": sizes, "n_items": n_items,
                          "n_positives": p_u[user_ids], "mode": "uni100"})
    return its.read_run(table, "recbole", model="ratio")


if __name__ == "__main__":
    main()
