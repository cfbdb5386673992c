"""The claims on how biased and how variable the estimators are: AAAI'21 Tables 2-3 (bias and
variance of metric@10, WMLE against MLE) and KDD'20 §5.2 (BV's γ)."""

from __future__ import annotations

import pandas as pd

from ...paper import paper_merge, paper_table
from ...wmle_readings import reading_summary
from .. import Claim, share_verdict
from .common import AAAI21, FACTOR, count_cases, our_bias, percent, untestable

__all__ = ["bias_ranking", "kdd20_gamma_tradeoff", "learned_variance", "wmle_close_to_mle"]


def _paper_bias(datasets) -> pd.DataFrame:
    """The paper's |mean − exact| / exact of every estimator (AAAI'21 Tables 2-3, 6-7)."""
    paper = paper_table("jin2021aaai_metrics_at_10")
    paper = paper[paper["dataset"].isin(list(datasets))]
    exact = paper[paper["method"] == "exact"][["dataset", "model", "metric", "paper_percent"]]
    est = paper[paper["method"] != "exact"].merge(exact, on=["dataset", "model", "metric"], suffixes=("", "_exact"))
    return est.assign(estimator=est["method"],
                      bias=(est["paper_percent"] - est["paper_percent_exact"]).abs() / est["paper_percent_exact"],
                      spread=est["paper_std_percent"] / est["paper_percent_exact"], mean=est["paper_percent"] / 100,
                      exact=est["paper_percent_exact"] / 100)[
        ["dataset", "model", "metric", "estimator", "bias", "spread", "mean", "exact"]]


def _checked_against_paper(ours: pd.DataFrame) -> None:
    """Every paper row of the datasets we ran has a partner in ``ours`` (paper_merge raises)."""
    datasets = sorted(set(ours["dataset"]))
    paper_merge(ours.rename(columns={"estimator": "method"}), "jin2021aaai_metrics_at_10",
                ["dataset", "model", "metric", "method"],
                scope={"dataset": datasets, "method": list(AAAI21)})


def bias_ranking(at_k: pd.DataFrame) -> list[Claim]:
    """MLE and MES among the two least biased (Table 2, ml-1m) and CLS the most biased (Tables 2-3,
    ml-1m and citeulike).

    Rule: per (model, metric@10) at n = 100 of the datasets the paper's sentence is about, rank
    the six estimators of AAAI'21 by |mean − exact| / exact; the claim holds where MLE or MES is
    among the two least biased ("among the most, or the second-most accurate"), resp. where CLS
    is the most biased. The same rule on the paper's tables gives its own share.
    """
    ours = our_bias(at_k)
    _checked_against_paper(ours)

    def two_best(part):
        return bool(set(part.nsmallest(2, "bias")["estimator"]) & {"mle", "mes"})

    def cls_worst(part):
        return part.loc[part["bias"].idxmax(), "estimator"] == "cls"

    rows = []
    for claim, test, source, datasets in (
            ("MLE and MES are among the two most accurate estimators of metric@10 (smallest bias)", two_best,
             "Table 2, §Experiments", ["ml-1m"]),
            ("CLS is the least accurate estimator of metric@10", cls_worst, "Tables 2-3, §Experiments",
             ["ml-1m", "citeulike-a"])):
        mine = ours[ours["dataset"].isin(datasets)]
        if mine.empty:
            rows.append(Claim(paper="jin2021aaai", claim=claim, quote=claim, source=source, dataset=", ".join(datasets), our_value="", paper_value="", verdict="not testable here", reason="These datasets were not run."))
            continue
        theirs = _paper_bias(datasets)
        held, cases = count_cases(mine, test)
        p_held, p_cases = count_cases(theirs, test)
        worst = mine.loc[mine.groupby(["dataset", "model", "metric"])["bias"].idxmax(), "estimator"].value_counts()
        rows.append(Claim(paper="jin2021aaai", claim=claim, quote=claim, source=source, dataset=", ".join(datasets), our_value=f"{held} of {cases}", paper_value=f"{p_held} of {p_cases}", verdict=share_verdict(held, cases), reason=f"Share of (dataset, model, metric) at n = 100 where it holds, ours {held}/{cases}, the paper's "
            f"{p_held}/{p_cases} by the same rule on its tables. Our most biased estimator: "
            + ", ".join(f"{e} in {c}" for e, c in worst.items()) + ". Our exact metrics are far lower than the "
            "paper's (section 'Why our exact metrics are lower'), so fewer users land at the top sampled ranks."))
    return rows


def learned_variance(at_k: pd.DataFrame) -> Claim:
    """The learned-P(R) estimators vary more than BV (Tables 2-3).

    Rule: per (dataset, model, metric@10) at n = 100, the mean std of MLE, WMLE and MES exceeds
    the std of both BV 0.1 and BV 0.01.
    """
    ours = our_bias(at_k)
    theirs = _paper_bias(sorted(set(ours["dataset"])))

    def holds(part):
        s = part.set_index("estimator")["spread"].reindex(list(AAAI21))
        return s[["mle", "wmle", "mes"]].mean() > max(s["bv_0.1"], s["bv_0.01"])

    held, cases = count_cases(ours, holds)
    p_held, p_cases = count_cases(theirs, holds)
    return Claim(paper="jin2021aaai", claim="MLE, WMLE and MES have a higher variance than BV", quote="MLE, WMLE and MES have a higher variance than BV", source="Tables 2-3, §Experiments", dataset="all four", our_value=f"{held} of {cases}", paper_value=f"{p_held} of {p_cases}", verdict=share_verdict(held, cases), reason=f"Share of (dataset, model, metric@10) at n = 100 where the mean std of MLE, WMLE and MES exceeds "
                 f"that of BV 0.1 and BV 0.01: ours {held}/{cases}, the paper's {p_held}/{p_cases}.")


def wmle_close_to_mle(readings: pd.DataFrame) -> Claim:
    """WMLE close to MLE (Tables 2-3: 1-3 % above), under the readings of eq. 22-23.

    Rule: a reading gives the paper's behaviour when its mean gap (WMLE − MLE) / exact over
    (dataset, model, metric@10) lies within a factor :data:`FACTOR` of the paper's mean gap on
    the same cases, both on our ranks and on simulated ranks at the paper's level. Reproduced if
    the printed reading does so, partly if another reading does, not reproduced if none does.
    """
    summary = reading_summary(readings)
    if summary["paper_gap"].isna().all():
        return untestable("jin2021aaai", "WMLE estimates are close to MLE's (1-3 % above them)",
                           "Tables 2-3, eq. 22-23", ", ".join(sorted(set(readings["dataset"]))),
                           "The paper gives MLE and WMLE on none of these datasets.")
    wide = summary.pivot(index="reading", columns="source", values="ratio")
    paper_gap = float(summary["paper_gap"].mean())
    needed = [s for s in ("ranks", "simulated_paper") if s in wide.columns]
    fits = [r for r in wide.index if needed and all(1 / FACTOR <= wide.loc[r, s] <= FACTOR for s in needed)]
    gaps = summary.pivot(index="reading", columns="source", values="gap")
    printed = gaps.loc["as_printed"] if "as_printed" in gaps.index else pd.Series(dtype=float)
    verdict = "reproduced" if "as_printed" in fits else "partly" if fits else "not reproduced"
    listing = "; ".join(f"{r}: " + ", ".join(f"{s} {percent(gaps.loc[r, s])}" for s in gaps.columns)
                        for r in gaps.index)
    our = ", ".join(f"{s} {percent(v)}" for s, v in printed.items())
    return Claim(paper="jin2021aaai", claim="WMLE estimates are close to MLE's (1-3 % above them)", quote="WMLE estimates are close to MLE's (1-3 % above them)", source="Tables 2-3, eq. 22-23", dataset=", ".join(sorted(set(readings["dataset"]))) + " (ranks and simulated)", our_value=f"gap {our}", paper_value=f"gap {percent(paper_gap)}", verdict=verdict, reason=f"Gap = (mean WMLE − mean MLE) / exact at K = {int(readings['k'].iloc[0])}, averaged over models and metrics; "
        f"a reading fits when it is within a factor {FACTOR:g} of the paper's gap ({percent(paper_gap)}) on our ranks "
        f"and on simulated ranks at the paper's Recall@K. Readings that fit: {', '.join(fits) or 'none'}. "
        f"Gaps by reading and source: {listing}. The printed weight 1/log2(1 + r/C) tilts P̂ towards the top "
        "ranks at any level of the metric, simulated ranks at the paper's level included.")


def kdd20_gamma_tradeoff(at_k: pd.DataFrame) -> Claim:
    """BV trades bias for variance through γ (KDD'20 §5.2): smaller γ, less bias, more variance.

    Rule: per (dataset, model, metric@10) at n = 100, BV 0.01 has a smaller |bias| and a larger
    std than BV 0.1.
    """
    ours = our_bias(at_k)

    def holds(part):
        s = part.set_index("estimator").reindex(list(AAAI21))
        return s.loc["bv_0.01", "bias"] < s.loc["bv_0.1", "bias"] and s.loc["bv_0.01", "spread"] > s.loc[
            "bv_0.1", "spread"]

    held, cases = count_cases(ours, holds)
    return Claim(paper="krichene2020kdd", claim="A smaller γ of BV gives less bias and more variance", quote="A smaller γ of BV gives less bias and more variance", source="§5.2, eq. 24-26", dataset="all four", our_value=f"{held} of {cases}", paper_value="", verdict=share_verdict(held, cases), reason=f"Share of (dataset, model, metric@10) at n = 100 where BV 0.01 is less biased and more variable "
                 f"than BV 0.1: {held}/{cases}.")
