"""Notebook 04's tables laid out as the papers print them, for the notebook to show: rows and
columns of AAAI'21 Tables 2-4, 6-10 and AAAI'23 Tables 1, 6, 8-10, estimators named as there."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .parts import METRICS

__all__ = ["estimator_label", "metrics_at_k_layout", "relative_error_layout", "winners_layout"]


def estimator_label(name: str) -> str:
    """How the papers print an estimator: ``bv_0.1`` -> ``BV 0.1``, ``mn_mes`` -> ``MN_MES``."""
    if name == "sampled":
        return name
    if name.startswith("bv_") and name[3:4].isdigit():
        return f"BV {name[3:]}"
    base = name.removesuffix("_code")
    return base.upper() + (" (code)" if base != name else "")


def _cells(mean: pd.Series, std: pd.Series, digits: int) -> list[str]:
    return [f"{100 * m:.{digits}f} ± {100 * s:.{digits}f}" for m, s in zip(mean, std, strict=True)]


def _ordered(frame: pd.DataFrame, column: str, labels: Mapping[str, str] | None) -> pd.DataFrame:
    """``frame`` with ``column`` renamed by ``labels`` (in their order) and kept only for them."""
    if labels is None:
        return frame
    order = {name: i for i, name in enumerate(labels)}
    frame = frame[frame[column].isin(list(labels))]
    return frame.sort_values(column, key=lambda s: s.map(order), kind="stable").assign(
        **{column: lambda t: t[column].map(labels)})


def metrics_at_k_layout(table: pd.DataFrame, dataset: str, sample_size: int,
                        models: Mapping[str, str] | None = None, digits: int = 2) -> pd.DataFrame:
    """AAAI'21 Tables 2-3, 6-7: rows (model, metric), the exact value and one ``mean ± std``
    column per estimator, in percent. ``models`` maps model names to the labels shown."""
    t = table[(table["dataset"] == dataset) & (table["sample_size"] == sample_size)]
    t = _ordered(t.assign(cell=_cells(t["mean"], t["std"], digits)), "model", models)
    wide = t.pivot(index=["model", "metric"], columns="estimator", values="cell")
    wide = wide[list(dict.fromkeys(t["estimator"]))]
    exact = t.drop_duplicates(["model", "metric"]).set_index(["model", "metric"])["exact"]
    wide.insert(0, "exact", [f"{100 * v:.{digits}f}" for v in exact.reindex(wide.index)])
    rows = list(dict.fromkeys(zip(t["model"], t["metric"], strict=True)))
    return wide.loc[rows].rename(columns=estimator_label)


def winners_layout(table: pd.DataFrame, dataset: str, sample_size: int) -> pd.DataFrame:
    """AAAI'21 Tables 4, 8-10, AAAI'23 Table 8: rows (K, metric), the number of repeats in which
    each estimator picks the true winner."""
    t = table[(table["dataset"] == dataset) & (table["sample_size"] == sample_size)]
    wide = t.pivot(index=["k", "metric"], columns="estimator", values="correct")
    wide = wide[list(dict.fromkeys(t["estimator"]))]
    order = {m: i for i, m in enumerate(METRICS)}
    rows = sorted(wide.index, key=lambda i: (i[0], order.get(i[1], len(order))))
    return wide.loc[rows].rename(columns=estimator_label)


def relative_error_layout(table: pd.DataFrame, metric: str, sample_size: int, estimators: Sequence[str],
                          models: Mapping[str, str] | None = None, digits: int = 2) -> pd.DataFrame:
    """AAAI'23 Tables 1, 6, 9, 10: rows (dataset, model), one ``mean ± std`` column (percent) per
    estimator of ``estimators`` that was run."""
    t = table[(table["metric"] == metric) & (table["sample_size"] == sample_size)
              & table["estimator"].isin(list(estimators))]
    t = _ordered(t.assign(cell=_cells(t["mean"], t["std"], digits)), "model", models)
    wide = t.pivot(index=["dataset", "model"], columns="estimator", values="cell")
    wide = wide[[e for e in estimators if e in wide.columns]]
    rows = list(dict.fromkeys(zip(t["dataset"], t["model"], strict=True)))
    return wide.loc[rows].rename(columns=estimator_label)
