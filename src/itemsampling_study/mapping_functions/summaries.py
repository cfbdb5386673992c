"""Notebook 03's tables read for the notebook and its verdicts: joined with the paper's tables,
and summarised over cut-offs, datasets and models."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from itemsampling.mappings import MAPPING_ERRORS

from ..paper import PAPER_DATASETS, paper_merge

__all__ = ["best_mappings", "error_summary", "hit_ratio_long", "varying_k_summary", "with_paper"]


def hit_ratio_long(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of :func:`aligned_curves` in the long form of the paper's tables: one ``value``
    per ``mapping``, where mapping ``sampled`` holds SHR@k and every other mapping HR@f(k)."""
    keys = [c for c in frame.columns if c not in ("shr", "expected_shr", "mapping", "location", "hr")]
    sampled = frame.drop_duplicates(keys).assign(mapping="sampled", value=lambda t: t["shr"])[[*keys, "mapping", "value"]]
    mapped = frame.rename(columns={"hr": "value"})[[*keys, "mapping", "value"]]
    return pd.concat([sampled, mapped], ignore_index=True)


def with_paper(frame: pd.DataFrame, paper_name: str, on: Sequence[str]) -> pd.DataFrame:
    """``frame`` joined to a table of :mod:`itemsampling_study.paper` on ``on``, with
    ``paper_dataset`` added from :data:`~itemsampling_study.paper.PAPER_DATASETS` when
    ``frame`` has a ``dataset`` column.

    The paper's rows of the datasets and models ``frame`` has must all find a partner
    (:func:`~itemsampling_study.paper.paper_merge` raises otherwise); rows of datasets or
    models the run did not include are left out.
    """
    if "dataset" in frame.columns:
        frame = frame.assign(paper_dataset=frame["dataset"].map(PAPER_DATASETS))
    scope = {column: frame[column].dropna().unique() for column in ("paper_dataset", "model")
             if column in on and column in frame.columns}
    return paper_merge(frame, paper_name, on, scope=scope)


def varying_k_summary(varying: pd.DataFrame) -> pd.DataFrame:
    """Mean |HR@f(k) - SHR@k| over the cut-offs of Tables 5–6, per (n, protocol, scheme, mapping),
    against the drawn SHR@k (``abs_draw``) and against E[SHR@k] (``abs_expected``)."""
    t = varying.assign(abs_draw=(varying["hr"] - varying["shr"]).abs(),
                       abs_expected=(varying["hr"] - varying["expected_shr"]).abs())
    keys = ["sample_size", "protocol", "scheme", "mapping"]
    return t.groupby(keys, sort=False)[["abs_draw", "abs_expected"]].mean().reset_index()


def error_summary(errors: pd.DataFrame, exclude_models: Sequence[str] = ()) -> pd.DataFrame:
    """Each Table 7 error averaged over datasets and models, per (protocol, mapping, error), in
    wide form (one column per error, in the order of :data:`MAPPING_ERRORS`)."""
    t = errors[~errors["model"].isin(list(exclude_models))]
    mean = t.groupby(["protocol", "mapping", "error"], sort=False)["value"].mean().reset_index()
    wide = mean.pivot(index=["protocol", "mapping"], columns="error", values="value")
    order = {m: i for i, m in enumerate(dict.fromkeys(t["mapping"]))}
    wide = wide.sort_index(key=lambda s: s.map(order) if s.name == "mapping" else s)
    return wide[[e for e in MAPPING_ERRORS if e in wide.columns]]


def best_mappings(errors: pd.DataFrame, exclude_models: Sequence[str] = ()) -> pd.DataFrame:
    """For each (protocol, error): in how many (dataset, model) cases each mapping has the
    smallest error (ties count for every tied mapping)."""
    t = errors[~errors["model"].isin(list(exclude_models))]
    keys = ["dataset", "model", "protocol", "error"]
    best = t[t["value"] == t.groupby(keys)["value"].transform("min")]
    counts = best.groupby(["protocol", "error", "mapping"]).size().rename("cases").reset_index()
    wide = counts.pivot(index=["protocol", "mapping"], columns="error", values="cases").fillna(0).astype(int)
    return wide[[e for e in MAPPING_ERRORS if e in wide.columns]]
