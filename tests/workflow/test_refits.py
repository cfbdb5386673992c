"""Whether a refitted model is the committed one: rounding passes, another model or split does not."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemsampling_study.refits import MIN_RANK_CORRELATION, check_record, compare_refit_ranks


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


def test_rounding_sized_moves_are_reported_not_refused(ranks):
    moved = ranks.assign(rank=ranks["rank"] + np.where(ranks.index % 3 == 0, 2, 0))
    agreement = compare_refit_ranks(moved, ranks, "m on d (all)")
    a, b = moved["rank"] / moved["n_candidates"], ranks["rank"] / ranks["n_candidates"]
    assert agreement.moved == int((ranks.index % 3 == 0).sum()) and agreement.max_shift == 2
    assert agreement.max_relative_shift == pytest.approx((2 / ranks["n_candidates"])[ranks.index % 3 == 0].max())
    assert agreement.correlation == pytest.approx(np.corrcoef(a, b)[0, 1]) and agreement.correlation > MIN_RANK_CORRELATION
    assert f"moves {agreement.moved} of 500 held-out items" in str(agreement)


@pytest.mark.parametrize("shuffle", [lambda r: r[::-1], lambda r: np.random.default_rng(2).permutation(r)])
def test_unrelated_ranks_are_another_model(ranks, shuffle):
    other = ranks.assign(rank=shuffle(ranks["rank"].to_numpy()))
    with pytest.raises(ValueError, match=r"not the committed model: \d+ of 500 held-out items moved.*retrain"):
        compare_refit_ranks(other, ranks, "m on d (all)")


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
