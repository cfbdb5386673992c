"""The verdicts of notebook 04 (itemsampling.studies.verdicts.estimator_accuracy) on tables whose verdict is known."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from itemsampling.studies.paper import paper_table
from itemsampling.studies.verdicts import VERDICTS, Claim
from itemsampling.studies.verdicts import estimator_accuracy as v
from itemsampling.studies.wmle_readings import paper_gaps

MODELS = ("ease", "multivae", "neumf", "itemknn", "ials")
METRICS = ("recall", "ndcg", "ap")


def _at_k(bias: dict[str, float], spread: dict[str, float], datasets=("ml-1m", "citeulike-a")) -> pd.DataFrame:
    """metrics_at_k at n = 100 where every (dataset, model, metric) has the same relative bias and spread."""
    rows = [{"dataset": d, "model": m, "protocol": "all", "scheme": "binomial", "sample_size": 100, "estimator": e,
             "metric": x, "k": 10, "exact": 0.1, "mean": 0.1 * (1 + bias[e]), "std": 0.1 * spread[e], "repeats": 100}
            for d, m, x, e in itertools.product(datasets, MODELS, METRICS, v.AAAI21)]
    return pd.DataFrame(rows)


BIAS = {"cls": 0.9, "bv_0.1": 0.3, "bv_0.01": 0.2, "mle": 0.01, "wmle": 0.05, "mes": 0.02}
SPREAD = {"cls": 0.01, "bv_0.1": 0.02, "bv_0.01": 0.05, "mle": 0.2, "wmle": 0.2, "mes": 0.2}


def test_bias_ranking_follows_the_rule():
    best, worst = v.bias_ranking(_at_k(BIAS, SPREAD))
    assert best.verdict == "reproduced" and best.our_value == "15 of 15"
    assert worst.verdict == "reproduced" and worst.our_value == "30 of 30"
    best, worst = v.bias_ranking(_at_k({**BIAS, "wmle": 2.0, "mle": 0.5, "mes": 0.5}, SPREAD))
    assert best.verdict == "not reproduced" and worst.verdict == "not reproduced"
    assert "wmle in 30" in worst.reason


def test_a_missing_estimator_fails_loudly():
    with pytest.raises(ValueError, match="no partner"):
        v.bias_ranking(_at_k(BIAS, SPREAD).query("estimator != 'mes'"))


def test_variance_and_gamma_tradeoff():
    assert v.learned_variance(_at_k(BIAS, SPREAD)).verdict == "reproduced"
    assert v.learned_variance(_at_k(BIAS, {**SPREAD, "bv_0.01": 0.5})).verdict == "not reproduced"
    assert v.kdd20_gamma_tradeoff(_at_k(BIAS, SPREAD)).verdict == "reproduced"
    assert v.kdd20_gamma_tradeoff(_at_k({**BIAS, "bv_0.01": 0.4}, SPREAD)).verdict == "not reproduced"
    assert v.kdd20_gamma_tradeoff(_at_k(BIAS, SPREAD).assign(sample_size=20)).verdict == "not testable here"


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
    ({"as_printed": 6.0, "ceil": 1.5}, "partly"),
    ({"as_printed": 6.0, "ceil": 3.0}, "not reproduced"),
])
def test_wmle_close_to_mle_by_reading(gaps, verdict):
    claim = v.wmle_close_to_mle(_readings(gaps))
    assert claim.verdict == verdict


def test_a_reading_must_fit_on_real_and_simulated_ranks():
    readings = _readings({"as_printed": 1.0})
    readings.loc[(readings["source"] == "simulated_paper") & (readings["reading"] == "as_printed"), "gap"] *= 5
    assert v.wmle_close_to_mle(readings).verdict == "not reproduced"


def _wins(correct: dict[str, int]) -> pd.DataFrame:
    paper = paper_table("jin2021aaai_winners").query("dataset == 'ml-1m'")
    return pd.DataFrame([{"dataset": "ml-1m", "protocol": "all", "scheme": "binomial", "sample_size": 100,
                          "estimator": e, "metric": x, "k": k, "correct": correct[e], "repeats": 100}
                         for e, (x, k) in itertools.product(v.AAAI21, set(zip(paper["metric"], paper["k"],
                                                                                  strict=True)))])


def test_wmle_winners_names_the_bias():
    counts = {"cls": 0, "bv_0.1": 40, "bv_0.01": 50, "mle": 60, "wmle": 90, "mes": 60}
    claim = v.wmle_winners(_wins(counts), _at_k({**BIAS, "wmle": 4.0}, SPREAD))
    assert claim.verdict == "reproduced" and "400%" in claim.reason
    assert v.wmle_winners(_wins({**counts, "wmle": 10}), _at_k(BIAS, SPREAD)).verdict == "not reproduced"


def _errors(mean: dict[str, float], std: dict[str, float]) -> pd.DataFrame:
    paper = paper_table("li2023aaai_relative_error")
    rows = paper[["dataset", "model", "sample_size", "metric", "method"]].drop_duplicates()
    return rows.rename(columns={"method": "estimator"}).assign(
        protocol="all", scheme="binomial", mean=rows["method"].map(mean), std=rows["method"].map(std), repeats=100)


ERR = {"mes": 0.1, "mle": 0.1, "bv_0.01": 0.2, "bv_mes": 0.06, "bv_mle": 0.07, "mn_mes": 0.04, "mn_mle": 0.05}


def test_aaai23_relative_errors():
    std = {e: 0.01 if e.startswith("mn") else 0.02 for e in ERR}
    errors = _errors(ERR, std)
    assert v.mn_among_best(errors).verdict == "reproduced"
    assert v.prior_estimators_ahead(errors).verdict == "reproduced"
    assert v.mn_spread(errors).verdict == "reproduced"
    worse = _errors({**ERR, "mn_mes": 0.3, "mn_mle": 0.3, "bv_mes": 0.3, "bv_mle": 0.3}, {e: 0.05 for e in ERR})
    assert v.mn_among_best(worse).verdict == "not reproduced"
    assert v.prior_estimators_ahead(worse).verdict == "not reproduced"
    assert v.mn_spread(worse).verdict == "not reproduced"


def test_relative_error_level_counts_cases_within_a_factor():
    errors = _errors(ERR, {e: 0.01 for e in ERR})
    paper = paper_table("li2023aaai_relative_error").rename(columns={"method": "estimator"})
    same = errors.drop(columns="mean").merge(paper[["dataset", "model", "sample_size", "metric", "estimator",
                                                    "paper_percent"]])
    exact = same.assign(mean=same["paper_percent"] / 100).drop(columns="paper_percent")
    assert v.relative_error_level(exact).verdict == "reproduced"
    assert v.relative_error_level(exact.assign(mean=exact["mean"] * 3)).verdict == "not reproduced"


def _mn(shift_total: float, shift_group: float) -> pd.DataFrame:
    rows = []
    for scope, shift in (("total", shift_total), ("group", shift_group), ("none", 0.0)):
        for g, offset in ((1, 0.0), (20, shift)):
            rows.append({"dataset": "pinterest-subset", "model": "ease", "protocol": "unseen", "sample_size": 100,
                         "estimator": "mle" if scope == "none" else "mn_mle", "m_scope": scope, "n_groups": g,
                         "metric": "recall", "k": 10, "exact": 0.1, "mean": 0.1 + 0.01 * offset, "std": 0.01,
                         "rel_error": 0.1, "repeats": 5})
    return pd.DataFrame(rows)


def test_mn_scope_verdict():
    assert v.mn_users_scope(_mn(0.1, 2.5)).verdict == "reproduced"
    claim = v.mn_users_scope(_mn(1.0, 2.5))
    assert claim.verdict == "not reproduced" and "2.5" in claim.our_value


def test_the_committed_tables_give_one_valid_row_per_claim():
    from itemsampling.studies.tables import find_root, read_table

    root = find_root()
    if not (root / "results" / "tables" / "04_estimators" / "wmle_readings.csv").is_file():
        pytest.skip("the tables of notebook 04 are not there")
    rows = v.claims(lambda name: read_table("04_estimators", name, root))
    assert rows and all(isinstance(r, Claim) and r.verdict in VERDICTS for r in rows)
    assert len({(r.paper, r.claim, r.dataset) for r in rows}) == len(rows)
    assert all(np.all([s.strip() for s in (r.claim, r.reason)]) for r in rows)


def _levels(scale: float) -> pd.DataFrame:
    """metric_levels whose E[SHR@1] is ``scale`` times KDD'20's under its protocol (and the same under the other)."""
    from itemsampling.studies.estimator_accuracy import li2020kdd_hit_ratios

    hits = li2020kdd_hit_ratios(paper_table("li2020kdd_table3"), paper_table("li2020kdd_table5"))
    hits = hits[hits["dataset"].isin(["ml-1m", "citeulike-a"])]
    return pd.DataFrame([{"dataset": h.dataset, "model": h.model, "protocol": p, "scheme": "binomial",
                          "sample_size": 100, "k": 10, "users": 100, "n_items": 3000, "exact_recall": 0.05,
                          "sampled_hit_ratio": scale * h.paper_hit_ratio}
                         for h in hits.itertuples() for p in ("all", "unseen")])


def test_kdd20_hit_ratios():
    assert v.kdd20_hit_ratios(_levels(1.05)).verdict == "reproduced"
    assert v.kdd20_hit_ratios(_levels(2.0)).verdict == "not reproduced"
    other = _levels(1.0)
    assert v.kdd20_hit_ratios(other.assign(dataset="x-" + other["dataset"])).verdict == "not testable here"
