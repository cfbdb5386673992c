"""Reading and correcting a RecBole uni100 run of many users: :func:`itemsampling.read_run` and
:func:`itemsampling.correct` against the baseline of reading the same ranks with pandas and calling
:func:`itemsampling.estimate` on them (the readers' overhead is the ratio).

    python benchmarks/bench_runs.py            # 100,000 users, N = 3,706, 100 sampled negatives
    python benchmarks/bench_runs.py --quick    # 10,000 users
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


if __name__ == "__main__":
    main()
