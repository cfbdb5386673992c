"""Vectorized readers for the interaction file formats of the registry.

Every reader returns a :class:`pandas.DataFrame` with int64 ``user`` and ``item`` columns
holding the file's own identifiers (plus ``timestamp`` where the format has one); no reader
loops over interactions in Python.
"""

from __future__ import annotations

import os
import zipfile
from contextlib import contextmanager

import numpy as np
import pandas as pd

__all__ = [
    "open_member",
    "read_cmn_test",
    "read_grouplens_csv",
    "read_grouplens_dat",
    "read_item_lists",
    "read_ncf_rating",
    "read_udata",
]


@contextmanager
def open_member(path: str | os.PathLike, member: str | None = None):
    """Open ``path`` for binary reading, or the file ``member`` inside the zip archive ``path``."""
    if member is None:
        with open(path, "rb") as fh:
            yield fh
        return
    with zipfile.ZipFile(path) as zf:
        try:
            fh = zf.open(member)
        except KeyError as exc:
            raise ValueError(f"{path} has no member {member!r}; members: {', '.join(zf.namelist()[:10])}") from exc
        with fh:
            yield fh


def _int_columns(frame: pd.DataFrame, path, columns) -> pd.DataFrame:
    for col in columns:
        if frame[col].isna().any():
            raise ValueError(f"{path}: column {col!r} has missing values; the file is not in the expected format")
        frame[col] = frame[col].astype(np.int64)
    return frame


def read_grouplens_dat(path: str | os.PathLike, member: str | None = None) -> pd.DataFrame:
    """Read a MovieLens ``ratings.dat`` (``UserID::MovieID::Rating::Timestamp``, ml-1m / ml-10m).

    Splitting on a single ``:`` keeps pandas' C parser (the ``::`` separator would need the
    slow Python engine); the empty fields between the colons are dropped.
    """
    with open_member(path, member) as fh:
        frame = pd.read_csv(
            fh, sep=":", header=None, usecols=[0, 2, 4, 6], names=["user", "e1", "item", "e2", "rating", "e3", "timestamp"]
        )
    return _int_columns(frame, path, ["user", "item", "timestamp"])


def read_udata(path: str | os.PathLike, member: str | None = None) -> pd.DataFrame:
    """Read a MovieLens 100K ``u.data`` (tab-separated ``user item rating timestamp``)."""
    with open_member(path, member) as fh:
        frame = pd.read_csv(fh, sep="\t", header=None, names=["user", "item", "rating", "timestamp"])
    return _int_columns(frame, path, ["user", "item", "timestamp"])


def read_grouplens_csv(path: str | os.PathLike, member: str | None = None) -> pd.DataFrame:
    """Read a MovieLens ``ratings.csv`` (ml-20m and later: header ``userId,movieId,rating,timestamp``)."""
    with open_member(path, member) as fh:
        frame = pd.read_csv(fh, usecols=["userId", "movieId", "rating", "timestamp"])
    frame = frame.rename(columns={"userId": "user", "movieId": "item"})
    return _int_columns(frame, path, ["user", "item", "timestamp"])


def read_ncf_rating(path: str | os.PathLike) -> pd.DataFrame:
    """Read an NCF-style ``.rating`` file: tab-separated ``user item [rating [timestamp]]``.

    Used by NCF (``*.train.rating`` / ``*.test.rating``), APR and DiffNet; the rating column
    (possibly a float, always a positive interaction here) is ignored, the timestamp is kept
    when present.
    """
    frame = pd.read_csv(path, sep="\t", header=None)
    if frame.shape[1] < 2:
        raise ValueError(f"{path}: expected tab-separated 'user item ...' lines, found {frame.shape[1]} column(s)")
    names = ["user", "item", "rating", "timestamp"][: frame.shape[1]]
    frame = frame.iloc[:, : len(names)].set_axis(names, axis=1)
    return _int_columns(frame, path, [c for c in ("user", "item", "timestamp") if c in frame])


def read_item_lists(path: str | os.PathLike, *, first: str) -> pd.DataFrame:
    """Read lines of space-separated integers: one user per line, followed by its items.

    Parameters
    ----------
    first : {"count", "user"}
        ``"count"``: the line number is the 0-based user and the first number is the number of
        items that follow (CTR ``users.dat``; checked on every line). ``"user"``: the first
        number is the user id (LightGCN-style ``train.txt`` / ``test.txt``).
    """
    if first not in ("count", "user"):
        raise ValueError(f"first must be 'count' or 'user', got {first!r}")
    with open(path, encoding="ascii") as fh:
        lines = fh.read().splitlines()
    if first == "user":  # LightGCN files may end with blank lines
        lines = [line for line in lines if line.strip()]
    lengths = np.fromiter((len(line.split()) for line in lines), dtype=np.int64, count=len(lines))
    if np.any(lengths == 0):
        raise ValueError(f"{path}: line {int(np.argmin(lengths)) + 1} is empty")
    values = np.array(" ".join(lines).split(), dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    heads = values[starts]
    is_item = np.ones(values.size, dtype=bool)
    is_item[starts] = False
    n_items = lengths - 1
    if first == "count":
        bad = np.flatnonzero(heads != n_items)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{path}: line {i + 1} says {int(heads[i])} items but lists {int(n_items[i])}"
            )
        users = np.arange(len(lines), dtype=np.int64)
    else:
        users = heads
    return pd.DataFrame({"user": np.repeat(users, n_items), "item": values[is_item]})


def read_cmn_test(path: str | os.PathLike) -> pd.DataFrame:
    """Read the CMN held-out items (TSV with header ``user item negatives``)."""
    frame = pd.read_csv(path, sep="\t", usecols=["user", "item"])
    return _int_columns(frame, path, ["user", "item"])
