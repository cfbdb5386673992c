"""Live adaptive evaluation against full ranking, with the same EASE model.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_live_adaptive.py            # ml-1m (needs its data file)
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_live_adaptive.py --quick    # synthetic data, seconds

EASE is trained in the script (registry hyper-parameters of the dataset). Then, under one
candidate protocol (default ``unseen``):

* **full ranking**: :func:`itemsampling.ranks.global_ranks` scores all N items for each of the
  M test users (``Recommender.score``, a sparse x dense product) and ranks every held-out item;
  the exact metrics follow from these ranks;
* **live adaptive**: :func:`itemsampling.evaluate_adaptive` runs Algorithm 1 of Li et al.
  (AAAI 2023) against ``EASE.score_items``, which computes only the requested scores
  (Σ_{i in train_u} B[i, item]), and estimates the metrics by adaptive MLE.

Printed: wall times (best of ``--repeats``; the live time includes the estimate, whose share
is shown), items scored (M x N against Σ_u n_u) and their ratios, and the estimated against
the exact Recall@10 and NDCG@10 of the same model. The ratios compare the two evaluations on
this machine; the items-scored ratio is what a model whose per-item cost dominates (a remote
service, a large network) would save.
"""

from __future__ import annotations

import argparse
import os
import time

import itemsampling as its
from itemsampling.data import load_dataset
from itemsampling.models.registry import make_model
from itemsampling.ranks import global_ranks

TARGETS = [("recall", 10), ("ndcg", 10)]


def best_time(function, repeats: int):
    """Smallest wall time of ``repeats`` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the registry's synthetic data (2,000 users, 1,000 items), n0 = 20, n_max = 100")
    parser.add_argument("--dataset", default="ml-1m", help="registered dataset (default ml-1m)")
    parser.add_argument("--protocol", default="unseen", choices=("unseen", "all"))
    parser.add_argument("--n0", type=int, default=100, help="initial sample set size (default 100)")
    parser.add_argument("--n-max", type=int, default=400,
                        help="terminal sample set size (default 400, about 11%% of ml-1m's items)")
    parser.add_argument("--replace", action="store_true", help="sample with replacement (default: without)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per side (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:
        args.dataset, args.n0, args.n_max, args.repeats = "synthetic", 20, 100, 1

    dataset = load_dataset(args.dataset)
    model = make_model("ease", args.dataset)
    start = time.perf_counter()
    model.fit(dataset.train, seed=args.seed)
    fit_seconds = time.perf_counter() - start
    exclude = dataset.train if args.protocol == "unseen" else None
    metrics, ks = [m for m, _ in TARGETS], sorted({k for _, k in TARGETS})

    full_s, full = best_time(lambda: global_ranks(model, dataset.test_items, protocols=[args.protocol],
                                                  seed=args.seed, progress=False)[args.protocol], args.repeats)
    live_s, live = best_time(lambda: its.evaluate_adaptive(
        model.score_items, dataset.test_items, dataset.n_items, exclude=exclude, n0=args.n0, n_max=args.n_max,
        replace=args.replace, rng=args.seed, tie_seed=args.seed, metrics=metrics, ks=ks, progress=False),
        args.repeats)
    estimate_s, _ = best_time(lambda: live.estimate(metrics, ks), args.repeats)
    exact = its.global_metrics(full["rank"], full["n_candidates"].to_numpy(), metrics, ks)
    exact = exact.set_index(["metric", "k"])["value"]
    estimated = live.estimates.set_index(["metric", "k"])["estimate"]

    cost = live.cost
    print(f"# live adaptive evaluation vs full ranking: EASE {model.hyperparameters} on {args.dataset} "
          f"({args.protocol}), fit {fit_seconds:.1f} s")
    print(f"# M = {cost.n_users} test users, N = {cost.n_items} items; n0 = {args.n0}, n_max = {args.n_max}, "
          f"{'with' if args.replace else 'without'} replacement; mean n_u = {live.ranks['sample_size'].mean():.1f}; "
          f"scorer calls {cost.calls}")
    print(f"# times: best of {args.repeats}, seconds; cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print("\n| quantity | full ranking | live adaptive | live / full |")
    print("|---|---|---|---|")
    print(f"| items scored | {cost.full_ranking} | {cost.items_scored} | {cost.fraction:.4f} |")
    print(f"| wall time s | {full_s:.3f} | {live_s:.3f} | {live_s / full_s:.3f} |")
    print(f"| of which estimate s |  | {estimate_s:.3f} |  |")
    for metric, k in TARGETS:
        print(f"| {metric}@{k} | {exact[metric, k]:.4f} (exact) | {estimated[metric, k]:.4f} (estimate) | "
              f"{estimated[metric, k] / exact[metric, k]:.3f} |")


if __name__ == "__main__":
    main()
