"""A recommender that ``itemsampling train`` fitted, loaded again from its folder.

The folder holds ``train.json`` (:data:`TRAIN_FILE`: model, hyper-parameters, seed, sizes) and,
when it was small enough to keep, the fitted state ``model.npz`` (:data:`STATE_FILE`); without
the state the model is refitted with the recorded hyper-parameters and seed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .registry import model_class, model_parameters

__all__ = ["STATE_FILE", "TRAIN_FILE", "load_trained"]

TRAIN_FILE = "train.json"
STATE_FILE = "model.npz"


def load_trained(model_dir: str | os.PathLike, dataset, progress: bool | None = None):
    """The model that ``itemsampling train`` fitted, and its ``train.json`` record.

    The saved state is loaded if there is one (it is not committed with the ranks); otherwise
    the model is refitted with the recorded hyper-parameters and seed, which gives the same model.

    Raises
    ------
    FileNotFoundError
        If ``train.json`` is missing.
    ValueError
        If the record belongs to another dataset or its sizes do not match ``dataset``.
    """
    model_dir = Path(model_dir)
    path = model_dir / TRAIN_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `itemsampling train` for this dataset and model first")
    record = json.loads(path.read_text())
    if (record["dataset"], record["n_users"], record["n_items"]) != (dataset.name, dataset.n_users, dataset.n_items):
        raise ValueError(
            f"{path} was written for {record['dataset']} ({record['n_users']} users, {record['n_items']} items), "
            f"not for {dataset.name} ({dataset.n_users} users, {dataset.n_items} items)"
        )
    model = model_class(record["model"])(**_constructor_arguments(record))
    if record.get("state") and (model_dir / record["state"]).exists():  # states are not committed
        with np.load(model_dir / record["state"]) as arrays:
            model.load_state(dataset.train, {key: arrays[key] for key in arrays.files})
    else:
        model.fit(dataset.train, seed=record["seed"], progress=progress)
    return model, record


def _constructor_arguments(record: dict) -> dict:
    """Hyper-parameters accepted by the model's constructor (fixed ones, e.g. use_cg of krX, are dropped)."""
    allowed = set(model_parameters(record["model"]))
    return {k: v for k, v in record["hyperparameters"].items() if k in allowed}
