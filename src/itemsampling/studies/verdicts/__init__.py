"""One verdict for every claim of the papers that a notebook tests: ``results/tables/verdicts.csv``.

Each notebook's claims come from the module of this package named after its study
(:mod:`.sampled_metrics` for notebook 01, :mod:`.estimator_accuracy` for notebook 04, ...). Its
``claims(table)`` reads the notebook's tables through ``table(name)`` (a study table of that
notebook, :func:`~itemsampling.studies.tables.read_table`) and returns :class:`Claim` rows. The
verdict of each row is computed from the numbers by the rule its ``reason`` states (e.g. the
share of (dataset, model) pairs where the paper's claim holds, :func:`share_verdict`); nothing
in a row is typed from a result, and no rule is tuned to make a paper's number come out.

Verdicts:

==================== ======================================================================
``reproduced``       the claim holds on our data by the stated rule
``partly``           it holds for some of the cases, or in direction but not in size
``not reproduced``   our numbers contradict it
``not testable here`` our data or models cannot test it (the reason says what is missing)
==================== ======================================================================

:func:`verdict_table` gathers the rows of every notebook (rule ``verdicts`` writes them to
``results/tables/verdicts.csv``); each notebook ends with its own rows
(:func:`notebook_verdicts`), and the README and the report's front page show the whole table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from ..tables import read_table

__all__ = [
    "COLUMNS",
    "PAPERS",
    "VERDICTS",
    "VERDICTS_PATH",
    "Claim",
    "notebook_verdicts",
    "read_verdicts",
    "report_summary",
    "share_verdict",
    "summary_markdown",
    "verdict_counts",
    "verdict_table",
    "verdicts_html",
]

#: columns of ``verdicts.csv``, in order
COLUMNS = ("paper", "claim", "source", "notebook", "dataset", "our_value", "paper_value", "verdict", "reason")
#: the verdicts, from best to worst, then the one for claims our data cannot test
VERDICTS = ("reproduced", "partly", "not reproduced", "not testable here")
#: the papers by their key in ``itemsampling.studies.paper`` and how the table names them
PAPERS = {
    "krichene2020kdd": "Krichene & Rendle, KDD 2020",
    "li2020kdd": "Li, Jin, Gao & Liu, KDD 2020",
    "jin2021aaai": "Jin et al., AAAI 2021",
    "li2023aaai": "Li et al., AAAI 2023",
}
#: where the table is written, relative to the repository root
VERDICTS_PATH = Path("results", "tables", "verdicts.csv")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, what our run gives, and the verdict.

    Parameters
    ----------
    paper : str
        A key of :data:`PAPERS`.
    claim : str
        The claim in a sentence, as the paper makes it.
    source : str
        Where the paper makes it: ``"Table 7"``, ``"Fig. 2"``, ``"§4.2"``.
    dataset : str
        Our dataset(s) it is tested on (``"all four"``, ``"ml-1m"``, ...; ``"simulated"``).
    our_value, paper_value : str
        The numbers compared, as text formatted by the code that computed them (``""`` where the
        paper gives none).
    verdict : str
        One of :data:`VERDICTS`.
    reason : str
        The rule that gave the verdict, with its numbers, and why ours differ where they do.
    """

    paper: str
    claim: str
    source: str
    dataset: str
    our_value: str
    paper_value: str
    verdict: str
    reason: str

    def __post_init__(self):
        if self.paper not in PAPERS:
            raise ValueError(f"unknown paper {self.paper!r}; known: {', '.join(PAPERS)}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        for name in ("claim", "source", "dataset", "reason"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a claim needs a non-empty {name}, got {value!r}")
        for name in ("our_value", "paper_value"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} is text formatted by the code that computed it, got "
                                f"{type(getattr(self, name)).__name__}")


def share_verdict(holds: int, cases: int, *, reproduced: float = 0.9, partly: float = 0.5) -> str:
    """The verdict of a claim that holds in ``holds`` of ``cases`` cases.

    ``reproduced`` when the share is at least ``reproduced``, ``partly`` when at least
    ``partly``, ``not reproduced`` below; ``not testable here`` without cases.
    """
    if not 0 <= holds <= cases:
        raise ValueError(f"need 0 <= holds <= cases, got {holds} of {cases}")
    if not 0 < partly <= reproduced <= 1:
        raise ValueError(f"need 0 < partly <= reproduced <= 1, got {partly} and {reproduced}")
    if cases == 0:
        return "not testable here"
    share = holds / cases
    return "reproduced" if share >= reproduced else "partly" if share >= partly else "not reproduced"


def _claims_of(study: str):
    try:
        module = importlib.import_module(f"{__name__}.{study}")
    except ModuleNotFoundError:
        raise ValueError(f"study {study!r} has no claims module {__name__}.{study}") from None
    return module.claims


def verdict_table(studies: Mapping[str, str], root: str | Path = ".") -> pd.DataFrame:
    """The verdicts of every notebook, in the order of ``studies`` (notebook -> study).

    Each notebook's rows come from ``claims(table)`` of the module named after its study, reading
    the notebook's committed tables under ``root``.
    """
    if not studies:
        raise ValueError("verdict_table needs at least one notebook (notebook -> study)")
    frames = []
    for notebook, study in studies.items():
        table: Callable[[str], pd.DataFrame] = lambda name, nb=notebook: read_table(nb, name, root)  # noqa: E731
        rows = _claims_of(study)(table)
        for row in rows:
            if not isinstance(row, Claim):
                raise TypeError(f"claims of {study!r} must be Claim rows, got {type(row).__name__}")
        frames.append(pd.DataFrame([{**asdict(row), "notebook": notebook} for row in rows], columns=list(COLUMNS)))
    return pd.concat(frames, ignore_index=True)


def read_verdicts(root: str | Path = ".") -> pd.DataFrame:
    """``results/tables/verdicts.csv`` under ``root``, every column as text."""
    path = Path(root) / VERDICTS_PATH
    if not path.is_file():
        raise FileNotFoundError(f"{VERDICTS_PATH} does not exist; make it with "
                                f"`snakemake --cores 2 {VERDICTS_PATH.as_posix()}` in the repository root")
    frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    if tuple(frame.columns) != COLUMNS:
        raise ValueError(f"{path} has the columns {list(frame.columns)}, not {list(COLUMNS)}: rerun rule verdicts")
    return frame


def notebook_verdicts(notebook: str, root: str | Path = ".") -> pd.DataFrame:
    """The rows of ``verdicts.csv`` of one notebook (what the notebook ends with)."""
    frame = read_verdicts(root)
    return frame[frame["notebook"] == notebook].drop(columns="notebook").reset_index(drop=True)


def verdict_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper (rows, in the order of :data:`PAPERS`, then a total) and verdict (columns,
    in the order of :data:`VERDICTS`)."""
    counts = pd.crosstab(frame["paper"], frame["verdict"]).reindex(index=list(PAPERS), columns=list(VERDICTS),
                                                                   fill_value=0).fillna(0).astype(int)
    counts.index = [PAPERS[p] for p in counts.index]
    counts.loc["all four papers"] = counts.sum()
    return counts.rename_axis(index="paper", columns=None)


def summary_markdown(frame: pd.DataFrame) -> str:
    """The README's section on what reproduces: the counts of :func:`verdict_counts` and one line
    per claim that is not reproduced, both as Markdown."""
    counts = verdict_counts(frame)
    lines = ["| paper | " + " | ".join(counts.columns) + " |", "|---|" + "---:|" * len(counts.columns)]
    lines += [f"| {paper} | " + " | ".join(str(v) for v in row) + " |" for paper, row in counts.iterrows()]
    lines += ["", "Not reproduced:", ""]
    for row in frame[frame["verdict"] == "not reproduced"].itertuples():
        values = f"ours {row.our_value}" + (f"; paper {row.paper_value}" if row.paper_value else "")
        lines.append(f"- {PAPERS[row.paper]}, {row.source} ({row.dataset}; notebook `{row.notebook}`): "
                     f"{row.claim.rstrip('.')} — {values}.")
    return "\n".join(lines) + "\n"


def _rst_text(text: str) -> str:
    """``text`` with what reStructuredText reads as markup escaped (``|a - b|`` is a substitution
    reference there, ``*`` emphasis, ``_`` a link, ``Recall@10`` an e-mail address)."""
    out = str(text).replace("\\", "\\\\")
    for char in "|*`_@":
        out = out.replace(char, "\\" + char)
    return out


def report_summary(frame: pd.DataFrame) -> dict:
    """What the report's front page shows of the verdicts (``workflow/report/workflow.rst``): the
    counts of :func:`verdict_counts` per paper, and the claims not reproduced, their text escaped
    for reStructuredText."""
    counts = verdict_counts(frame)
    missed = frame[frame["verdict"] == "not reproduced"].astype(str).map(_rst_text)
    missed["paper"] = [PAPERS[p] for p in frame[frame["verdict"] == "not reproduced"]["paper"]]
    missed["claim"] = missed["claim"].str.rstrip(".")
    return {"counts": [{"paper": paper, **{v: int(n) for v, n in row.items()}} for paper, row in counts.iterrows()],
            "not_reproduced": missed.to_dict("records")}


def verdicts_html(frame: pd.DataFrame) -> str:
    """Rows of ``verdicts.csv`` as an HTML table for a notebook: text left-aligned and wrapped,
    no index, and the same bytes on every run (a fixed table id, unlike pandas' default)."""
    styled = frame.style.set_uuid("verdicts").hide(axis="index")
    return styled.set_properties(**{"text-align": "left", "white-space": "normal"}).to_html()
