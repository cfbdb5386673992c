"""The study's hyperparameters in config/config.yaml are those the committed ranks were trained with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from itemsampling.commands.train import parse_value

REPO = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
PAIRS = [(d, m) for d, models in CONFIG["train"].items() for m in models]
RATIO_PAIRS = [(d, m) for d, models in CONFIG["ratio_split"]["train"].items() for m in models]


def _as_passed(value):
    """A value as the workflow passes it to `itemsampling train --set key=value`."""
    text = str(value).lower() if isinstance(value, bool) or value is None else str(value)
    return parse_value(text)


def _check_fit(dataset, model, record_path):
    given = {**CONFIG["models"][model], **CONFIG.get("hyperparameters", {}).get(dataset, {}).get(model, {})}
    recorded = json.loads(record_path.read_text())
    fitted = recorded["hyperparameters"]
    for key, value in given.items():
        passed = _as_passed(value)
        assert key in fitted, key
        assert (type(fitted[key]), fitted[key]) == (type(passed), passed), key
    assert recorded["seed"] == CONFIG["seed"]
    return recorded


@pytest.mark.parametrize(("dataset", "model"), PAIRS, ids=[f"{d}-{m}" for d, m in PAIRS])
def test_committed_ranks_were_trained_with_the_config_hyperparameters(dataset, model):
    """Each model's train.json (committed with its ranks) records the hyperparameters of the fit:
    the config's must be among them, with the same values and types. After changing the config,
    retrain that model (`make retrain`) and commit its ranks."""
    _check_fit(dataset, model, REPO / "results" / "ranks" / dataset / model / "train.json")


@pytest.mark.parametrize(("dataset", "model"), RATIO_PAIRS, ids=[f"{d}-{m}" for d, m in RATIO_PAIRS])
def test_committed_ratio_ranks_were_trained_with_the_config_hyperparameters_and_split(dataset, model):
    """The ratio-split models: the same hyperparameters as their leave-one-out fit, and the split
    of `ratio_split`."""
    recorded = _check_fit(dataset, model, REPO / "results" / "ranks" / dataset / "ratio" / f"{model}.json")
    assert recorded["split"]["test_fraction"] == CONFIG["ratio_split"]["test_fraction"]
