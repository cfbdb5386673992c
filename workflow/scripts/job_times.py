"""Where the study's time and memory go: the Snakemake benchmark files of the last run.

Every rule writes ``results/logs/<...>/<job>.benchmark.tsv`` beside its log (Snakemake's
``benchmark:`` directive: wall seconds ``s``, ``cpu_time`` and peak resident memory ``max_rss``
in MiB of the job's processes). This script sums them per folder of logs (one kind of job: the
chunks of one notebook, the training of one dataset, the notebooks, ...) and lists the longest
jobs and the one with the largest peak memory::

    .venv/bin/python workflow/scripts/job_times.py            # results/logs of this checkout
    .venv/bin/python workflow/scripts/job_times.py --top 20 --logs /path/to/clone/results/logs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def read_benchmarks(logs: Path) -> pd.DataFrame:
    """One row per benchmark file: ``job`` (its path below ``logs``), ``kind`` (its folder),
    ``s``, ``cpu_time`` and ``max_rss`` (MiB; NaN where the job ended before it was sampled)."""
    rows = []
    for path in sorted(logs.rglob("*.benchmark.tsv")):
        table = pd.read_csv(path, sep="\t", na_values=["-"])
        job = path.relative_to(logs).as_posix().removesuffix(".benchmark.tsv")
        rows.append({"job": job, "kind": path.parent.relative_to(logs).as_posix(), "s": float(table["s"].iloc[-1]),
                     "cpu_time": float(table["cpu_time"].iloc[-1]), "max_rss": float(table["max_rss"].iloc[-1])})
    return pd.DataFrame(rows, columns=["job", "kind", "s", "cpu_time", "max_rss"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, default=Path("results/logs"), help="the run's logs folder")
    parser.add_argument("--top", type=int, default=10, help="how many of the longest jobs to list")
    args = parser.parse_args(argv)
    jobs = read_benchmarks(args.logs)
    if jobs.empty:
        print(f"no benchmark files under {args.logs}: run the study first (make reproduce)", file=sys.stderr)
        return 1
    kinds = jobs.groupby("kind").agg(jobs=("job", "size"), wall_s=("s", "sum"), cpu_s=("cpu_time", "sum"),
                                     peak_MiB=("max_rss", "max")).sort_values("wall_s", ascending=False)
    total = jobs[["s", "cpu_time"]].sum()
    print(f"# {len(jobs)} jobs: {total['s'] / 60:.1f} job-minutes wall, {total['cpu_time'] / 60:.1f} CPU minutes")
    print(kinds.round(1).to_markdown())
    print()
    print(jobs.nlargest(args.top, "s").set_index("job")[["s", "cpu_time", "max_rss"]].round(1).to_markdown())
    peak = jobs.loc[jobs["max_rss"].idxmax()]
    print(f"\n# largest peak resident memory: {peak['job']} ({peak['max_rss']:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
