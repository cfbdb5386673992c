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

__all__ = ["COLUMNS", "PAPERS", "VERDICTS", "VERDICTS_PATH", "Claim", "notebook_verdicts", "share_verdict",
           "verdict_table"]

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
    frames = []
    for notebook, study in studies.items():
        table: Callable[[str], pd.DataFrame] = lambda name, nb=notebook: read_table(nb, name, root)  # noqa: E731
        rows = _claims_of(study)(table)
        for row in rows:
            if not isinstance(row, Claim):
                raise TypeError(f"claims of {study!r} must be Claim rows, got {type(row).__name__}")
        frames.append(pd.DataFrame([{**asdict(row), "notebook": notebook} for row in rows], columns=list(COLUMNS)))
    return pd.concat(frames, ignore_index=True)


def notebook_verdicts(notebook: str, root: str | Path = ".") -> pd.DataFrame:
    """The rows of ``verdicts.csv`` of one notebook (what the notebook ends with)."""
    path = Path(root) / VERDICTS_PATH
    if not path.is_file():
        raise FileNotFoundError(f"{VERDICTS_PATH} does not exist; make it with "
                                f"`snakemake --cores 2 {VERDICTS_PATH.as_posix()}` in the repository root")
    frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    return frame[frame["notebook"] == notebook].drop(columns="notebook").reset_index(drop=True)
