"""Scores that compare estimated metrics with the exact ones across models and repeats.

All functions take tidy DataFrames:

* estimates — one row per estimated value, columns ``metric``, ``k``, ``estimate`` plus any key
  columns that identify the setting (e.g. ``model``, ``method``, ``repeat``, ``dataset``), as
  returned by ``estimate`` and concatenated over settings;
* truth — the exact values, columns ``metric``, ``k``, ``value`` plus key columns shared with the
  estimates (typically ``model``), as returned by ``global_metrics``.

Functions
---------
relative_error
    |estimate - truth| / truth, elementwise.
average_relative_error
    The mean relative error over K = 1..50 (Li et al. AAAI 2023 §5, Tables 1–2, 6–7, 9–11).
winner_counts
    How often the best model by the estimate is the best model by the exact metric (Jin et al.
    AAAI 2021 Table 4; Li et al. AAAI 2023 Tables 3 and 8).
pairwise_order_agreement
    For each pair of models, how often the estimate orders them as the exact metric does
    (Krichene & Rendle KDD 2020 Table 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["average_relative_error", "pairwise_order_agreement", "relative_error", "winner_counts"]


def relative_error(estimates, truth) -> np.ndarray:
    """Relative error |estimate - truth| / |truth| (Li et al. AAAI 2023 §5), elementwise.

    Parameters
    ----------
    estimates, truth : array_like of float
        Broadcastable arrays.

    Returns
    -------
    numpy.ndarray
        float64 relative errors. Where the truth is 0, the error is 0 if the estimate is 0 too
        and ``inf`` otherwise (the relative error is undefined there; report such cut-offs).
    """
    est = np.asarray(estimates, dtype=np.float64)
    true = np.asarray(truth, dtype=np.float64)
    diff = np.abs(est - true)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = diff / np.abs(true)
    return np.where(diff == 0, 0.0, out)


def _require(frame: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(frame.columns)}")


def _merge(estimates: pd.DataFrame, truth: pd.DataFrame, on: Sequence[str]) -> pd.DataFrame:
    """Attach the exact value to every estimate; every estimate must find exactly one value."""
    if truth.duplicated(list(on)).any():
        raise ValueError(f"truth has several values for the same {list(on)}")
    merged = estimates.merge(truth[[*on, "value"]], on=list(on), how="left", validate="many_to_one")
    lost = merged["value"].isna()
    if lost.any():
        row = merged.loc[lost, list(on)].iloc[0].to_dict()
        raise ValueError(f"no exact value for {int(lost.sum())} estimate(s), e.g. {row}")
    return merged


def _join_keys(estimates: pd.DataFrame, truth: pd.DataFrame) -> list[str]:
    return [c for c in truth.columns if c != "value" and c in estimates.columns]


def average_relative_error(estimated_df: pd.DataFrame, true_df: pd.DataFrame,
                           ks: Iterable[int] = range(1, 51)) -> pd.DataFrame:
    """Average relative error over the cut-offs K (Li et al. AAAI 2023 §5).

    For each metric (and each setting), (1/|ks|) Σ_K |estimate@K - true@K| / true@K; the paper
    uses K = 1..50 and reports it in percent (multiply by 100).

    Parameters
    ----------
    estimated_df : pandas.DataFrame
        Columns ``metric``, ``k``, ``estimate`` and optional key columns (``model``,
        ``method``, ``repeat``, ...).
    true_df : pandas.DataFrame
        Columns ``metric``, ``k``, ``value`` and any key columns it shares with
        ``estimated_df`` (e.g. ``model``); joined on ``metric``, ``k`` and those.
    ks : iterable of int
        Cut-offs to average over; every setting must have an estimate at each of them.

    Returns
    -------
    pandas.DataFrame
        The key columns of ``estimated_df`` other than ``k``, and ``average_relative_error``
        (a fraction).
    """
    _require(estimated_df, ["metric", "k", "estimate"], "estimated_df")
    _require(true_df, ["metric", "k", "value"], "true_df")
    ks = sorted({int(k) for k in ks})
    if not ks:
        raise ValueError("ks must name at least one cut-off")
    est = estimated_df[estimated_df["k"].isin(ks)]
    groups = [c for c in estimated_df.columns if c not in ("k", "estimate")]
    if est.duplicated([*groups, "k"]).any():
        raise ValueError(f"estimated_df has several estimates for the same {[*groups, 'k']}")
    counts = est.groupby(groups, sort=False, dropna=False)["k"].nunique()
    if (counts < len(ks)).any():
        bad = counts[counts < len(ks)].index[0]
        where = dict(zip(groups, bad if len(groups) > 1 else (bad,), strict=True))
        raise ValueError(f"estimates for {where} miss some of the cut-offs {ks[0]}..{ks[-1]}")
    merged = _merge(est, true_df, _join_keys(est, true_df))
    merged["relative_error"] = relative_error(merged["estimate"], merged["value"])
    out = merged.groupby(groups, sort=False, dropna=False)["relative_error"].mean()
    return out.rename("average_relative_error").reset_index()


def _check_models(estimates: pd.DataFrame, truth: pd.DataFrame, model: str, repeat: str) -> list[str]:
    _require(estimates, [model, repeat, "metric", "k", "estimate"], "estimates")
    _require(truth, [model, "metric", "k", "value"], "truth")
    return [c for c in estimates.columns if c not in (model, repeat, "estimate")]


def winner_counts(estimates: pd.DataFrame, truth: pd.DataFrame, model: str = "model",
                  repeat: str = "repeat") -> pd.DataFrame:
    """How often the estimated winner is the true winner (Jin et al. AAAI 2021 Table 4; Li et al.
    AAAI 2023 Tables 3 and 8).

    For every setting (metric, k and any other key column, e.g. ``method``) and every repeat,
    the winner by the estimate is the model with the largest estimate; it is compared with the
    model with the largest exact value. With ties, a repeat counts as correct only if the set of
    best models by the estimate equals the set of best models by the exact value.

    Parameters
    ----------
    estimates : pandas.DataFrame
        Columns ``model``, ``repeat``, ``metric``, ``k``, ``estimate`` and optional key columns
        (``method``, ``dataset``, ...); one row per model, repeat and setting.
    truth : pandas.DataFrame
        Columns ``model``, ``metric``, ``k``, ``value`` (plus key columns shared with the
        estimates, e.g. ``dataset``).
    model, repeat : str
        Names of the model and repeat columns.

    Returns
    -------
    pandas.DataFrame
        The setting columns, ``correct`` (number of repeats with the right winner), ``repeats``
        and ``fraction`` (= correct / repeats).
    """
    settings = _check_models(estimates, truth, model, repeat)
    merged = _merge(estimates, truth, _join_keys(estimates, truth))
    keys = [*settings, repeat]
    est_best = merged["estimate"] == merged.groupby(keys, dropna=False)["estimate"].transform("max")
    true_best = merged["value"] == merged.groupby(keys, dropna=False)["value"].transform("max")
    merged["agree"] = est_best == true_best
    per_repeat = merged.groupby(keys, dropna=False, sort=True)["agree"].all()
    out = per_repeat.groupby(settings, dropna=False, sort=True).agg(correct="sum", repeats="size")
    out["fraction"] = out["correct"] / out["repeats"]
    return out.reset_index()


def pairwise_order_agreement(estimates: pd.DataFrame, truth: pd.DataFrame, model: str = "model",
                             repeat: str = "repeat") -> pd.DataFrame:
    """For each pair of models, how often the estimate orders them as the exact metric does.

    Krichene & Rendle KDD 2020 Table 4: for a pair (X, Y) and a setting, a repeat agrees when
    sign(estimate_X - estimate_Y) = sign(value_X - value_Y) (a tie agrees only with a tie).

    Parameters
    ----------
    estimates : pandas.DataFrame
        Columns ``model``, ``repeat``, ``metric``, ``k``, ``estimate`` and optional key columns.
    truth : pandas.DataFrame
        Columns ``model``, ``metric``, ``k``, ``value`` (plus shared key columns).
    model, repeat : str
        Names of the model and repeat columns.

    Returns
    -------
    pandas.DataFrame
        The setting columns, ``<model>_a`` and ``<model>_b`` (each pair once, a < b), ``agree``
        (number of agreeing repeats), ``repeats`` and ``fraction``.
    """
    settings = _check_models(estimates, truth, model, repeat)
    merged = _merge(estimates, truth, _join_keys(estimates, truth))
    if merged.duplicated([*settings, repeat, model]).any():
        raise ValueError(f"several estimates for the same {[*settings, repeat, model]}")
    if merged[model].nunique() < 2:
        raise ValueError("pairwise_order_agreement needs at least two models")
    columns = [*settings, repeat, model, "estimate", "value"]
    pairs = merged[columns].merge(merged[columns], on=[*settings, repeat], suffixes=("_a", "_b"))
    pairs = pairs[pairs[f"{model}_a"] < pairs[f"{model}_b"]]
    pairs["agree"] = np.sign(pairs["estimate_a"] - pairs["estimate_b"]) == np.sign(
        pairs["value_a"] - pairs["value_b"]
    )
    out = pairs.groupby([*settings, f"{model}_a", f"{model}_b"], dropna=False, sort=True).agg(
        agree=("agree", "sum"), repeats=("agree", "size")
    )
    out["fraction"] = out["agree"] / out["repeats"]
    return out.reset_index()


def pooled_order_agreement(frame: pd.DataFrame, settings: list[str], estimate: str = "estimate") -> pd.DataFrame:
    """:func:`pairwise_order_agreement` pooled over the first setting column (the dataset).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per (setting, model, repeat): the columns ``settings`` (the first is the one pooled
        over, and it with ``model``, ``metric`` and ``k`` keys the exact value), ``model``,
        ``repeat``, the estimate column and ``exact``.
    settings : list of str
        The setting columns, the pooled one first.
    estimate : str
        Name of the estimate column.

    Returns
    -------
    pandas.DataFrame
        Per setting but the first: ``agree`` (agreeing pairs x repeats), ``cases`` (pairs x
        repeats), ``pairs`` and ``fraction`` = agree / cases.
    """
    keys = [settings[0], "model", "metric", "k"]
    truth = frame.drop_duplicates(keys)[[*keys, "exact"]]
    agree = pairwise_order_agreement(
        frame[[*settings, "model", "repeat", estimate]].rename(columns={estimate: "estimate"}),
        truth.rename(columns={"exact": "value"}))
    out = agree.groupby(settings[1:], sort=False).agg(agree=("agree", "sum"), cases=("repeats", "sum"),
                                                      pairs=("agree", "size")).reset_index()
    out["fraction"] = out["agree"] / out["cases"]
    return out


def estimate_errors(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per setting ``keys``: exact, mean, bias, sd (ddof = 1), RMSE, relative bias and RMSE of the
    repeated estimates (over the exact value; NaN where it is 0) and the coverage of their
    intervals (NaN for rows without one).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per (setting, repeat): ``keys``, ``repeat``, ``estimate``, ``exact``, ``lower``
        and ``upper`` (NaN without an interval).
    keys : list of str
        The setting columns.
    """
    frame = frame.copy()
    frame["error"] = frame["estimate"] - frame["exact"]
    frame["covered"] = np.where(frame["lower"].isna(), np.nan,
                                (frame["lower"] <= frame["exact"]) & (frame["exact"] <= frame["upper"]))
    out = frame.groupby(keys, sort=False).agg(exact=("exact", "first"), mean=("estimate", "mean"),
                                              bias=("error", "mean"), sd=("estimate", "std"),
                                              mse=("error", lambda e: float(np.mean(np.square(e)))),
                                              coverage=("covered", "mean"), repeats=("repeat", "size")).reset_index()
    out["rmse"] = np.sqrt(out.pop("mse"))
    positive = out["exact"] > 0
    out["relative_bias"] = np.where(positive, out["bias"] / out["exact"].where(positive), np.nan)
    out["relative_rmse"] = np.where(positive, out["rmse"] / out["exact"].where(positive), np.nan)
    return out[[*keys, "exact", "mean", "bias", "sd", "rmse", "relative_bias", "relative_rmse", "coverage", "repeats"]]
