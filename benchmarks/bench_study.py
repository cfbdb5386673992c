"""Time per draw of the estimator studies on the committed ranks, against an earlier version.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_study.py                     # this version
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_study.py --baseline 82097a2  # and the ratio
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_study.py --quick             # seconds

One draw is what the estimator studies repeat 100 times per (data set, model, sample size): the
sampled ranks of all test users (``unseen`` protocol: per-user N_u, default candidate groups) and
every estimator of that sample size (:data:`ESTIMATORS`, 150 targets: Recall, NDCG and AP at
K = 1..50), through :func:`itemsampling_study.engine.repeat_estimates` with one
:class:`~itemsampling.kernels.KernelCache` per configuration. The global ranks are those of EASE
(``results/ranks/<dataset>/ease/unseen.parquet``; ``--model`` picks another).

For each configuration the script times the first draw (kernels and fixed-prior corrections
are computed there) and the mean of the next ``--draws`` draws, in CPU seconds of the process
(``time.process_time``: on a shared machine the wall time also counts other people's work;
it is printed as well). ``study_min`` projects one estimator study: 5 models x 100 repeats x the
time per draw, plus 5 first draws.

``--baseline REV`` runs the same draws (same seeds) with the package as of git revision REV
(``git archive REV src``, imported in a child process), prints its times, the ratio and the
largest absolute difference between the two versions' estimates. A baseline configuration that
runs longer than ``--baseline-timeout`` seconds is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: estimators of one draw at each sample size (notebooks 04 and 05)
ESTIMATORS = {
    100: [("sampled", {}, None), ("cls", {}, None), ("bv", {"gamma": 0.1}, "bv_0.1"), ("bv", {"gamma": 0.01}, "bv_0.01"),
          ("mle", {}, None), ("wmle", {}, None), ("mes", {}, None), ("bv_mle", {}, None), ("bv_mes", {}, None),
          ("mn_mle", {}, None), ("mn_mes", {}, None)],
    500: [("mle", {}, None), ("mes", {}, None), ("bv", {}, None), ("bv_mle", {}, None), ("bv_mes", {}, None),
          ("mn_mle", {}, None), ("mn_mes", {}, None)],
    1000: [("bv_mle", {}, None), ("bv_mes", {}, None), ("mn_mle", {}, None), ("mn_mes", {}, None)],
}
#: (data set, sample size) of the estimator studies
CONFIGS = [(d, 100) for d in ("ml-1m", "citeulike-a", "pinterest-subset", "yelp-diffnet")] + [
    (d, 500) for d in ("ml-1m", "citeulike-a", "pinterest-subset", "yelp-diffnet")] + [("yelp-diffnet", 1000)]
#: models x repeats of one study, for the projection
STUDY_DRAWS, STUDY_CHUNKS = 500, 5


def measure(dataset: str, model: str, n: int, draws: int) -> dict:
    """Time the first draw and the mean of ``draws`` more; return the times and the estimates."""
    import pandas as pd

    from itemsampling.estimators import Estimator
    from itemsampling.kernels import KernelCache
    from itemsampling_study.engine import repeat_estimates

    ranks = pd.read_parquet(ROOT / "results" / "ranks" / dataset / model / "unseen.parquet")
    kwargs = {
        "estimators": [Estimator(m, o, name=name) for m, o, name in ESTIMATORS[n]],
        "targets": [(m, k) for m in ("recall", "ndcg", "ap") for k in range(1, 51)],
        "sample_sizes": [n], "seed": 0, "progress": False, "cache": KernelCache(),
        "labels": {"dataset": dataset, "model": model, "protocol": "unseen"},
    }
    args = (ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy())
    cpu, wall = time.process_time(), time.perf_counter()
    first = repeat_estimates(*args, repeats=1, **kwargs)
    first_cpu, first_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    rest = repeat_estimates(*args, repeats=draws, first_repeat=1, **kwargs)
    return {
        "first_cpu": first_cpu, "first_wall": first_wall,
        "cpu": (time.process_time() - cpu) / draws, "wall": (time.perf_counter() - wall) / draws,
        "estimates": np.concatenate([first["estimate"], rest["estimate"]]).tolist(),
        "users": int(ranks.shape[0]), "n_min": int(ranks["n_candidates"].min()),
        "n_max": int(ranks["n_candidates"].max()), "kernels": _kernels(ranks["n_candidates"].to_numpy()),
    }


def _kernels(n_items) -> int:
    from itemsampling.candidates import CandidateGroups

    groups = CandidateGroups.build(n_items, n_items.size)
    return int(np.unique(groups.n_items).size)


def baseline_source(rev: str, into: Path) -> Path:
    """Extract ``src`` of git revision ``rev`` into ``into`` and return its ``src`` path."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True)
    path = into / "archive.tar"
    path.write_bytes(archive.stdout)
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run_baseline(src: Path, dataset: str, model: str, n: int, draws: int, timeout: float) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(src)}
    job = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps([dataset, model, n, draws])]
    try:
        done = subprocess.run(job, capture_output=True, text=True, env=env, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="ease")
    parser.add_argument("--draws", type=int, default=2, help="timed draws after the first (default 2)")
    parser.add_argument("--baseline", help="git revision to compare with (e.g. 82097a2)")
    parser.add_argument("--baseline-draws", type=int, default=1)
    parser.add_argument("--baseline-timeout", type=float, default=900.0)
    parser.add_argument("--quick", action="store_true", help="ml-1m at n = 100 only, one timed draw")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(*json.loads(args.worker))))
        return
    configs = CONFIGS[:1] if args.quick else CONFIGS
    draws = 1 if args.quick else args.draws
    print(f"# estimator-study draws on committed ranks ({args.model}, unseen); python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"# load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; times: CPU seconds "
          f"(wall in brackets); baseline: {args.baseline or 'none'}")
    print("| dataset | N_u | users | kernels | n | estimators | first_s | per_draw_s | study_min | base_per_draw_s "
          "| base_study_min | speedup | max_abs_diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        src = baseline_source(args.baseline, Path(tmp)) if args.baseline else None
        for dataset, n in configs:
            ours = measure(dataset, args.model, n, draws)
            study = (STUDY_DRAWS * ours["cpu"] + STUDY_CHUNKS * ours["first_cpu"]) / 60
            totals[0] += study
            row = [dataset, f"{ours['n_min']}-{ours['n_max']}", ours["users"], ours["kernels"], n, len(ESTIMATORS[n]),
                   f"{ours['first_cpu']:.2f} ({ours['first_wall']:.2f})", f"{ours['cpu']:.3f} ({ours['wall']:.3f})",
                   f"{study:.1f}"]
            base = None if src is None else run_baseline(src, dataset, args.model, n, min(args.baseline_draws, draws),
                                                         args.baseline_timeout)
            if src is None:
                row += ["", "", "", ""]
            elif base is None:
                row += [f"> {args.baseline_timeout:.0f} s in all", "", "", ""]
            else:
                base_study = (STUDY_DRAWS * base["cpu"] + STUDY_CHUNKS * base["first_cpu"]) / 60
                totals[1] += base_study
                common = len(base["estimates"])
                diff = np.max(np.abs(np.subtract(ours["estimates"][:common], base["estimates"])))
                row += [f"{base['cpu']:.3f} ({base['wall']:.3f})", f"{base_study:.1f}", f"{base['cpu'] / ours['cpu']:.1f}",
                        f"{diff:.1e}"]
            print("| " + " | ".join(map(str, row)) + " |", flush=True)
    print(f"# projected CPU minutes of the studies above: {totals[0]:.1f}"
          + (f" (baseline {totals[1]:.1f}, where it finished)" if args.baseline else ""))
    print(f"# load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
