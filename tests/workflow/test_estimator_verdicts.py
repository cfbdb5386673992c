"""The verdicts of notebook 04 (itemsampling_study.verdicts.estimator_accuracy): each rule on the
committed tables, and the verdict turning when a table is changed under it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from itemsampling_study.paper import paper_table
from itemsampling_study.verdicts import VERDICTS, Check, Claim, can_verdict, most_verdict
from itemsampling_study.verdicts import estimator_accuracy as v
from itemsampling_study.verdicts.estimator_accuracy import common
from itemsampling_study.wmle_readings import paper_gaps

from .conftest import REPO
from .verdict_helpers import reader, verdict_of

NB = "04_estimators"
pytestmark = pytest.mark.skipif(not (REPO / "results" / "tables" / NB / "wmle_readings.csv").is_file(),
                                reason="the tables of notebook 04 are not there")
MODELS = ("ease", "multivae", "neumf", "itemknn", "ials")
METRICS = ("recall", "ndcg", "ap")


def _rows(**override):
    return v.claims(reader(NB, **override))


def _scaled(frame, mask, column="mean", factor=None, value=None):
    """``frame`` with ``column`` of the rows ``mask(frame)`` multiplied by ``factor`` or set to ``value``."""
    out = frame.copy()
    rows = mask(out)
    out.loc[rows, column] = out.loc[rows, column] * factor if factor is not None else value(out[rows])
    return out


def test_the_committed_tables_give_one_valid_row_per_claim():
    rows = _rows()
    assert rows and all(isinstance(r, Claim) and r.verdict in VERDICTS for r in rows)
    assert len({(r.paper, r.claim, r.dataset) for r in rows}) == len(rows)
    assert all(r.claim.strip() and r.reason.strip() for r in rows)
    assert all(r.quote for r in rows if not isinstance(r, Check))


def test_the_setups_are_picked_by_the_estimators_gaps_to_mle():
    table = reader(NB)
    assert common.mes_reading(table("metrics_at_k")).name == "mes_code"
    far = _scaled(table("metrics_at_k"), lambda t: t["estimator"] == "mes_code", factor=1.5)
    assert common.mes_reading(far).name == "mes"
    assert common.wmle_reading(table("wmle_readings")).name == "at_least_one"
    flipped = _scaled(table("wmle_readings"), lambda t: t["reading"] == "at_least_one", "gap", factor=-1.0)
    assert common.wmle_reading(flipped).name == "ceil"  # a gap of the wrong sign is never the closest


def test_table2_mle_and_mes_turn_with_their_bias():
    assert verdict_of(_rows(), "MLE and MES are the two most accurate") == "reproduced"
    biased = dict(metrics_at_k=lambda t: _scaled(t, lambda x: x["estimator"] == "mle", factor=2.0))
    assert verdict_of(_rows(**biased), "MLE and MES are the two most accurate") == "not reproduced"


CLS = "CLS is the most biased estimator in Tables 2 and 3"


def _exact_cls(*models):
    """metrics_at_k with CLS exact on ml-1m for ``models`` (CLS is then never their most biased)."""
    return dict(metrics_at_k=lambda t: _scaled(t, lambda x: (x["estimator"] == "cls") & (x["dataset"] == "ml-1m")
                                               & x["model"].isin(models), value=lambda x: x["exact"]))


def test_cls_worst_takes_the_share_of_the_papers_own_tables_as_its_threshold():
    row = next(r for r in _rows() if r.claim.startswith(CLS))
    paper = common.paper_bias(["ml-1m", "citeulike-a"])
    worst = paper.loc[paper.groupby(["dataset", "model", "metric"])["bias"].idxmax(), "estimator"]
    assert row.paper_value == f"CLS most biased in {int((worst == 'cls').sum())} of {len(worst)} cases"
    assert row.verdict == "reproduced" and "as printed: not reproduced" in row.other_setups
    # the literal reading, table by table, fails the paper's own Table 3: shown beside, not graded
    assert "literal, Table 3 alone (citeulike-a), by the mean bias: not reproduced" in row.other_setups
    assert "the paper's own: not reproduced" in row.other_setups and "rubric rule 5" in row.reason
    # our share against the paper's 12 of 30: 6 of 30 is half of it (partly), 3 of 30 below
    assert verdict_of(_rows(**_exact_cls("ease", "ials")), CLS) == "partly"
    assert verdict_of(_rows(**_exact_cls("ease", "ials", "multivae")), CLS) == "not reproduced"


def test_cls_worst_turns_with_the_papers_share(monkeypatch):
    from itemsampling_study.verdicts.estimator_accuracy import bias

    def cls_always_worst(datasets):  # the paper's tables with CLS the most biased in every case
        frame = common.paper_bias(datasets)
        return frame.assign(bias=frame["bias"].where(frame["estimator"] != "cls", 10.0))

    monkeypatch.setattr(bias, "paper_bias", cls_always_worst)
    assert verdict_of(_rows(), CLS) == "not reproduced"


def test_table3_wmle_turns_when_the_others_are_biased():
    # one placement behind MES (9 against 10): one unhedged comparison, no tolerance of ours on the count
    assert verdict_of(_rows(), "WMLE is most often among the two") == "not reproduced"
    far = dict(wmle_readings=lambda t: _scaled(t, lambda x: x["reading"] == "at_least_one", "gap", factor=20.0))
    assert verdict_of(_rows(**far), "WMLE is most often among the two") == "not reproduced"
    others = ("cls", "bv_0.1", "bv_0.01", "mes", "mes_code")
    biased = dict(metrics_at_k=lambda t: _scaled(t, lambda x: (x["dataset"] == "citeulike-a")
                                                 & x["estimator"].isin(others), value=lambda x: 3 * x["exact"]))
    assert verdict_of(_rows(**biased), "WMLE is most often among the two") == "reproduced"


def test_variance_rows_turn_with_bv_spread():
    assert verdict_of(_rows(), "The new estimators (MLE, WMLE, MES) vary more") == "reproduced"
    wide_bv = dict(metrics_at_k=lambda t: _scaled(t, lambda x: x["estimator"].str.startswith("bv_0"), "std", 100.0))
    rows = _rows(**wide_bv)
    assert verdict_of(rows, "The new estimators (MLE, WMLE, MES) vary more") == "not reproduced"
    assert verdict_of(rows, "MLE and MES can be more accurate than BV") == "not reproduced"
    assert verdict_of(_rows(), "MLE and MES can be more accurate than BV") == "reproduced"


def test_appendix_d_turns_with_yelp():
    assert verdict_of(_rows(), "MLE and MES are more accurate than BV on pinterest") == "partly"
    biased = dict(metrics_at_k=lambda t: _scaled(t, lambda x: (x["dataset"] == "yelp-diffnet")
                                                 & x["estimator"].str.startswith("bv_0"), factor=5.0))
    assert verdict_of(_rows(**biased), "MLE and MES are more accurate than BV on pinterest") == "reproduced"


def _readings(gaps: dict[str, float], sources=("ranks", "simulated_paper")) -> pd.DataFrame:
    """wmle_readings whose gap of each reading is ``gaps[reading]`` times the paper's, case by case."""
    paper = paper_gaps(["ml-1m"]).set_index(["model", "metric"])["paper_gap"]
    rows = [{"source": s, "dataset": "ml-1m", "model": m, "reading": r, "metric": x, "k": 10, "level": 0.3,
             "exact": 0.3, "mean": 0.3, "std": 0.01, "repeats": 5, "mle_mean": 0.3,
             "gap": 0.0 if r == "mle" else factor * paper[m, x]}
            for s, m, x, (r, factor) in itertools.product(sources, MODELS, METRICS, [("mle", 0), *gaps.items()])]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("gaps", "verdict"), [
    ({"as_printed": 1.1, "ceil": 1.0}, "reproduced"),
    ({"as_printed": 6.0, "ceil": 1.2}, "partly"),
    ({"as_printed": 6.0, "ceil": 3.0}, "not reproduced"),
])
def test_wmle_close_to_mle_by_reading(gaps, verdict):
    assert v.wmle_close_to_mle(_readings(gaps)).verdict == verdict


def test_a_reading_must_fit_on_real_and_simulated_ranks():
    readings = _readings({"as_printed": 1.0})
    readings.loc[(readings["source"] == "simulated_paper") & (readings["reading"] == "as_printed"), "gap"] *= 5
    assert v.wmle_close_to_mle(readings).verdict == "not reproduced"


def test_table4_rows():
    rows = {r.claim: r for r in _rows()}
    wmle = rows["WMLE picks the true winner most often on ml-1m"]
    assert wmle.verdict == "not testable here" and wmle.other_setups.startswith("as printed: reproduced")
    claim = "MLE and MES pick the winner about equally often"
    assert verdict_of(_rows(), claim) == "reproduced"
    no_bv = dict(winners=lambda t: _scaled(t, lambda x: x["estimator"] == "bv_0.01", "correct", 0.0))
    assert verdict_of(_rows(**no_bv), claim) == "not reproduced"


def test_winner_counts_turn_with_the_counts():
    claim = "The counts of correct winners of Table 8"
    assert verdict_of(_rows(), claim) == "reproduced"
    flipped = dict(winners=lambda t: _scaled(t, lambda x: x["dataset"] == "citeulike-a", "correct",
                                             value=lambda x: 100 - x["correct"]))
    assert verdict_of(_rows(**flipped), claim) == "not reproduced"
    assert verdict_of(_rows(), "Our counts of correct winners of the fixed-size") == "not reproduced"
    # Table 4's caption (ml-1m): 44 of 60 cells within tolerance today; the paper's counts make every cell agree
    table4 = "The counts of correct winners of Table 4 (ml-1m)"
    assert verdict_of(_rows(), table4) == "partly"
    paper = paper_table("jin2021aaai_winners")
    paper = paper[paper["dataset"] == "ml-1m"].set_index(["method", "metric", "k"])["paper_correct"]

    def theirs(t):
        out = t.copy()
        rows = (out["dataset"] == "ml-1m") & (out["sample_size"] == 100)
        keys = pd.MultiIndex.from_frame(out.loc[rows, ["estimator", "metric", "k"]].replace({"mes_code": "mes"}))
        theirs = paper.reindex(keys).to_numpy()
        out.loc[rows, "correct"] = np.where(np.isnan(theirs), out.loc[rows, "correct"], theirs)
        return out
    assert verdict_of(_rows(winners=theirs), table4) == "reproduced"
    # the counts printed for yelp and pinterest-20 are not graded on our stand-ins; ours are beside
    for stand_in in ("Table 9 (yelp)", "Table 10 (pinterest-20)"):
        row = next(r for r in _rows() if r.claim.endswith(stand_in))
        assert row.verdict == "not testable here" and "read as the paper's dataset: " in row.other_setups


def _rd_set(estimator, n=None, dataset=None, value=lambda x: x["exact_cdf"]):
    def change(t):
        return _scaled(t, lambda x: (x["estimator"] == estimator) & ((x["sample_size"] == n) if n else True)
                       & ((x["dataset"] == dataset) if dataset else True), "cdf", value=value)
    return dict(rank_distribution=change)


def test_rank_distribution_rows_turn():
    rows = _rows()
    assert verdict_of(rows, "BV misses the empirical CDF") == "reproduced"
    assert verdict_of(_rows(**_rd_set("bv_0.1")), "BV misses the empirical CDF") == "not reproduced"
    assert verdict_of(rows, "The learned P(R) is not accurate, its CDF is") == "reproduced"
    off = _rd_set("mes_code", value=lambda x: 1.5 * x["exact_cdf"])
    assert verdict_of(_rows(**off), "The learned P(R) is not accurate, its CDF is") == "partly"
    assert verdict_of(rows, "MLE and MES give comparable CDFs") == "reproduced"
    assert verdict_of(_rows(**off), "MLE and MES give comparable CDFs") == "not reproduced"
    claim = "A larger sample brings the learned CDF closer to the empirical one"
    assert verdict_of(rows, claim) == "reproduced"  # all three estimators (citeulike, NeuMF)
    farther = _rd_set("mes_code", 500, "citeulike-a", value=lambda x: 0.2 * x["exact_cdf"])
    assert verdict_of(_rows(**farther), claim) == "partly"


def test_the_mes_check_turns_when_mes_at_the_larger_n_is_exact():
    claim = "MES gets worse as n grows"
    assert verdict_of(_rows(), claim) == "reproduced"
    assert verdict_of(_rows(**_rd_set("mes", 500)), claim) == "not reproduced"


def _pooled(estimators, column="mean", factor=3.0):
    return dict(pooled_prior=lambda t: _scaled(t, lambda x: (x["prior"] == "pooled")
                                               & x["estimator"].isin(estimators), column, factor))


def test_aaai23_rows_turn_with_the_pooled_prior():
    rows = _rows()
    for claim in ("MN_MES or MN_MLE is among the two most accurate", "MN_MES and MN_MLE spread less",
                  "Estimators with a fitted prior can be", "MN_MES is the most accurate estimator for EASE",
                  "An estimator of the paper (MN_MES especially)", "MN_MES is among the two most accurate estimators in"):
        assert verdict_of(rows, claim) == "reproduced", claim
    assert verdict_of(rows, TABLE10_CONSISTENTLY) == "partly"
    worse = _rows(**_pooled(["mn_mes", "mn_mle", "bv_mes", "bv_mle"], factor=10.0))
    for claim in ("MN_MES or MN_MLE is among the two most accurate", "Estimators with a fitted prior can be",
                  "MN_MES is the most accurate estimator for EASE", "An estimator of the paper (MN_MES especially)",
                  "MN_MES is among the two most accurate estimators in", "MN_MES or MN_MLE is the most accurate",
                  "The paper's estimators are consistently ahead"):
        assert verdict_of(worse, claim) == "not reproduced", claim
    assert verdict_of(_rows(**_pooled(["mn_mes", "mn_mle"], "std", 10.0)), "MN_MES and MN_MLE spread less") \
        == "not reproduced"


def test_relative_error_levels_turn():
    claim = "Our average relative errors are those of Table 6"
    assert verdict_of(_rows(), claim) == "partly"
    paper = paper_table("li2023aaai_relative_error").rename(columns={"method": "estimator"})
    keys = ["dataset", "model", "sample_size", "metric", "estimator"]

    def as_paper(t):
        joined = t.merge(paper[[*keys, "paper_percent"]], on=keys, how="left")
        return joined.assign(mean=joined["paper_percent"].fillna(100 * joined["mean"]) / 100).drop(
            columns="paper_percent")

    exact = _rows(relative_error=as_paper, pooled_prior=as_paper)
    assert verdict_of(exact, claim) == "reproduced"


def test_exact_levels_and_gamma_turn():
    assert verdict_of(_rows(), "Our exact Recall, NDCG and AP@10") == "not reproduced"
    paper = paper_table("jin2021aaai_metrics_at_10").query("method == 'exact'")[["dataset", "model", "metric",
                                                                                  "paper_percent"]]

    def papers_exact(t):
        joined = t.merge(paper, on=["dataset", "model", "metric"], how="left")
        return joined.assign(exact=(joined["paper_percent"] / 100).fillna(joined["exact"])).drop(
            columns="paper_percent")

    assert verdict_of(_rows(metrics_at_k=papers_exact), "Our exact Recall, NDCG and AP@10") == "reproduced"
    assert verdict_of(_rows(), "A lower γ of BV gives less bias") == "partly"
    flat = dict(metrics_at_k=lambda t: _scaled(t, lambda x: x["estimator"] == "bv_0.01", "std", 0.01))
    assert verdict_of(_rows(**flat), "A lower γ of BV gives less bias") == "not reproduced"


def test_a_missing_estimator_fails_loudly():
    with pytest.raises(ValueError, match="no partner"):
        _rows(metrics_at_k=lambda t: t[t["estimator"] != "mes"])


def _mn(shift_total: float, shift_group: float) -> pd.DataFrame:
    rows = []
    for scope, shift in (("total", shift_total), ("group", shift_group), ("none", 0.0)):
        for g, offset in ((1, 0.0), (20, shift)):
            rows.append({"dataset": "pinterest-subset", "model": "ease", "protocol": "unseen", "sample_size": 100,
                         "estimator": "mle" if scope == "none" else "mn_mle", "m_scope": scope, "n_groups": g,
                         "metric": "recall", "k": 10, "exact": 0.1, "mean": 0.1 + 0.01 * offset, "std": 0.01,
                         "rel_error": 0.1, "repeats": 5})
    return pd.DataFrame(rows)


def test_mn_scope_check():
    check = v.mn_users_scope(_mn(0.1, 2.5))
    assert isinstance(check, Check) and check.verdict == "reproduced"
    check = v.mn_users_scope(_mn(1.0, 2.5))
    assert check.verdict == "not reproduced" and "2.5" in check.our_value


def _levels(scale: float) -> pd.DataFrame:
    """metric_levels whose E[SHR@1] is ``scale`` times KDD'20's under its protocol (and the same under the other)."""
    from itemsampling_study.estimator_accuracy import li2020kdd_hit_ratios

    hits = li2020kdd_hit_ratios(paper_table("li2020kdd_table3"), paper_table("li2020kdd_table5"))
    hits = hits[hits["dataset"].isin(["ml-1m", "citeulike-a"])]
    return pd.DataFrame([{"dataset": h.dataset, "model": h.model, "protocol": p, "scheme": "binomial",
                          "sample_size": 100, "k": 10, "users": 100, "n_items": 3000, "exact_recall": 0.05,
                          "sampled_hit_ratio": scale * h.paper_hit_ratio}
                         for h in hits.itertuples() for p in ("all", "unseen")])


def test_kdd20_hit_ratio_check():
    assert isinstance(v.kdd20_hit_ratios(_levels(1.05)), Check)
    assert v.kdd20_hit_ratios(_levels(1.05)).verdict == "reproduced"
    assert v.kdd20_hit_ratios(_levels(2.0)).verdict == "not reproduced"
    other = _levels(1.0)
    assert v.kdd20_hit_ratios(other.assign(dataset="x-" + other["dataset"])).verdict == "not testable here"


@pytest.mark.parametrize(("held", "cases", "most", "can"), [
    (6, 10, "reproduced", "reproduced"), (5, 10, "partly", "reproduced"), (2, 10, "not reproduced", "reproduced"),
    (0, 10, "not reproduced", "not reproduced"), (0, 0, "not testable here", "not testable here"),
])
def test_the_hedged_verdicts(held, cases, most, can):
    assert most_verdict(held, cases) == most
    assert can_verdict(held, cases) == can


def test_binomial_tolerance():
    repeats = pd.Series([100, 100, 100])
    close = common.binomial_close(pd.Series([0.5, 1.0, 0.9]), pd.Series([0.6, 1.0, 0.5]), repeats)
    assert close.tolist() == [True, True, False]
    assert np.isclose(common.binomial_close(pd.Series([1.0]), pd.Series([0.99]), pd.Series([100])), True)


def test_the_blind_spot_of_the_best_effort_turns_with_the_errors_at_small_k():
    claim = "Even the best fixed-size estimator is least accurate at small K"
    assert verdict_of(_rows(), claim) == "partly"

    def flat_errors(coverage):  # every corrected estimator as accurate at K = 1 as at K = 50
        return coverage.assign(bias=np.where(coverage["k"] == coverage["k"].min(), 0.0, coverage["bias"]),
                               spread=np.where(coverage["k"] == coverage["k"].min(), 0.0, coverage["spread"]))

    assert verdict_of(_rows(interval_coverage=flat_errors), claim) == "not reproduced"

    def sharp_blind_spot(coverage):
        return coverage.assign(bias=np.where(coverage["k"] == coverage["k"].min(), 10.0, coverage["bias"]))

    assert verdict_of(_rows(interval_coverage=sharp_blind_spot), claim) == "reproduced"


def test_the_blind_spot_of_every_estimator_turns_when_some_estimators_lack_it():
    """AAAI'23 §2.1: were the blind spot one estimator's, it would not show in the others; MLE and
    MES as accurate at K = 1 as at K = 50 leave 75 of 105 cases, below 90 %."""
    claim = "The blind spot comes from item sampling, not from the estimators"
    row = next(r for r in _rows() if r.claim.startswith(claim))
    assert row.verdict == "reproduced" and "no dataset of the paper" in row.reason

    def two_without_it(coverage):
        hit = (coverage["k"] == coverage["k"].min()) & coverage["estimator"].isin(["mle", "mes"])
        return coverage.assign(bias=np.where(hit, 0.0, coverage["bias"]), spread=np.where(hit, 0.0, coverage["spread"]))

    assert verdict_of(_rows(interval_coverage=two_without_it), claim) == "partly"


def test_especially_bv_turns_when_another_estimator_gains_more():
    """Fig. 3's caption: BV 0.1 gains the most from n = 500; with MLE exact at n = 500 and far off
    at n = 100, MLE gains more (partly), and with BV 0.1 no closer at 500, not reproduced."""
    claim = "BV 0.1's learned CDF gains the most from a larger sample"
    assert verdict_of(_rows(), claim) == "reproduced"

    def mle_gains_most(t):
        mle = (t["estimator"] == "mle") & (t["dataset"] == "citeulike-a")
        cdf = np.where(mle & (t["sample_size"] == 500), t["exact_cdf"],
                       np.where(mle & (t["sample_size"] == 100), 0.5 * t["exact_cdf"], t["cdf"]))
        return t.assign(cdf=cdf)

    assert verdict_of(_rows(rank_distribution=mle_gains_most), claim) == "partly"
    bv_off = _rd_set("bv_0.1", 500, "citeulike-a", value=lambda x: 0.5 * x["exact_cdf"])
    assert verdict_of(_rows(**bv_off), claim) == "not reproduced"


AAAI21_WMLE_ROWS = ("MLE and MES are the two most accurate", "WMLE is most often among the two",
                    "CLS is the most biased estimator", "The new estimators (MLE, WMLE, MES) vary more",
                    "MLE and MES give comparable CDFs and WMLE lies above both")
AAAI21_NOT_RUN_ROWS = ("WMLE picks the true winner most often", "The learned P(R) is not accurate",
                       "The counts of correct winners of Table 4")


def test_one_wmle_standard_follows_the_reading_closest_to_the_papers_gap():
    rows = {r.claim: r for r in _rows()}

    def row(start):
        return next(r for claim, r in rows.items() if claim.startswith(start))

    for start in AAAI21_WMLE_ROWS:
        assert row(start).setup.endswith("WMLE at_least_one") and "as printed: " in row(start).other_setups, start
        assert "WMLE ceil (runner-up of the rule): " in row(start).other_setups, start
    for start in AAAI21_NOT_RUN_ROWS:
        assert "WMLE left out (the WMLE reading closest to the paper's was not run for" in row(start).setup, start
        assert "as printed" in row(start).other_setups, start
    assert row("A larger sample brings the learned CDF closer").setup.endswith("nor the printed one)")
    # the WMLE row itself is graded as printed, the closest reading first among the others
    assert row("WMLE as defined").other_setups.startswith("at_least_one (closest to the paper's): not reproduced")
    # another reading closest to the paper's gap: every row that rests on WMLE moves to it
    ceil = dict(wmle_readings=lambda t: _scaled(t, lambda x: x["reading"] == "ceil", "gap", factor=0.1))
    moved = {r.claim: r for r in _rows(**ceil)}
    for start in AAAI21_WMLE_ROWS:
        assert next(r for c, r in moved.items() if c.startswith(start)).setup.endswith("WMLE ceil"), start


def test_the_intensifier_is_named_and_the_direction_decides():
    row = next(r for r in _rows() if r.claim.startswith("MN_MES or MN_MLE is the most accurate"))
    assert "'Significantly' is an intensifier the paper backs with no test" in row.reason
    assert row.verdict == "reproduced" and row.our_value == "6 of 10"  # more than half
    worse = _rows(**_pooled(["mn_mes", "mn_mle"], factor=3.0))
    assert verdict_of(worse, "MN_MES or MN_MLE is the most accurate") != "reproduced"


def test_setup_row_grades_on_the_first_setup():
    row = common.setup_row(Claim, [("a", "reproduced", "3 of 3"), ("b", "partly", "2 of 3")], extra="c: x",
                           paper="jin2021aaai", claim="c", quote="q", source="Table 2", dataset="ml-1m", paper_value="p",
                           reason="r")
    assert (row.setup, row.verdict, row.our_value) == ("a", "reproduced", "3 of 3")
    assert row.other_setups == "b: partly (2 of 3); c: x"


def _paper_biased(frame, dataset):
    """``metrics_at_k`` with every AAAI'21 estimator of ``dataset`` at n = 100 biased as in the
    paper's table (our exact value times one plus the paper's relative bias)."""
    paper = paper_table("jin2021aaai_metrics_at_10").query("dataset == @dataset")
    wide = paper.pivot_table(index=["model", "metric"], columns="method", values="paper_percent")
    out = frame.copy()
    for (model, metric), row in wide.iterrows():
        for method in wide.columns.drop("exact"):
            rows = ((out["dataset"] == dataset) & (out["model"] == model) & (out["metric"] == metric)
                    & (out["sample_size"] == 100) & out["estimator"].isin([method, f"{method}_code"]))
            out.loc[rows, "mean"] = out.loc[rows, "exact"] * row[method] / row["exact"]
    return out


def test_the_printed_tables_turn_with_the_bias_of_each_cell():
    rows = _rows()
    assert verdict_of(rows, "The estimates of Table 2 (ml-1m)") == "partly"
    assert verdict_of(rows, "The estimates of Table 3 (citeulike)") == "not reproduced"
    # the paper's own biases pass; three times ours fail; a stand-in's table is never graded on its numbers
    same = _rows(metrics_at_k=lambda t: _paper_biased(t, "citeulike-a"))
    assert verdict_of(same, "The estimates of Table 3 (citeulike)") == "reproduced"
    far = _rows(metrics_at_k=lambda t: _scaled(t, lambda x: x["dataset"] == "ml-1m", factor=3.0))
    assert verdict_of(far, "The estimates of Table 2 (ml-1m)") == "not reproduced"
    stand_in = _rows(metrics_at_k=lambda t: _paper_biased(t, "yelp-diffnet"))
    row = next(r for r in stand_in if r.claim.startswith("The estimates of Table 7 (yelp)"))
    assert row.verdict == "not testable here" and "read as the paper's dataset: reproduced" in row.other_setups


def test_comparable_turns_when_the_new_estimators_are_exact():
    """MLE and MES exact in every citeulike case: BV is never the least biased, and no longer
    competitive with them."""
    assert verdict_of(_rows(), "MES, MLE (MB) and BV are comparable") == "reproduced"
    exact = dict(metrics_at_k=lambda t: _scaled(t, lambda x: (x["dataset"] == "citeulike-a")
                                                & x["estimator"].isin(["mle", "mes", "mes_code"]),
                                                value=lambda x: x["exact"]))
    row = next(r for r in _rows(**exact) if r.claim.startswith("MES, MLE (MB) and BV are comparable"))
    assert row.verdict == "not reproduced" and row.our_value.endswith("BV 0.1, BV 0.01)")


def test_the_introduction_row_turns_when_the_sampled_metric_is_exact():
    claim = "NDCG and AP evaluated on the sampled ranks are further off"
    assert verdict_of(_rows(), claim) == "reproduced"
    exact = dict(metrics_at_k=lambda t: _scaled(t, lambda x: x["estimator"] == "sampled", value=lambda x: x["exact"]))
    assert verdict_of(_rows(**exact), claim) == "not reproduced"


TABLE10_CONSISTENTLY = "The paper's estimators are consistently ahead"


def _pooled_mn_mes_exact(dataset, model):
    """MN_MES with the pooled prior exact (error 0) on NDCG, n = 500 for one (dataset, model)."""
    return dict(pooled_prior=lambda t: _scaled(t, lambda x: (x["prior"] == "pooled") & (x["estimator"] == "mn_mes")
                                               & (x["metric"] == "ndcg") & (x["sample_size"] == 500)
                                               & (x["dataset"] == dataset) & (x["model"] == model), factor=0.0))


def _ml20m_baselines_ahead(paper):
    """The paper's Table 10 with MES the most accurate of all on each ml-20m row."""
    hit = (paper["paper_dataset"] == "ml-20m") & (paper["method"] == "mes")
    return paper.assign(paper_percent=paper["paper_percent"].where(~hit, 0.01))


def test_table10_consistently_takes_the_threshold_of_the_whole_table(monkeypatch):
    from itemsampling_study.verdicts.estimator_accuracy import aaai23

    whole = paper_table("li2023aaai_relative_error")
    assert set(whole.loc[whole["paper_dataset"] == "ml-20m", "metric"]) == {"ndcg"}
    assert len(whole[whole["paper_dataset"] == "ml-20m"]) == 5 * 7
    row = next(r for r in _rows() if r.claim.startswith(TABLE10_CONSISTENTLY))
    # 7 of 10 of ours under the 12 of 15 of the paper's whole table: partly; the two-dataset share is 7 of 10
    assert (row.verdict, row.our_value, row.paper_value) == ("partly", "7 of 10",
                                                             "12 of 15 (pinterest-20, yelp: 7 of 10)")
    assert "threshold of the paper's pinterest-20 and yelp rows alone (7 of 10): reproduced" in row.other_setups
    assert row.setup.endswith("MES as printed")
    assert ("prior pooled over the repeats (as the authors' code), MES as the code (η/n): reproduced (8 of 10)"
            in row.other_setups)
    # one more of our rows ahead (8 of 10, at the threshold of 80 %) turns it
    assert verdict_of(_rows(**_pooled_mn_mes_exact("pinterest-subset", "ials")), TABLE10_CONSISTENTLY) == "reproduced"
    # the paper's ml-20m rows decide it: were they all exceptions (7 of 15), 7 of 10 would reproduce it
    monkeypatch.setattr(aaai23, "paper_table", lambda name: _ml20m_baselines_ahead(paper_table(name)))
    assert verdict_of(_rows(), TABLE10_CONSISTENTLY) == "reproduced"
