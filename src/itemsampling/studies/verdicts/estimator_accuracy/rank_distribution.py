"""The claims on the learned rank distribution P(R): AAAI'21 Figs. 2-3."""

from __future__ import annotations

import pandas as pd

from .. import Claim, share_verdict
from .common import dataset_names

__all__ = ["fig2_wmle_above", "fig3_sample_size"]


def fig2_wmle_above(rd: pd.DataFrame) -> Claim:
    """WMLE's learned CDF lies above MLE's and MES's (Fig. 2).

    Rule: per (dataset, model, n) of ``rank_distribution`` with all three, the mean over R of
    CDF_WMLE − max(CDF_MLE, CDF_MES) is positive.
    """
    wide = rd.pivot_table(index=["dataset", "model", "sample_size", "rank"], columns="estimator", values="cdf")
    wide = wide.dropna(subset=[c for c in ("wmle", "mle", "mes") if c in wide.columns])
    if not {"wmle", "mle", "mes"} <= set(wide.columns) or wide.empty:
        return Claim(paper="jin2021aaai", claim="WMLE's learned CDF lies above MLE's and MES's", quote="WMLE's learned CDF lies above MLE's and MES's", source="Fig. 2", dataset="ml-1m", our_value="", paper_value="", verdict="not testable here", reason="WMLE, MLE and MES were not all run for the P(R) figures.")
    above = (wide["wmle"] - wide[["mle", "mes"]].max(axis=1)).groupby(level=[0, 1, 2]).mean() > 0
    return Claim(paper="jin2021aaai", claim="WMLE's learned CDF lies above MLE's and MES's", quote="WMLE's learned CDF lies above MLE's and MES's", source="Fig. 2", dataset=dataset_names(above.index.get_level_values(0), "ml-1m"), our_value=f"{int(above.sum())} of {len(above)}", paper_value="all (3 models)", verdict=share_verdict(int(above.sum()), len(above)), reason=f"Share of (dataset, model, n) where the averaged WMLE CDF exceeds MLE's and MES's on average over "
                 f"R = 1..{int(rd['rank'].max())}: {int(above.sum())}/{len(above)}.")


def fig3_sample_size(rd: pd.DataFrame) -> Claim:
    """A larger n brings the learned CDF closer to the empirical one (Fig. 3).

    Rule: per (dataset, model, estimator) run at two sample sizes, the largest |CDF̂ − CDF| over
    R is smaller at the larger n.
    """
    gap = rd.assign(gap=(rd["cdf"] - rd["exact_cdf"]).abs()).groupby(
        ["dataset", "model", "estimator", "sample_size"])["gap"].max().unstack("sample_size")
    if gap.shape[1] < 2:
        return Claim(paper="jin2021aaai", claim="A larger sample brings the learned CDF closer to the empirical one", quote="A larger sample brings the learned CDF closer to the empirical one", source="Fig. 3, App. C", dataset="citeulike-a", our_value="", paper_value="", verdict="not testable here", reason="Only one sample size was run.")
    both = gap[[gap.columns.min(), gap.columns.max()]].dropna()
    closer = both.iloc[:, 1] < both.iloc[:, 0]
    return Claim(paper="jin2021aaai", claim="A larger sample brings the learned CDF closer to the empirical one", quote="A larger sample brings the learned CDF closer to the empirical one", source="Fig. 3, App. C", dataset=dataset_names(both.index.get_level_values(0), "citeulike-a"), our_value=f"{int(closer.sum())} of {len(closer)}", paper_value="every estimator", verdict=share_verdict(int(closer.sum()), len(closer)), reason=f"Share of (dataset, model, estimator) whose largest |CDF̂ − CDF| shrinks from n = "
                 f"{gap.columns.min()} to n = {gap.columns.max()}: {int(closer.sum())}/{len(closer)}.")
