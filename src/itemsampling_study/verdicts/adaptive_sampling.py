"""Verdicts of notebook 06: the claims of Li et al. (AAAI 2023, §4-5, Tables 7, 8, 11) on the blind
spot and adaptive sampling, and our own checks beside them.

Each rule is a function of the notebook's tables that returns, per case, whether a claim holds (and
the numbers behind it); :func:`claims` turns them into :class:`~.Claim` rows, graded by the words of
the quoted sentence (``docs/verdicts.md``): an unhedged statement is reproduced from 90% of its
cases (:func:`~itemsampling_study.verdicts.share_verdict`), "typically" and "most" from more than
half (:func:`most_verdict`), "could" and "can" by one case (:func:`can_verdict`). A case is a
(dataset, model) pair where the claim is about one number per pair, and a (dataset, model, metric)
where the two metrics give different numbers.

Scope: the claims of §5 and App. I are about the paper's datasets; ours that stand in for them are
pinterest-subset (pinterest-20) and yelp-diffnet (yelp), and none stands in for ml-20m. Those
claims are graded on the stand-ins alone; ml-1m and citeulike-a, where n_max = 3200 is a share of
the items unlike the paper's, are :class:`~.Check` rows. yelp-diffnet's fixed-size estimators use
n = 1000 where the paper uses 500; item counts are compared with the paper's n.

Thresholds are fixed before looking at the numbers and stated in each ``reason``; none is ours
where the paper gives none. The knee of Fig. 2 is graded without a threshold: C_j grows faster per
doubling of n_j past 12.4% of the items than before it (direction), and the largest rise of that
growth comes at 12.4% (location); "competitive" numbers of correct winners, and an accuracy at
n_max = 10-15% of the items as "pretty good" as with a larger n_max, differ by less than two
standard errors of their difference over the repeats; an error "less than 2%" is partly
reproduced where it exceeds 2% by less than the standard deviation over the repeats that the
paper prints for the same model (its own run-to-run spread). An intensifier that the paper backs
with no test ("significantly", "much") is not tested and the reason says so; where the paper gives
an example of the size ("say 1.69% ... compared to the 2.78%"), the size is compared with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from itemsampling.kernels import kernel_columns

from ..adaptive_sampling import most_accurate
from ..paper import paper_merge, paper_table, stand_ins
from . import Check, Claim, can_verdict, most_verdict, share_verdict, untestable

__all__ = [
    "DEFAULT_SHARE",
    "ERROR_BOUND",
    "ERROR_FACTOR",
    "FIG_MODEL",
    "KNEE_FRACTION",
    "PAPER_REPEATS",
    "TYPICAL_ITEMS",
    "blind_spot_first",
    "blind_spot_shape",
    "claims",
    "competitive_winners",
    "error_as_paper",
    "fewer_at_first",
    "fewer_items",
    "first_is_mode",
    "improves_with_n_max",
    "knee",
    "more_accurate",
    "more_accurate_with_fewer_items",
    "premise_at_small_k",
    "pretty_good_at_default",
    "sensitivity_premise",
]

PAPER = "li2023aaai"
#: the model of the paper's Figs. 1 and 2 ("The result is obtained by EASE model")
FIG_MODEL = "ease"
#: the one scope rule of the sentences of §4.1 and Fig. 1 (rubric rule 2)
FIG1_SCOPE = (f"Scope, one rule for every sentence of §4.1 and Fig. 1: Fig. 1 shows {FIG_MODEL.upper()} on ml-20m, "
              "for which none of our datasets stands in; a sentence that reports a level read off Fig. 1 (a share of "
              "its users, such as 'most') is graded on ml-20m alone, so it is not testable here and ours is shown "
              "beside; a sentence that states a property of item sampling or of the basic estimators, with or "
              "without 'see Fig. 1', is graded in kind on all our datasets. This sentence ")
#: the fraction of the items past which AAAI'23 sees C_j rise quickly (§4.3, Fig. 2)
KNEE_FRACTION = 0.124
#: the paper's default n_max as a share of the items: "10% ∼ 15% can serve as a default choice" (§4.3)
DEFAULT_SHARE = (0.10, 0.15)
#: the upper end of the paper's "typically 200-300 vs 500" items per user (§5)
TYPICAL_ITEMS = 300
#: the threshold of "the relative errors have reduced to less than 2%" (§5)
ERROR_BOUND = 0.02
#: the repeats of the paper's runs ("We repeat experiments 100 times", §5)
PAPER_REPEATS = 100
# §4.1's example sizes (N = 10K items, n = 100 in the sample set), and “around” as a relative tolerance
PAPER_BLIND_SPOT_SIZES = (10_000, 100)
AROUND = 0.1
#: an error "as in the paper" (a check): between 1/ERROR_FACTOR and ERROR_FACTOR times the paper's
ERROR_FACTOR = 2.0




def _count(flags: pd.Series) -> tuple[int, int]:
    return int(flags.sum()), int(flags.size)


def _of(holds: int, cases: int, what: str) -> str:
    return f"{holds} of {cases} {what}"


def _pct(value: float, digits: int = 2) -> str:
    """``value`` (a fraction) in percent with ``digits`` significant digits."""
    return f"{100 * value:.{digits}g}%"


def _by_dataset(flags: pd.Series) -> str:
    """``ml-1m 2/10, ...``: the cases that hold per dataset (first level of the index)."""
    grouped = flags.groupby(level=0, sort=False)
    return ", ".join(f"{d} {int(g.sum())}/{g.size}" for d, g in grouped)


def _within(frame, datasets) -> pd.DataFrame | pd.Series:
    """The rows of ``frame`` (indexed by dataset first, or with a ``dataset`` column) of ``datasets``."""
    if isinstance(frame.index, pd.MultiIndex):
        return frame[frame.index.get_level_values(0).isin(list(datasets))]
    return frame[frame["dataset"].isin(list(datasets))]


# ----------------------------------------------------------------------------- Fig. 1, §4.1


def blind_spot_first(blind: pd.DataFrame) -> pd.Series:
    """Per (dataset, model): the share of users at r = 1 with the blind-spot n (``blind_spot_sampled_ranks``)."""
    first = blind[blind["sampled_rank"] == 1]
    return first.set_index(["dataset", "model"])["probability"]


def first_is_mode(blind: pd.DataFrame) -> pd.Series:
    """Per (dataset, model): whether r = 1 is the most frequent sampled rank (``blind_spot_sampled_ranks``)."""
    keys = ["dataset", "model"]
    top = blind.loc[blind.groupby(keys, sort=False)["probability"].idxmax()]
    return (top.set_index(keys)["sampled_rank"] == 1).rename("holds")


def blind_spot_shape(by_k: pd.DataFrame) -> pd.Series:
    """Per (dataset, model, metric): whether the fixed-size MLE's error at the smallest K exceeds
    its error at the largest K (``relative_error_by_k``)."""
    fixed = by_k[by_k["sampling"] == "fixed"]
    keys = ["dataset", "model", "metric"]
    ends = fixed.sort_values("k").groupby(keys, sort=False)["mean"]
    return (ends.first() > ends.last()).rename("holds")


def premise_at_small_k(by_k: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model): the relative errors at the smallest K of the fixed-size MLE and of the
    adaptive MLE, and ``holds`` = the adaptive one is smaller (first metric of the table only:
    Recall@1 = NDCG@1)."""
    small = by_k[(by_k["k"] == by_k["k"].min()) & (by_k["metric"] == by_k["metric"].iloc[0])]
    wide = small.pivot_table(index=["dataset", "model"], columns="sampling", values="mean", sort=False)
    return wide.assign(holds=wide["adaptive"] < wide["fixed"])


def fewer_at_first(sizes: pd.DataFrame) -> pd.Series:
    """Per (dataset, model): whether the share of users still at r = 1 at the terminal size falls
    strictly with every larger n_max (``adaptive_sizes``, ``first_at_ceiling``)."""
    ordered = sizes.sort_values("n_max").groupby(["dataset", "model"], sort=False)["first_at_ceiling"]
    return ordered.apply(lambda s: bool((np.diff(s.to_numpy()) < 0).all())).rename("holds")


def improves_with_n_max(front: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, metric): the adaptive MLE's average error at the smallest and the
    largest n_max of ``frontier``, and ``holds`` = the largest is the more accurate."""
    adaptive = front[front["sampling"] == "adaptive"].sort_values("sample_size")
    ends = adaptive.groupby(["dataset", "model", "metric"], sort=False)["mean"].agg(smallest="first", largest="last")
    return ends.assign(holds=ends["largest"] < ends["smallest"])


# ----------------------------------------------------------------------------- Fig. 2, §4.3


def knee(cost: pd.DataFrame, fraction: float = KNEE_FRACTION) -> pd.DataFrame:
    """Per (dataset, model): the median growth C_j / C_{j-1} over the doublings of n_j that end at
    most ``fraction`` of the items and over those past it (capped last levels, where n_j is less
    than twice n_{j-1}, are left out), NaN where a side has no doubling (``sampling_cost``).

    ``faster``: the growth past ``fraction`` exceeds the growth before it (the direction of a
    knee); ``located``: of the rises of the growth from one doubling to the next, the largest is
    the one into the first doubling past ``fraction`` (a knee there, not further on).
    """
    rows = []
    for (dataset, model), part in cost.sort_values("level").groupby(["dataset", "model"], sort=False):
        c, n = part["cost"].to_numpy(), part["sample_size"].to_numpy()
        frac = part["fraction_of_items"].to_numpy()
        doubling = (n[1:] == 2 * n[:-1]) & np.isfinite(c[1:]) & np.isfinite(c[:-1])
        growth, past = (c[1:] / c[:-1])[doubling], frac[1:][doubling] > fraction
        rise = np.diff(growth)
        crossing = int(np.argmax(past)) - 1  # the rise into the first doubling past the fraction
        rows.append({"dataset": dataset, "model": model,
                     "growth_before": float(np.median(growth[~past])) if (~past).any() else np.nan,
                     "growth_after": float(np.median(growth[past])) if past.any() else np.nan,
                     "located": bool(past.any() and crossing >= 0 and 0 < rise[crossing] == rise.max())})
    out = pd.DataFrame(rows).set_index(["dataset", "model"])
    testable = out["growth_before"].notna() & out["growth_after"].notna()
    return out.assign(testable=testable, faster=testable & (out["growth_after"] > out["growth_before"]),
                      located=testable & out["located"])


def pretty_good_at_default(front: pd.DataFrame, n_items: pd.Series,
                           share: tuple[float, float] = DEFAULT_SHARE) -> pd.DataFrame:
    """Per (dataset, model, metric) whose n_max grid of ``frontier`` has an n_max within ``share``
    of the items (``n_items`` per dataset): the adaptive MLE's average error there (``default``,
    the smallest such n_max) and at the largest n_max (``largest``), ``margin`` = two standard
    errors of their difference over the repeats, and ``holds`` = the error at the default is at
    most the largest n_max's plus the margin (as good as sampling further, up to chance)."""
    adaptive = front[front["sampling"] == "adaptive"]
    adaptive = adaptive.assign(share=adaptive["sample_size"] / adaptive["dataset"].map(n_items),
                               se=adaptive["std"] / np.sqrt(adaptive["repeats"]))
    keys = ["dataset", "model", "metric"]
    inside = adaptive[adaptive["share"].between(*share)].sort_values("sample_size").groupby(keys, sort=False).first()
    largest = adaptive.sort_values("sample_size").groupby(keys, sort=False).last().reindex(inside.index)
    margin = 2 * np.sqrt(inside["se"] ** 2 + largest["se"] ** 2)
    return pd.DataFrame({"n_max": inside["sample_size"], "share": inside["share"], "default": inside["mean"],
                         "largest_n_max": largest["sample_size"], "largest": largest["mean"], "margin": margin,
                         "holds": inside["mean"] <= largest["mean"] + margin})


# ----------------------------------------------------------------------------- Tables 2, 7, 11


def fewer_items(accurate: pd.DataFrame, fixed_n: dict[str, float] | None = None) -> pd.Series:
    """Per (dataset, model): whether the adaptive MLE uses fewer items per user than the fixed n
    (``most_accurate`` of ``fixed_vs_adaptive``; one row per pair, the items do not depend on the
    metric). ``fixed_n``: the n per dataset to compare with instead of the table's."""
    first = accurate.drop_duplicates(["dataset", "model"])
    n = first["fixed_items"] if fixed_n is None else first["dataset"].map(fixed_n)
    return (first["adaptive_items"] < n).set_axis(pd.MultiIndex.from_frame(first[["dataset", "model"]]))


def more_accurate(accurate: pd.DataFrame) -> pd.Series:
    """Per (dataset, model, metric): whether the adaptive MLE's error is below the best fixed-size estimator's."""
    return accurate.set_index(["dataset", "model", "metric"])["adaptive_best"].astype(bool)


def more_accurate_with_fewer_items(accurate: pd.DataFrame, fixed_n: dict[str, float] | None = None) -> pd.Series:
    """Per (dataset, model, metric): more accurate than the best fixed-size estimator and with fewer
    items per user than its n (or than ``fixed_n`` of the dataset)."""
    frame = accurate.set_index(["dataset", "model", "metric"])
    n = frame["fixed_items"] if fixed_n is None else frame.index.get_level_values(0).map(fixed_n).to_numpy()
    return (frame["adaptive_best"].astype(bool) & (frame["adaptive_items"] < n)).rename("holds")


def _paper_frame() -> pd.DataFrame:
    """The paper's Tables 7 and 11 in the layout of ``fixed_vs_adaptive`` (errors as fractions)."""
    paper = paper_table("li2023aaai_adaptive")
    return paper.assign(mean=paper["paper_percent"] / 100, std=paper["paper_std_percent"] / 100,
                        dataset=paper["paper_dataset"])


def error_as_paper(fva: pd.DataFrame, factor: float = ERROR_FACTOR) -> pd.DataFrame:
    """The adaptive MLE's average relative error on our stand-ins of pinterest-20 and yelp against
    the paper's (Tables 7, 11), per (dataset, model, metric), with ``ratio`` = ours / paper's and
    ``holds`` = the ratio lies in [1/factor, factor]."""
    paper = paper_table("li2023aaai_adaptive")
    stand_in = stand_ins("li2023aaai_adaptive")
    ours = fva[(fva["method"] == "adaptive_mle") & fva["dataset"].isin(list(stand_in))]
    ours = ours.assign(paper_dataset=ours["dataset"].map(stand_in))
    paper = paper[paper["method"] == "adaptive_mle"]
    if ours.empty:
        return pd.DataFrame(columns=[*ours.columns, "paper_percent", "ratio", "holds"])
    both = paper_merge(ours, paper, on=["paper_dataset", "model", "metric", "method"],
                       scope={"paper_dataset": sorted(set(ours["paper_dataset"]))})
    ratio = both["mean"] / (both["paper_percent"] / 100)
    return both.assign(ratio=ratio, holds=(ratio >= 1 / factor) & (ratio <= factor))


# ----------------------------------------------------------------------------- Tables 3, 8


def competitive_winners(win: pd.DataFrame, repeats: int | None = None) -> pd.DataFrame:
    """Per (dataset, metric, K): the shares of repeats in which the adaptive MLE and the best
    fixed-size estimator find the best model (``winners``, or the paper's table with ``correct``
    and ``repeats`` given), ``margin`` = two standard errors of their difference, ``better`` = the
    adaptive MLE's share is at least the best one's, and ``holds`` = it is at least that share less
    the margin (competitive or better)."""
    keys = ["dataset", "metric", "k"]
    frame = win if repeats is None else win.assign(repeats=repeats)
    share = frame.assign(share=frame["correct"] / frame["repeats"])
    adaptive = share[share["method"] == "adaptive_mle"].set_index(keys)
    fixed = share[share["method"] != "adaptive_mle"]
    best = fixed.loc[fixed.groupby(keys, sort=False)["share"].idxmax()].set_index(keys).reindex(adaptive.index)
    a, b = adaptive["share"], best["share"]
    margin = 2 * np.sqrt(a * (1 - a) / adaptive["repeats"] + b * (1 - b) / best["repeats"])
    return pd.DataFrame({"adaptive": a, "best_fixed": b, "best_method": best["method"], "margin": margin,
                         "better": a >= b, "holds": a >= b - margin})


# ----------------------------------------------------------------------------- sensitivity


def sensitivity_premise(em: pd.DataFrame, fixed_size: int, other: pd.DataFrame | None = None,
                        other_keys: tuple[str, ...] = (), fixed_steps: str | None = None) -> pd.DataFrame:
    """The premise at K = 1 in the sensitivity step: the adaptive error at K = 1 against the
    fixed-size MLE's at ``fixed_size`` (``sensitivity_em_steps``), per pair and setting.

    Without ``other``: per (dataset, model, em_steps), the adaptive MLE of ``em`` against the fixed
    MLE with the same EM steps. With ``other`` (``sensitivity_sizes`` or ``sensitivity_convention``):
    per (dataset, model, *other_keys, em_steps) of ``other``, against the fixed MLE with
    ``fixed_steps`` EM steps. ``holds``: the adaptive error is the smaller. First metric only. EM
    steps are compared as text (``"100"``; a table read back from CSV holds them as numbers where it
    has no ``converged`` row).
    """
    em = em.assign(em_steps=em["em_steps"].astype(str))
    other = None if other is None else other.assign(em_steps=other["em_steps"].astype(str))
    metric = em["metric"].iloc[0]
    fixed = em[(em["sampling"] == "fixed") & (em["sample_size"] == fixed_size) & (em["metric"] == metric)]
    fixed = fixed.set_index(["dataset", "model", "em_steps"])["k1_mean"].rename("fixed")
    if other is None:
        adaptive = em[(em["sampling"] == "adaptive") & (em["metric"] == metric)]
        out = adaptive.set_index(["dataset", "model", "em_steps"])[["k1_mean"]].rename(columns={"k1_mean": "adaptive"})
        out = out.join(fixed)
    else:
        sel = other[other["metric"] == metric]
        out = sel.set_index(["dataset", "model", *other_keys, "em_steps"])[["k1_mean"]].rename(
            columns={"k1_mean": "adaptive"})
        reference = fixed.xs(str(fixed_steps), level="em_steps")
        out = out.join(reference, on=["dataset", "model"])
    return out.assign(holds=out["adaptive"] < out["fixed"])


# ----------------------------------------------------------------------------- the claims


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """Every claim of AAAI'23 that notebook 06 compares with our runs, then our own checks (see the
    module docstring)."""
    return [*_blind_spot_claims(table), *_comparison_claims(table), *_checks(table),
            *_sensitivity_checks(table)]


def _blind_spot_claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """§4.1 and Fig. 1 (the blind spot, the benefits of adaptive sampling), §4.3 and Fig. 2 (the knee)."""
    rows = []
    blind, by_k = table("blind_spot_sampled_ranks"), table("relative_error_by_k")
    every = ", ".join(dict.fromkeys(blind["dataset"]))
    n = int(blind["sample_size"].iloc[0])
    first = blind_spot_first(blind)
    shown = first.index.get_level_values("model") == FIG_MODEL  # the tiny runs of the tests have other models
    fig = first[shown].droplevel("model")
    holds, cases = _count(fig > 0.5)
    mode = first_is_mode(blind)[shown].droplevel("model")
    mode_holds, mode_cases = _count(mode)
    rows.append(Claim(
        paper=PAPER, claim=f"With n = {n} sampled items, most held-out items are ranked first in the sample set (r = 1).",
        quote="At top of Fig. 1, we plot the distribution of target items' rank in the sample set and observe that "
              "most target items rank top 1 (highlighted in red).",
        source="§4.1; Fig. 1", dataset=f"{every} ({FIG_MODEL})",
        setup=f"“most” read as more than half of the users; {FIG_MODEL}, the model of Fig. 1, with n = {n}",
        our_value=_of(holds, cases, f"datasets with a share above 50% ({FIG_MODEL})"),
        paper_value=f"most ({FIG_MODEL}, ml-20m)", verdict="not testable here",
        other_setups=f"on our datasets, “most” as more than half: {share_verdict(holds, cases)}; “most” read as r = 1 "
                     f"the most frequent sampled rank: {share_verdict(mode_holds, mode_cases)} "
                     f"({mode_holds} of {mode_cases})",
        reason=FIG1_SCOPE + "reports a level read off Fig. 1: not testable here; the share at r = 1 depends on the "
               "dataset and the model. "
               f"On our data, rule: the expected share of users at r = 1 with n = {n}, exact from the global ranks, above 50% "
               f"(“most”), on {FIG_MODEL} (Fig. 1's model; none of our datasets stands in for ml-20m), reproduced from "
               f"90% of the datasets, partly from 50%. Ours: "
               + ", ".join(f"{d} {_pct(v)}" for d, v in fig.items())
               + f"; over all models {_pct(first.min())} to {_pct(first.max())}. The share is that of users whose "
               f"held-out item is about in the global top N/{n}: our models rank fewer held-out items there than "
               f"{FIG_MODEL} on ml-20m. Read as “r = 1 is the most frequent rank”, it holds in {mode_holds} of "
               f"{mode_cases}."))
    shape = blind_spot_shape(by_k)
    holds, cases = _count(shape)
    k_min, k_max = int(by_k["k"].min()), int(by_k["k"].max())
    rows.append(Claim(
        paper=PAPER, claim=f"The fixed-size estimators' error grows as K gets small (the blind spot), shown for MLE with n = {n}.",
        quote='This could lead to the "blind spot" problem - when K gets smaller, the estimation of basic estimators '
              "is more inaccurate (see bottom of Fig. 1).",
        source="§4.1; Fig. 1", dataset=every, our_value=_of(holds, cases, "(dataset, model, metric)"),
        paper_value="error largest at small K (MLE, EASE, ml-20m)", verdict=share_verdict(holds, cases),
        reason=FIG1_SCOPE + "states a property of the basic estimators: graded in kind. "
               f"Rule: the relative error of MLE with n = {n} (the estimator of Fig. 1's bottom) at K = {k_min} above "
               f"its error at K = {k_max}, mean over the repeats; an unhedged statement (the dash defines the "
               f"problem), reproduced from 90% of the cases. By dataset: {_by_dataset(shape)}. Only MLE is tested: "
               "this notebook's tables hold the per-K errors of no other fixed-size estimator (BV_MES, BV_MLE, MN_MES "
               f"and MN_MLE only averaged over K = 1..{k_max})."))
    shape_table = table("rank_shape").set_index(["dataset", "model"])
    global_first = shape_table["rank1_of_first"]
    holds, cases = _count(global_first < 0.5)
    rows.append(Claim(
        paper=PAPER, claim=f"A held-out item ranked first among n = {n} sampled items is mostly not ranked first globally.",
        quote="Intuitively, when $r_u = 1$ , it does not mean its global rank $R_u$ is 1",
        source="§4.1", dataset=every, our_value=_of(holds, cases, "(dataset, model) with a share below 50%"),
        paper_value="", verdict=share_verdict(holds, cases),
        reason=FIG1_SCOPE + "states a property of item sampling: graded in kind. "
               f"Rule: of the users at r = 1 with n = {n}, the expected share whose global rank is 1 (table "
               "rank_shape, exact from the global ranks) below 50%, reproduced from 90% of the pairs. Ours: "
               f"{_pct(global_first.min())} to {_pct(global_first.max())}."))
    sizes = table("adaptive_sizes")
    fewer_first = fewer_at_first(sizes)
    holds, cases = _count(fewer_first)
    grid = ", ".join(str(int(v)) for v in sorted(sizes["n_max"].unique()))
    rows.append(Claim(
        paper=PAPER, claim="With more items sampled, fewer users are left at r = 1.",
        quote="with more items sampled, the counts of $r_u = 1$ shall reduce",
        source="§4.1", dataset=every, our_value=_of(holds, cases, "(dataset, model)"), paper_value="",
        verdict=share_verdict(holds, cases, reproduced=1.0),
        reason=FIG1_SCOPE + "states a property of item sampling: graded in kind. "
               f"Rule: the expected share of users still at r = 1 at the terminal size (table adaptive_sizes) falls "
               f"strictly from each n_max of {grid} to the next, in every pair (“shall”: 100%). "
               f"By dataset: {_by_dataset(fewer_first)}. It must: P(r = 1 | R; n) = (1 - θ)^(n - 1) falls with n."))
    front = table("frontier")
    better = improves_with_n_max(front)
    holds, cases = _count(better["holds"])
    rows.append(Claim(
        paper=PAPER, claim="Sampling more items for the users at r = 1 can improve the estimates' accuracy.",
        quote="with more items sampled, the counts of $r_u = 1$ shall reduce, which could further improve the "
              "estimating accuracy",
        source="§4.1", dataset=every, our_value=_of(holds, cases, "(dataset, model, metric)"), paper_value="",
        verdict=can_verdict(holds, cases),
        reason=FIG1_SCOPE + "states a property of item sampling: graded in kind. "
               f"Rule: the adaptive MLE's average relative error over K = 1..{k_max} at the largest n_max of the "
               f"frontier ({int(front['sample_size'].max())}) below that at the smallest "
               f"({int(front.loc[front['sampling'] == 'adaptive', 'sample_size'].min())}); “could”: reproduced by one "
               f"case. It holds in {holds} of {cases}; by dataset: {_by_dataset(better['holds'])}."))
    rows.extend(_granularity_claims(str(blind["scheme"].iloc[0])))
    rows.append(_knee_claim(table("sampling_cost"), shape_table["n_items"]))
    rows.append(_default_share_claim(front, table("sensitivity_sizes"),
                                     shape_table["n_items"].groupby(level="dataset", sort=False).first()))
    return rows


def first_rank_posterior(n_items: int, sample_size: int, scheme: str) -> tuple[float, float, float]:
    """Mean and standard deviation of the global rank R of an item ranked first among ``sample_size``
    sampled items, and P(R ≤ N / (2 n)), under a flat prior on R = 1..N: P(R | r = 1) ∝ P(r = 1 | R),
    the first column of the rank kernel (Krichene & Rendle KDD 2020 eq. 11)."""
    weights = kernel_columns(n_items, sample_size, [1], scheme)[:, 0]
    weights = weights / weights.sum()
    ranks = np.arange(1, n_items + 1)
    mean = float(ranks @ weights)
    return mean, float(np.sqrt(((ranks - mean) ** 2) @ weights)), float(weights[: n_items // (2 * sample_size)].sum())


def _granularity_claims(scheme: str) -> list[Claim]:
    """§4.1's intuition for the blind spot, on the sizes it names (N = 10K, n = 100): the sampling
    model itself, with a prior that says nothing beyond the sampled rank."""
    n_items, n = PAPER_BLIND_SPOT_SIZES
    mean, std, top_half = first_rank_posterior(n_items, n, scheme)
    mean_plus, std_plus, _ = first_rank_posterior(n_items, n + 1, scheme)
    setup = (f"the sampling model ({scheme} kernel), N = {n_items:,}, n = {n} items in the sample set, a flat prior on "
             "the global rank R (what the sampled rank alone says)")
    scope = f"none (N = {n_items:,}, n = {n})"
    around = f"within {AROUND:.0%} of the paper's number (“around”; the paper gives no tolerance)"
    return [
        Claim(paper=PAPER, claim=f"An item ranked first among n = {n} sampled items of N = {n_items:,} has an expected "
                                 f"global rank of about {n_items // n}.",
              quote="Intuitively, when  $r_u = 1$ , it does not mean its global rank  $R_u$  is 1, instead, its "
                    "expected global rank may be around 100 (assuming N = 10K and sample set size n = 100).",
              source="§4.1", dataset=scope, setup=setup, our_value=f"E[R | r = 1] = {mean:.1f}",
              paper_value=f"around {n_items // n}", verdict=_around(mean, n_items / n),
              other_setups=f"n = {n} sampled items besides the target (a sample set of {n + 1}): E[R | r = 1] = "
                           f"{mean_plus:.1f}, {_around(mean_plus, n_items / n)}",
              reason=f"Rule: E[R | r = 1] = Σ_R R P(r = 1 | R) / Σ_R P(r = 1 | R) {around}; the "
                     "sentence speaks of what the sampled rank alone says (“may”), so the prior is flat; a model's own "
                     "distribution of global ranks would give another expectation, not computed here. Closed form without replacement: (N + 1) / (n + 1) = {(n_items + 1) / (n + 1):.1f}."),
        Claim(paper=PAPER, claim=f"With n = {n} sampled items, the sampled rank locates the global rank only to about "
                                 f"1/n = {1 / n:.0%} of the items.",
              quote="And the estimation granularity is only at around 1% (1/n) level.", source="§4.1",
              dataset=scope, setup=setup, our_value=f"sd of R / N given r = 1: {std / n_items:.2%}",
              paper_value=f"{1 / n:.0%}", verdict=_around(std / n_items, 1 / n),
              other_setups=f"a sample set of {n + 1}: {std_plus / n_items:.2%}, {_around(std_plus / n_items, 1 / n)}",
              reason=f"Rule: the standard deviation of R / N given r = 1 {around}. Given r = 1, R lies in the top "
                     f"N/(2n) = {n_items // (2 * n)} with probability {top_half:.0%} only: the sample cannot tell the "
                     "top-50 from the rest of the top 1%, as §1 says."),
    ]


def _around(value: float, paper: float) -> str:
    """“Around”: within :data:`AROUND` of the paper's number."""
    return "reproduced" if abs(value - paper) <= AROUND * paper else "not reproduced"


def _knee_claim(cost: pd.DataFrame, n_items: pd.Series) -> Claim:
    """Fig. 2: C_j rises quickly past 12.4% of the items (EASE on yelp; here on yelp's stand-in)."""
    claim = "The sampling cost C_j rises quickly once n_j passes about 12.4% of the items."
    quote = ("In Fig. 2, we can see that when the sample reaches 12.4% (of total items, around 3200 for *yelp* "
             "dataset) the sampling efficiency will reduce quickly (the average cost $C_j$ increases fast).")
    stand_in = {paper: ours for ours, paper in stand_ins("li2023aaai_adaptive").items()}
    yelp = stand_in.get("yelp")
    if yelp not in n_items.index.get_level_values("dataset"):
        return untestable(PAPER, claim, quote, "§4.3; Fig. 2; eq. 13", f"{yelp} (for yelp), {FIG_MODEL}",
                          f"{yelp}, our stand-in for yelp, was not run.")
    growth = knee(cost)
    testable = growth[growth["testable"]]
    scope = testable.loc[[(yelp, FIG_MODEL)]] if (yelp, FIG_MODEL) in testable.index else testable.iloc[:0]
    if scope.empty:
        return untestable(PAPER, claim, quote, "§4.3; Fig. 2; eq. 13", f"{yelp} (for yelp), {FIG_MODEL}",
                          f"{FIG_MODEL} on {yelp} has no doubling of n_j on one side of {KNEE_FRACTION:.1%} of the items.")
    row = scope.iloc[0]
    verdict = "not reproduced" if not row["faster"] else "reproduced" if row["located"] else "partly"
    return Claim(
        paper=PAPER, claim=claim, quote=quote, source="§4.3; Fig. 2; eq. 13", dataset=f"{yelp} (for yelp), {FIG_MODEL}",
        our_value=f"growth of C_j per doubling {row['growth_before']:.2f} up to {KNEE_FRACTION:.1%}, "
                  f"{row['growth_after']:.2f} past it; largest rise of the growth "
                  + ("at" if row["faster"] and row["located"] else "not at") + f" {KNEE_FRACTION:.1%}",
        paper_value=f"knee at {KNEE_FRACTION:.1%} ({FIG_MODEL}, yelp)", verdict=verdict,
        reason=f"Rule, with no threshold of ours (the paper gives no number for “quickly” and Fig. 2 is not "
               f"transcribed): on the scope of Fig. 2 ({FIG_MODEL} on our stand-in for yelp, {yelp}: "
               f"{int(n_items.xs(yelp, level='dataset').iloc[0])} items; exact expected costs of eq. 13, the capped "
               f"last level left out), reproduced when C_j grows faster per doubling of n_j past {KNEE_FRACTION:.1%} of "
               "the items than before (the median growths) and the largest rise of that growth from one doubling to "
               f"the next is the one into the first doubling past {KNEE_FRACTION:.1%} (a knee there); partly when only "
               "the growth is faster past it (the direction of a knee, not its place); not reproduced otherwise. "
               "Without its rate words the sentence says only that C_j increases, which eq. 13 gives at every level, "
               "so the rate is its claim and the direction alone is partly. Over all our (dataset, model): faster past "
               f"{KNEE_FRACTION:.1%} in {int(testable['faster'].sum())} of {len(testable)}, the largest rise there in "
               f"{int(testable['located'].sum())} of {len(testable)}; medians {testable['growth_before'].median():.2f} "
               f"and {testable['growth_after'].median():.2f} per doubling: C_j grows about in proportion to n_j and "
               "its growth rises gradually, most at the largest n_j. Plotted against levels at equal spacing, such a "
               "C_j rises steeply at the right end of any range of levels; the text does not say how Fig. 2 spaces "
               "them.")


def _default_share_claim(front: pd.DataFrame, grid: pd.DataFrame, n_items: pd.Series) -> Claim:
    """§4.3: an n_max of 10-15% of the items can serve as a default and estimate pretty well."""
    low, high = DEFAULT_SHARE
    claim = f"An n_max of {low:.0%}-{high:.0%} of the items can serve as a default with pretty good accuracy."
    quote = ("Even though different datasets can pick up different thresholds, we found in practice $10\\% \\sim "
             "15\\%$ can serve as a default choice to start and achieve pretty good performance for the estimation "
             "accuracy.")
    shares = (front.loc[front["sampling"] == "adaptive", ["dataset", "sample_size"]].drop_duplicates()
              .assign(share=lambda f: f["sample_size"] / f["dataset"].map(n_items)))
    grid_shares = sorted({n / n_items[d] for d, n in zip(grid["dataset"], grid["n_max"], strict=True)})
    scope = (f"the n_max of the frontier grid, {', '.join(str(int(n)) for n in sorted(set(shares['sample_size'])))}, "
             "are " + "; ".join(f"{d} {_pct(part['share'].min())}-{_pct(part['share'].max())}"
                                for d, part in shares.groupby("dataset", sort=False))
             + f" of the items; those of the sensitivity grid (n_0 x n_max) {_pct(grid_shares[0])}-{_pct(grid_shares[-1])}, "
             f"{'none' if not any(low <= v <= high for v in grid_shares) else 'some'} of them within {low:.0%}-{high:.0%}")
    good = pretty_good_at_default(front, n_items)
    if good.empty:
        return untestable(PAPER, claim, quote, "§4.3", ", ".join(dict.fromkeys(front["dataset"])),
                          f"No n_max of ours is {low:.0%}-{high:.0%} of the items: {scope}.")
    holds, cases = _count(good["holds"])
    at = good.reset_index().drop_duplicates("dataset")
    return Claim(
        paper=PAPER, claim=claim, quote=quote, source="§4.3", dataset=", ".join(at["dataset"]),
        setup=", ".join(f"{r.dataset}: n_max = {int(r.n_max)} ({_pct(r.share, 3)} of the items) against "
                        f"{int(r.largest_n_max)}" for r in at.itertuples()),
        our_value=_of(holds, cases, "(dataset, model, metric) as accurate as the largest n_max, up to chance"),
        paper_value=f"{low:.0%}-{high:.0%} of the items", verdict=can_verdict(holds, cases),
        reason=f"Rule: “pretty good” read as about as good as sampling further: the adaptive MLE's average relative "
               f"error over K (Recall and NDCG, table frontier) at the n_max within {low:.0%}-{high:.0%} of the items at "
               "most its error at the largest n_max of the grid plus two standard errors of their difference over the "
               "repeats; “can”: reproduced by one case. The sentence is about datasets in general, so every dataset "
               f"with an n_max in the band is in scope: {scope}. It holds in {holds} of {cases} "
               f"({_by_dataset(good['holds'])}); errors at the default {_pct(good['default'].min())}-"
               f"{_pct(good['default'].max())}, at the largest n_max {_pct(good['largest'].min())}-"
               f"{_pct(good['largest'].max())}. Our check of the premise at K = 1 under other n_0 and n_max is apart.")


def _paper_n() -> dict[str, int]:
    """The fixed n of the paper's Tables 7 and 11 per paper dataset."""
    paper = paper_table("li2023aaai_adaptive")
    return paper[paper["method"] != "adaptive_mle"].groupby("paper_dataset", sort=False)["sample_size"].first().to_dict()


def _setup(fva: pd.DataFrame, sizes: pd.DataFrame, datasets: list[str]) -> str:
    """The setup of the comparisons on the stand-ins: their fixed n (and the paper's where it
    differs), n_0 and n_max."""
    paper_n, mapping = _paper_n(), stand_ins("li2023aaai_adaptive")
    fixed = fva[fva["method"] != "adaptive_mle"].groupby("dataset", sort=False)["mean_sample_size"].first()
    n_max = sizes.groupby("dataset", sort=False)["n_max"].max()
    parts = [f"{d} {int(fixed[d])}" + ("" if fixed[d] == paper_n[mapping[d]] else f" (the paper's {paper_n[mapping[d]]})")
             for d in datasets]
    return (f"fixed n: {', '.join(parts)}; adaptive n_0 = {int(sizes['n0'].iloc[0])}, n_max = "
            + ", ".join(f"{int(n_max[d])} ({d})" for d in datasets))


def _comparison_claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """§5 (Q2, Q3) and App. I: the adaptive MLE against the fixed-size estimators on the stand-ins."""
    fva, sizes, win = table("fixed_vs_adaptive"), table("adaptive_sizes"), table("winners")
    mapping = stand_ins("li2023aaai_adaptive")
    stand = [d for d in mapping if d in set(fva["dataset"])]
    if not stand:
        return [Claim(paper=PAPER, claim="Adaptive sampling against the fixed-size estimators on the paper's datasets.",
                      quote="We observe that adaptive sampling uses much less sample size", source="§5",
                      dataset="none", our_value="", paper_value="", verdict="not testable here",
                      reason="None of our stand-ins for pinterest-20 and yelp is in this run.")]
    named = ", ".join(f"{d} (for {mapping[d]})" for d in stand)
    paper_n = _paper_n()
    fixed_n = {d: paper_n[mapping[d]] for d in stand}
    setup = _setup(fva, sizes, stand)
    ours, theirs = _within(most_accurate(fva), stand), most_accurate(_paper_frame())
    n_items = table("rank_shape").groupby("dataset", sort=False)["n_items"].first()
    paper_items = paper_table("li2020kdd_datasets").set_index("paper_dataset")["items"]
    n_max = sizes.groupby("dataset", sort=False)["n_max"].max()
    paper_n_max = int(paper_table("li2023aaai_adaptive").query("method == 'adaptive_mle'")["sample_size"].iloc[0])
    rows = []

    pairs = ours.drop_duplicates(["dataset", "model"]).set_index(["dataset", "model"])["adaptive_items"]
    paper_pairs = theirs[theirs["dataset"].isin(list(mapping.values()))].drop_duplicates(
        ["dataset", "model"]).set_index(["dataset", "model"])["adaptive_items"]
    fewer, cases = _count(fewer_items(ours, fixed_n))
    own_fewer, _ = _count(fewer_items(ours))
    typical, _ = _count(pairs <= TYPICAL_ITEMS)
    paper_fewer = _count(paper_pairs < paper_pairs.index.get_level_values("dataset").map(paper_n))
    example = paper_pairs.get(("pinterest-20", FIG_MODEL))
    quote = ("We observe that adaptive sampling uses much less sample size (typically 200-300 vs 500 on pinterest-20, "
             "yelp datasets and 700-800 vs 1000 on ml-20m dataset).")
    typically = re.search(r"typically (\d+-\d+)", quote).group(1)
    rows.append(Claim(
        paper=PAPER, claim=f"Adaptive sampling uses much fewer items per user than the fixed n (typically {typically} "
                           f"vs {paper_n['pinterest-20']} on pinterest-20 and yelp).",
        quote=quote,
        source="§5; Table 2; Table 7", dataset=named, setup=setup,
        our_value=_of(fewer, cases, "(dataset, model) fewer items per user than the paper's n ("
                      + ", ".join(f"{d} {fixed_n[d]}" for d in stand) + ")"),
        paper_value=_of(*paper_fewer, "(dataset, model) fewer than its n") + f"; typically {typically} items",
        verdict=most_verdict(fewer, cases),
        other_setups=f"the paper's “{typically}” as a bound ({TYPICAL_ITEMS}) on our stand-ins: "
                     f"{most_verdict(typical, cases)} ({typical} of {cases}; the paper's own pairs: "
                     f"{_of(*_count(paper_pairs <= TYPICAL_ITEMS), 'at most ' + str(TYPICAL_ITEMS))}); against our "
                     f"stand-ins' own fixed n: {most_verdict(own_fewer, cases)} ({own_fewer} of {cases})",
        reason="Rule (rubric rule 2, as for the sentences on the paper's own numbers): graded in kind on the stand-ins, "
               "the adaptive MLE's average items per user below the fixed n the paper compares with ("
               + ", ".join(f"{mapping[d]} {paper_n[mapping[d]]}" for d in stand)
               + ", not our yelp-diffnet's own fixed n where it differs: that would make 'fewer' easier) in more than "
               f"half of the stand-in pairs (“typically”: more than half, partly from a quarter). The paper's “{typically}” "
               "is its number for pinterest-20 and yelp themselves, shown beside and not graded on our stand-ins (in "
               "other setups read as a bound). “Much less” is an intensifier the paper backs with no test: the "
               "direction decides. Ours "
               + ", ".join(f"{d} {pairs.xs(d).min():.0f}-{pairs.xs(d).max():.0f}" for d in stand)
               + " items per user"
               + (f"; the paper's example, {FIG_MODEL} on pinterest-20: {example:.2f}, ours on {stand[0]}: "
                  f"{pairs[(stand[0], FIG_MODEL)]:.1f}" if (stand[0], FIG_MODEL) in pairs.index
                  and mapping[stand[0]] == "pinterest-20" else "")
               + ". n_max as a share of the items: ours "
               + ", ".join(f"{d} {_pct(n_max[d] / n_items[d])}" for d in stand) + "; the paper's "
               + ", ".join(f"{mapping[d]} {_pct(paper_n_max / paper_items[mapping[d]])}" for d in stand
                           if mapping[d] in paper_items.index)
               + ". ml-20m (700-800 vs 1000) has no stand-in; ml-1m and citeulike-a are no dataset of the paper "
                 "(see the checks)."))

    ndcg, paper_ndcg = ours[ours["metric"] == "ndcg"], theirs[theirs["metric"] == "ndcg"]
    better = more_accurate(ndcg)
    ratio = ndcg["error_ratio"]
    k_max = int(table("relative_error_by_k")["k"].max())
    rows.append(_table7_row(
        better, more_accurate(paper_ndcg), named, setup,
        claim=f"The adaptive MLE's NDCG@K error over small K (K <= {k_max}) is smaller than that of the best fixed-size "
              "estimator.",
        quote="Particularly, the relative error of the adaptive sampling is significantly smaller than that of the "
              "basic sampling methods. On the first (*pinterest* - 20) and third (ml - 20m) datasets, the relative "
              "errors have reduced to less than 2%. In other words, the adaptive method has been much more effective "
              "(in terms of accuracy) and efficient (in terms of sample size). This also confirms the benefits of "
              "addressing the \"blind spot\" issue, which provides higher resolution to recover global K metrics for "
              "small K ( $K \\leq 50$ here).",
        reason=f"Rule: the average relative error of NDCG@K over K = 1..{k_max} (the paper's “small K”; Table 2's "
               "metric) of the adaptive MLE below that of the best of BV_MES, BV_MLE, MN_MES and MN_MLE at the fixed "
               "n (the paper's comparison), mean over the repeats, in 90% of the stand-in pairs (partly from 50%). "
               f"By dataset: {_by_dataset(better)}; error ratio to the best fixed-size estimator "
               f"{ratio.min():.2f}-{ratio.max():.2f} (paper: {paper_ndcg['error_ratio'].min():.2f}-"
               f"{paper_ndcg['error_ratio'].max():.2f}). The direction is graded; “significantly” is not tested: the "
               "paper backs it with no test and gives no size for it here. The comparison at K = 1 with MLE at "
               "n = 100 is one of our checks."))
    both = more_accurate_with_fewer_items(ndcg, fixed_n)
    rows.append(_table7_row(
        both, more_accurate_with_fewer_items(paper_ndcg), named, setup,
        claim="Adaptive sampling is more accurate (NDCG) with fewer items per user than the fixed-size estimators "
              "(effective and efficient).",
        quote="In other words, the adaptive method has been much more effective (in terms of accuracy) and efficient "
              "(in terms of sample size).",
        reason=f"Rule: more accurate than the best fixed-size estimator (NDCG@K, K = 1..{k_max}) and fewer items per "
               "user than the paper's n ("
               + ", ".join(f"{d} {fixed_n[d]}" for d in stand)
               + f"), in 90% of the stand-in pairs (partly from 50%). By dataset: {_by_dataset(both)}. The direction "
                 "is graded; “much” is not tested: the paper backs it with no test (the size of the saving in items is "
                 "the row on “typically 200-300 vs 500”). §4.1 says the same of Table 2 (“small average adaptive "
                 "sample size ... is able to achieve significantly better performance”)."))

    pinterest = [d for d in stand if mapping[d] == "pinterest-20"]
    paper_std = _paper_frame().query("method == 'adaptive_mle' and metric == 'ndcg'").set_index(
        ["dataset", "model"])["std"]
    if pinterest:
        errors = ndcg[ndcg["dataset"] == pinterest[0]].set_index("model")["adaptive_error"]
        spread = paper_std.xs("pinterest-20").reindex(errors.index)
        below, cases = _count(errors < ERROR_BOUND)
        near = int((errors < ERROR_BOUND + spread).sum())
        n_users = table("rank_shape").groupby("dataset")["n_users"].first()
        paper_errors = paper_ndcg[paper_ndcg["dataset"] == "pinterest-20"]["adaptive_error"]
        rows.append(Claim(
            paper=PAPER, claim=f"The adaptive MLE's NDCG@K error on pinterest-20 is below {_pct(ERROR_BOUND)}.",
            quote="On the first (*pinterest* - 20) and third (ml - 20m) datasets, the relative errors have reduced to "
                  "less than 2%.",
            source="§5; Table 2; Table 7", dataset=f"{pinterest[0]} (for pinterest-20)",
            setup=_setup(fva, sizes, pinterest),
            our_value=f"{_pct(errors.min(), 3)}-{_pct(errors.max(), 3)}; {_of(below, cases, 'models')} below "
                      f"{_pct(ERROR_BOUND)}",
            paper_value=f"{_pct(paper_errors.min(), 3)}-{_pct(paper_errors.max(), 3)}", verdict="not testable here",
            reason=f"Not testable here: the bound is a value for pinterest-20 itself, and a stand-in is graded in kind, "
                   f"never on the paper's numbers for its own dataset (rule 2 of docs/verdicts.md): {pinterest[0]} "
                   f"holds {int(n_users[pinterest[0]]):,} of pinterest-20's users, not their complete histories, and our "
                   "models are our own fits; an average relative error depends on both. ml-20m has no stand-in. "
                   f"Ours beside: the adaptive MLE's average NDCG@K error (Table 2's metric) is below {_pct(ERROR_BOUND)} "
                   f"for {below} of {cases} models, and below it plus the standard deviation over the repeats that the "
                   f"paper prints for the same model ({_pct(spread.min(), 2)}-{_pct(spread.max(), 2)}) for {near} of "
                   f"{cases}; the direction (the adaptive MLE more accurate than the fixed-size estimators) is graded "
                   "in the row above."))

    recall, paper_recall = ours[ours["metric"] == "recall"], theirs[theirs["metric"] == "recall"]
    paper_frame = _paper_frame().query("metric == 'recall'").set_index(["dataset", "model", "method"])["mean"]
    example = paper_frame[("pinterest-20", FIG_MODEL, "adaptive_mle")] / paper_frame[("pinterest-20", FIG_MODEL, "mn_mes")]
    mn_mes = fva[(fva["metric"] == "recall") & (fva["method"] == "mn_mes")].set_index(["dataset", "model"])["mean"]
    adaptive = recall.set_index(["dataset", "model"])["adaptive_error"]
    much = (adaptive <= example * mn_mes.reindex(adaptive.index)).rename("holds")
    holds, cases = _count(much)
    best = more_accurate(recall)
    rows.append(Claim(
        paper=PAPER, claim="The adaptive MLE can be much more accurate (Recall) than the fixed-size estimators.",
        quote="Nevertheless, the adaptive based estimator can even achive much better performance, say 1.69% relative "
              "error compared to the 2.78% from MN\\_MES estimator.",
        source="App. I.5; Table 11", dataset=named, setup=setup,
        our_value=_of(holds, cases, f"(dataset, model) at most {example:.2f} times MN_MES's error"),
        paper_value=f"{_pct(paper_frame[('pinterest-20', FIG_MODEL, 'adaptive_mle')], 3)} against "
                    f"{_pct(paper_frame[('pinterest-20', FIG_MODEL, 'mn_mes')], 3)} ({FIG_MODEL}, pinterest-20)",
        verdict=can_verdict(holds, cases),
        reason=f"Rule: the adaptive MLE's average Recall@K error at most {example:.2f} times MN_MES's (the ratio of the "
               f"paper's example of “much better”), in one stand-in pair (“can”). It holds in {holds} of {cases} "
               f"({_by_dataset(much)}); below the best fixed-size estimator's error in {int(best.sum())} of "
               f"{best.size}"
               + (f"; the paper's example pair, {FIG_MODEL} on {stand[0]}: {_pct(adaptive[(stand[0], FIG_MODEL)], 3)} "
                  f"against MN_MES's {_pct(mn_mes[(stand[0], FIG_MODEL)], 3)}" if (stand[0], FIG_MODEL) in adaptive.index
                  and mapping[stand[0]] == "pinterest-20" else "") + "."))

    paper_share = more_accurate(paper_recall).mean()
    holds, cases = _count(best)
    literal = share_verdict(holds, cases, reproduced=1.0)
    rows.append(Claim(
        paper=PAPER, claim="The adaptive MLE is more accurate (Recall) than the fixed-size estimators, as consistently as "
                           "in the paper's Table 11.",
        quote="All these results consistently support the superiority of the adaptive sampling strategy and the "
              "adaptive estimator.",
        source="App. I.5; Table 11", dataset=named, setup=f"“consistently” read as the paper's own Table 11 shows it; {setup}",
        our_value=_of(holds, cases, "(dataset, model), Recall"),
        paper_value=_of(*_count(more_accurate(paper_recall)), "(dataset, model), Table 11"),
        verdict=share_verdict(holds, cases, reproduced=paper_share, partly=min(0.5, paper_share)),
        other_setups=f"“consistently” read as every case: {literal}",
        reason="The sentence contradicts its own Table 11: there the adaptive MLE is less accurate than the best "
               f"fixed-size estimator in {int((~more_accurate(paper_recall)).sum())} of {len(paper_recall)} (dataset, "
               f"model). Rule: the share of stand-in pairs where the adaptive MLE's average Recall@K error is below the "
               f"best fixed-size estimator's at least the paper's own share, {_pct(paper_share)} (partly from 50%); "
               f"read as every case, {literal}. By dataset: {_by_dataset(best)}."))

    rows.append(_winners_claim(win, pairs, stand, named, setup, fixed_n))
    return rows


def _table7_row(flags: pd.Series, paper_flags: pd.Series, named: str, setup: str, **fields) -> Claim:
    """A claim of §5 on Tables 2 and 7 (NDCG), one case per stand-in (dataset, model) where ``flags``
    holds, unhedged (90% / 50%), beside the same count on the paper's Table 7 (``paper_flags``)."""
    holds, cases = _count(flags)
    return Claim(paper=PAPER, source="§5; Table 2; Table 7", dataset=named, setup=setup,
                 our_value=_of(holds, cases, "(dataset, model), NDCG"),
                 paper_value=_of(*_count(paper_flags), "(dataset, model), Table 7"),
                 verdict=share_verdict(holds, cases), **fields)


def _winners_claim(win: pd.DataFrame, pairs: pd.Series, stand: list[str], named: str, setup: str,
                   fixed_n: dict[str, int]) -> Claim:
    """§5 Q3 (Tables 3, 8): competitive or better numbers of correct winners with fewer items."""
    found = _within(competitive_winners(win), stand)
    cheap = {d: bool(pairs.xs(d).max() < fixed_n[d]) for d in stand}
    flags = found["holds"] & found.index.get_level_values(0).map(cheap).to_numpy(bool)
    holds, cases = _count(flags)
    paper_wins = paper_table("li2023aaai_winners").drop(columns="dataset").rename(
        columns={"paper_dataset": "dataset", "paper_correct": "correct"})
    paper_found = competitive_winners(paper_wins, PAPER_REPEATS)
    return Claim(
        paper=PAPER, claim="The adaptive MLE finds the best model competitively or better than the fixed-size "
                           "estimators, with fewer items per user.",
        quote="From the Table 3, We observe that new proposed adaptive estimators could achieve competitive or even "
              "better results to the baselines with much less average sample cost.",
        source="§5; Table 3; Table 8", dataset=named, setup=setup,
        our_value=_of(holds, cases, "(dataset, metric, K) competitive or better"),
        paper_value=_of(*_count(paper_found["holds"]), "(dataset, metric, K), Table 8"),
        verdict=can_verdict(holds, cases),
        reason="Rule: per (dataset, metric, K), the adaptive MLE's share of repeats that find the best model at least "
               "the best fixed-size estimator's less two standard errors of their difference (“competitive”), with "
               "fewer items per user than the paper's n on that dataset (“much less” is not tested: the direction "
               "decides); “could”: reproduced by one case. It holds in "
               f"{holds} of {cases} ({_by_dataset(pd.Series(flags, index=found.index))}); at least as often as the "
               f"best fixed-size estimator in {int(found['better'].sum())} of {len(found)} (paper: "
               f"{int(paper_found['better'].sum())} of {len(paper_found)}). Where the two best models are far apart, "
               "every method finds the winner in every repeat.")


def _checks(table: Callable[[str], pd.DataFrame]) -> list[Check]:
    """Our checks of the main runs: K = 1 against MLE at n = 100, our datasets that are none of the
    paper's, and the size of our errors against the paper's Tables 7 and 11."""
    rows = []
    by_k, fva = table("relative_error_by_k"), table("fixed_vs_adaptive")
    every = ", ".join(dict.fromkeys(by_k["dataset"]))
    n = int(by_k.loc[by_k["sampling"] == "fixed", "sample_size"].iloc[0])
    premise = premise_at_small_k(by_k)
    holds, cases = _count(premise["holds"])
    gap = premise["adaptive"] / premise["fixed"]
    worst = gap.idxmax()
    rows.append(Check(
        paper=PAPER, claim=f"At K = 1 the adaptive MLE is more accurate than the MLE with a fixed sample of n = {n} "
                           "(Fig. 1's estimator and n).",
        quote='we propose a new adaptive sampling method that aims to deal with the "blind spot" problem',
        source="Abstract; §4.1; Fig. 1", dataset=every, our_value=_of(holds, cases, "(dataset, model) at K = 1"),
        verdict=share_verdict(holds, cases),
        reason="Our extension: the paper compares adaptive sampling with the fixed-size estimators at n = 500 over "
               f"K = 1..50 (the claims above), not at K = 1 with MLE at n = {n}. Rule: relative error at K = 1 (Recall@1 "
               f"= NDCG@1, counted once per pair), adaptive MLE below MLE with n = {n}, mean over the repeats, in 90% of "
               f"the pairs. By dataset: {_by_dataset(premise['holds'])}. Largest gap: {'/'.join(worst)}, "
               f"{_pct(premise.loc[worst, 'adaptive'])} against {_pct(premise.loc[worst, 'fixed'])}. The exact Recall@1 "
               "of our models is small (table rank_shape), so a few users decide the error at K = 1; the sensitivity "
               "checks test EM steps, sizes and the authors' convention for n."))
    mapping = stand_ins("li2023aaai_adaptive")
    other = [d for d in dict.fromkeys(fva["dataset"]) if d not in mapping]
    if other:
        ours = _within(most_accurate(fva), other)
        both = more_accurate_with_fewer_items(ours)
        holds, cases = _count(both)
        n_items = table("rank_shape").groupby("dataset", sort=False)["n_items"].first()
        n_max = table("adaptive_sizes").groupby("dataset", sort=False)["n_max"].max()
        spent = ours.drop_duplicates(["dataset", "model"]).groupby("dataset", sort=False)["adaptive_items"]
        rows.append(Check(
            paper=PAPER, claim="On our datasets that are none of the paper's, adaptive sampling is more accurate than "
                               "the best fixed-size estimator with fewer items per user.",
            quote="In other words, the adaptive method has been much more effective (in terms of accuracy) and "
                  "efficient (in terms of sample size).",
            source="§5; Table 7; Table 11", dataset=", ".join(other),
            our_value=_of(holds, cases, "(dataset, model, metric)"), verdict=share_verdict(holds, cases),
            reason="Our extension to datasets the paper does not use. Rule: average relative error over K = 1..50 "
                   "below the best fixed-size estimator's and fewer items per user than its n, Recall and NDCG, in 90% "
                   f"of the cases. By dataset: {_by_dataset(both)}; more accurate in "
                   f"{int(more_accurate(ours).sum())} of {cases}, fewer items in "
                   f"{int(fewer_items(ours).sum())} of {len(fewer_items(ours))} pairs; items per user "
                   + ", ".join(f"{d} {spent.min()[d]:.0f}-{spent.max()[d]:.0f}" for d in other)
                   + "; n_max as a share of the items "
                   + ", ".join(f"{d} {_pct(n_max[d] / n_items[d])}" for d in other)
                   + " (the paper's default 10%-15%): a user still at r = 1 doubles its set up to n_max, however large "
                     "a share of the catalogue that is."))
    size = error_as_paper(fva)
    if len(size):
        holds, cases = _count(size["holds"])
        rows.append(Check(
            paper=PAPER, claim="The adaptive MLE's average relative errors on the stand-ins are those of the paper's "
                               "Tables 7 and 11 within a factor 2.",
            quote="The average relative errors between estimated NDCG@K (K from 1 to 50) and the true ones.",
            source="Table 7; Table 11", dataset=", ".join(dict.fromkeys(size["dataset"])),
            our_value=f"{_pct(size['mean'].min())}-{_pct(size['mean'].max())}",
            paper_value=f"{_pct(size['paper_percent'].min() / 100)}-{_pct(size['paper_percent'].max() / 100)}",
            verdict=share_verdict(holds, cases),
            reason=f"Our check of size: our error within a factor {ERROR_FACTOR:g} of the paper's, per (dataset, model, "
                   f"metric), in 90% of the cases: {holds} of {cases}. Our stand-ins are other versions of the paper's "
                   "datasets and our models are our own, so the errors can only agree in order of magnitude; the "
                   "paper's text claims a size only for pinterest-20 (the row on 2%)."))
    return rows


def _sensitivity_checks(table: Callable[[str], pd.DataFrame]) -> list[Check]:
    """The premise at K = 1 under other EM steps, sizes n_0 and n_max, and the authors' convention for n."""
    em = table("sensitivity_em_steps")
    n = int(table("relative_error_by_k").query("sampling == 'fixed'")["sample_size"].iloc[0])
    pairs = em[["dataset", "model"]].drop_duplicates()
    scope = f"{len(pairs)} pairs, {int(em['repeats'].min())} repeats"
    rows = []
    steps = sensitivity_premise(em, n)
    by_steps = steps["holds"].groupby(level="em_steps", sort=False).agg(["sum", "size"])
    holds, cases = _count(steps["holds"])
    rows.append(Check(
        paper=PAPER, claim="At K = 1 the adaptive MLE beats MLE with n = 100 whatever the number of EM steps.",
        quote="When the process converges, we obtain $\\Pi^*$ and use it to estimate P",
        source="§4.2; App. G", dataset=scope, our_value=_of(holds, cases, "(dataset, model, EM steps) at K = 1"),
        verdict=share_verdict(holds, cases),
        reason=f"Our check: the paper runs EM until it converges, the authors' code 50 steps (adaptive) and 100 "
               f"(fixed), our tables 100. Rule: relative error at K = 1 of the adaptive MLE below MLE's with n = {n}, "
               "both with the same EM steps from the uniform start, mean over the repeats, in 90% of the cases. By EM "
               "steps: " + ", ".join(f"{s} {int(r['sum'])}/{int(r['size'])}" for s, r in by_steps.iterrows()) + "."))
    sizes = sensitivity_premise(em, n, table("sensitivity_sizes"), ("n0", "n_max"), "100")
    by_size = sizes["holds"].groupby(level=["n0", "n_max"], sort=False).agg(["sum", "size"])
    holds, cases = _count(sizes["holds"])
    rows.append(Check(
        paper=PAPER, claim="At K = 1 the adaptive MLE beats MLE with n = 100 for other initial and terminal sizes n_0 "
                           "and n_max.",
        quote="Even though different datasets can pick up different thresholds",
        source="Algorithm 1; §4.3", dataset=scope, our_value=_of(holds, cases, "(dataset, model, n_0, n_max) at K = 1"),
        verdict=share_verdict(holds, cases),
        reason=f"Our check of Algorithm 1's inputs. Rule: relative error at K = 1 of the adaptive MLE (100 EM steps) "
               f"below MLE's with n = {n} (100 steps), in 90% of the cases. By (n_0, n_max): "
               + ", ".join(f"({a}, {b}) {int(r['sum'])}/{int(r['size'])}" for (a, b), r in by_size.iterrows()) + "."))
    conv = table("sensitivity_convention")
    conv = conv.assign(em_steps=conv["em_steps"].astype(str))
    convention = sensitivity_premise(em, n, conv, ("convention",), "100")
    authors = convention.xs(("negatives_as_size", "50"), level=["convention", "em_steps"])
    holds, cases = _count(authors["holds"])
    metric = conv["metric"].iloc[0]
    sel = conv[conv["metric"] == metric].set_index(["dataset", "model", "convention", "em_steps"])["k1_mean"]
    shift = (sel.xs("negatives_as_size", level="convention") / sel.xs("negatives", level="convention") - 1).abs()
    rows.append(Check(
        paper=PAPER, claim="At K = 1 the adaptive MLE beats MLE with n = 100 as the authors' code runs it (n stored as "
                           "the number of sampled items and read as the set size, 50 EM steps).",
        source="eq. 12; Algorithm 1", dataset=scope, our_value=_of(holds, cases, "(dataset, model) at K = 1"),
        verdict=share_verdict(holds, cases),
        reason=f"Our check of the authors' code. Rule: relative error at K = 1 of that adaptive MLE below MLE's with "
               f"n = {n} (100 EM steps), in 90% of the pairs. Reading n one too small changes the error at K = 1 by at "
               f"most {_pct(shift.max())} of itself (over pairs and EM steps)"
               + (": the convention does not explain the gap." if shift.max() < 0.1 else ".")))
    return rows
