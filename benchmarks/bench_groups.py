"""How much one shared rank kernel changes the estimates, against the sampling noise.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_groups.py                   # three data sets
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_groups.py --exact-draws 3   # and the exact kernels
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_groups.py --quick           # pinterest-subset, 3 draws

When the N_u of all users lie within :data:`itemsampling.candidates.GROUP_TOLERANCE` of their
mean (root-mean-square of ln(N_u / N̄)), every candidate group uses the kernel of N̄ instead of
that of its own mean N_g (:mod:`itemsampling.candidates`). For each data set (EASE's committed
``unseen`` ranks) this script draws ``--draws`` sampled-rank sets (n = ``--sample-size``) and
estimates Recall, NDCG and AP at K = 1, 5, 10, 20, 50 with the estimators of the estimator studies,
once with the shared kernel (the default) and once with one kernel per group (the tolerance set
to 0, the behaviour before). It prints, per estimator, the largest change over draws and targets
divided by the sampling noise (the standard deviation of that target's estimate over the draws),
and the largest absolute change.

With ``--exact-draws D`` the first D draws are also estimated with one group per distinct N_u
(``n_groups=None``, every user with its own kernel): the columns ``shared_vs_exact`` and
``groups_vs_exact`` compare both groupings with it. MN is left out of those two columns: with
exact groups each group's number of users M (MN's M) changes too, which is a different estimator.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling import candidates
from itemsampling.estimators import Estimator, estimate_many
from itemsampling.kernels import KernelCache
from itemsampling.simulation import sample_ranks

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = {e.label: e for e in [
    Estimator("cls"), Estimator("bv", {"gamma": 0.01}, name="bv_0.01"), Estimator("mle"), Estimator("wmle"),
    Estimator("mes"), Estimator("bv_mle"), Estimator("bv_mes"), Estimator("mn_mle"), Estimator("mn_mes")]}
TARGETS = [(m, k) for m in ("recall", "ndcg", "ap") for k in (1, 5, 10, 20, 50)]


def estimates(sampled, n_items, n, estimators, n_groups, tolerance, cache) -> np.ndarray:
    """(estimators, targets) estimates with the given grouping and shared-kernel tolerance."""
    saved = candidates.GROUP_TOLERANCE
    candidates.GROUP_TOLERANCE = tolerance
    try:
        table = estimate_many(sampled, n_items, n, estimators, targets=TARGETS, n_groups=n_groups, cache=cache,
                              warn=False)
    finally:
        candidates.GROUP_TOLERANCE = saved
    return table["estimate"].to_numpy().reshape(len(estimators), len(TARGETS))


def compare(dataset: str, model: str, n: int, estimators, draws: int, exact_draws: int, seed: int) -> pd.DataFrame:
    ranks = pd.read_parquet(ROOT / "results" / "ranks" / dataset / model / "unseen.parquet")
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    caches = {"shared": KernelCache(), "groups": KernelCache(), "exact": KernelCache(max_bytes=6 * 2**30)}
    runs = {"shared": [], "groups": [], "exact": []}
    for draw in range(draws):
        sampled = sample_ranks(R, N, n, rng=np.random.default_rng([seed, draw]))
        runs["shared"].append(estimates(sampled, N, n, estimators, candidates.DEFAULT_N_GROUPS,
                                        candidates.GROUP_TOLERANCE, caches["shared"]))
        runs["groups"].append(estimates(sampled, N, n, estimators, candidates.DEFAULT_N_GROUPS, 0.0, caches["groups"]))
        if draw < exact_draws:
            runs["exact"].append(estimates(sampled, N, n, estimators, None, 0.0, caches["exact"]))
    shared, groups = np.array(runs["shared"]), np.array(runs["groups"])
    noise = groups.std(axis=0, ddof=1)
    out = pd.DataFrame({
        "dataset": dataset,
        "rms_log_N": float(np.sqrt(np.mean(np.log(N / np.rint(N.mean())) ** 2))),
        "estimator": [e.label for e in estimators],
        "shared_vs_groups": (np.abs(shared - groups) / noise).max(axis=(0, 2)),
        "max_abs_change": np.abs(shared - groups).max(axis=(0, 2)),
    })
    if exact_draws:
        exact = np.array(runs["exact"])
        for name, run in (("shared", shared), ("groups", groups)):
            ratio = (np.abs(run[:exact_draws] - exact) / noise).max(axis=(0, 2))
            out[f"{name}_vs_exact"] = np.where(out["estimator"].str.startswith("mn"), np.nan, ratio)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["citeulike-a", "pinterest-subset", "yelp-diffnet"])
    parser.add_argument("--model", default="ease")
    parser.add_argument("--sample-size", type=int, default=100)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--exact-draws", type=int, default=0)
    parser.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=list(ESTIMATORS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="pinterest-subset only, 3 draws")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.draws = ["pinterest-subset"], 3
    estimators = [ESTIMATORS[label] for label in args.estimators]
    print(f"# shared kernel vs one kernel per group: {args.model}, unseen, n={args.sample_size}, {args.draws} draws "
          f"({args.exact_draws} with exact per-N_u kernels), GROUP_TOLERANCE={candidates.GROUP_TOLERANCE}; "
          f"ratios are |change| / sampling SD (max over draws and targets); load {os.getloadavg()[0]:.2f}")
    table = pd.concat([compare(d, args.model, args.sample_size, estimators, args.draws, args.exact_draws, args.seed)
                       for d in args.datasets])
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * table.shape[1])
    for row in table.itertuples(index=False):
        print("| " + " | ".join(v if isinstance(v, str) else f"{v:.2g}" for v in row) + " |")


if __name__ == "__main__":
    main()
