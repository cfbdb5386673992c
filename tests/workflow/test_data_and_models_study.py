"""Notebook 00's study: the bottom_ranks table, with and without the held-out items' context, and
its (empty) verdict rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.data import load_dataset
from itemsampling_study import data_and_models
from itemsampling_study.rank_tails import held_out_context, in_bottom
from itemsampling_study.tables import read_model_ranks
from itemsampling_study.verdicts import COLUMNS, verdict_table


def test_bottom_ranks_without_context_has_one_row_per_ranks_file(tiny_results):
    config = {"datasets": {"tiny": ["m1", "m2"]}, "protocols": ["unseen", "all"], "max_k": 5,
              "bottom_fraction": 0.2, "popularity_groups": 4, "item_context": False}
    tables = data_and_models.study_tables(config, 0, None, tiny_results)
    assert set(tables) == set(data_and_models.TABLES)
    bottom = tables["bottom_ranks"]
    assert len(bottom) == 4 and set(bottom["split"]) == {"all"}
    for row in bottom.itertuples():
        ranks = read_model_ranks("tiny", row.model, row.protocol, tiny_results)
        assert row.bottom_share == pytest.approx(in_bottom(ranks["rank"], ranks["n_candidates"]).mean())
        assert row.users == len(ranks)


@pytest.mark.slow
def test_bottom_ranks_with_context_splits_the_users_of_each_model(tmp_path, train_synthetic):
    train_synthetic(tmp_path, ["popularity", "ease"])
    config = {"datasets": {"synthetic": ["popularity", "ease"]}, "protocols": ["all"], "max_k": 5,
              "bottom_fraction": 0.2, "popularity_groups": 4, "item_context": True}
    bottom = data_and_models.study_tables(config, 0, None, tmp_path)["bottom_ranks"]
    data = load_dataset("synthetic")
    context = held_out_context(data.train, data.test_users, data.test_items[data.test_users])
    for model, rows in bottom.groupby("model"):
        rows = rows.set_index(["split", "group"])
        users = rows.loc[("all", "all"), "users"]
        assert users == len(context)
        popularity = rows.loc["popularity"]
        assert popularity["users"].sum() == users and len(popularity) >= 2
        assert (np.diff(popularity["item_users_min"]) > 0).all()  # Q1 holds the least popular items
        cooccurrence = rows.loc["cooccurrence"]
        assert cooccurrence.loc["none", "users"] == int((context["cooccurrences"] == 0).sum())
        assert cooccurrence["users"].sum() == users
        ranks = read_model_ranks("synthetic", model, "all", tmp_path).merge(context, on=["user", "item"])
        none = ranks[ranks["cooccurrences"] == 0]
        expected = in_bottom(none["rank"], none["n_candidates"]).mean() if len(none) else np.nan
        assert cooccurrence.loc["none", "bottom_share"] == pytest.approx(expected, nan_ok=True)


def test_notebook_00_compares_our_datasets_with_the_papers(tmp_path):
    folder = tmp_path / "results" / "tables" / "00_data_and_models"
    folder.mkdir(parents=True)
    pd.DataFrame({"dataset": ["ml-1m", "yelp-diffnet", "tiny"], "interactions": [1000209, 205529, 10],
                  "users": [6040, 17220, 2], "items": [3706, 35351, 5]}).to_csv(folder / "datasets.csv", index=False)
    frame = verdict_table({"00_data_and_models": "data_and_models"}, tmp_path).set_index("dataset")
    assert list(frame.columns) == [c for c in COLUMNS if c != "dataset"]
    assert frame.loc["ml-1m", "verdict"] == "reproduced"  # the papers' 6,040 users, 3,706 items, 1,000,209 pairs
    assert frame.loc["yelp-diffnet", "verdict"] == "not testable here"
    assert "25,677 users" in frame.loc["yelp-diffnet", "paper_value"]
    assert "tiny" not in frame.index  # no dataset of the papers


def test_the_sinking_note_names_the_model_and_shares_of_the_dataset():
    from itemsampling_study.data_and_models import sinking_note

    rows = []
    for dataset, none_users in (("a", 40), ("b", 2)):
        for model, shares in (("m1", (0.30, 0.80)), ("m2", (0.05, 0.10))):
            rows += [{"dataset": dataset, "model": model, "protocol": "unseen", "split": "all", "group": "all",
                      "users": 100, "bottom_share": shares[0]},
                     {"dataset": dataset, "model": model, "protocol": "unseen", "split": "cooccurrence",
                      "group": "none", "users": none_users, "bottom_share": shares[1]}]
    note = sinking_note(pd.DataFrame(rows), "a")
    assert note.startswith("On a 40.0% of the held-out items share no user")
    assert "(at most 2.0% on the other datasets); m1 ranks 80.0% of those" in note
    assert "(30.0% of all its held-out items" in note
    assert sinking_note(pd.DataFrame(rows), "c") == ""
