"""Verdicts of notebook 05 (itemsampling.studies.verdicts.adaptive_sampling): each rule on small
synthetic tables whose verdict is known, and the claims of the committed tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.studies.tables import find_root, read_table
from itemsampling.studies.verdicts import VERDICTS, Claim
from itemsampling.studies.verdicts import adaptive_sampling as va

NOTEBOOK = "05_adaptive_sampling"


def _by_k(errors: dict) -> pd.DataFrame:
    """relative_error_by_k rows from {(dataset, model, sampling, metric): [error at K = 1, 2, 3]}."""
    rows = [{"dataset": d, "model": m, "sampling": s, "metric": x, "k": k + 1, "mean": e}
            for (d, m, s, x), values in errors.items() for k, e in enumerate(values)]
    return pd.DataFrame(rows)


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
    assert list(va.more_accurate(acc)) == [True, False, True, True]
    assert list(va.more_accurate_with_fewer_items(acc)) == [True, False, False, False]


def test_winners_found_compares_with_the_best_fixed_method():
    win = pd.DataFrame({"dataset": "a", "metric": "recall", "k": [10] * 3 + [20] * 3,
                        "method": ["bv_mes", "mn_mes", "adaptive_mle"] * 2, "correct": [50, 80, 80, 90, 60, 70]})
    found = va.winners_found(win)
    assert found[("a", "recall", 10)] and not found[("a", "recall", 20)]


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


@pytest.fixture(scope="module")
def committed():
    root = find_root()
    return va.claims(lambda name: read_table(NOTEBOOK, name, root))


def test_claims_of_the_committed_tables(committed):
    assert all(isinstance(row, Claim) and row.paper == "li2023aaai" and row.verdict in VERDICTS for row in committed)
    sources = [row.source for row in committed]
    for source in ("Fig. 1 (top), §4.1", "Fig. 1 (bottom), §4.1", "Fig. 2, §4.3 (eq. 13)", "§5, Tables 3, 8",
                   "Tables 7, 11", "App. G; §4.2", "§4.3"):
        assert source in sources, source
    assert len({row.claim for row in committed}) == len(committed)
    for row in committed:
        if " of " in row.our_value:  # "h of c ...": the verdict follows the share rule
            holds, cases = (int(v) for v in row.our_value.split(" ")[0:3:2])
            share = holds / cases
            assert row.verdict == ("reproduced" if share >= 0.9 else "partly" if share >= 0.5 else "not reproduced")
