"""Verdicts of notebook 05 (itemsampling.studies.verdicts.adaptive_sampling): each rule on small
synthetic tables whose verdict is known, each claim's verdict turning when the committed tables
under it change, and the rows of the committed tables against the paper's text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.studies.tables import find_root, read_table
from itemsampling.studies.verdicts import (
    VERDICTS,
    Check,
    Claim,
    can_verdict,
    most_verdict,
    paper_text,
    papers_folder,
    quote_found,
    source_found,
)
from itemsampling.studies.verdicts import adaptive_sampling as va

from .conftest import REPO
from .verdict_helpers import reader, verdict_of

NOTEBOOK = "05_adaptive_sampling"
STAND_INS = ("pinterest-subset", "yelp-diffnet")


def _by_k(errors: dict) -> pd.DataFrame:
    """relative_error_by_k rows from {(dataset, model, sampling, metric): [error at K = 1, 2, 3]}."""
    rows = [{"dataset": d, "model": m, "sampling": s, "metric": x, "k": k + 1, "mean": e}
            for (d, m, s, x), values in errors.items() for k, e in enumerate(values)]
    return pd.DataFrame(rows)


def test_hedged_verdicts_follow_the_words():
    assert most_verdict(3, 5) == "reproduced" and most_verdict(2, 4) == "partly"  # "most": more than half
    assert most_verdict(1, 4) == "partly" and most_verdict(0, 4) == "not reproduced"
    assert can_verdict(1, 20) == "reproduced" and can_verdict(0, 20) == "not reproduced"
    assert can_verdict(0, 0) == "not testable here"


def test_blind_spot_shape_and_premise_at_small_k():
    by_k = _by_k({("a", "m1", "fixed", "recall"): [0.5, 0.2, 0.1], ("a", "m1", "adaptive", "recall"): [0.3, 0.2, 0.1],
                  ("a", "m1", "fixed", "ndcg"): [0.5, 0.6, 0.7], ("a", "m1", "adaptive", "ndcg"): [0.3, 0.1, 0.1],
                  ("a", "m2", "fixed", "recall"): [0.2, 0.1, 0.1], ("a", "m2", "adaptive", "recall"): [0.4, 0.1, 0.1],
                  ("a", "m2", "fixed", "ndcg"): [0.2, 0.1, 0.1], ("a", "m2", "adaptive", "ndcg"): [0.4, 0.1, 0.1]})
    shape = va.blind_spot_shape(by_k)
    assert shape[("a", "m1", "recall")] and not shape[("a", "m1", "ndcg")] and shape[("a", "m2", "ndcg")]
    premise = va.premise_at_small_k(by_k)
    assert len(premise) == 2  # K = 1 counted once per pair, not once per metric
    assert premise.loc[("a", "m1"), "holds"] and not premise.loc[("a", "m2"), "holds"]
    assert premise.loc[("a", "m2"), "adaptive"] == pytest.approx(0.4)


def test_first_is_mode_fewer_at_first_and_improves_with_n_max():
    blind = pd.DataFrame({"dataset": "a", "model": ["m1"] * 3 + ["m2"] * 3, "sampled_rank": [1, 2, 3] * 2,
                          "probability": [0.4, 0.35, 0.25, 0.3, 0.4, 0.3]})
    assert list(va.first_is_mode(blind)) == [True, False]
    sizes = pd.DataFrame({"dataset": "a", "model": ["m1"] * 3 + ["m2"] * 3, "n_max": [800, 200, 400] * 2,
                          "first_at_ceiling": [0.1, 0.3, 0.2, 0.1, 0.3, 0.3]})
    assert list(va.fewer_at_first(sizes)) == [True, False]  # sorted by n_max; a flat step is no fall
    front = pd.DataFrame({"dataset": "a", "model": "m", "metric": ["recall"] * 3 + ["ndcg"] * 3,
                          "sampling": "adaptive", "sample_size": [3200, 200, 800] * 2,
                          "mean": [0.1, 0.3, 0.5, 0.4, 0.3, 0.1]})
    better = va.improves_with_n_max(front)
    assert list(better["holds"]) == [True, False] and better["smallest"].tolist() == [0.3, 0.3]


def _cost(costs, n0=100, n_items=3200.0) -> pd.DataFrame:
    n = n0 * 2 ** np.arange(len(costs))
    return pd.DataFrame({"dataset": "a", "model": "m", "level": np.arange(len(costs)), "sample_size": n,
                         "cost": costs, "fraction_of_items": n / n_items})


def test_knee_needs_a_faster_growth_past_the_fraction():
    # fractions 3.1%, 6.2%, 12.5%, 25%, 50%: doublings ending at <= 12.4% grow by 2, past it by 2 or by 8
    steady = va.knee(_cost([1.0, 2.0, 4.0, 8.0, 16.0]))
    assert steady.loc[("a", "m"), "testable"] and not steady.loc[("a", "m"), "holds"]
    assert steady.loc[("a", "m"), "growth_after"] == pytest.approx(2.0)
    sharp = va.knee(_cost([1.0, 2.0, 4.0, 8.0, 64.0]))  # growth after: median of 2 (at 12.5%) and 8... (25%, 50%)
    assert sharp.loc[("a", "m"), "growth_before"] == pytest.approx(2.0)
    sharp = va.knee(_cost([1.0, 2.0, 4.0, 32.0, 256.0]))
    assert sharp.loc[("a", "m"), "holds"] and sharp.loc[("a", "m"), "growth_after"] == pytest.approx(8.0)
    # a capped last level (n_j < 2 n_{j-1}) is no doubling and is left out
    capped = _cost([1.0, 2.0, 4.0, 8.0, 16.0])
    capped = pd.concat([capped, capped.tail(1).assign(level=5, sample_size=2000, cost=1e6)], ignore_index=True)
    assert not va.knee(capped).loc[("a", "m"), "holds"]
    # only one side of 12.4%: not testable
    short = va.knee(_cost([1.0, 2.0], n_items=1e6))
    assert not short.loc[("a", "m"), "testable"] and not short.loc[("a", "m"), "holds"]


def _accurate(rows) -> pd.DataFrame:
    """most_accurate rows from (dataset, model, metric, adaptive error, adaptive items, best fixed error, fixed n)."""
    frame = pd.DataFrame(rows, columns=["dataset", "model", "metric", "adaptive_error", "adaptive_items",
                                        "best_fixed_error", "fixed_items"])
    return frame.assign(adaptive_best=frame["adaptive_error"] < frame["best_fixed_error"])


def test_fewer_items_and_more_accurate_count_what_they_say():
    acc = _accurate([("a", "m1", "recall", 0.1, 300.0, 0.2, 500), ("a", "m1", "ndcg", 0.3, 300.0, 0.2, 500),
                     ("a", "m2", "recall", 0.1, 600.0, 0.2, 500), ("a", "m2", "ndcg", 0.1, 600.0, 0.2, 500)])
    fewer = va.fewer_items(acc)
    assert list(fewer) == [True, False] and len(fewer) == 2  # one case per pair
    assert list(va.fewer_items(acc, {"a": 1000})) == [True, True]  # against another n
    assert list(va.more_accurate(acc)) == [True, False, True, True]
    assert list(va.more_accurate_with_fewer_items(acc)) == [True, False, False, False]
    assert list(va.more_accurate_with_fewer_items(acc, {"a": 250})) == [False] * 4


def test_competitive_winners_allow_two_standard_errors():
    win = pd.DataFrame({"dataset": "a", "metric": "recall", "k": [10] * 3 + [20] * 3 + [50] * 3,
                        "method": ["bv_mes", "mn_mes", "adaptive_mle"] * 3,
                        "correct": [50, 80, 80, 90, 60, 70, 100, 99, 94]})
    found = va.competitive_winners(win, repeats=100)
    assert list(found["better"]) == [True, False, False]
    # 70 vs 90: margin 2 sqrt(.21/100 + .09/100) = 0.11 < 0.2; 94 vs 100: margin 0.047 < 0.06
    assert list(found["holds"]) == [True, False, False]
    close = win.assign(correct=[50, 80, 80, 90, 60, 80, 100, 99, 97])
    assert list(va.competitive_winners(close, repeats=100)["holds"]) == [True, True, True]


def _em(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["dataset", "model", "sampling", "sample_size", "em_steps", "metric", "k1_mean"])


def test_sensitivity_premise_pairs_settings_with_the_right_fixed_run():
    em = _em([("a", "m", "fixed", 100, "50", "recall", 0.2), ("a", "m", "fixed", 100, "100", "recall", 0.4),
              ("a", "m", "fixed", 500, "100", "recall", 0.01),
              ("a", "m", "adaptive", 3200, "50", "recall", 0.3), ("a", "m", "adaptive", 3200, "100", "recall", 0.3),
              ("a", "m", "adaptive", 3200, "50", "ndcg", 0.0)])
    same = va.sensitivity_premise(em, 100)
    assert not same.loc[("a", "m", "50"), "holds"] and same.loc[("a", "m", "100"), "holds"]
    assert len(same) == 2  # the first metric only
    sizes = pd.DataFrame({"dataset": "a", "model": "m", "n0": [50, 200], "n_max": 800, "em_steps": 100,  # as read back
                          "metric": "recall", "k1_mean": [0.5, 0.1]})
    grid = va.sensitivity_premise(em, 100, sizes, ("n0", "n_max"), "100")
    assert list(grid["fixed"]) == [0.4, 0.4] and list(grid["holds"]) == [False, True]


# ----------------------------------------------------------------------------- the committed tables


def _claims(**override):
    return va.claims(reader(NOTEBOOK, **override))


def _on(frame, datasets=STAND_INS, **conditions):
    """Rows of ``frame`` on ``datasets`` that meet ``conditions`` (column == value)."""
    mask = frame["dataset"].isin(datasets)
    for column, value in conditions.items():
        mask &= frame[column] == value
    return mask


def test_fig1_share_at_first_rank_is_out_of_scope_and_our_share_turns_with_the_table():
    """Fig. 1 is EASE on ml-20m, which none of our datasets stands in for: not testable here, with
    what our data give in other_setups."""
    start = "With n = 100 sampled items, most held-out items"

    def row(**override):
        return next(r for r in _claims(**override) if r.claim.startswith(start))

    assert row().verdict == "not testable here"
    assert row().other_setups.startswith("on our datasets, “most” as more than half: not reproduced")

    def most_first(blind):
        hit = (blind["model"] == va.FIG_MODEL) & (blind["sampled_rank"] == 1)
        return blind.assign(probability=blind["probability"].where(~hit, 0.6))

    assert row(blind_spot_sampled_ranks=most_first).other_setups.startswith(
        "on our datasets, “most” as more than half: reproduced")


def test_blind_spot_and_its_premises_turn_with_the_tables():
    blind_spot = "The fixed-size estimators' error grows as K gets small"
    assert verdict_of(_claims(), blind_spot) == "reproduced"

    def flat_at_small_k(by_k):
        small = (by_k["sampling"] == "fixed") & (by_k["k"] == 1)
        return by_k.assign(mean=by_k["mean"].where(~small, 0.0))

    assert verdict_of(_claims(relative_error_by_k=flat_at_small_k), blind_spot) == "not reproduced"
    global_first = "A held-out item ranked first among n = 100"
    assert verdict_of(_claims(), global_first) == "reproduced"
    assert verdict_of(_claims(rank_shape=lambda t: t.assign(rank1_of_first=0.9)), global_first) == "not reproduced"
    fewer = "With more items sampled, fewer users are left at r = 1."
    assert verdict_of(_claims(), fewer) == "reproduced"

    def flat_on_one_pair(sizes):  # one pair stays at r = 1 from n_max = 1600 to 3200: "shall" fails there
        hit = (sizes["dataset"] == "ml-1m") & (sizes["model"] == "ease") & (sizes["n_max"] == 3200)
        before = sizes.loc[(sizes["dataset"] == "ml-1m") & (sizes["model"] == "ease") & (sizes["n_max"] == 1600),
                           "first_at_ceiling"].iloc[0]
        return sizes.assign(first_at_ceiling=sizes["first_at_ceiling"].where(~hit, before))

    assert verdict_of(_claims(adaptive_sizes=flat_on_one_pair), fewer) == "partly"
    improve = "Sampling more items for the users at r = 1 can improve"

    def worse_with_n_max(front):
        last = (front["sampling"] == "adaptive") & (front["sample_size"] == front["sample_size"].max())
        return front.assign(mean=front["mean"].where(~last, 10.0))

    assert verdict_of(_claims(), improve) == "reproduced"
    assert verdict_of(_claims(frontier=worse_with_n_max), improve) == "not reproduced"


def test_knee_turns_with_the_cost_curve():
    start = "The sampling cost C_j rises quickly"
    assert verdict_of(_claims(), start) == "not reproduced"

    def knee_on_yelp(cost):
        past = _on(cost, ["yelp-diffnet"], model=va.FIG_MODEL) & (cost["fraction_of_items"] > va.KNEE_FRACTION)
        return cost.assign(cost=cost["cost"] * np.where(past, 8.0 ** np.maximum(cost["level"] - 5, 0), 1.0))

    assert verdict_of(_claims(sampling_cost=knee_on_yelp), start) == "reproduced"


def test_items_and_accuracy_on_the_stand_ins_turn_with_the_tables():
    items = "Adaptive sampling uses much fewer items per user"
    assert verdict_of(_claims(), items) == "reproduced"

    def more_items(fva):
        hit = _on(fva, method="adaptive_mle")
        return fva.assign(mean_sample_size=fva["mean_sample_size"].where(~hit, 400.0))

    assert verdict_of(_claims(fixed_vs_adaptive=more_items), items) == "not reproduced"
    ndcg = "The adaptive MLE's NDCG@K error over small K"
    both = "Adaptive sampling is more accurate (NDCG) with fewer items"
    assert verdict_of(_claims(), ndcg) == "reproduced" and verdict_of(_claims(), both) == "reproduced"

    def worse_adaptive(fva):
        hit = _on(fva, method="adaptive_mle")
        return fva.assign(mean=fva["mean"].where(~hit, 1.0))

    worse = _claims(fixed_vs_adaptive=worse_adaptive)
    assert verdict_of(worse, ndcg) == "not reproduced" and verdict_of(worse, both) == "not reproduced"
    # the efficiency half counts items against the paper's n = 500, not yelp-diffnet's 1000
    assert verdict_of(_claims(fixed_vs_adaptive=lambda f: f.assign(
        mean_sample_size=f["mean_sample_size"].where(~_on(f, ["yelp-diffnet"], method="adaptive_mle"), 700.0))),
        both) == "partly"


def test_error_size_on_pinterest_turns_with_the_table():
    start = "The adaptive MLE's NDCG@K error on pinterest-20 is below 2%."
    assert verdict_of(_claims(), start) == "partly"

    def scaled(factor):
        def change(fva):
            hit = _on(fva, ["pinterest-subset"], method="adaptive_mle", metric="ndcg")
            return fva.assign(mean=fva["mean"].where(~hit, fva["mean"] * factor))
        return change

    assert verdict_of(_claims(fixed_vs_adaptive=scaled(0.5)), start) == "reproduced"
    assert verdict_of(_claims(fixed_vs_adaptive=scaled(2.0)), start) == "not reproduced"


def test_recall_claims_turn_with_the_table():
    much = "The adaptive MLE can be much more accurate (Recall)"
    consistently = "The adaptive MLE is more accurate (Recall) than the fixed-size estimators, as consistently"
    rows = _claims()
    assert verdict_of(rows, much) == "reproduced" and verdict_of(rows, consistently) == "reproduced"

    def recall_worse(fva):
        hit = _on(fva, method="adaptive_mle", metric="recall") & fva["model"].isin(["ease", "multivae"])
        return fva.assign(mean=fva["mean"].where(~hit, 1.0))

    rows = _claims(fixed_vs_adaptive=recall_worse)
    assert verdict_of(rows, consistently) == "partly"  # 5 of 10: below the paper's own 80%, at half
    assert verdict_of(rows, much) == "reproduced"  # one case is enough for "can": yelp-diffnet/itemknn

    def all_worse(fva):
        hit = _on(fva, method="adaptive_mle", metric="recall")
        return fva.assign(mean=fva["mean"].where(~hit, 1.0))

    assert verdict_of(_claims(fixed_vs_adaptive=all_worse), much) == "not reproduced"


def test_winners_claim_turns_with_the_table():
    start = "The adaptive MLE finds the best model competitively"
    assert verdict_of(_claims(), start) == "reproduced"

    def never_found(win):
        return win.assign(correct=win["correct"].where(~_on(win, method="adaptive_mle"), 0))

    assert verdict_of(_claims(winners=never_found), start) == "not reproduced"


def test_checks_turn_with_the_tables():
    premise = "At K = 1 the adaptive MLE is more accurate than the MLE"
    assert verdict_of(_claims(), premise) == "not reproduced"

    def adaptive_exact_at_k1(by_k):
        hit = (by_k["sampling"] == "adaptive") & (by_k["k"] == 1)
        return by_k.assign(mean=by_k["mean"].where(~hit, 0.0))

    assert verdict_of(_claims(relative_error_by_k=adaptive_exact_at_k1), premise) == "reproduced"
    other = "On our datasets that are none of the paper's"
    assert verdict_of(_claims(), other) == "not reproduced"

    def better_elsewhere(fva):
        hit = ~fva["dataset"].isin(STAND_INS) & (fva["method"] == "adaptive_mle")
        return fva.assign(mean=fva["mean"].where(~hit, 0.0), mean_sample_size=fva["mean_sample_size"].where(~hit, 100.0))

    assert verdict_of(_claims(fixed_vs_adaptive=better_elsewhere), other) == "reproduced"


@pytest.fixture(scope="module")
def committed():
    root = find_root()
    return va.claims(lambda name: read_table(NOTEBOOK, name, root))


def test_claims_of_the_committed_tables(committed):
    assert all(isinstance(row, Claim) and row.paper == "li2023aaai" and row.verdict in VERDICTS for row in committed)
    assert len({row.claim for row in committed}) == len(committed)
    claims = [row for row in committed if not isinstance(row, Check)]
    checks = [row for row in committed if isinstance(row, Check)]
    assert claims and checks and all(row.quote for row in claims)
    # the claims of §5 and App. I are graded on the stand-ins, and say where our fixed n is not the paper's
    for row in claims:
        if row.source.startswith(("§5", "Table 11")):
            assert "ml-1m" not in row.dataset and "citeulike-a" not in row.dataset, row.claim
            assert "yelp-diffnet" not in row.dataset or "yelp-diffnet 1000 (the paper's 500)" in row.setup, row.claim
    # a check's own rule is the share rule (90% / 50%)
    for row in checks:
        if " of " in row.our_value:
            holds, cases = (int(v) for v in row.our_value.split(" ")[0:3:2])
            share = holds / cases
            assert row.verdict == ("reproduced" if share >= 0.9 else "partly" if share >= 0.5 else "not reproduced")


PAPERS = papers_folder(REPO)


@pytest.mark.skipif(PAPERS is None, reason="the papers' text is not here")
def test_rows_quote_the_paper_and_name_its_places(committed):
    text = paper_text("li2023aaai", PAPERS)
    for row in committed:
        assert not row.quote or quote_found(row.quote, text), row.quote
        assert source_found(row.source, text) == [], row.source
