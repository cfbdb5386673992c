"""Dataset statistics: the interactions/users/items/density table of the papers (e.g. Table 5
of Li et al. AAAI'23, Table 2 of Li et al. KDD'20)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from .dataset import Dataset

__all__ = ["dataset_summary"]


def dataset_summary(datasets: Iterable[Dataset] | Mapping[str, Dataset]) -> pd.DataFrame:
    """One row per dataset: size, density and split.

    Columns: ``dataset``, ``interactions`` (training pairs plus held-out pairs, i.e. the
    distinct (user, item) pairs), ``users``, ``items``, ``density`` (interactions /
    (users · items)), ``train_interactions``, ``test_users`` (users with a held-out item) and
    ``description``.
    """
    if isinstance(datasets, Mapping):
        datasets = datasets.values()
    rows = []
    for data in datasets:
        if not isinstance(data, Dataset):
            raise ValueError(f"dataset_summary needs Dataset objects, got {type(data).__name__}")
        test = int(data.test_users.size)
        interactions = int(data.train.nnz) + test
        rows.append(
            {
                "dataset": data.name,
                "interactions": interactions,
                "users": data.n_users,
                "items": data.n_items,
                "density": interactions / (data.n_users * data.n_items),
                "train_interactions": int(data.train.nnz),
                "test_users": test,
                "description": data.description,
            }
        )
    return pd.DataFrame(
        rows,
        columns=["dataset", "interactions", "users", "items", "density", "train_interactions", "test_users", "description"],
    )
