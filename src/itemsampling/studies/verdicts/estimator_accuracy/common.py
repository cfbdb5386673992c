"""What the claims of notebook 04 share: the estimators of AAAI'21, the factor within which a
number counts as the paper's size, how numbers are written in a reason, and our bias and spread
at n = 100."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from .. import Claim

__all__ = ["AAAI21", "FACTOR", "count_cases", "dataset_names", "our_bias", "percent", "three_digits", "untestable"]

#: the estimators of AAAI'21 Tables 2-4, 6-10
AAAI21 = ("cls", "bv_0.1", "bv_0.01", "mle", "wmle", "mes")
#: a paper number within this factor of ours counts as the same size
FACTOR = 2.0


def three_digits(value: float) -> str:
    """A number in three significant digits (the last digits of floats move with the BLAS build)."""
    return "nan" if not np.isfinite(value) else f"{value:.3g}"


def dataset_names(values, default: str) -> str:
    """The datasets a claim was tested on, or ``default`` (those it is about) when there are none."""
    return ", ".join(sorted(set(values))) or default


def percent(value: float) -> str:
    """A fraction as a percentage in three significant digits."""
    return "nan" if not np.isfinite(value) else f"{100 * value:.3g}%"


def our_bias(at_k: pd.DataFrame, n: int = 100) -> pd.DataFrame:
    """Our |mean − exact| / exact and std / exact at n (rows of ``metrics_at_k``)."""
    t = at_k[(at_k["sample_size"] == n) & at_k["estimator"].isin(AAAI21)]
    return t.assign(bias=(t["mean"] - t["exact"]).abs() / t["exact"], spread=t["std"] / t["exact"])[
        ["dataset", "model", "metric", "estimator", "bias", "spread", "mean", "exact"]]


def untestable(paper: str, claim: str, source: str, dataset: str, why: str) -> Claim:
    """A claim our data cannot test, and ``why``."""
    return Claim(paper=paper, claim=claim, quote=claim, source=source, dataset=dataset, our_value="", paper_value="", verdict="not testable here", reason=why)


def count_cases(frame: pd.DataFrame, holds: Callable[[pd.DataFrame], bool]) -> tuple[int, int]:
    """How many (dataset, model, metric) groups of ``frame`` satisfy ``holds``, of how many."""
    results = [bool(holds(part)) for _, part in frame.groupby(["dataset", "model", "metric"], sort=False)]
    return sum(results), len(results)
