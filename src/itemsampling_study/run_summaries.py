"""Summaries of repeated runs as Krichene & Rendle (KDD 2020) tabulate them: the mean and spread
of each method next to the exact value (Table 3), how often each run orders a pair of
recommenders as the exact metric (Table 4), and the order of the recommenders by their means.

Used by the K&R study (:mod:`.sampled_metrics`) and by its readings of eqs. 27-30
(:mod:`.readings`), which repeat Tables 3-4 under each reading.
"""

from __future__ import annotations

import pandas as pd

from .experiments import pairwise_order_agreement

__all__ = ["mean_orders", "order_agreement", "summarize_runs"]


def summarize_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1) over the runs next to the exact value (Table 3).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``recommender``, ``exact``, ``method``, ``mean``, ``std``;
        methods in the order of the runs.
    """
    keys = ["metric", "k", "recommender", "exact", "estimator"]
    out = runs.groupby(keys, dropna=False, sort=False)["estimate"].agg(mean="mean", std="std").reset_index()
    metric_order = {m: i for i, m in enumerate(runs["metric"].unique())}
    out = out.sort_values(["metric", "recommender"], key=lambda s: s.map(metric_order) if s.name == "metric" else s,
                          kind="stable")
    return out.rename(columns={"estimator": "method"}).reset_index(drop=True)


def order_agreement(runs: pd.DataFrame) -> pd.DataFrame:
    """Out of the runs, how often each method orders each pair as the exact metric (Table 4).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``method``, ``recommender_a``, ``recommender_b``, ``agree``
        (number of runs), ``repeats`` and ``fraction``.
    """
    estimates = runs.rename(columns={"estimator": "method"})[
        ["recommender", "repeat", "method", "metric", "k", "estimate"]]
    truth = runs.drop_duplicates(["recommender", "metric", "k"])[["recommender", "metric", "k", "exact"]]
    table = pairwise_order_agreement(estimates, truth.rename(columns={"exact": "value"}),
                                     model="recommender", repeat="repeat")
    return table[["metric", "k", "method", "recommender_a", "recommender_b", "agree", "repeats", "fraction"]]


def mean_orders(table3: pd.DataFrame) -> pd.DataFrame:
    """For each metric and method, the order of the recommenders by their mean over the runs.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``method``, ``order`` (e.g. ``"Y > Z > X"``), ``exact_order`` and
        ``agrees`` (whether the two orders are the same).
    """
    def order(frame, value):
        return " > ".join(frame.sort_values(value, ascending=False, kind="stable")["recommender"])

    rows = []
    for metric, sel in table3.groupby("metric", sort=False):
        exact = order(sel.drop_duplicates("recommender"), "exact")
        for method, part in sel.groupby("method", sort=False):
            mean = order(part, "mean")
            rows.append({"metric": metric, "method": method, "order": mean, "exact_order": exact,
                         "agrees": mean == exact})
    return pd.DataFrame(rows)
