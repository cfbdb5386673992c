"""Records of the steps that write tables: which step, with which parameters, wrote which bytes.

Every step of the workflow that writes tables (``itemsampling study tables``, ``itemsampling data
stats``) writes, beside them, a record ``<step>.record.json``: the step, its parameters in
canonical form (keys sorted, the form the workflow passes), the seed, and the SHA-256 of every
table it wrote. A committed table is then what its step wrote only if its bytes match its record
(:func:`check_records`): a table edited by hand, written by a script outside the workflow or
left from an older run fails; a table made with other parameters (a smoke config, a notebook's
defaults, the parameters in another key order, which reorders rows) is caught by comparing the
record's parameters with the configuration's (``tests/workflow/test_committed_tables.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from itemsampling._files import atomic_text_file

__all__ = ["RECORD_SUFFIX", "canonical_config", "check_records", "read_records", "record_path", "write_record"]

#: name of a step's record: ``<step>`` followed by this suffix, in the folder of its tables
RECORD_SUFFIX = ".record.json"


def canonical_config(config: Mapping) -> dict:
    """``config`` with every mapping's keys sorted, as the workflow passes it (``json.dumps(...,
    sort_keys=True)``): a study that iterates over a mapping then gives the same rows in the
    same order however its caller ordered the keys."""
    return json.loads(json.dumps(config, sort_keys=True))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_path(folder: str | Path, step: str) -> Path:
    """Path of the record of ``step`` in ``folder`` (the folder of its tables)."""
    if not step or "/" in step or step.startswith("."):
        raise ValueError(f"a step's record is named by a plain name, got {step!r}")
    return Path(folder) / f"{step}{RECORD_SUFFIX}"


def write_record(path: str | Path, *, step: str, config: Mapping, seed: int | None, tables: Sequence[str | Path]) -> Path:
    """Write the record of a step that has just written ``tables`` (atomically).

    Parameters
    ----------
    path : str or Path
        The record's file (:func:`record_path`).
    step : str
        The command that wrote the tables, e.g. ``"study tables --study estimator_accuracy"``.
    config : mapping
        The step's parameters (stored in canonical form, :func:`canonical_config`).
    seed : int or None
        The step's seed (None for a step without randomness).
    tables : sequence of paths
        The files it wrote, in the record's folder.
    """
    path = Path(path)
    digests = {}
    for table in tables:
        table = Path(table)
        if table.parent.resolve() != path.parent.resolve():
            raise ValueError(f"{table} is not in the folder of its record {path}")
        digests[table.name] = _sha256(table)
    record = {"step": step, "seed": seed, "tables": dict(sorted(digests.items())), "config": canonical_config(config)}
    with atomic_text_file(path) as fh:
        fh.write(json.dumps(record, indent=1) + "\n")
    return path


def read_records(root: str | Path) -> dict[Path, dict]:
    """Every record under ``root`` (e.g. ``results/tables``), by path."""
    return {path: json.loads(path.read_text()) for path in sorted(Path(root).rglob(f"*{RECORD_SUFFIX}"))}


def check_records(root: str | Path, pattern: str = "*.csv") -> list[str]:
    """What is wrong with the tables under ``root`` against their steps' records.

    Returns one line per problem (an empty list when every table is what its step wrote): a
    table that no record names, a table named by two records, a table whose bytes differ from
    its record's digest, a table a record names that is missing.
    """
    root = Path(root)
    owner: dict[Path, Path] = {}
    problems = []
    for record_file, record in read_records(root).items():
        for name, digest in record["tables"].items():
            table = record_file.parent / name
            rel = table.relative_to(root)
            if table in owner:
                problems.append(f"{rel} is named by two records: {owner[table].name} and {record_file.name}")
                continue
            owner[table] = record_file
            if not table.is_file():
                problems.append(f"{rel} is named by {record_file.name} but missing")
            elif _sha256(table) != digest:
                problems.append(f"{rel} is not what {record['step']!r} wrote ({record_file.name}): it was changed "
                                f"afterwards, by hand or by another step; rerun the step")
    for table in sorted(root.rglob(pattern)):
        if table not in owner:
            problems.append(f"{table.relative_to(root)} has no record: no step of the workflow wrote it")
    return problems
