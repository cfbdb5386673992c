"""Fit the SLURM profile to the cluster it meets, before anything is submitted.

A rule that asks for more CPUs or memory than any node has stays pending for ever
(``Reason=PartitionConfig``) while Snakemake waits in silence. This script asks SLURM for its
largest node (``sinfo``) and Snakemake for what every job of the run would request (a dry run
with the same arguments), and prints the options that lower each rule asking for more CPUs than
that node has, each named on standard error: fewer threads only make a job slower. Memory is
another matter: a job given less than it needs fails at run time, after it has waited in the
queue. A rule that asks for more memory than the largest node has is therefore an error before
anything is submitted (exit status 3, naming the rule), unless ``--lower-memory`` says to lower it
to the node anyway (for rules known to need less than they ask). On a cluster without an
accounting database (``sacct`` refuses), it adds the options that make the executor use
``squeue`` and not guess an account.

    snakemake --profile profiles/slurm $(python workflow/cluster/fit_resources.py --profile profiles/slurm)

The memory and run time of each rule are the ``set-resources`` of the profile, and a
``--set-resources`` on the command line replaces them all: the ``--set-resources`` it prints
therefore carries every rule's resources of the profile (``--profile``, a folder), with those of
any ``--set-resources`` given to it added (a partition, say) and the lowered ones replaced.

Every other argument is passed on to the dry run (``--configfile``, ``--directory``, targets ...).
Exit status 2 with a message when SLURM or the dry run does not answer.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

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


def given_resources(argv: list[str]) -> tuple[list[str], dict[str, dict]]:
    """``argv`` without its ``--set-resources``, and the resources per rule that the run is given:
    the ``set-resources`` of the profile folder of ``--profile`` (``config.v8+.yaml`` or
    ``config.yaml``, as Snakemake reads it), with those of ``--set-resources`` added."""
    rest, entries, option = [], [], None
    for arg in argv:
        if arg.startswith("-"):
            option = arg
            if arg != "--set-resources":
                rest.append(arg)
        elif option == "--set-resources":
            entries.append(arg)
        else:
            rest.append(arg)
    given: dict[str, dict] = {}
    if "--profile" in rest[:-1]:
        folder = Path(rest[rest.index("--profile") + 1])
        configs = [path for path in (folder / "config.v8+.yaml", folder / "config.yaml") if path.is_file()]
        if not configs:
            raise ValueError(f"no config.yaml in the profile folder {folder}")
        for rule, values in (yaml.safe_load(configs[0].read_text()) or {}).get("set-resources", {}).items():
            given[rule] = dict(values)
    for entry in entries:
        rule, _, assignment = entry.partition(":")
        key, _, value = assignment.partition("=")
        given.setdefault(rule, {})[key] = int(value) if value.isdigit() else value
    return rest, given


def set_resources(resources: Mapping[str, Mapping]) -> list[str]:
    """``--set-resources RULE:RESOURCE=VALUE ...`` for ``resources`` (none when empty); a text that
    reads as a number is quoted, as Snakemake quotes it when it reads a profile."""

    def text(value) -> str:
        if not isinstance(value, str):
            return str(value)
        try:
            float(value)
        except ValueError:
            return value
        return repr(value)

    entries = [f"{rule}:{key}={text(value)}" for rule, values in resources.items() for key, value in values.items()]
    return ["--set-resources", *entries] if entries else []


def fitted(asked: dict[str, dict[str, int]], cpus: int, memory: int,
           lower_memory: bool = False, given: Mapping[str, Mapping] | None = None) -> tuple[list[str], list[str], list[str]]:
    """Snakemake options that fit every rule to a node of ``cpus`` CPUs and ``memory`` MB.

    Returns the options, one note per lowered rule (what it asked for, what it gets) and one
    problem per rule that asks for more memory than the node has, unless ``lower_memory`` (then
    it is lowered like the CPUs, with a note). The options' ``--set-resources`` carries the
    resources per rule that the run is ``given`` (:func:`given_resources`), lowered where needed.
    """
    resources = {rule: dict(values) for rule, values in (given or {}).items()}
    threads, notes, problems = [], [], []
    for rule, wanted in sorted(asked.items()):
        c, m = wanted.get("cpus_per_task", 1), wanted.get("mem_mb", 0)
        if m > memory and not lower_memory:
            problems.append(f"{rule} asks for {m} MB, more than the largest node's {memory} MB: it cannot run on "
                            f"this cluster. If it needs less, give it less (--set-resources {rule}:mem_mb=...), "
                            "or pass --lower-memory to lower every such rule to the node")
            continue
        if c <= cpus and m <= memory:
            continue
        got_c, got_m = min(c, cpus), min(m, memory)
        threads.append(f"{rule}={got_c}")
        resources.setdefault(rule, {}).update(cpus_per_task=got_c, mem_mb=got_m)
        notes.append(f"{rule} asks for {c} CPUs and {m} MB; the largest node has {cpus} CPUs and {memory} MB: "
                     f"it gets {got_c} CPUs and {got_m} MB")
    options = (["--set-threads", *threads] if threads else []) + set_resources(resources)
    return options, notes, problems


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def main(argv: list[str]) -> int:
    lower_memory = "--lower-memory" in argv
    try:
        argv, given = given_resources([arg for arg in argv if arg != "--lower-memory"])
    except ValueError as exc:
        print(f"fit_resources.py: {exc}", file=sys.stderr)
        return 2
    try:
        sinfo = _run(["sinfo", "-h", "-o", "%c %m"])
    except FileNotFoundError:
        print("fit_resources.py: sinfo not found: is this a SLURM cluster?", file=sys.stderr)
        return 2
    if sinfo.returncode != 0:
        print(f"fit_resources.py: sinfo failed: {sinfo.stderr.strip()}", file=sys.stderr)
        return 2
    cpus, memory = largest_node(sinfo.stdout)
    dry = _run([sys.executable, "-m", "snakemake", "-n", *argv, *set_resources(given)])
    if dry.returncode != 0:
        print(f"fit_resources.py: the dry run failed:\n{dry.stdout[-2000:]}{dry.stderr[-2000:]}", file=sys.stderr)
        return 2
    options, notes, problems = fitted(requests(dry.stdout), cpus, memory, lower_memory, given)
    for note in notes:
        print(f"fit_resources.py: {note}", file=sys.stderr)
    if problems:
        for problem in problems:
            print(f"fit_resources.py: error: {problem}", file=sys.stderr)
        return 3
    if _run(["sacct", "-n", "-X", "-S", "now"]).returncode != 0:
        print("fit_resources.py: no accounting database (sacct refuses): job status from squeue, no account",
              file=sys.stderr)
        options += ["--slurm-status-command", "squeue", "--slurm-no-account"]
    print(" ".join(options))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
