"""Fit the SLURM profile to the cluster it meets, before anything is submitted.

A rule that asks for more CPUs or memory than any node has stays pending for ever
(``Reason=PartitionConfig``) while Snakemake waits in silence. This script asks SLURM for its
largest node (``sinfo``) and Snakemake for what every job of the run would request (a dry run
with the same arguments), and prints the options that lower each rule that asks for too much to
that node, each named on standard error. On a cluster without an accounting database (``sacct``
refuses), it adds the options that make the executor use ``squeue`` and not guess an account.

    snakemake --profile profiles/slurm $(python workflow/cluster/fit_resources.py --profile profiles/slurm)

Every argument is passed on to the dry run (``--configfile``, ``--directory``, targets ...).
Exit status 2 with a message when SLURM does not answer.
"""

from __future__ import annotations

import re
import subprocess
import sys

#: a job's resources in the dry run: ``rule NAME:`` then ``resources: ..., mem_mb=N, ..., cpus_per_task=C``
_RULE = re.compile(r"^(?:local)?rule (\S+):$")
_RESOURCE = re.compile(r"\b(mem_mb|cpus_per_task)=(\d+)")


def largest_node(sinfo_output: str) -> tuple[int, int]:
    """The most CPUs and the most memory (MB) of one node, from ``sinfo -h -o "%c %m"``."""
    nodes = [tuple(int(re.sub(r"\D", "", field)) for field in line.split()[:2])
             for line in sinfo_output.splitlines() if line.strip()]
    if not nodes:
        raise ValueError("sinfo lists no node")
    return max(cpus for cpus, _ in nodes), max(memory for _, memory in nodes)


def requests(dry_run_output: str) -> dict[str, dict[str, int]]:
    """The largest ``cpus_per_task`` and ``mem_mb`` that any job of each rule asks for."""
    out: dict[str, dict[str, int]] = {}
    rule = None
    for line in dry_run_output.splitlines():
        match = _RULE.match(line.strip())
        if match:
            rule = match.group(1)
        elif rule and line.strip().startswith("resources:"):
            asked = out.setdefault(rule, {})
            for key, value in _RESOURCE.findall(line):
                asked[key] = max(asked.get(key, 0), int(value))
    return out


def fitted(asked: dict[str, dict[str, int]], cpus: int, memory: int) -> tuple[list[str], list[str]]:
    """Snakemake options that lower every rule to a node of ``cpus`` CPUs and ``memory`` MB, and
    one line per lowered rule saying what it asked for and what it gets."""
    threads, resources, notes = [], [], []
    for rule, wanted in sorted(asked.items()):
        c, m = wanted.get("cpus_per_task", 1), wanted.get("mem_mb", 0)
        if c <= cpus and m <= memory:
            continue
        got_c, got_m = min(c, cpus), min(m, memory)
        threads.append(f"{rule}={got_c}")
        resources += [f"{rule}:cpus_per_task={got_c}", f"{rule}:mem_mb={got_m}"]
        notes.append(f"{rule} asks for {c} CPUs and {m} MB; the largest node has {cpus} CPUs and {memory} MB: "
                     f"it gets {got_c} CPUs and {got_m} MB")
    options = (["--set-threads", *threads] if threads else []) + (["--set-resources", *resources] if resources else [])
    return options, notes


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def main(argv: list[str]) -> int:
    try:
        sinfo = _run(["sinfo", "-h", "-o", "%c %m"])
    except FileNotFoundError:
        print("fit_resources.py: sinfo not found: is this a SLURM cluster?", file=sys.stderr)
        return 2
    if sinfo.returncode != 0:
        print(f"fit_resources.py: sinfo failed: {sinfo.stderr.strip()}", file=sys.stderr)
        return 2
    cpus, memory = largest_node(sinfo.stdout)
    dry = _run([sys.executable, "-m", "snakemake", "-n", *argv])
    if dry.returncode != 0:
        print(f"fit_resources.py: the dry run failed:\n{dry.stdout[-2000:]}{dry.stderr[-2000:]}", file=sys.stderr)
        return 2
    options, notes = fitted(requests(dry.stdout), cpus, memory)
    for note in notes:
        print(f"fit_resources.py: {note}", file=sys.stderr)
    if _run(["sacct", "-n", "-X", "-S", "now"]).returncode != 0:
        print("fit_resources.py: no accounting database (sacct refuses): job status from squeue, no account",
              file=sys.stderr)
        options += ["--slurm-status-command", "squeue", "--slurm-no-account"]
    print(" ".join(options))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
