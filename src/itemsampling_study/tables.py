"""The one reader and writer of the study's files: ranks and result tables.

Paths are relative to the repository root (``root``): the global ranks of a (dataset, model,
protocol) are ``results/ranks/<dataset>/<model>/<protocol>.parquet``, the runs of a study chunk
``results/runs/<notebook>/<dataset>/<model>/<protocol>.parquet`` (``<protocol>/<part>.parquet``
when the study splits a ranks file into parts) and a study table is
``results/tables/<notebook>/<name>.csv``. Tables are written so that their bytes depend only on
their content (10 significant digits, ``\\n`` line ends, no index) and atomically (a temporary
file renamed into place), so an interrupted run never leaves half a table. A missing input is
reported with the ``snakemake`` command that makes it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from itemsampling._files import atomic_text_file
from itemsampling._sources import note_table
from itemsampling.ranks import read_ranks

__all__ = ["FLOAT_FORMAT", "chunk_path", "find_root", "ranks_path", "read_model_ranks", "read_runs", "read_table",
           "table_path", "train_record_path", "write_table"]

#: floats in tables: 10 significant digits (the last bits of a sum differ between BLAS builds
#: and thread counts; ten digits keep the tables byte-identical across machines)
FLOAT_FORMAT = "%.10g"


def find_root(start: str | Path = ".") -> Path:
    """The repository root: the first of ``start`` and its parents that holds a ``Snakefile``.

    Notebooks call it so that they read and write the same files whether they are run by the
    workflow (from the root) or opened in JupyterLab (from ``notebooks/``).
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / "Snakefile").is_file():
            return folder
    raise FileNotFoundError(f"no Snakefile in {here} or any folder above it: run this from the repository")


def ranks_path(dataset: str, model: str, protocol: str, root: str | Path = ".") -> Path:
    """``results/ranks/<dataset>/<model>/<protocol>.parquet`` under ``root``."""
    return Path(root) / "results" / "ranks" / dataset / model / f"{protocol}.parquet"


def train_record_path(dataset: str, model: str, root: str | Path = ".") -> Path:
    """``results/ranks/<dataset>/<model>/train.json``: what ``itemsampling train`` recorded."""
    return Path(root) / "results" / "ranks" / dataset / model / "train.json"


def chunk_path(notebook: str, chunk: Mapping[str, str], root: str | Path = ".") -> Path:
    """The runs of one study chunk: ``results/runs/<notebook>/<dataset>/<model>/<protocol>.parquet``,
    or ``.../<protocol>/<part>.parquet`` for a chunk with a ``part``."""
    keys = ("dataset", "model", "protocol", "part") if "part" in chunk else ("dataset", "model", "protocol")
    names = [notebook, *(chunk[key] for key in keys)]
    for value in names:
        if not isinstance(value, str) or not value or "/" in value:
            raise ValueError(f"chunk labels must be non-empty names without '/', got {value!r}")
    folder = Path(root, "results", "runs", *names[:-1])
    return folder / f"{names[-1]}.parquet"


def table_path(notebook: str, name: str, root: str | Path = ".") -> Path:
    """``results/tables/<notebook>/<name>.csv`` under ``root``."""
    for label, value in (("notebook", notebook), ("name", name)):
        if not isinstance(value, str) or not value or "/" in value:
            raise ValueError(f"{label} must be a non-empty file name without '/', got {value!r}")
    return Path(root) / "results" / "tables" / notebook / f"{name}.csv"


def _missing(path: Path, root: str | Path) -> FileNotFoundError:
    try:
        target = path.resolve().relative_to(Path(root).resolve())
    except ValueError:
        target = path
    return FileNotFoundError(f"{target} does not exist; make it with `snakemake --cores 2 {target}` "
                             "in the repository root (see docs/study.md)")


def read_model_ranks(dataset: str, model: str, protocol: str, root: str | Path = ".") -> pd.DataFrame:
    """Global ranks of one model on one dataset under one protocol, sorted by user: the file
    :func:`ranks_path` names, read by :func:`itemsampling.ranks.read_ranks`.

    Columns ``user``, ``item``, ``rank`` (R_u, 1-based) and ``n_candidates`` (N_u).
    """
    path = ranks_path(dataset, model, protocol, root)
    if not path.is_file():
        raise _missing(path, root)
    return read_ranks(path)


def read_runs(paths, categorical: bool = False) -> pd.DataFrame:
    """The runs of many chunks (parquet files) in one table, rows in the order of ``paths``.

    With ``categorical``, text columns become categoricals with one set of categories (sorted)
    for all chunks: runs repeat a few labels (dataset, model, estimator, metric ...) on millions
    of rows, which then take a byte or two per row instead of a string each. (Grouping and
    sorting by a categorical follow its categories, so a study opts in only if it is written for
    them.)
    """
    frames = []
    for path in paths:  # each chunk made categorical as it is read: only one chunk is ever text
        frame = pd.read_parquet(path, engine="pyarrow")
        if categorical:
            text = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c])]
            frame[text] = frame[text].astype("category")
        frames.append(frame)
    if not frames:
        raise ValueError("read_runs needs at least one parquet file")
    if categorical:  # one set of categories for all chunks, or the concatenation falls back to text
        for column in frames[0].select_dtypes("category").columns:
            categories = sorted(set().union(*(frame[column].cat.categories for frame in frames)))
            for frame in frames:
                frame[column] = frame[column].cat.set_categories(categories)
    return pd.concat(frames, ignore_index=True)


def read_table(notebook: str, name: str, root: str | Path = ".") -> pd.DataFrame:
    """A study table (cut-offs ``k`` as nullable integers), noted as an input of the figures drawn
    afterwards (:mod:`itemsampling._sources`)."""
    path = table_path(notebook, name, root)
    if not path.is_file():
        raise _missing(path, root)
    data = path.read_bytes()
    note_table(f"{notebook}/{name}.csv", data)
    frame = pd.read_csv(io.BytesIO(data))
    if "k" in frame.columns:
        frame["k"] = frame["k"].astype("Int64")
    return frame


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV at ``path``, deterministically and atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_text_file(path) as fh:
        frame.to_csv(fh, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    return path
