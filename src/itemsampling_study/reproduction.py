"""Whether a rerun of the study reproduces the committed tables, and how closely.

On a machine like the one that made the committed results (the same :func:`reproduction key
<itemsampling.provenance.reproduction_key>`: instruction set, BLAS library, kernels, threads and
package versions) every table is reproduced byte for byte, and ``make check`` demands it. On any
other machine the last digits of sums and factorizations differ, and a few results that depend
on the order of near-equal numbers move further (a refitted model's near-ties, a Monte Carlo
stream that branches on them): there ``make check`` compares each table with its committed
version cell by cell and passes within the tolerance of the table's class, reporting the largest
absolute and relative difference of every table.

Classes (:data:`TOLERANCES`, a table's class in :data:`TABLE_CLASSES`, ``numeric`` otherwise):

* ``numeric``: every number within ``atol + rtol·|committed|``; text and integer columns equal.
  Tables are written with 10 significant digits, so rounding of other kernels shows as a
  difference of about 1e-9 relative; ill-conditioned corrections (CLS, BV with a small γ) move
  further, hence rtol = 1e-6.
* rows of the CLS correction (``estimator`` or ``method`` ``cls``) in any table: its least
  squares problem is ill-conditioned, and the Householder QR of the kernel rounds differently
  under other kernels: on the smoke study under OpenBLAS's Sandybridge kernels its AUC estimates
  moved by up to 2.5e-4 (3.3e-4 relative), every other estimator not at all. They are compared
  with :data:`ILL_CONDITIONED` (atol = 1e-3, rtol = 1e-2).
* ``refit``: tables computed from models refitted in the study (the tie rules and readings of
  notebook 01): another machine's rounding moves a few held-out items by a rank or two, which
  moves metrics by a few users' worth (atol = 1e-3) and counts of users by a few (integers are
  compared with the same tolerance as floats, relative 1%). The orders of recommenders derived
  from such metrics (text columns ending in ``order``) may flip where two recommenders are
  within that tolerance of each other: on ml-1m under OpenBLAS's SkylakeX kernels X and Y swapped
  in 2 of 756 rows of ``sensitivity_orders``; such flips are reported as a note, not counted.
  The same near-ties flip the order of a pair in a few of the repeats of one setting, so a count
  of repeats (a table with a ``repeats`` column: the count ``agree`` and its share ``fraction``)
  may move by :data:`REPEAT_FLIPS` of the repeats: on ml-1m under SkylakeX kernels, against the
  committed Haswell run, ``sensitivity_pairs`` moved by 1 of 100 repeats in 171 rows and by 2 in
  36, never more (a refit moved the recommenders' metrics by at most 1.2e-5).
* ``monte_carlo``: the live evaluation of notebook 06, whose adaptive draws branch on the
  refitted model's scores: on another machine it is another Monte Carlo sample of the same
  quantities; means must agree within ``z`` standard errors of the difference of two means of
  ``repeats`` runs (columns ``mean``, ``std``, ``repeats``), other numbers within rtol = 5%.
* ``times``: wall times (``*_times.csv``), never compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["ILL_CONDITIONED", "ILL_CONDITIONED_ESTIMATORS", "REPEAT_COUNTS", "REPEAT_FLIPS", "TABLE_CLASSES", "TOLERANCES", "TableDifference", "check_reproduction", "compare_table", "compare_tables",
           "read_tree", "table_class"]

#: tolerance of each class of tables (see the module docstring)
TOLERANCES: dict[str, dict] = {
    "numeric": {"rtol": 1e-6, "atol": 1e-9, "integers_exact": True},
    "refit": {"rtol": 1e-2, "atol": 1e-3, "integers_exact": False},
    "monte_carlo": {"rtol": 5e-2, "atol": 1e-9, "integers_exact": True, "z": 4.0},
    "times": {},
}
#: share of the repeats whose count may move in a ``refit`` table (see the module docstring)
REPEAT_FLIPS = 0.03
#: columns of a ``refit`` table with a ``repeats`` column that count repeats, and their kind
REPEAT_COUNTS = {"agree": "count", "fraction": "share"}
#: tolerance of the rows of :data:`ILL_CONDITIONED_ESTIMATORS` (any class but ``times``)
ILL_CONDITIONED = {"rtol": 1e-2, "atol": 1e-3}
#: estimators whose results depend on rounding beyond the last digits (column ``estimator`` or ``method``)
ILL_CONDITIONED_ESTIMATORS = ("cls",)
#: tables (``<notebook>/<name>``) outside the class ``numeric``; ``*_times`` are ``times``
TABLE_CLASSES: dict[str, str] = {
    **{f"01_sampled_metrics/{name}": "refit" for name in (
        "sensitivity_summary", "sensitivity", "sensitivity_table4", "sensitivity_orders", "sensitivity_paper", "ties",
        "sensitivity_table3", "sensitivity_pairs", "fig6_closest_reading")},
    "06_adaptive_sampling/live_evaluation": "monte_carlo",
}


def table_class(table: str) -> str:
    """The class of ``<notebook>/<name>`` (:data:`TABLE_CLASSES`; ``times`` for ``*_times``)."""
    if table.endswith("_times"):
        return "times"
    return TABLE_CLASSES.get(table, "numeric")


@dataclass(frozen=True)
class TableDifference:
    """How a rerun table differs from the committed one.

    Attributes
    ----------
    table : str
        ``<notebook>/<name>``.
    kind : str
        Its class (:data:`TOLERANCES`).
    identical : bool
        Whether the files are byte-identical.
    max_abs, max_rel : float
        The largest absolute and relative difference of a number (0 when identical; relative to
        the committed value, over cells where it is not 0).
    cells_beyond : int
        Cells outside the class's tolerance (a structural difference counts as one).
    problem : str
        What is structurally different (rows, columns, text), or ``""``.
    note : str
        Differences the class tolerates but reports (orders of near-tied recommenders), or ``""``.
    """

    table: str
    kind: str
    identical: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    cells_beyond: int = 0
    problem: str = ""
    note: str = ""

    @property
    def within(self) -> bool:
        """Whether the rerun reproduces the table within its tolerance."""
        return self.kind == "times" or (not self.problem and self.cells_beyond == 0)


def compare_table(table: str, committed: pd.DataFrame, rerun: pd.DataFrame, identical: bool = False) -> TableDifference:
    """Compare one rerun table with its committed version under the tolerance of its class.

    Parameters
    ----------
    table : str
        ``<notebook>/<name>`` (its class: :func:`table_class`).
    committed, rerun : pandas.DataFrame
        The two versions, as read from CSV.
    identical : bool
        Whether the files are byte-identical (then nothing else is compared).
    """
    kind = table_class(table)
    if identical or kind == "times":
        return TableDifference(table, kind, identical)
    tol = TOLERANCES[kind]
    if list(committed.columns) != list(rerun.columns) or len(committed) != len(rerun):
        return TableDifference(table, kind, False, np.inf, np.inf, 1,
                               f"other columns or rows ({committed.shape} committed, {rerun.shape} rerun)")
    max_abs = max_rel = 0.0
    beyond = 0
    problems, notes = [], []
    loose = np.zeros(len(committed), dtype=bool)
    for column in ("estimator", "method"):
        if column in committed.columns:
            loose |= committed[column].isin(ILL_CONDITIONED_ESTIMATORS).to_numpy()
    atol = np.where(loose, ILL_CONDITIONED["atol"], tol["atol"])
    rtol = np.where(loose, ILL_CONDITIONED["rtol"], tol["rtol"])
    for column in committed.columns:
        a, b = committed[column], rerun[column]
        numeric = pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b)
        if not numeric or pd.api.types.is_bool_dtype(a):
            differ = ~((a == b) | (a.isna() & b.isna()))
            if differ.any() and kind == "refit" and str(column).endswith("order"):
                notes.append(f"column {column!r} differs in {int(differ.sum())} rows (orders of recommenders "
                             "whose metrics moved within tolerance)")
            elif differ.any():
                problems.append(f"column {column!r} differs in {int(differ.sum())} rows (text)")
            continue
        x, y = a.to_numpy(float), b.to_numpy(float)
        nan = np.isnan(x) | np.isnan(y)
        if (np.isnan(x) != np.isnan(y)).any():
            problems.append(f"column {column!r} is empty in other rows")
        x, y, row_atol, row_rtol, row_loose = x[~nan], y[~nan], atol[~nan], rtol[~nan], loose[~nan]
        diff = np.abs(x - y)
        if diff.size:
            max_abs = max(max_abs, float(diff.max()))
            nonzero = x != 0
            if nonzero.any():
                max_rel = max(max_rel, float((diff[nonzero] / np.abs(x[nonzero])).max()))
        exact = tol["integers_exact"] and pd.api.types.is_integer_dtype(a) and pd.api.types.is_integer_dtype(b)
        if exact:
            beyond += int(((diff > 0) & ~row_loose).sum() + ((diff > row_atol + row_rtol * np.abs(x)) & row_loose).sum())
        elif kind == "monte_carlo" and column == "mean" and {"std", "repeats"} <= set(committed.columns):
            se = np.sqrt(committed["std"].to_numpy(float) ** 2 + rerun["std"].to_numpy(float) ** 2)[~nan]
            se = se / np.sqrt(committed["repeats"].to_numpy(float)[~nan])
            beyond += int((diff > tol["z"] * se + tol["atol"]).sum())
        elif kind == "monte_carlo" and column == "std":
            continue  # the spread of a few repeats is itself noisy; the means are tested against it
        elif kind == "refit" and column in REPEAT_COUNTS and "repeats" in committed.columns:
            scale = committed["repeats"].to_numpy(float)[~nan] if REPEAT_COUNTS[column] == "count" else 1.0
            beyond += int((diff > REPEAT_FLIPS * scale + 1e-9).sum())
        else:
            beyond += int((diff > row_atol + row_rtol * np.abs(x)).sum())
    if problems:
        beyond += 1
    return TableDifference(table, kind, False, max_abs, max_rel, beyond, "; ".join(problems), "; ".join(notes))


def compare_tables(committed: Mapping[str, bytes], rerun: Mapping[str, bytes]) -> pd.DataFrame:
    """Compare every committed table with its rerun.

    Parameters
    ----------
    committed, rerun : mapping of str to bytes
        ``<notebook>/<name>`` -> the CSV file's bytes (committed: as in git; rerun: as written).

    Returns
    -------
    pandas.DataFrame
        One row per table of either side: ``table, class, identical, max_abs, max_rel,
        cells_beyond, problem, note, within``; a table on one side only is a problem.
    """
    import io

    rows = []
    for table in sorted(set(committed) | set(rerun)):
        if table not in rerun or table not in committed:
            side = "rerun" if table not in rerun else "committed tables"
            diff = TableDifference(table, table_class(table), False, np.inf, np.inf, 1, f"missing from the {side}")
        else:
            same = committed[table] == rerun[table]
            diff = compare_table(table, pd.read_csv(io.BytesIO(committed[table])), pd.read_csv(io.BytesIO(rerun[table])),
                                 identical=same)
        rows.append({"table": diff.table, "class": diff.kind, "identical": diff.identical, "max_abs": diff.max_abs,
                     "max_rel": diff.max_rel, "cells_beyond": diff.cells_beyond, "problem": diff.problem,
                     "note": diff.note, "within": diff.within})
    return pd.DataFrame(rows)


def read_tree(folder: str | Path) -> dict[str, bytes]:
    """Every table under ``folder`` (``results/tables``) as ``<notebook>/<name>`` -> bytes (``<name>`` for
    a table of the whole study, such as ``verdicts``)."""
    folder = Path(folder)
    paths = sorted([*folder.glob("*.csv"), *folder.glob("*/*.csv")])
    return {p.relative_to(folder).with_suffix("").as_posix(): p.read_bytes() for p in paths}


def check_reproduction(committed: Mapping[str, bytes], rerun: Mapping[str, bytes], committed_record: dict | None,
                       rerun_record: dict | None, mode: str = "auto") -> tuple[bool, str]:
    """Decide whether a rerun reproduces the committed tables, as ``make check`` does.

    Parameters
    ----------
    committed, rerun : mapping of str to bytes
        The tables (:func:`read_tree`, or read from git for the committed side).
    committed_record, rerun_record : dict or None
        The :func:`~itemsampling.provenance.machine_record` of the committed results and of the
        rerun (``results/provenance.json``); ``None`` when there is none.
    mode : {"auto", "bytes", "tolerance"}
        ``auto``: byte for byte when both records have the same
        :func:`~itemsampling.provenance.reproduction_key`, within tolerance otherwise.

    Returns
    -------
    ok : bool
        Whether the rerun reproduces the tables in that mode.
    report : str
        The mode, why, and one line per table that is not byte-identical (class, largest absolute
        and relative difference, cells beyond the tolerance).
    """
    from itemsampling.provenance import reproduction_key

    if mode not in ("auto", "bytes", "tolerance"):
        raise ValueError(f"mode must be 'auto', 'bytes' or 'tolerance', got {mode!r}")
    if mode == "auto":
        same = (committed_record is not None and rerun_record is not None
                and reproduction_key(committed_record) == reproduction_key(rerun_record))
        mode = "bytes" if same else "tolerance"
        why = ("this machine computes as the one that made the committed results (same BLAS kernels, threads and "
               "package versions)" if same else "this machine differs from the one that made the committed results "
               f"({_key_difference(committed_record, rerun_record)})")
    else:
        why = "as asked"
    report = compare_tables(committed, rerun)
    compared = report[report["class"] != "times"]
    ok = bool(compared["identical"].all()) if mode == "bytes" else bool(compared["within"].all())
    lines = [f"mode: {'byte for byte' if mode == 'bytes' else 'within tolerance'}: {why}",
             f"{int(compared['identical'].sum())} of {len(compared)} tables byte-identical "
             f"(wall-time tables not compared: {len(report) - len(compared)})"]
    for row in compared[~compared["identical"]].to_dict("records"):
        verdict = "within tolerance" if row["within"] else f"BEYOND tolerance ({row['cells_beyond']} cells)"
        detail = "".join(f"; {row[key]}" for key in ("problem", "note") if row[key])
        lines.append(f"  {row['table']} [{row['class']}]: max |diff| {row['max_abs']:.3g}, max relative "
                     f"{row['max_rel']:.3g}: {verdict}{detail}")
    lines.append("every committed table was reproduced " + ("byte for byte" if mode == "bytes" else "within tolerance")
                 if ok else "the rerun does NOT reproduce the committed tables")
    return ok, "\n".join(lines)


def _key_difference(committed_record: dict | None, rerun_record: dict | None) -> str:
    """What differs between two machine records, in words."""
    from itemsampling.provenance import reproduction_key

    if committed_record is None or rerun_record is None:
        return "no provenance record of the " + ("committed results" if committed_record is None else "rerun")
    a, b = reproduction_key(committed_record), reproduction_key(rerun_record)
    out = []
    if a["machine"] != b["machine"]:
        out.append(f"instruction set {a['machine']} -> {b['machine']}")
    if a["blas"] != b["blas"]:
        out.append("BLAS " + ", ".join(f"{e.get('library')} {e.get('core_type')} x{e.get('threads')}" for e in a["blas"])
                   + " -> " + ", ".join(f"{e.get('library')} {e.get('core_type')} x{e.get('threads')}"
                                        for e in b["blas"]))
    if a["numpy_simd"] != b["numpy_simd"]:
        simd = [(r.get("dispatched") if isinstance(r, dict) else r) for r in (a["numpy_simd"], b["numpy_simd"])]
        out.append(f"numpy SIMD {simd[0]} -> {simd[1]}")
    out += [f"{k} {a['packages'].get(k)} -> {b['packages'].get(k)}" for k in sorted(set(a["packages"]) | set(b["packages"]))
            if a["packages"].get(k) != b["packages"].get(k)]
    return "; ".join(out)
