"""Shared fixtures of the workflow tests: tiny rank files in the layout the workflow writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]


def json_file(path: Path, value) -> str:
    """``value`` written as JSON to ``path``, whose name is returned for a command line (the
    ``--config`` of ``itemsampling study chunk`` and ``tables``)."""
    path.write_text(json.dumps(value))
    return str(path)


def _fake_ranks(n_users: int, n_items: int, scale: float, seed: int) -> pd.DataFrame:
    """Ranks table (user, item, rank, n_candidates) with per-user N_u, as `itemsampling train` writes."""
    rng = np.random.default_rng(seed)
    n_candidates = n_items - rng.integers(0, n_items // 4, n_users)
    ranks = np.minimum(1 + rng.geometric(1.0 / scale, n_users), n_candidates)
    return pd.DataFrame({"user": np.arange(n_users), "item": rng.integers(0, n_items, n_users),
                         "rank": ranks.astype(np.int64), "n_candidates": n_candidates.astype(np.int64)})


@pytest.fixture
def fake_ranks():
    """Factory of ranks tables: ``fake_ranks(n_users, n_items, scale, seed)``."""
    return _fake_ranks


def _train_synthetic(root: Path, models, seed: int = 3) -> Path:
    """Train ``models`` on the registry's synthetic data into ``root/results/ranks/synthetic/<model>``
    (ranks under ``all``, train.json) with one BLAS thread, and drop their saved states, so that
    loading them refits from train.json as for the committed models."""
    from threadpoolctl import threadpool_limits

    from itemsampling.cli import main

    folder = root / "results" / "ranks" / "synthetic"
    folder.mkdir(parents=True, exist_ok=True)
    for model in models:
        with threadpool_limits(1, user_api="blas"):
            assert main(["train", "--dataset", "synthetic", "--model", model, "--seed", str(seed), "--protocols", "all",
                         "--out-dir", str(folder / model), "--no-progress"]) == 0
        (folder / model / "model.npz").unlink(missing_ok=True)
    return root


@pytest.fixture(scope="session")
def train_synthetic():
    """Factory: ``train_synthetic(root, models)`` trains models on the synthetic dataset under ``root``."""
    return _train_synthetic


@pytest.fixture
def tiny_results(tmp_path: Path) -> Path:
    """A results/ tree with ranks of two models on one dataset, train.json and the dataset table."""
    for j, (model, scale) in enumerate((("m1", 30.0), ("m2", 80.0))):
        out = tmp_path / "results" / "ranks" / "tiny" / model
        out.mkdir(parents=True)
        for protocol in ("unseen", "all"):
            _fake_ranks(300, 400, scale, seed=10 * j + len(protocol)).to_parquet(out / f"{protocol}.parquet")
        (out / "train.json").write_text(json.dumps({"model_class": model, "hyperparameters": {"a": 1},
                                                    "seed": 0, "fit_seconds": 0.1, "rank_seconds": 0.1}))
    tables = tmp_path / "results" / "tables" / "00_data_and_models"
    tables.mkdir(parents=True)
    pd.DataFrame({"dataset": ["tiny"], "interactions": [1000], "users": [300], "items": [400]}).to_csv(
        tables / "datasets.csv", index=False)
    return tmp_path
