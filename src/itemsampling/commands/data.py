"""``itemsampling data stats|verify``: dataset statistics and a check of the registry files.

``itemsampling data stats [--dataset NAME ...] [--output FILE] [--download]``
    Load datasets and print (or write as CSV) interactions, users, items and density.
    Without ``--dataset``: every registered dataset whose files are all available locally.
``itemsampling data verify [--dataset NAME ...] [--download]``
    Check that every registry file is present with the right checksum and say where each
    was found (``repository`` = data/raw, ``mirror`` = $ITEMSAMPLING_DATA, ``download``).
    Exit status 1 if a file is corrupt or a file a loader needs is missing.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from .._files import atomic_text_file
from ..data.loaders import load_dataset
from ..data.registry import ChecksumError, Registry, default_registry
from ..data.summary import dataset_summary
from ._common import check_output_file, plain_text

__all__ = ["available_datasets", "dataset_table", "register", "verify_registry"]


def register(subparsers) -> None:
    """Add the ``data`` command with its ``stats`` and ``verify`` sub-commands."""
    parser = subparsers.add_parser("data", help="dataset statistics and registry checks",
                                   description=plain_text(__doc__),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="data_command", required=True, metavar="ACTION")

    stats = sub.add_parser("stats", help="interactions, users, items and density of datasets")
    stats.add_argument("--dataset", action="append", metavar="NAME",
                       help="dataset to include (repeatable); default: all whose files are available")
    stats.add_argument("--output", metavar="FILE",
                       help="write the table as CSV to FILE instead of printing it; the folder of FILE "
                            "must exist and an existing FILE is overwritten")
    stats.add_argument("--download", action="store_true", help="download missing files")
    stats.set_defaults(func=_stats)

    verify = sub.add_parser("verify", help="check that the registry files are present with the right checksums")
    verify.add_argument("--dataset", action="append", metavar="NAME", help="dataset to check (repeatable); default: all")
    verify.add_argument("--download", action="store_true", help="download missing files")
    verify.set_defaults(func=_verify)


def available_datasets(registry: Registry) -> list[str]:
    """Registered datasets with files whose required files are all present locally (not downloaded)."""
    names = []
    for name, entry in registry.datasets.items():
        files = entry.required_files.values()
        if files and all(registry.locate(f)[0] is not None for f in files):
            names.append(name)
    return names


def verify_registry(registry: Registry, names=None, *, download: bool = False) -> pd.DataFrame:
    """Status of every file of the given datasets (all by default).

    Returns a table with columns ``dataset, role, file, optional, status, where, path, detail``;
    ``status`` is ``ok``, ``missing`` or ``mismatch``.
    """
    names = registry.names if not names else names
    rows = []
    for name in names:
        for role, entry in registry.dataset(name).files.items():
            row = {"dataset": name, "role": role, "file": str(entry.relpath), "optional": entry.optional,
                   "status": "ok", "where": "", "path": "", "detail": ""}
            try:
                path, where = registry.fetch(entry, download=download)
                row.update(where=where, path=str(path))
            except FileNotFoundError as exc:
                row.update(status="missing", detail=str(exc))
            except ChecksumError as exc:
                row.update(status="mismatch", detail=str(exc))
            rows.append(row)
    return pd.DataFrame(rows, columns=["dataset", "role", "file", "optional", "status", "where", "path", "detail"])


def dataset_table(names: list[str] | None = None, *, download: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """Interactions, users, items and density of the named datasets (default: those available).

    Every file of every dataset is located (or fetched) before any is parsed, so a missing or
    corrupt file fails before anything is loaded. Returns the table and the names it covers.
    """
    registry = default_registry()
    names = list(names) if names else available_datasets(registry)
    for name in names:
        registry.dataset(name)  # unknown names fail before anything is loaded
    if not names:
        raise FileNotFoundError("no dataset has its files available; run 'itemsampling data verify' to see why")
    for name in names:
        if registry.dataset(name).files:
            registry.resolve(name, download=download)
    table = dataset_summary([load_dataset(name, registry=registry, download=download) for name in names])
    return table, names


def _stats(args) -> int:
    if args.output:
        check_output_file(args.output)
    table, _ = dataset_table(args.dataset, download=args.download)
    if args.output:
        with atomic_text_file(args.output) as fh:
            table.to_csv(fh, index=False, lineterminator="\n")
        print(f"wrote {len(table)} dataset(s) to {args.output}")
    else:
        with pd.option_context("display.width", 200, "display.max_colwidth", 60):
            print(table.drop(columns="description").to_string(index=False))
    return 0


def _verify(args) -> int:
    registry = default_registry()
    table = verify_registry(registry, args.dataset, download=args.download)
    mirror = registry.mirror
    print(f"repository data: {registry.root / 'data' / 'raw'}")
    print(f"mirror ($ITEMSAMPLING_DATA): {mirror if mirror is not None else 'not set'}")
    for row in table.itertuples(index=False):
        label = row.status if not (row.status == "missing" and row.optional) else "missing (optional)"
        place = f"{row.where}: {row.path}" if row.status == "ok" else ""
        print(f"{row.dataset:18} {row.file:42} {label:20} {place}")
    bad = table[(table["status"] == "mismatch") | ((table["status"] == "missing") & ~table["optional"])]
    for row in bad.itertuples(index=False):
        print(f"\n{row.detail}", file=sys.stderr)
    usable = [name for name in table["dataset"].unique() if name not in set(bad["dataset"])]
    print(f"\nloadable: {', '.join(usable) if usable else 'none'}")
    return 1 if len(bad) else 0
