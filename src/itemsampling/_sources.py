"""The tables a process has read so far: what the figures it draws are made from.

:func:`itemsampling_study.tables.read_table` notes each table it reads
(:func:`note_table`); :func:`itemsampling_study.plotting.save_figure` writes :func:`tables_read` into
a figure's metadata. A figure is then identified by the bytes of its inputs, not by the commit
that happened to be checked out, so redrawing it from the same tables gives the same file.
"""

from __future__ import annotations

import hashlib

__all__ = ["note_table", "tables_read"]

_READ: dict[str, str] = {}


def note_table(name: str, data: bytes) -> None:
    """Note that the table ``name`` (e.g. ``04_estimators/winners.csv``) was read with ``data``."""
    _READ[name] = hashlib.sha256(data).hexdigest()[:16]


def tables_read() -> str:
    """``name sha256-prefix`` of every table read so far, sorted, separated by ``; ``."""
    return "; ".join(f"{name} {digest}" for name, digest in sorted(_READ.items()))
