"""MN's M with per-user candidates: itemsampling_study.mn_users."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling_study import mn_users as mnu

CONFIG = {"repeats": 3, "sample_size": 20, "datasets": ["tiny"], "protocol": "unseen", "n_item_groups": [1, 4],
          "estimators": ["mle", "mn_mle", "mn_mle_total"], "k": 5, "max_k": 10, "models": {"A": "m1", "B": "m2"}}


def test_the_names_pick_the_scope():
    ests = {e.label: e for e in mnu.estimators(["mle", "mn_mes", "mn_mes_total"])}
    assert ests["mn_mes_total"].method == "mn_mes" and ests["mn_mes_total"].options["m_scope"] == "total"
    assert "m_scope" not in ests["mn_mes"].options
    with pytest.raises(ValueError, match="only MN"):
        mnu.estimators(["mle_total"])


def test_the_table_and_the_shift(tiny_results):
    table = mnu.study_tables(CONFIG, 0, None, tiny_results)["mn_users"]
    assert list(table.columns) == list(mnu.COLUMNS)
    assert len(table) == 2 * 3 * 2 * 3  # models, estimators, groupings, metrics
    assert set(zip(table["estimator"], table["m_scope"], strict=True)) == {("mle", "none"), ("mn_mle", "group"),
                                                                          ("mn_mle", "total")}
    one = table[table["n_groups"] == 1].set_index(["model", "metric", "m_scope"])
    # one group: the group's M_g is the whole M
    assert one.xs("group", level="m_scope")["mean"].to_numpy() == pytest.approx(
        one.xs("total", level="m_scope")["mean"].to_numpy(), rel=1e-12)
    shift = mnu.group_shift(table)
    assert len(shift) == 2 * 3 * 3 and (shift["shift_sd"] >= 0).all()


def test_the_shift_is_in_standard_deviations():
    rows = [{"dataset": "d", "model": "m", "estimator": "mn_mle", "m_scope": "group", "metric": "recall",
             "n_groups": g, "mean": mean, "std": std, "exact": 0.2, "rel_error": 0.1}
            for g, mean, std in ((1, 0.20, 0.01), (20, 0.23, 0.02))]
    (row,) = mnu.group_shift(pd.DataFrame(rows)).itertuples()
    assert row.shift_sd == pytest.approx(1.5) and row.shift_rel == pytest.approx(0.15)
    assert np.isclose(row.error_few, 0.1)
