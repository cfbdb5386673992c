"""The claims of AAAI'21, AAAI'23 and KDD'20 that notebook 04 tests, with their verdicts.

Every claim is read from notebook 04's tables (``metrics_at_k``, ``winners``,
``rank_distribution``, ``relative_error``, ``metric_levels`` and the inputs ``wmle_readings``
and ``mn_users``) and the papers' tables (:mod:`itemsampling.studies.paper`), joined with
:func:`~itemsampling.studies.paper.paper_merge`. Each function below makes one :class:`Claim`;
its rule is in its docstring and, with its numbers, in the row's ``reason``. Shares of cases
give the verdict through :func:`share_verdict` (at least 90 %: reproduced, 50 %: partly).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..estimator_accuracy import level_comparison, li2020kdd_hit_ratios
from ..paper import SAME_DATA, paper_merge, paper_table, stand_ins
from ..wmle_readings import reading_summary
from . import Claim, share_verdict

__all__ = [
    "AAAI21",
    "bias_ranking",
    "claims",
    "exact_levels",
    "fig2_wmle_above",
    "fig3_sample_size",
    "kdd20_gamma_tradeoff",
    "kdd20_hit_ratios",
    "learned_variance",
    "mn_among_best",
    "mn_spread",
    "mn_users_scope",
    "prior_estimators_ahead",
    "relative_error_level",
    "winner_counts_aaai23",
    "winners_best",
    "wmle_close_to_mle",
    "wmle_winners",
]

#: the estimators of AAAI'21 Tables 2-4, 6-10
AAAI21 = ("cls", "bv_0.1", "bv_0.01", "mle", "wmle", "mes")
#: a paper number within this factor of ours counts as the same size
FACTOR = 2.0


def _g(value: float) -> str:
    """A number in three significant digits (the last digits of floats move with the BLAS build)."""
    return "nan" if not np.isfinite(value) else f"{value:.3g}"


def _names(values, default: str) -> str:
    """The datasets a claim was tested on, or ``default`` (those it is about) when there are none."""
    return ", ".join(sorted(set(values))) or default


def _pct(value: float) -> str:
    return "nan" if not np.isfinite(value) else f"{100 * value:.3g}%"


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


def _our_bias(at_k: pd.DataFrame, n: int = 100) -> pd.DataFrame:
    """Our |mean − exact| / exact and std / exact at n (rows of ``metrics_at_k``)."""
    t = at_k[(at_k["sample_size"] == n) & at_k["estimator"].isin(AAAI21)]
    return t.assign(bias=(t["mean"] - t["exact"]).abs() / t["exact"], spread=t["std"] / t["exact"])[
        ["dataset", "model", "metric", "estimator", "bias", "spread", "mean", "exact"]]


def _checked_against_paper(ours: pd.DataFrame) -> None:
    """Every paper row of the datasets we ran has a partner in ``ours`` (paper_merge raises)."""
    datasets = sorted(set(ours["dataset"]))
    paper_merge(ours.rename(columns={"estimator": "method"}), "jin2021aaai_metrics_at_10",
                ["dataset", "model", "metric", "method"],
                scope={"dataset": datasets, "method": list(AAAI21)})


def _untestable(paper: str, claim: str, source: str, dataset: str, why: str) -> Claim:
    return Claim(paper, claim, source, dataset, "", "", "not testable here", why)


def _cases(frame: pd.DataFrame, holds: Callable[[pd.DataFrame], bool]) -> tuple[int, int]:
    """How many (dataset, model, metric) groups of ``frame`` satisfy ``holds``, of how many."""
    results = [bool(holds(part)) for _, part in frame.groupby(["dataset", "model", "metric"], sort=False)]
    return sum(results), len(results)


# ----------------------------------------------------------------------------- AAAI'21 Tables 2-3, 6-7


def bias_ranking(at_k: pd.DataFrame) -> list[Claim]:
    """MLE and MES among the two least biased (Table 2, ml-1m) and CLS the most biased (Tables 2-3,
    ml-1m and citeulike).

    Rule: per (model, metric@10) at n = 100 of the datasets the paper's sentence is about, rank
    the six estimators of AAAI'21 by |mean − exact| / exact; the claim holds where MLE or MES is
    among the two least biased ("among the most, or the second-most accurate"), resp. where CLS
    is the most biased. The same rule on the paper's tables gives its own share.
    """
    ours = _our_bias(at_k)
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
            rows.append(Claim("jin2021aaai", claim, source, ", ".join(datasets), "", "", "not testable here",
                              "These datasets were not run."))
            continue
        theirs = _paper_bias(datasets)
        held, cases = _cases(mine, test)
        p_held, p_cases = _cases(theirs, test)
        worst = mine.loc[mine.groupby(["dataset", "model", "metric"])["bias"].idxmax(), "estimator"].value_counts()
        rows.append(Claim(
            "jin2021aaai", claim, source, ", ".join(datasets), f"{held} of {cases}", f"{p_held} of {p_cases}",
            share_verdict(held, cases),
            f"Share of (dataset, model, metric) at n = 100 where it holds, ours {held}/{cases}, the paper's "
            f"{p_held}/{p_cases} by the same rule on its tables. Our most biased estimator: "
            + ", ".join(f"{e} in {c}" for e, c in worst.items()) + ". Our exact metrics are far lower than the "
            "paper's (section 'Why our exact metrics are lower'), so fewer users land at the top sampled ranks."))
    return rows


def learned_variance(at_k: pd.DataFrame) -> Claim:
    """The learned-P(R) estimators vary more than BV (Tables 2-3).

    Rule: per (dataset, model, metric@10) at n = 100, the mean std of MLE, WMLE and MES exceeds
    the std of both BV 0.1 and BV 0.01.
    """
    ours = _our_bias(at_k)
    theirs = _paper_bias(sorted(set(ours["dataset"])))

    def holds(part):
        s = part.set_index("estimator")["spread"].reindex(list(AAAI21))
        return s[["mle", "wmle", "mes"]].mean() > max(s["bv_0.1"], s["bv_0.01"])

    held, cases = _cases(ours, holds)
    p_held, p_cases = _cases(theirs, holds)
    return Claim("jin2021aaai", "MLE, WMLE and MES have a higher variance than BV", "Tables 2-3, §Experiments",
                 "all four", f"{held} of {cases}", f"{p_held} of {p_cases}", share_verdict(held, cases),
                 f"Share of (dataset, model, metric@10) at n = 100 where the mean std of MLE, WMLE and MES exceeds "
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
        return _untestable("jin2021aaai", "WMLE estimates are close to MLE's (1-3 % above them)",
                           "Tables 2-3, eq. 22-23", ", ".join(sorted(set(readings["dataset"]))),
                           "The paper gives MLE and WMLE on none of these datasets.")
    wide = summary.pivot(index="reading", columns="source", values="ratio")
    paper_gap = float(summary["paper_gap"].mean())
    needed = [s for s in ("ranks", "simulated_paper") if s in wide.columns]
    fits = [r for r in wide.index if needed and all(1 / FACTOR <= wide.loc[r, s] <= FACTOR for s in needed)]
    gaps = summary.pivot(index="reading", columns="source", values="gap")
    printed = gaps.loc["as_printed"] if "as_printed" in gaps.index else pd.Series(dtype=float)
    verdict = "reproduced" if "as_printed" in fits else "partly" if fits else "not reproduced"
    listing = "; ".join(f"{r}: " + ", ".join(f"{s} {_pct(gaps.loc[r, s])}" for s in gaps.columns)
                        for r in gaps.index)
    our = ", ".join(f"{s} {_pct(v)}" for s, v in printed.items())
    return Claim(
        "jin2021aaai", "WMLE estimates are close to MLE's (1-3 % above them)", "Tables 2-3, eq. 22-23",
        ", ".join(sorted(set(readings["dataset"]))) + " (ranks and simulated)",
        f"gap {our}", f"gap {_pct(paper_gap)}", verdict,
        f"Gap = (mean WMLE − mean MLE) / exact at K = {int(readings['k'].iloc[0])}, averaged over models and metrics; "
        f"a reading fits when it is within a factor {FACTOR:g} of the paper's gap ({_pct(paper_gap)}) on our ranks "
        f"and on simulated ranks at the paper's Recall@K. Readings that fit: {', '.join(fits) or 'none'}. "
        f"Gaps by reading and source: {listing}. The printed weight 1/log2(1 + r/C) tilts P̂ towards the top "
        "ranks at any level of the metric, simulated ranks at the paper's level included.")


# ----------------------------------------------------------------------------- winners


def _winner_shares(wins: pd.DataFrame, paper: pd.DataFrame, datasets) -> pd.DataFrame:
    """Per dataset, n and estimator: our share of correct winners over the paper's (metric, K), and
    the paper's."""
    theirs = paper[paper["dataset"].isin(list(datasets))]
    on = ["dataset", "sample_size", "method", "metric", "k"]
    ours = wins.rename(columns={"estimator": "method"}).assign(k=lambda t: t["k"].astype("Int64"))
    joined = paper_merge(ours, theirs, on, scope={"dataset": sorted(set(datasets) & set(wins["dataset"])),
                                                  "sample_size": sorted(set(wins["sample_size"]))})
    sums = joined.groupby(["dataset", "sample_size", "method"], sort=False)[
        ["correct", "repeats", "paper_correct"]].sum()
    return pd.DataFrame({"ours": sums["correct"] / sums["repeats"],
                         "paper": sums["paper_correct"] / (100 * joined.groupby(
                             ["dataset", "sample_size", "method"], sort=False).size())}).reset_index()


def wmle_winners(wins: pd.DataFrame, at_k: pd.DataFrame) -> Claim:
    """WMLE picks the winner most often on ml-1m (Table 4).

    Rule: on ml-1m at n = 100, over the paper's (metric, K), WMLE's share of repeats with the
    true winner is the highest of the six estimators. The reason gives WMLE's relative bias at
    K = 10: a high share from a strongly biased estimator is not accuracy.
    """
    shares = _winner_shares(wins, paper_table("jin2021aaai_winners"), ["ml-1m"])
    shares = shares[shares["sample_size"] == 100].set_index("method")
    if not set(AAAI21) <= set(shares.index):
        return _untestable("jin2021aaai", "WMLE picks the true winner most often; MLE and MES are comparable and "
                           "slightly better than BV 0.01", "Table 4", "ml-1m",
                           "ml-1m was not run at n = 100 with the estimators of AAAI'21.")
    best, p_best = shares["ours"].idxmax(), shares["paper"].idxmax()
    bias = _our_bias(at_k)
    wmle_bias = bias[(bias["dataset"] == "ml-1m") & (bias["estimator"] == "wmle")]["bias"].mean()
    mle_bias = bias[(bias["dataset"] == "ml-1m") & (bias["estimator"] == "mle")]["bias"].mean()
    return Claim(
        "jin2021aaai", "WMLE picks the true winner most often; MLE and MES are comparable and slightly better "
        "than BV 0.01", "Table 4", "ml-1m",
        f"WMLE {_pct(shares.loc['wmle', 'ours'])}, best {best} {_pct(shares.loc[best, 'ours'])}",
        f"WMLE {_pct(shares.loc['wmle', 'paper'])}, best {p_best}",
        "reproduced" if best == "wmle" else "not reproduced",
        f"Share of repeats with the true winner over the paper's (metric, K) at n = 100; rule: WMLE has the highest. "
        f"MLE {_pct(shares.loc['mle', 'ours'])}, MES {_pct(shares.loc['mes', 'ours'])}, BV 0.01 "
        f"{_pct(shares.loc['bv_0.01', 'ours'])}. WMLE's share comes from a strongly biased estimator: its mean "
        f"relative bias of metric@10 on ml-1m is {_pct(wmle_bias)} (MLE {_pct(mle_bias)}); it overestimates every "
        "model, and a bias that keeps the models' order picks the winner without estimating the metric.")


def winners_best(wins: pd.DataFrame) -> list[Claim]:
    """The estimator most often right on citeulike, pinterest-20 and yelp (Tables 8-10).

    Rule: per dataset at n = 100, over the paper's (metric, K): reproduced if our estimator most
    often right is the paper's, partly if the paper's is among our two best, else not reproduced.
    """
    paper = paper_table("jin2021aaai_winners")
    rows = []
    for dataset, table in (("citeulike-a", "Table 8"), ("yelp-diffnet", "Table 9"), ("pinterest-subset", "Table 10")):
        if dataset not in set(wins["dataset"]):
            continue
        shares = _winner_shares(wins, paper, [dataset])
        shares = shares[shares["sample_size"] == 100].set_index("method")
        if shares.empty:
            continue
        top = list(shares["ours"].sort_values(ascending=False, kind="stable").index)
        theirs = shares["paper"].idxmax()
        verdict = "reproduced" if top[0] == theirs else "partly" if theirs in top[:2] else "not reproduced"
        rows.append(Claim(
            "jin2021aaai", "The estimator that picks the true winner most often", table, dataset,
            f"{top[0]} {_pct(shares.loc[top[0], 'ours'])}", f"{theirs} {_pct(shares.loc[theirs, 'paper'])}", verdict,
            "Share of repeats with the true winner over the paper's (metric, K) at n = 100; rule: same best "
            "estimator (reproduced), the paper's among our two best (partly). Ours: "
            + ", ".join(f"{m} {_pct(v)}" for m, v in shares["ours"].items())
            + ". Our models and their leads differ from the paper's (table of true winners)."))
    return rows


def winner_counts_aaai23(wins: pd.DataFrame) -> Claim:
    """BV_* and MN_* at n = 500 pick the winner as often as AAAI'23 Table 8 says.

    Rule: per (dataset, estimator), our share of correct winners over the paper's (metric, K)
    within 15 percentage points of the paper's (the fixed-size part of Table 8); share of such cases.
    """
    datasets = sorted(set(wins["dataset"]) & set(stand_ins("li2023aaai_winners")))
    paper = paper_table("li2023aaai_winners")
    shares = _winner_shares(wins, paper[paper["method"] != "adaptive_mle"], datasets)
    close = (shares["ours"] - shares["paper"]).abs() <= 0.15
    return Claim(
        "li2023aaai", "BV_MES, BV_MLE, MN_MES and MN_MLE pick the true winner in most repeats", "Table 8",
        _names(datasets, "pinterest-subset, yelp-diffnet"), f"{_pct(shares['ours'].mean())} on average", f"{_pct(shares['paper'].mean())} on average",
        share_verdict(int(close.sum()), len(close)),
        f"Per (dataset, estimator) at n = 500 over the paper's (metric, K): ours within 15 points of the paper's in "
        f"{int(close.sum())} of {len(close)}. " + "; ".join(
            f"{r.dataset} {r.method} {_pct(r.ours)} vs {_pct(r.paper)}" for r in shares.itertuples()) + ".")


# ----------------------------------------------------------------------------- AAAI'21 Figs. 2-3


def fig2_wmle_above(rd: pd.DataFrame) -> Claim:
    """WMLE's learned CDF lies above MLE's and MES's (Fig. 2).

    Rule: per (dataset, model, n) of ``rank_distribution`` with all three, the mean over R of
    CDF_WMLE − max(CDF_MLE, CDF_MES) is positive.
    """
    wide = rd.pivot_table(index=["dataset", "model", "sample_size", "rank"], columns="estimator", values="cdf")
    wide = wide.dropna(subset=[c for c in ("wmle", "mle", "mes") if c in wide.columns])
    if not {"wmle", "mle", "mes"} <= set(wide.columns) or wide.empty:
        return Claim("jin2021aaai", "WMLE's learned CDF lies above MLE's and MES's", "Fig. 2", "ml-1m", "", "",
                     "not testable here", "WMLE, MLE and MES were not all run for the P(R) figures.")
    above = (wide["wmle"] - wide[["mle", "mes"]].max(axis=1)).groupby(level=[0, 1, 2]).mean() > 0
    return Claim("jin2021aaai", "WMLE's learned CDF lies above MLE's and MES's", "Fig. 2",
                 _names(above.index.get_level_values(0), "ml-1m"), f"{int(above.sum())} of {len(above)}",
                 "all (3 models)", share_verdict(int(above.sum()), len(above)),
                 f"Share of (dataset, model, n) where the averaged WMLE CDF exceeds MLE's and MES's on average over "
                 f"R = 1..{int(rd['rank'].max())}: {int(above.sum())}/{len(above)}.")


def fig3_sample_size(rd: pd.DataFrame) -> Claim:
    """A larger n brings the learned CDF closer to the empirical one (Fig. 3).

    Rule: per (dataset, model, estimator) run at two sample sizes, the largest |CDF̂ − CDF| over
    R is smaller at the larger n.
    """
    gap = rd.assign(gap=(rd["cdf"] - rd["exact_cdf"]).abs()).groupby(
        ["dataset", "model", "estimator", "sample_size"])["gap"].max().unstack("sample_size")
    if gap.shape[1] < 2:
        return Claim("jin2021aaai", "A larger sample brings the learned CDF closer to the empirical one",
                     "Fig. 3, App. C", "citeulike-a", "", "", "not testable here", "Only one sample size was run.")
    both = gap[[gap.columns.min(), gap.columns.max()]].dropna()
    closer = both.iloc[:, 1] < both.iloc[:, 0]
    return Claim("jin2021aaai", "A larger sample brings the learned CDF closer to the empirical one", "Fig. 3, App. C",
                 _names(both.index.get_level_values(0), "citeulike-a"), f"{int(closer.sum())} of {len(closer)}",
                 "every estimator", share_verdict(int(closer.sum()), len(closer)),
                 f"Share of (dataset, model, estimator) whose largest |CDF̂ − CDF| shrinks from n = "
                 f"{gap.columns.min()} to n = {gap.columns.max()}: {int(closer.sum())}/{len(closer)}.")


# ----------------------------------------------------------------------------- AAAI'23 relative errors


def _aaai23(errors: pd.DataFrame) -> pd.DataFrame:
    paper = paper_table("li2023aaai_relative_error")
    datasets = sorted(set(errors["dataset"]) & set(paper["dataset"]))
    ours = errors[errors["dataset"].isin(datasets)].rename(columns={"estimator": "method"})
    return paper_merge(ours, paper, ["dataset", "model", "sample_size", "metric", "method"],
                       scope={"dataset": datasets})


def mn_among_best(errors: pd.DataFrame) -> Claim:
    """MN_MES and MN_MLE most often among the two most accurate (Tables 6, 9, 10).

    Rule: per (dataset, model, metric, n) of the AAAI'23 tables, among the paper's seven
    estimators, MN_MES or MN_MLE has one of the two lowest average relative errors.
    """
    joined = _aaai23(errors)

    def share(column):
        ranks = joined.groupby(["dataset", "model", "metric", "sample_size"])[column].rank(method="min")
        top = joined[ranks <= 2].groupby(["dataset", "model", "metric", "sample_size"])["method"].agg(set)
        held = int(sum(bool(s & {"mn_mes", "mn_mle"}) for s in top))
        return held, len(top)

    held, cases = share("mean")
    p_held, p_cases = share("paper_percent")
    return Claim("li2023aaai", "MN_MES and MN_MLE are most often among the two most accurate estimators",
                 "Tables 6, 9, 10", "pinterest-subset, yelp-diffnet", f"{held} of {cases}", f"{p_held} of {p_cases}",
                 share_verdict(held, cases),
                 f"Share of (dataset, model, metric, n) where MN_MES or MN_MLE has one of the two lowest average "
                 f"relative errors over K = 1..50 among the seven estimators: ours {held}/{cases}, the paper's "
                 f"{p_held}/{p_cases}.")


def prior_estimators_ahead(errors: pd.DataFrame) -> Claim:
    """Estimators with a fitted prior ahead of those without (AAAI'23 §5).

    Rule: per (dataset, model, metric, n), the mean error of BV_MES, BV_MLE, MN_MES, MN_MLE is
    below the mean error of MES, MLE and BV.
    """
    joined = _aaai23(errors)
    if joined.empty:
        return _untestable("li2023aaai", "Estimators with a fitted prior (BV_MES, BV_MLE, MN_MES, MN_MLE) are more "
                           "accurate than MES, MLE and BV", "Tables 6, 9, 10, §5", "pinterest-subset, yelp-diffnet",
                           "Neither pinterest-subset nor yelp-diffnet was run.")
    prior = joined["method"].isin(["bv_mes", "bv_mle", "mn_mes", "mn_mle"])

    def share(column):
        g = joined.assign(prior=prior).groupby(["dataset", "model", "metric", "sample_size", "prior"])[column].mean()
        wide = g.unstack("prior")
        ahead = wide[True] < wide[False]
        return int(ahead.sum()), len(ahead)

    held, cases = share("mean")
    p_held, p_cases = share("paper_percent")
    return Claim("li2023aaai", "Estimators with a fitted prior (BV_MES, BV_MLE, MN_MES, MN_MLE) are more accurate than "
                 "MES, MLE and BV", "Tables 6, 9, 10, §5", "pinterest-subset, yelp-diffnet", f"{held} of {cases}",
                 f"{p_held} of {p_cases}", share_verdict(held, cases),
                 f"Share of (dataset, model, metric, n) where the mean average relative error of the four prior "
                 f"estimators is below that of MES, MLE and BV 0.01: ours {held}/{cases}, the paper's {p_held}/{p_cases}.")


def mn_spread(errors: pd.DataFrame) -> Claim:
    """MN spreads less than its prior (AAAI'23 §5: MN_MES, MN_MLE vs MES, MLE).

    Rule: per (dataset, model, metric, n), the std over the repeats of the average relative error
    of MN_MES is below MES's and MN_MLE's below MLE's (each pair a case).
    """
    joined = _aaai23(errors)
    keys = ["dataset", "model", "metric", "sample_size"]
    held = cases = p_held = 0
    for mn, base in (("mn_mes", "mes"), ("mn_mle", "mle")):
        a = joined[joined["method"] == mn].set_index(keys)
        b = joined[joined["method"] == base].set_index(keys)
        both = a.add_suffix("_mn").join(b.add_suffix("_base"), how="inner")
        held += int((both["std_mn"] < both["std_base"]).sum())
        p_held += int((both["paper_std_percent_mn"] < both["paper_std_percent_base"]).sum())
        cases += len(both)
    return Claim("li2023aaai", "MN_MES and MN_MLE spread less than their priors MES and MLE", "Tables 6, 9, 10",
                 "pinterest-subset, yelp-diffnet", f"{held} of {cases}", f"{p_held} of {cases}",
                 share_verdict(held, cases),
                 f"Share of (dataset, model, metric, n, pair) where the std over the repeats of the average relative "
                 f"error of MN is below its prior's: ours {held}/{cases}, the paper's {p_held}/{cases}.")


def relative_error_level(errors: pd.DataFrame) -> Claim:
    """The size of the average relative errors (Tables 6, 9, 10).

    Rule: share of (dataset, model, metric, n, estimator) whose average relative error is within
    a factor :data:`FACTOR` of the paper's.
    """
    joined = _aaai23(errors)
    ratio = joined["mean"] / (joined["paper_percent"] / 100)
    close = (ratio >= 1 / FACTOR) & (ratio <= FACTOR)
    return Claim("li2023aaai", "Average relative errors over K = 1..50 of the estimators (their size)",
                 "Tables 6, 9, 10", "pinterest-subset, yelp-diffnet", f"median ratio {_g(ratio.median())}",
                 "ratio 1", share_verdict(int(close.sum()), len(close)),
                 f"Ours / the paper's per (dataset, model, metric, n, estimator): median {_g(ratio.median())}, "
                 f"within a factor {FACTOR:g} in {int(close.sum())} of {len(close)}. Our pinterest-subset and "
                 "yelp-diffnet are other versions of the paper's data, and our models others, so the levels differ.")


# ----------------------------------------------------------------------------- MN's M, KDD'20, levels


def mn_users_scope(table: pd.DataFrame) -> Claim:
    """MN minimises the MSE bound of the average over M users (AAAI'23 eq. 10-11), with
    per-user candidates (not in the paper).

    Rule: per (dataset, model, metric@K), MN_MLE and MN_MES with the whole M move by at most
    0.5 sd between the fewest and the most candidate groups; the reason also gives the shift with
    each group's M_g and the estimators without M.
    """
    few, many = table["n_groups"].min(), table["n_groups"].max()
    keys = ["dataset", "model", "estimator", "m_scope", "metric"]
    a = table[table["n_groups"] == few].set_index(keys)
    b = table[table["n_groups"] == many].set_index(keys)
    shift = ((b["mean"] - a["mean"]).abs() / np.maximum(a["std"], b["std"])).reset_index(name="shift")
    mn = shift[shift["estimator"].str.startswith("mn")]
    total, group = mn[mn["m_scope"] == "total"], mn[mn["m_scope"] == "group"]
    other = shift[shift["m_scope"] == "none"]
    held = int((total["shift"] <= 0.5).sum())
    err = table[table["n_groups"] == many].groupby("m_scope")["rel_error"].mean()
    return Claim(
        "li2023aaai", "MN minimises the MSE bound of eq. 10 for the average over M users", "eq. 10-11, §3",
        ", ".join(sorted(set(table["dataset"]))) + f" ({table['protocol'].iloc[0]})",
        f"shift ≤ {_g(total['shift'].max())} sd (whole M), ≤ {_g(group['shift'].max())} sd (M_g)", "",
        share_verdict(held, len(total)),
        f"Metric@{int(table['k'].iloc[0])} from {few} to {many} candidate groups, in sd over "
        f"{int(table['repeats'].min())} repeats: MN with the whole M moves ≤ 0.5 sd in {held} of {len(total)} "
        f"cases (largest {_g(total['shift'].max())}), with each group's M_g up to {_g(group['shift'].max())}, "
        f"estimators without M up to {_g(other['shift'].max())}. The bound of eq. 10 for the average over all "
        f"users, split by group (Jensen), is MN with the whole M in every group. Average relative error at "
        f"{many} groups: M_g {_pct(err.get('group', np.nan))}, whole M {_pct(err.get('total', np.nan))}.")


def kdd20_gamma_tradeoff(at_k: pd.DataFrame) -> Claim:
    """BV trades bias for variance through γ (KDD'20 §5.2): smaller γ, less bias, more variance.

    Rule: per (dataset, model, metric@10) at n = 100, BV 0.01 has a smaller |bias| and a larger
    std than BV 0.1.
    """
    ours = _our_bias(at_k)

    def holds(part):
        s = part.set_index("estimator").reindex(list(AAAI21))
        return s.loc["bv_0.01", "bias"] < s.loc["bv_0.1", "bias"] and s.loc["bv_0.01", "spread"] > s.loc[
            "bv_0.1", "spread"]

    held, cases = _cases(ours, holds)
    return Claim("krichene2020kdd", "A smaller γ of BV gives less bias and more variance", "§5.2, eq. 24-26",
                 "all four", f"{held} of {cases}", "", share_verdict(held, cases),
                 f"Share of (dataset, model, metric@10) at n = 100 where BV 0.01 is less biased and more variable "
                 f"than BV 0.1: {held}/{cases}.")


def exact_levels(at_k: pd.DataFrame) -> Claim:
    """The exact metric@10 of the models (AAAI'21 Tables 2-3).

    Rule: share of (dataset, model, metric) of the datasets with the paper's users and items
    whose exact value is within 20 % of the paper's.
    """
    ours = at_k[(at_k["sample_size"] == 100) & at_k["dataset"].isin(SAME_DATA)].drop_duplicates(
        ["dataset", "model", "metric"])
    paper = paper_table("jin2021aaai_metrics_at_10")
    paper = paper[(paper["method"] == "exact") & paper["dataset"].isin(SAME_DATA)]
    joined = paper_merge(ours, paper, ["dataset", "model", "metric"], scope={"dataset": sorted(set(ours["dataset"]))})
    ratio = joined["exact"] / (joined["paper_percent"] / 100)
    close = (ratio - 1).abs() <= 0.2
    return Claim("jin2021aaai", "Exact Recall, NDCG and AP@10 of EASE, MultiVAE, NeuMF, itemKNN and ALS",
                 "Tables 2-3", _names(joined["dataset"], ", ".join(SAME_DATA)),
                 f"ratio {_g(ratio.min())} to {_g(ratio.max())}", "ratio 1", share_verdict(int(close.sum()), len(close)),
                 f"Ours / the paper's exact metric@10: within 20 % in {int(close.sum())} of {len(close)}; median "
                 f"{_g(ratio.median())}. The paper does not describe its split; KDD'20's sampled hit ratios on the "
                 "same data bound its levels (section 'Why our exact metrics are lower').")


def kdd20_hit_ratios(levels: pd.DataFrame) -> Claim:
    """Our models' sampled hit ratio at 1 against Li et al.'s (KDD'20 Tables 3, 5) on the same data.

    Rule: per (dataset, model) that KDD'20 measured, our E[SHR@1] at n = 100 under KDD'20's
    protocol is within 20 % of its value (the level our ranks stand at, against the paper's
    AAAI'21 exact metrics, whose least implied E[SHR@1] the reason gives).
    """
    claim = "Sampled hit ratio at 1 (n = 100) of EASE, MultiVAE and NeuMF"
    joined = level_comparison(levels, paper_table("jin2021aaai_metrics_at_10"),
                              li2020kdd_hit_ratios(paper_table("li2020kdd_table3"), paper_table("li2020kdd_table5")))
    measured = joined.dropna(subset=["paper_hit_ratio"])
    if measured.empty:
        return _untestable("li2020kdd", claim, "Tables 3, 5", ", ".join(SAME_DATA),
                           "No model of KDD'20 was run on its datasets.")
    ours = np.where(measured["paper_hit_protocol"] == "all", measured["hit_ratio_all"], measured["hit_ratio_unseen"])
    ratio = ours / measured["paper_hit_ratio"].to_numpy()
    close = np.abs(ratio - 1) <= 0.2
    above = int((measured["paper_min_hit_ratio"] > measured["paper_hit_ratio"]).sum())
    return Claim("li2020kdd", claim, "Tables 3, 5", _names(measured["dataset"], ", ".join(SAME_DATA)),
                 f"ratio {_g(ratio.min())} to {_g(ratio.max())}", "ratio 1", share_verdict(int(close.sum()), len(close)),
                 f"Ours / KDD'20's SHR@1 under its protocol, per (dataset, model): within 20 % in {int(close.sum())} of "
                 f"{len(close)}. AAAI'21's exact Recall@10 needs a larger E[SHR@1] than KDD'20 measured in {above} of "
                 f"{len(measured)} of these pairs (min_sampled_hit_ratio): our ranks stand at KDD'20's level, "
                 "AAAI'21's far above it.")


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """Every claim of notebook 04, from its tables (``table(name)``)."""
    at_k, wins, errors = table("metrics_at_k"), table("winners"), table("relative_error")
    rd = table("rank_distribution")
    return [
        exact_levels(at_k),
        kdd20_hit_ratios(table("metric_levels")),
        *bias_ranking(at_k),
        learned_variance(at_k),
        wmle_close_to_mle(table("wmle_readings")),
        wmle_winners(wins, at_k),
        *winners_best(wins),
        fig2_wmle_above(rd),
        fig3_sample_size(rd),
        mn_among_best(errors),
        prior_estimators_ahead(errors),
        mn_spread(errors),
        relative_error_level(errors),
        winner_counts_aaai23(wins),
        mn_users_scope(table("mn_users")),
        kdd20_gamma_tradeoff(at_k),
    ]
