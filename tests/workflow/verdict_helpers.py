"""Helpers of the verdict tests: a reader over the committed tables with some tables changed, and
the verdict of one row."""

from __future__ import annotations

from .conftest import REPO


def reader(notebook: str, **override):
    """A ``table(name)`` over the committed tables of ``notebook``, with some tables replaced by
    functions of the committed ones."""
    from itemsampling_study.tables import read_table

    def table(name):
        frame = read_table(notebook, name, REPO)
        return override[name](frame) if name in override else frame

    return table


def verdict_of(rows, start: str) -> str:
    found = [row.verdict for row in rows if row.claim.startswith(start)]
    assert len(found) == 1, (start, [row.claim for row in rows])
    return found[0]
