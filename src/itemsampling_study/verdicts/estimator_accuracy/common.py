"""What the claims of notebook 04 share: the estimators of AAAI'21, how numbers are written in a
reason, our bias and spread at n = 100, and the setups of AAAI'21's and AAAI'23's estimators.

**Setups.** Two estimators of AAAI'21 have readings that our own rows show are not the paper's
(docs/verdicts.md, rule 6), and the AAAI'23 numbers come from code that differs from the text:

* MES: eq. 26 with η = 0.001 as printed (``mes``), or η/n on n times the squared error as the
  AAAI'23 code solves it (``mes_code``). :func:`mes_reading` picks the one whose mean
  |MES − MLE| / exact at the smallest n is closest to the paper's Tables 2-3, 6-7.
* WMLE: the readings of eq. 22-23 of rule ``wmle_readings``. :func:`wmle_reading` picks the one
  whose gap (WMLE − MLE) / exact is closest to the paper's Tables 2-3, on our ranks and on
  simulated ranks at the paper's level. Its WMLE is MLE's mean plus the reading's gap times
  the exact value, and MLE's std times the reading's std over MLE's on the same draws
  (:func:`aaai21_frame`); where the readings were not run, WMLE is left out.
* AAAI'23: the priors of BV_* and MN_* fitted to all repeats at once (``pooled_prior``), as the
  authors' code fitted them for all four prior estimators (:func:`aaai23_frame`); its other
  difference, MES with η/n, touches three of the seven estimators and was run with per-repeat
  priors only (``*_code``).

Both rules look only at setup facts (the estimators' gaps to MLE, how the code fits its prior),
never at a claim under test; each row names its setup and gives the verdicts under the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...estimator_accuracy.parts import CODE_MES
from ...paper import paper_table
from ...wmle_readings import reading_summary
from .. import Claim

__all__ = ["AAAI21", "AAAI23", "FACTOR", "PRINTED", "PRIOR", "Reading", "aaai21_frame", "aaai23_frame",
           "binomial_close", "count_cases", "dataset_names", "mes_reading", "our_bias", "paper_bias", "percent",
           "setup_label", "setup_row", "three_digits", "wmle_not_run", "wmle_reading"]

#: the estimators of AAAI'21 Tables 2-4, 6-10
AAAI21 = ("cls", "bv_0.1", "bv_0.01", "mle", "wmle", "mes")
#: the seven estimators of AAAI'23 Tables 1, 6, 9, 10 (its BV is BV 0.01 with a uniform prior)
AAAI23 = ("mes", "mle", "bv_0.01", "bv_mes", "bv_mle", "mn_mes", "mn_mle")
#: the estimators with a fitted prior, "this paper" in AAAI'23's tables
PRIOR = ("bv_mes", "bv_mle", "mn_mes", "mn_mle")
#: a paper number within this factor of ours counts as the same size
FACTOR = 2.0
#: the setup that runs every estimator as the paper prints it
PRINTED = "as printed"


def three_digits(value: float) -> str:
    """A number in three significant digits (the last digits of floats move with the BLAS build)."""
    return "nan" if not np.isfinite(value) else f"{value:.3g}"


def dataset_names(values, default: str) -> str:
    """The datasets a claim was tested on, or ``default`` (those it is about) when there are none."""
    return ", ".join(sorted(set(values))) or default


def percent(value: float) -> str:
    """A fraction as a percentage in three significant digits."""
    return "nan" if not np.isfinite(value) else f"{100 * value:.3g}%"


def our_bias(at_k: pd.DataFrame, n: int = 100, estimators=AAAI21) -> pd.DataFrame:
    """Our |mean − exact| / exact and std / exact at n (rows of ``metrics_at_k``)."""
    t = at_k[(at_k["sample_size"] == n) & at_k["estimator"].isin(estimators)]
    return t.assign(bias=(t["mean"] - t["exact"]).abs() / t["exact"], spread=t["std"] / t["exact"])[
        ["dataset", "model", "metric", "estimator", "bias", "spread", "mean", "std", "exact"]]


def paper_bias(datasets) -> pd.DataFrame:
    """The paper's |mean − exact| / exact and std / exact of every estimator (AAAI'21 Tables 2-3, 6-7)."""
    paper = paper_table("jin2021aaai_metrics_at_10")
    paper = paper[paper["dataset"].isin(list(datasets))]
    exact = paper[paper["method"] == "exact"][["dataset", "model", "metric", "paper_percent"]]
    est = paper[paper["method"] != "exact"].merge(exact, on=["dataset", "model", "metric"], suffixes=("", "_exact"))
    return est.assign(estimator=est["method"],
                      bias=(est["paper_percent"] - est["paper_percent_exact"]).abs() / est["paper_percent_exact"],
                      spread=est["paper_std_percent"] / est["paper_percent_exact"], mean=est["paper_percent"] / 100,
                      std=est["paper_std_percent"] / 100, exact=est["paper_percent_exact"] / 100)[
        ["dataset", "model", "metric", "estimator", "bias", "spread", "mean", "std", "exact"]]


@dataclass(frozen=True)
class Reading:
    """The reading of an estimator a setup uses, and the numbers of the rule that picked it.

    Attributes
    ----------
    name : str
        The reading (``mes`` or ``mes_code``; a reading of ``wmle_readings``).
    text : str
        Why: the rule and its numbers, for a row's reason.
    """

    name: str
    text: str


def _gap_to_mle(frame: pd.DataFrame, estimator: str) -> float:
    """Mean |mean of ``estimator`` − mean of MLE| / exact over the (dataset, model, metric) of ``frame``."""
    keys = ["dataset", "model", "metric"]
    wide = frame.pivot_table(index=keys, columns="estimator", values="mean")
    exact = frame.drop_duplicates(keys).set_index(keys)["exact"]
    return float(((wide[estimator] - wide["mle"]).abs() / exact).mean())


def mes_reading(at_k: pd.DataFrame) -> Reading:
    """The MES reading whose mean |MES − MLE| / exact at the smallest n is closest (in ratio) to
    the paper's over the same datasets (AAAI'21 Tables 2-3, 6-7)."""
    n = int(at_k["sample_size"].min())
    ours = our_bias(at_k, n, ("mle", "mes", "mes_code"))
    gaps = {e: _gap_to_mle(ours, e) for e in ("mes", "mes_code") if e in set(ours["estimator"])}
    theirs = paper_bias(sorted(set(ours["dataset"])))
    if len(gaps) < 2 or theirs.empty:
        return Reading("mes", "MES as printed (no other reading, or no dataset of the paper's Tables 2-3, 6-7, was "
                              "run)")
    paper_gap = _gap_to_mle(theirs, "mes")
    name = min(gaps, key=lambda e: abs(np.log(gaps[e] / paper_gap)))
    eta = f"η = {CODE_MES['eta']:g}/n" if name == "mes_code" else "η as printed"
    return Reading(name, f"MES {eta} (mean |MES − MLE| / exact at n = {n}: "
                         + ", ".join(f"{e} {percent(g)}" for e, g in gaps.items())
                         + f"; the paper's Tables 2-3, 6-7 {percent(paper_gap)})")


def wmle_reading(readings: pd.DataFrame, place: int = 0) -> Reading | None:
    """The reading of eq. 22-23 whose gap is closest to the paper's: the smallest mean |log(gap /
    paper's gap)| over the sources ``ranks`` and ``simulated_paper`` (readings with a gap of the
    wrong sign are out); with ``place`` 1 the runner-up (None where there is none)."""
    summary = reading_summary(readings)
    summary = summary[summary["source"].isin(["ranks", "simulated_paper"])]
    wide = summary.pivot(index="reading", columns="source", values="ratio")
    distance = np.log(wide.where(wide > 0)).abs().mean(axis=1).dropna()
    if distance.empty or "as_printed" not in wide.index or "ranks" not in wide.columns:
        return Reading("as_printed", "WMLE as printed (no reading was compared with the paper's gap)")
    if place >= len(distance):
        return None
    name = str(distance.sort_values(kind="stable").index[place])
    ratios = ", ".join(f"{three_digits(wide.loc[name, s])} times the paper's on {s}" for s in wide.columns)
    return Reading(name, f"WMLE read as {name} (its gap is {ratios}; the printed reading "
                         f"{three_digits(wide.loc['as_printed', 'ranks'])} times on ranks)")


def setup_label(mes: Reading | None, wmle: Reading | None = None, not_run: str = "", printed: bool = True) -> str:
    """The ``setup`` text of the AAAI'21 setup with these readings (``mes`` None: a row without
    MES; ``wmle`` None: WMLE left out; with ``not_run``, because the runs of that table lack the
    WMLE reading closest to the paper's, :func:`wmle_not_run`).

    The one standard of every AAAI'21 row: WMLE is graded on the reading closest to the paper's
    (:func:`wmle_reading`) wherever that reading was run, and left out (or, for a claim about WMLE,
    not testable) where it was not; the printed WMLE goes to ``other_setups``.
    """
    parts = [f"MES {mes.name}"] if mes is not None else []
    if wmle is not None:
        return ", ".join([*parts, f"WMLE {wmle.name}"])
    return ", ".join([*parts, "WMLE left out" + (f" ({wmle_not_run(not_run, printed)})" if not_run else "")])


def wmle_not_run(what: str, printed: bool = True) -> str:
    """Why WMLE is out of a setup: its reading closest to the paper's was not run for ``what``
    (where ``printed`` is False, neither was the printed one)."""
    return (f"the WMLE reading closest to the paper's was not run for {what}, "
            + ("only the printed one" if printed else "nor the printed one"))


def setup_row(kind: type[Claim], results, *, extra: str = "", our_value: str | None = None, **fields) -> Claim:
    """A row graded on the first setup of ``results`` and the verdicts under the others in its
    ``other_setups``.

    Parameters
    ----------
    kind : type
        :class:`Claim` or :class:`Check`.
    results : sequence of (str, str, str)
        (setup label, verdict, our value) per setup, the one the row is graded on first.
    extra : str
        More readings for ``other_setups``, after the setups of ``results``.
    our_value : str, optional
        The row's ``our_value`` where it says more than the first setup's value.
    **fields
        The row's other fields (paper, claim, quote, source, dataset, paper_value, reason).
    """
    (setup, verdict, value), *others = results
    listed = [f"{label}: {grade} ({text})" for label, grade, text in others] + ([extra] if extra else [])
    return kind(setup=setup, verdict=verdict, our_value=value if our_value is None else our_value,
                other_setups="; ".join(listed), **fields)


def aaai21_frame(at_k: pd.DataFrame, readings: pd.DataFrame, setup: str, n: int = 100) -> pd.DataFrame:
    """:func:`our_bias` of AAAI'21's six estimators at n under ``setup``.

    ``"closest"``: MES of :func:`mes_reading`, WMLE of :func:`wmle_reading` (MLE's mean plus the
    reading's gap times the exact value, MLE's std times the reading's std over MLE's on the same
    draws) where ``readings`` ran it, left out elsewhere; ``"runner_up"``: that with the runner-up
    WMLE reading of the rule; ``"no_wmle"``: that MES, no WMLE; :data:`PRINTED`: every estimator
    as run.
    """
    if setup not in ("closest", "runner_up", "no_wmle", PRINTED):
        raise ValueError(f"unknown setup {setup!r}")
    mes = "mes" if setup == PRINTED else mes_reading(at_k).name
    frame = our_bias(at_k, n, (*AAAI21, mes))
    frame = frame[frame["estimator"] != ("mes_code" if mes == "mes" else "mes")].replace({"estimator": {mes: "mes"}})
    if setup == PRINTED:
        return frame.reset_index(drop=True)
    frame = frame[frame["estimator"] != "wmle"]
    if setup == "no_wmle":
        return frame.reset_index(drop=True)
    keys = ["dataset", "model", "metric"]
    ranks = readings[readings["source"] == "ranks"].set_index(["reading", *keys])
    reading = ranks.loc[wmle_reading(readings, int(setup == "runner_up")).name]
    mle = frame[frame["estimator"] == "mle"].set_index(keys).join(reading[["gap", "std"]].rename(
        columns={"std": "reading_std"}), how="inner").join(ranks.loc["mle"]["std"].rename("mle_std"))
    wmle = mle.assign(estimator="wmle", mean=mle["mean"] + mle["gap"] * mle["exact"],
                      std=mle["std"] * mle["reading_std"] / mle["mle_std"]).reset_index()
    wmle = wmle.assign(bias=(wmle["mean"] - wmle["exact"]).abs() / wmle["exact"], spread=wmle["std"] / wmle["exact"])
    return pd.concat([frame, wmle[frame.columns]], ignore_index=True)


def aaai23_frame(errors: pd.DataFrame, pooled: pd.DataFrame, setup: str) -> pd.DataFrame:
    """``relative_error`` of AAAI'23's seven estimators under ``setup``.

    ``"pooled"``: the four prior estimators with the prior fitted to all repeats at once
    (``pooled_prior``), MES, MLE and BV as run; ``"own"``: every prior fitted to its repeat;
    ``"code"``: that, with MES and its priors as the AAAI'23 code solves it (``*_code``).
    """
    if setup == "pooled":
        fitted = pooled[pooled["prior"] == "pooled"].drop(columns="prior")
        return pd.concat([errors[errors["estimator"].isin(["mes", "mle", "bv_0.01"])], fitted], ignore_index=True)
    if setup == "own":
        return errors[errors["estimator"].isin(AAAI23)].reset_index(drop=True)
    if setup == "code":
        names = {e: e.removesuffix("_code") for e in ("mes_code", "bv_mes_code", "mn_mes_code")}
        kept = errors[errors["estimator"].isin([*names, "mle", "bv_0.01", "bv_mle", "mn_mle"])]
        return kept.replace({"estimator": names}).reset_index(drop=True)
    raise ValueError(f"unknown setup {setup!r}")


def binomial_close(ours: pd.Series, paper: pd.Series, repeats: pd.Series) -> pd.Series:
    """Whether two shares of correct winners out of ``repeats`` repeats agree within two standard
    errors of their difference (the precision that counts out of 100 repeats have), at least one
    repeat."""
    se = np.sqrt(ours * (1 - ours) / repeats + paper * (1 - paper) / repeats)
    return (ours - paper).abs() <= np.maximum(2 * se, 1 / repeats)


def count_cases(frame: pd.DataFrame, holds: Callable[[pd.DataFrame], bool],
                keys=("dataset", "model", "metric")) -> tuple[int, int]:
    """How many groups of ``frame`` by ``keys`` satisfy ``holds``, of how many."""
    results = [bool(holds(part)) for _, part in frame.groupby(list(keys), sort=False)]
    return sum(results), len(results)
