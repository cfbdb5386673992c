"""One verdict for every claim of the papers that a notebook tests (``results/tables/verdicts.csv``),
and our own checks beside them (``results/tables/checks.csv``).

Each notebook's claims come from the module of this package named after its study
(:mod:`.sampled_metrics` for notebook 01, :mod:`.estimator_accuracy` for notebook 04, ...). Its
``claims(table)`` reads the notebook's tables through ``table(name)`` (a study table of that
notebook, :func:`~itemsampling_study.tables.read_table`) and returns :class:`Claim` rows (a
sentence of a paper, quoted verbatim) and :class:`Check` rows (our own robustness checks and
extensions, never counted as the paper's). The verdict of each row is computed from the numbers
by the rule its ``reason`` states (e.g. the share of (dataset, model) pairs where the claim holds,
:func:`share_verdict`); nothing in a row is typed from a result, and no rule is tuned to make a
paper's number come out. ``docs/verdicts.md`` is the rubric: how a claim is chosen, quoted,
scoped and graded.

Verdicts:

==================== ======================================================================
``reproduced``       the claim holds on our data by the stated rule
``partly``           it holds for some of the cases, or in direction but not in size
``not reproduced``   our numbers contradict it
``not testable here`` our data or models cannot test it (the reason says what is missing)
==================== ======================================================================

:func:`verdict_tables` gathers the rows of every notebook (rule ``verdicts`` writes them to
``results/tables/verdicts.csv`` and ``checks.csv``); each notebook ends with its own rows
(:func:`notebook_verdicts`, :func:`notebook_checks`), and the README and the report's front page
show the counts and every claim that is not reproduced. :func:`quote_found` and
:func:`source_found` check a row against the paper's text.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from ..tables import read_table

__all__ = [
    "CHECKS_PATH",
    "COLUMNS",
    "PAPERS",
    "PAPER_FILES",
    "VERDICTS",
    "VERDICTS_PATH",
    "Check",
    "Claim",
    "absent",
    "can_verdict",
    "most_verdict",
    "notebook_checks",
    "notebook_verdicts",
    "paper_text",
    "papers_folder",
    "quote_found",
    "read_checks",
    "read_verdicts",
    "report_summary",
    "share_verdict",
    "source_found",
    "summary_markdown",
    "untestable",
    "verdict_counts",
    "verdict_table",
    "verdict_tables",
    "verdicts_html",
]

#: columns of ``verdicts.csv`` and ``checks.csv``, in order
COLUMNS = ("paper", "claim", "quote", "source", "notebook", "dataset", "setup", "our_value", "paper_value", "verdict",
           "other_setups", "reason")
#: the verdicts, from best to worst, then the one for claims our data cannot test
VERDICTS = ("reproduced", "partly", "not reproduced", "not testable here")
#: the papers by their key in ``itemsampling_study.paper`` and how the table names them
PAPERS = {
    "krichene2020kdd": "Krichene & Rendle, KDD 2020",
    "li2020kdd": "Li, Jin, Gao & Liu, KDD 2020",
    "jin2021aaai": "Jin et al., AAAI 2021",
    "li2023aaai": "Li et al., AAAI 2023",
}
#: the plain-text files of each paper (:func:`papers_folder`); a quote is found in any of them
PAPER_FILES = {
    "krichene2020kdd": ("krichene2020kdd_on_sampled_metrics.txt",),
    "li2020kdd": ("li2020kdd_on_sampling_topk_evaluation.txt",),
    "jin2021aaai": ("jin2021aaai_estimating_metrics_under_sampling_full.txt",
                    "jin2021aaai_estimating_metrics_under_sampling_short.txt"),
    "li2023aaai": ("li2023aaai_towards_reliable_item_sampling.txt",),
}
#: where the tables are written, relative to the repository root
VERDICTS_PATH = Path("results", "tables", "verdicts.csv")
CHECKS_PATH = Path("results", "tables", "checks.csv")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim of a paper, what our run gives, and the verdict.

    Parameters
    ----------
    paper : str
        A key of :data:`PAPERS`.
    claim : str
        The claim in a short sentence of ours (what the row tests), for tables and the README.
    quote : str
        The paper's own words, verbatim (:func:`quote_found`); fragments of one passage are joined
        by `` ... ``. The verdict grades this sentence as stated: its scope and its hedges.
    source : str
        Where the paper says it, items joined by ``"; "``: ``"§6.2"``, ``"Table 4"``, ``"Fig. 6"``,
        ``"eq. 20"``, ``"App. D"``, ``"Abstract"``, ``"Introduction"`` (for a paper whose introduction has
        no number), ``"Theorem 2.1"`` (:func:`source_found`).
    dataset : str
        Our dataset(s) it is tested on (``"all four"``, ``"ml-1m"``, ...; ``"simulated"``).
    our_value, paper_value : str
        The numbers compared, as text formatted by the code that computed them (``""`` where the
        paper gives none).
    verdict : str
        One of :data:`VERDICTS`, on the setup closest to the paper's (``setup``).
    reason : str
        The rule that gave the verdict, with its numbers, and why ours differ where they do.
    setup : str
        The setup the verdict is graded on, where more than one reading of the paper's setup is
        run (chosen by a rule on setup facts stated in the reason, never by the claim under test).
    other_setups : str
        The verdicts under the other readings (``"printed: not reproduced; history-pessimistic:
        partly"``), ``""`` where there is one.
    """

    paper: str
    claim: str
    quote: str
    source: str
    dataset: str
    our_value: str
    paper_value: str
    verdict: str
    reason: str
    setup: str = ""
    other_setups: str = ""

    #: the fields that must hold text
    _required = ("claim", "quote", "source", "dataset", "reason")

    def __post_init__(self):
        if self.paper not in PAPERS:
            raise ValueError(f"unknown paper {self.paper!r}; known: {', '.join(PAPERS)}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        for name in self._required:
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a {type(self).__name__.lower()} needs a non-empty {name}, got {value!r}")
        for name in ("quote", "our_value", "paper_value", "setup", "other_setups"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} is text formatted by the code that computed it, got "
                                f"{type(getattr(self, name)).__name__}")


@dataclass(frozen=True, kw_only=True)
class Check(Claim):
    """One check of ours: a robustness check or an extension that no sentence of a paper states.

    Same fields as :class:`Claim`; ``quote`` is the sentence of the paper it probes, or ``""``,
    and ``paper_value`` is usually ``""``. Checks go to ``checks.csv`` and are never counted as
    the paper's.
    """

    quote: str = ""
    paper_value: str = ""

    _required = ("claim", "source", "dataset", "reason")


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


def most_verdict(holds: int, cases: int) -> str:
    """The verdict of a claim hedged by "most", "mostly", "often", "typically", "tend to": reproduced
    when it holds in strictly more than half of the cases, partly from a quarter (exactly half is
    partly)."""
    if cases and 2 * holds == cases:
        return "partly"
    return share_verdict(holds, cases, reproduced=0.5, partly=0.25)


def can_verdict(holds: int, cases: int) -> str:
    """The verdict of a claim hedged by "may", "can", "could": reproduced when it holds in one case."""
    return share_verdict(min(holds, 1), min(cases, 1))


def absent(frame: pd.DataFrame, datasets, n: int | None = None) -> bool:
    """Whether ``frame`` has no row of ``datasets`` (at sample size ``n``): a claim about them is
    not testable on this run (:func:`untestable`)."""
    rows = frame["dataset"].isin(list(datasets))
    if n is not None:
        rows &= frame["sample_size"] == n
    return not bool(rows.any())


def untestable(paper: str, claim: str, quote: str, source: str, dataset: str, why: str, *,
               kind: type[Claim] = Claim) -> Claim:
    """A claim (or, with ``kind=Check``, a check) this run cannot test: its datasets or estimators
    are absent, as ``why`` says."""
    return kind(paper=paper, claim=claim, quote=quote, source=source, dataset=dataset, our_value="", paper_value="",
                verdict="not testable here", reason=why)


def _claims_of(study: str):
    try:
        module = importlib.import_module(f"{__name__}.{study}")
    except ModuleNotFoundError:
        raise ValueError(f"study {study!r} has no claims module {__name__}.{study}") from None
    return module.claims


def verdict_tables(studies: Mapping[str, str], root: str | Path = ".") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims and the checks of every notebook, in the order of ``studies`` (notebook -> study).

    Each notebook's rows come from ``claims(table)`` of the module named after its study, reading
    the notebook's committed tables under ``root``: its :class:`Claim` rows go to the first table
    (``verdicts.csv``), its :class:`Check` rows to the second (``checks.csv``).
    """
    if not studies:
        raise ValueError("verdict_tables needs at least one notebook (notebook -> study)")
    claims, checks = [], []
    for notebook, study in studies.items():
        table: Callable[[str], pd.DataFrame] = lambda name, nb=notebook: read_table(nb, name, root)  # noqa: E731
        for row in _claims_of(study)(table):
            if not isinstance(row, Claim):
                raise TypeError(f"claims of {study!r} must be Claim or Check rows, got {type(row).__name__}")
            (checks if isinstance(row, Check) else claims).append({**asdict(row), "notebook": notebook})
    return (pd.DataFrame(claims, columns=list(COLUMNS)).fillna(""),
            pd.DataFrame(checks, columns=list(COLUMNS)).fillna(""))


def verdict_table(studies: Mapping[str, str], root: str | Path = ".") -> pd.DataFrame:
    """The claims of :func:`verdict_tables` alone (``verdicts.csv``)."""
    return verdict_tables(studies, root)[0]


def _read(path: Path, root: str | Path) -> pd.DataFrame:
    full = Path(root) / path
    if not full.is_file():
        raise FileNotFoundError(f"{path.as_posix()} does not exist; make it with "
                                f"`snakemake --cores 2 {path.as_posix()}` in the repository root")
    frame = pd.read_csv(full, keep_default_na=False, dtype=str)
    if tuple(frame.columns) != COLUMNS:
        raise ValueError(f"{full} has the columns {list(frame.columns)}, not {list(COLUMNS)}: rerun rule verdicts")
    return frame


def read_verdicts(root: str | Path = ".") -> pd.DataFrame:
    """``results/tables/verdicts.csv`` under ``root``, every column as text."""
    return _read(VERDICTS_PATH, root)


def read_checks(root: str | Path = ".") -> pd.DataFrame:
    """``results/tables/checks.csv`` under ``root``, every column as text."""
    return _read(CHECKS_PATH, root)


def notebook_verdicts(notebook: str, root: str | Path = ".") -> pd.DataFrame:
    """The rows of ``verdicts.csv`` of one notebook (what the notebook ends with)."""
    frame = read_verdicts(root)
    return frame[frame["notebook"] == notebook].drop(columns="notebook").reset_index(drop=True)


def notebook_checks(notebook: str, root: str | Path = ".") -> pd.DataFrame:
    """The rows of ``checks.csv`` of one notebook (shown apart from its verdicts)."""
    frame = read_checks(root)
    return frame[frame["notebook"] == notebook].drop(columns="notebook").reset_index(drop=True)


def verdict_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper (rows, in the order of :data:`PAPERS`, then a total) and verdict (columns,
    in the order of :data:`VERDICTS`)."""
    counts = pd.crosstab(frame["paper"], frame["verdict"]).reindex(index=list(PAPERS), columns=list(VERDICTS),
                                                                   fill_value=0).fillna(0).astype(int)
    counts.index = [PAPERS[p] for p in counts.index]
    counts.loc["all four papers"] = counts.sum()
    return counts.rename_axis(index="paper", columns=None)


def _missed_line(row) -> str:
    """One claim that is not reproduced, as a line of text: what it tests, the quote, the numbers,
    and the verdicts under other readings of the paper's setup."""
    values = f"ours {row.our_value}" + (f"; paper {row.paper_value}" if row.paper_value else "")
    setup = f" Graded on {row.setup}; other readings: {row.other_setups}." if row.other_setups else ""
    return f"{row.claim.strip().rstrip('.')}: “{row.quote.strip()}” — {values}.{setup}"


def summary_markdown(frame: pd.DataFrame, checks: pd.DataFrame | None = None) -> str:
    """The README's section on what reproduces: the counts of :func:`verdict_counts`, one line per
    claim that is not reproduced (its quote and numbers), and the counts of our own ``checks``,
    all as Markdown."""
    counts = verdict_counts(frame)
    lines = ["| paper | " + " | ".join(counts.columns) + " |", "|---|" + "---:|" * len(counts.columns)]
    lines += [f"| {paper} | " + " | ".join(str(v) for v in row) + " |" for paper, row in counts.iterrows()]
    lines += ["", "Not reproduced:", ""]
    for row in frame[frame["verdict"] == "not reproduced"].itertuples():
        lines.append(f"- {PAPERS[row.paper]}, {row.source} ({row.dataset}; notebook `{row.notebook}`): "
                     f"{_missed_line(row)}")
    if checks is not None and len(checks):
        tally = checks["verdict"].value_counts().reindex(list(VERDICTS), fill_value=0)
        lines += ["", f"Our own checks and extensions, kept apart from the papers' claims "
                  f"(`{CHECKS_PATH.as_posix()}`, {len(checks)} rows): "
                  + ", ".join(f"{n} {verdict}" for verdict, n in tally.items() if n) + "."]
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
    counts of :func:`verdict_counts` per paper, and the claims not reproduced (their quote, numbers
    and other readings in ``line``), their text escaped for reStructuredText."""
    counts = verdict_counts(frame)
    missed = frame[frame["verdict"] == "not reproduced"]
    rows = [{"paper": PAPERS[row.paper], **{k: _rst_text(getattr(row, k)) for k in ("source", "dataset", "notebook")},
             "line": _rst_text(_missed_line(row))} for row in missed.itertuples()]
    return {"counts": [{"paper": paper, **{v: int(n) for v, n in row.items()}} for paper, row in counts.iterrows()],
            "not_reproduced": rows}


def verdicts_html(frame: pd.DataFrame) -> str:
    """Rows of ``verdicts.csv`` as an HTML table for a notebook: text left-aligned and wrapped,
    no index, and the same bytes on every run (a fixed table id, unlike pandas' default)."""
    styled = frame.style.set_uuid("verdicts").hide(axis="index")
    return styled.set_properties(**{"text-align": "left", "white-space": "normal"}).to_html()


def papers_folder(root: str | Path = ".") -> Path | None:
    """The folder of the papers' plain text (:data:`PAPER_FILES`), or ``None``.

    ``$ITEMSAMPLING_PAPERS`` if set, else ``papers/`` beside the data mirror ``$ITEMSAMPLING_DATA``,
    else ``../shared/papers`` beside the repository ``root``. The texts are not ours to commit."""
    candidates = [os.environ.get("ITEMSAMPLING_PAPERS")]
    if os.environ.get("ITEMSAMPLING_DATA"):
        candidates.append(str(Path(os.environ["ITEMSAMPLING_DATA"]).parent / "papers"))
    candidates.append(str(Path(root).resolve().parent / "shared" / "papers"))
    for folder in filter(None, candidates):
        if all((Path(folder) / name).is_file() for names in PAPER_FILES.values() for name in names):
            return Path(folder)
    return None


def paper_text(paper: str, folder: str | Path) -> str:
    """The plain text of ``paper`` (all of its :data:`PAPER_FILES`) in ``folder``."""
    if paper not in PAPER_FILES:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPER_FILES)}")
    return "\n".join((Path(folder) / name).read_text(encoding="utf-8") for name in PAPER_FILES[paper])


#: LaTeX commands read as the character they print; any other command is dropped with its backslash
_LATEX = {"leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "approx": "≈", "times": "×", "cdot": "·",
          "gamma": "γ", "alpha": "α", "beta": "β", "theta": "θ", "lambda": "λ", "pi": "π", "sum": "∑", "infty": "∞",
          "ldots": "...", "dots": "...", "cdots": "...", "%": "%", "sim": "~", "in": "∈"}


def _normalised(text: str) -> str:
    """``text`` with whitespace and LaTeX markup made uniform, and nothing else: the form in which a
    quote and the paper are compared (:func:`quote_found`). Case, typography and every other
    character are kept."""
    text = text.replace("\\_", "_")
    text = re.sub(r"\\([A-Za-z]+|%)", lambda m: _LATEX.get(m.group(1), ""), text)
    text = re.sub(r"[${}]|\\[,;!]", " ", text)
    text = re.sub(r"-[ \t]*\n\s*(?=[a-z])", "", text)  # a word broken across lines
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+(?=[,.;:)\]])|(?<=[(\[])\s+", "", text)  # "$a > b$, " and "a > b, " alike
    return text.strip()


def quote_found(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs verbatim in ``text``, up to whitespace and LaTeX markup.

    Fragments of one passage joined by ``" ... "`` must each occur, in this order."""
    haystack = _normalised(text)
    position = 0
    for fragment in re.split(r"\s*(?:\.\.\.|…)\s*", quote):
        needle = _normalised(fragment)
        if not needle:
            continue
        found = haystack.find(needle, position)
        if found < 0:
            return False
        position = found + len(needle)
    return bool(_normalised(quote).strip(". "))


#: the kinds of place a ``source`` names, each with the pattern that finds it in the paper's text
_PLACES = {
    r"§(\d+(?:\.\d+)*)": lambda n: rf"(?m)^[#*\s]*{re.escape(n)}\**\s+\S",
    r"Table (\d+)": lambda n: rf"\bTable\s*{n}\b",
    r"Fig\. (\d+)": lambda n: rf"\b(?:Figure|Fig\.)\s*{n}\b",
    r"eq\. (\d+)": lambda n: rf"\(\s*{n}\s*\)",
    r"App\. ([A-Z](?:\.\d+)*)": lambda n: rf"(?m)^[#*\s]*(?:Appendix\s+)?{re.escape(n)}\**(?:\s+\S|\s*$)",
    r"Theorem (\d+(?:\.\d+)*)": lambda n: rf"(?i)\bTheorem\s*{re.escape(n)}\b",
    r"Lemma (\d+(?:\.\d+)*)": lambda n: rf"(?i)\bLemma\s*{re.escape(n)}\b",
    r"Algorithm (\d+)": lambda n: rf"(?i)\bAlgorithm\s*{n}\b",
    r"Abstract": lambda: r"(?mi)^[#*\s]*abstract\s*$",
    r"Introduction": lambda: r"(?mi)^[#*\s]*(?:1\.?\s+)?introduction\s*$",
}


def source_found(source: str, text: str) -> list[str]:
    """The items of ``source`` (joined by ``"; "``) that are not a place of ``text``: ``[]`` when
    every section, table, figure, equation, appendix, theorem, algorithm, abstract or introduction
    (a heading of its own, numbered 1 or not) it names exists."""
    missing = []
    for item in source.split("; "):
        for form, pattern in _PLACES.items():
            match = re.fullmatch(form, item.strip())
            if match:
                if not re.search(pattern(*match.groups()), text):
                    missing.append(item)
                break
        else:
            missing.append(item)
    return missing
