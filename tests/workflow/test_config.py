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


def _as_passed(value):
    """A value as the workflow passes it to `itemsampling train --set key=value`."""
    text = str(value).lower() if isinstance(value, bool) or value is None else str(value)
    return parse_value(text)


@pytest.mark.parametrize(("dataset", "model"), PAIRS, ids=[f"{d}-{m}" for d, m in PAIRS])
def test_committed_ranks_were_trained_with_the_config_hyperparameters(dataset, model):
    """Each model's train.json (committed with its ranks) records the hyperparameters of the fit:
    the config's must be among them, with the same values and types. After changing the config,
    retrain that model (`make retrain`) and commit its ranks."""
    given = {**CONFIG["models"][model], **CONFIG.get("hyperparameters", {}).get(dataset, {}).get(model, {})}
    recorded = json.loads((REPO / "results" / "ranks" / dataset / model / "train.json").read_text())
    fitted = recorded["hyperparameters"]
    for key, value in given.items():
        passed = _as_passed(value)
        assert key in fitted, key
        assert (type(fitted[key]), fitted[key]) == (type(passed), passed), key
