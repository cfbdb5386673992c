"""Whether a refitted model is the committed one: rounding passes, another model or split does not."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemsampling.studies.refits import (RANK_SHIFT_FLOOR, RANK_SHIFT_TOLERANCE, check_record,
                                         compare_refit_ranks)


@pytest.fixture
def ranks():
    rng = np.random.default_rng(0)
    n_candidates = rng.integers(200, 400, size=500)
    return pd.DataFrame({"user": np.arange(500), "item": rng.integers(0, 1000, size=500),
                         "rank": rng.integers(1, 200, size=500), "n_candidates": n_candidates})


def test_identical_ranks_agree(ranks):
    agreement = compare_refit_ranks(ranks.sample(frac=1, random_state=1), ranks, "m on d (all)")
    assert agreement.identical and (agreement.moved, agreement.max_shift, agreement.users) == (0, 0, 500)
    assert "gives the committed ranks of all 500 users" in str(agreement)


def test_shifts_up_to_the_tolerance_are_reported_not_refused(ranks):
    limit = np.maximum(RANK_SHIFT_FLOOR, np.floor(RANK_SHIFT_TOLERANCE * ranks["n_candidates"])).astype(int)
    moved = ranks.assign(rank=ranks["rank"] + np.where(ranks.index % 3 == 0, limit, 0))
    agreement = compare_refit_ranks(moved, ranks, "m on d (all)")
    assert agreement.moved == int((ranks.index % 3 == 0).sum())
    assert agreement.max_shift == limit[ranks.index % 3 == 0].max()
    assert agreement.max_relative_shift == pytest.approx((limit / ranks["n_candidates"])[ranks.index % 3 == 0].max())
    assert f"moves {agreement.moved} of 500 held-out items" in str(agreement)


def test_a_shift_beyond_the_tolerance_is_another_model(ranks):
    limit = max(RANK_SHIFT_FLOOR, RANK_SHIFT_TOLERANCE * ranks.loc[7, "n_candidates"])
    moved = ranks.copy()
    moved.loc[7, "rank"] += int(np.floor(limit)) + 1
    with pytest.raises(ValueError, match="not the committed model: 1 of 500 held-out items moved.*retrain"):
        compare_refit_ranks(moved, ranks, "m on d (all)")


@pytest.mark.parametrize("column", ["user", "item", "n_candidates"])
def test_other_users_items_or_candidates_are_another_split(ranks, column):
    other = ranks.copy()
    other.loc[5, column] += 1
    with pytest.raises(ValueError, match="another dataset or split"):
        compare_refit_ranks(other, ranks, "m on d (all)")
    with pytest.raises(ValueError, match="another dataset or split"):
        compare_refit_ranks(ranks.iloc[:-1], ranks, "m on d (all)")


def test_the_record_must_name_the_configured_fit(tmp_path):
    path = tmp_path / "train.json"
    with pytest.raises(FileNotFoundError, match="no training record"):
        check_record(path, "d", {"a": 1}, 3, "m")
    path.write_text(json.dumps({"dataset": "d", "hyperparameters": {"a": 1, "b": [1, 2]}, "seed": 3}))
    check_record(path, "d", {"a": 1, "b": (1, 2)}, 3, "m")  # tuples are recorded as lists
    for args, message in ((("e", {"a": 1, "b": [1, 2]}, 3), "another dataset 'd'"),
                          (("d", {"a": 2, "b": [1, 2]}, 3), "another hyperparameters"),
                          (("d", {"a": 1, "b": [1, 2]}, 4), "another seed 3")):
        with pytest.raises(ValueError, match=message):
            check_record(path, *args, "m")
