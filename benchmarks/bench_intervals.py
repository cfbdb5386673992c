"""Cost and coverage of the confidence intervals of :mod:`itemsampling.intervals`.

Run from the repository root (``ITEMSAMPLING`` ranks are read from ``results/ranks``)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_intervals.py cost
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_intervals.py --quick     # cost on ml-1m, about a minute
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_intervals.py coverage-sim --repeats 100
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_intervals.py coverage-real --repeats 40
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_intervals.py bootstrap --n-bootstrap 200

* ``cost``: one draw of n = 100 sampled items per user from the global ranks of EASE
  (``unseen``) on ml-1m and yelp-diffnet; for each estimator alone, the time of the estimate,
  of the estimate with the analytic interval, and of ``--boot-reps`` bootstrap replicates (scaled
  to 200); then all twelve estimators in one call. Targets: Recall@10 and NDCG@10.
* ``coverage-sim``: fixed users whose global ranks are drawn once from P(R) ∝ (R + 10)^-1.1
  (N = 3,706, M = 6,040, as ml-1m); every repeat samples n = 100 items per user; the analytic
  95% interval of every estimator against the exact value of those users.
* ``coverage-real``: the same with the global ranks of EASE on ml-1m (``unseen``, per-user N_u).
* ``bootstrap``: on the first repeat of ``coverage-real``, the bootstrap se next to the
  analytic one.

Every table also gives ``sd/se``: the standard deviation of the estimate over the repeats
divided by the mean analytic se (below 1: the interval is wider than the item-sampling noise
of these fixed users, see :mod:`itemsampling.intervals`), and ``bias/se``: (mean estimate −
exact) / mean se. Times are wall-clock seconds of single calls on a shared machine (upper
bounds; the ratios matter).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import itemsampling as its
from itemsampling.estimators import Estimator, estimate_many
from itemsampling.intervals import interval_coverage
from itemsampling.kernels import KernelCache
from itemsampling_study.engine import derive_seed, repeat_estimates

ESTIMATORS = [Estimator(m) for m in ("sampled", "rank_estimate", "cls", "bv", "mn", "mle", "wmle", "mes",
                                     "bv_mle", "bv_mes", "mn_mle", "mn_mes")]
TARGETS = [("recall", 10), ("ndcg", 10)]
SAMPLE_SIZE = 100
LEVEL = 0.95
ROOT = Path(__file__).resolve().parents[1]


def ease_ranks(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    table = pd.read_parquet(ROOT / "results" / "ranks" / dataset / "ease" / "unseen.parquet")
    return table["rank"].to_numpy(), table["n_candidates"].to_numpy()


def power_law_ranks(n_items: int, n_users: int, seed: int) -> np.ndarray:
    R = np.arange(1, n_items + 1)
    p = (R + 10.0) ** -1.1
    return np.random.default_rng(seed).choice(R, size=n_users, p=p / p.sum())


def timed(call):
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def markdown(frame: pd.DataFrame) -> str:
    def cell(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def time_group(sampled, n_items, group, cache, boot_reps: int) -> dict:
    """Seconds of one call without interval, with the analytic one, and of 200 bootstrap replicates."""
    def run(**kw):
        return estimate_many(sampled, n_items, SAMPLE_SIZE, group, targets=TARGETS, cache=cache, warn=False, **kw)

    run()  # kernels and fixed-prior operators into the cache, as in a study
    _, plain = timed(run)
    _, analytic = timed(lambda: run(interval=LEVEL))
    _, boot = timed(lambda: run(interval=LEVEL, interval_method="bootstrap", n_bootstrap=boot_reps))
    return {"estimate_s": plain, "with_analytic_s": analytic, "analytic_ratio": analytic / plain,
            "bootstrap_200_s": boot * 200 / boot_reps, "bootstrap_ratio": boot * 200 / boot_reps / plain}


def cost(args) -> pd.DataFrame:
    rows = []
    for dataset in ("ml-1m",) if args.quick else ("ml-1m", "yelp-diffnet"):
        R, N = ease_ranks(dataset)
        sampled = its.sample_ranks(R, N, SAMPLE_SIZE, rng=args.seed)
        cache = KernelCache()
        for group in [[e] for e in ESTIMATORS] + [ESTIMATORS]:
            label = group[0].label if len(group) == 1 else f"all {len(group)}"
            rows.append({"dataset": dataset, "estimator": label, **time_group(sampled, N, group, cache, args.boot_reps)})
            print(markdown(pd.DataFrame(rows[-1:])).splitlines()[-1], flush=True)
    return pd.DataFrame(rows)


def coverage_table(runs: pd.DataFrame) -> pd.DataFrame:
    out = interval_coverage(runs)
    spread = runs.groupby(["estimator", "metric", "k"], sort=False).agg(
        sd=("estimate", "std"), mean=("estimate", "mean"), se=("se", "mean"), exact=("exact", "first")).reset_index()
    out = out.merge(spread, on=["estimator", "metric", "k"])
    out["sd/se"] = out["sd"] / out["se"]
    out["bias/se"] = (out["mean"] - out["exact"]) / out["se"]
    return out[["dataset", "model", "estimator", "metric", "k", "repeats", "coverage", "mean_width", "exact",
                "mean", "sd/se", "bias/se"]]


def coverage(args, real: bool) -> pd.DataFrame:
    if real:
        R, N = ease_ranks("ml-1m")
        labels = {"dataset": "ml-1m", "model": "ease", "protocol": "unseen"}
    else:
        R, N = power_law_ranks(3706, 6040, args.seed), 3706
        labels = {"dataset": "simulated", "model": "power-law", "protocol": "all"}
    runs = repeat_estimates(R, N, estimators=ESTIMATORS, targets=TARGETS, sample_sizes=[SAMPLE_SIZE],
                            seed=args.seed, labels=labels, repeats=args.repeats, interval=LEVEL)
    return coverage_table(runs)


def bootstrap(args) -> pd.DataFrame:
    R, N = ease_ranks("ml-1m")
    rng = np.random.default_rng(derive_seed(args.seed, "ml-1m", "ease", "unseen", "binomial", SAMPLE_SIZE, 0))
    sampled = its.sample_ranks(R, N, SAMPLE_SIZE, rng=rng)  # the first repeat of coverage-real
    cache = KernelCache()

    def run(**kw):
        return estimate_many(sampled, N, SAMPLE_SIZE, ESTIMATORS, targets=TARGETS, cache=cache, warn=False,
                             interval=LEVEL, **kw)

    analytic, analytic_s = timed(run)
    boot, boot_s = timed(lambda: run(interval_method="bootstrap", n_bootstrap=args.n_bootstrap, seed=args.seed))
    out = analytic[["estimator", "metric", "k", "estimate", "se", "lower", "upper"]].copy()
    out["boot_se"], out["boot_lower"], out["boot_upper"] = boot["se"], boot["lower"], boot["upper"]
    out["se/boot_se"] = out["se"] / out["boot_se"]
    print(f"# all estimators: analytic {analytic_s:.1f} s, bootstrap ({args.n_bootstrap} replicates) {boot_s:.0f} s")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", nargs="?", default="cost", choices=("cost", "coverage-sim", "coverage-real", "bootstrap"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--boot-reps", type=int, default=3, help="bootstrap replicates timed by 'cost'")
    parser.add_argument("--n-bootstrap", type=int, default=200, help="replicates of 'bootstrap'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="also write the table as CSV")
    parser.add_argument("--quick", action="store_true", help="'cost' on ml-1m only, two bootstrap replicates timed")
    args = parser.parse_args(argv)
    if args.quick:
        args.boot_reps = 2
    print(f"# {args.part}: n={SAMPLE_SIZE} level={LEVEL} cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}", flush=True)
    table = {"cost": cost, "coverage-sim": lambda a: coverage(a, False), "coverage-real": lambda a: coverage(a, True),
             "bootstrap": bootstrap}[args.part](args)
    print(f"# load at the end {os.getloadavg()[0]:.2f}")
    print(markdown(table))
    if args.output:
        table.to_csv(args.output, index=False)


if __name__ == "__main__":
    main()
