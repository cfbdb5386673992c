"""Every registered model: beats popularity on planted data, is seeded, restores from its state."""

from __future__ import annotations

import numpy as np
import pytest

from itemsampling.data import default_registry
from itemsampling.metrics import global_metrics
from itemsampling.models.registry import (
    DEFAULTS,
    MODELS,
    default_hyperparameters,
    make_model,
    model_class,
    model_parameters,
)
from itemsampling.ranks import global_ranks

#: hyper-parameters for 120 items (the registry defaults are sized for real data)
SMALL = {
    "ease": {"l2": 20.0},
    "ials": {"factors": 8, "regularization": 1.0, "alpha": 5.0, "iterations": 10},
    "itemknn": {"k": 30},
    "krX": {},
    "krY": {},
    "krZ": {},
}
#: models whose fit makes random choices
RANDOM = {"ials", "krX"}


def recall_at_10(model, dataset) -> float:
    ranks = global_ranks(model, dataset.test_items, protocols=["unseen"], seed=0)["unseen"]
    return global_metrics(ranks["rank"], ranks["n_candidates"].to_numpy(), "recall", 10)["value"].item()


@pytest.fixture(scope="module")
def popularity_recall(planted):
    return recall_at_10(make_model("popularity").fit(planted.train), planted)


@pytest.mark.parametrize("name", SMALL)
def test_beats_popularity_on_planted_structure(name, planted, popularity_recall):
    recall = recall_at_10(make_model(name, overrides=SMALL[name]).fit(planted.train, seed=0), planted)
    assert recall > popularity_recall + 0.1, (name, recall, popularity_recall)


@pytest.mark.parametrize("name", ["popularity", *SMALL])
def test_determinism_by_seed_and_state_round_trip(name, planted):
    users = planted.test_users
    first = make_model(name, overrides=SMALL.get(name)).fit(planted.train, seed=11)
    second = make_model(name, overrides=SMALL.get(name)).fit(planted.train, seed=11)
    scores = first.score(users)
    assert scores.tobytes() == second.score(users).tobytes()
    if name in RANDOM:
        other = make_model(name, overrides=SMALL.get(name)).fit(planted.train, seed=12)
        assert not np.array_equal(other.score(users), scores)
    restored = make_model(name, overrides=SMALL.get(name)).load_state(planted.train, first.state())
    assert restored.score(users).tobytes() == scores.tobytes()


def test_defaults_are_layered_and_accepted():
    assert default_hyperparameters("ease", "ml-1m")["l2"] == DEFAULTS["ease"]["ml-1m"]["l2"]
    assert default_hyperparameters("ials", "unknown-dataset") == DEFAULTS["ials"]["*"]
    for name in SMALL:  # every default names a real constructor argument
        for dataset in DEFAULTS[name]:
            assert set(default_hyperparameters(name, dataset)) <= set(model_parameters(name))
    model = make_model("krZ", "ml-1m")
    assert model.hyperparameters["k_prime"] == 10 and model.hyperparameters["self_similarity"]
    assert make_model("ease", "ml-1m", {"l2": 3.0}).hyperparameters == {"l2": 3.0}


def test_per_dataset_defaults_name_registered_datasets():
    """A misspelt dataset key would silently leave the dataset on the "*" defaults."""
    datasets = set(default_registry().names)
    for name, table in DEFAULTS.items():
        assert set(table) - {"*"} <= datasets, name


def test_registry_errors():
    with pytest.raises(ValueError, match="unknown model 'svd'"):
        make_model("svd")
    with pytest.raises(ValueError, match=r"no hyper-parameter 'lambda'.*allowed: l2"):
        make_model("ease", overrides={"lambda": 1.0})
    assert set(MODELS) >= {"popularity", "ease", "ials", "itemknn", "krX", "krY", "krZ"}
    assert model_class("krY") is model_class("itemknn")
