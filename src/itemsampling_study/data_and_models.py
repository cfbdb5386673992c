"""Notebook 00: the datasets, how every model was trained, and its exact metrics.

Tables (from the ``train.json`` and global ranks that ``itemsampling train`` writes):

* ``training``: dataset, model, model class, hyperparameters (JSON), seed;
* ``training_times``: fit and rank wall times (the only numbers that differ between reruns);
* ``exact_metrics``: Recall, NDCG and AP at K = 1..``max_k`` of every (dataset, model,
  protocol) — the targets every sampled estimate tries to recover;
* ``rank_histogram``: the fraction of test users whose held-out item has its global rank in
  each of about 25 logarithmic buckets (as in Krichene & Rendle's Fig. 5);
* ``bottom_ranks``: the share of test users whose held-out item ranks in the bottom
  ``bottom_fraction`` of its candidates, over all users and (with ``item_context``) by the
  popularity quantile of the held-out item and by whether it co-occurs with a training item of
  the user (:func:`itemsampling_study.rank_tails.bottom_shares`). ``item_context`` loads each dataset
  (as the live evaluation does, without listing its files as inputs: they are checked as they
  are loaded).

``datasets`` (the dataset summary) is written by ``itemsampling study datasets``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.metrics import global_metrics

from .rank_tails import bottom_shares, held_out_context
from .tables import ranks_path, read_model_ranks

__all__ = ["METRICS", "TABLES", "inputs", "isolated_shares", "sinking_note", "study_config", "study_tables"]

METRICS = ("recall", "ndcg", "ap")
TABLES = ("training", "training_times", "exact_metrics", "rank_histogram", "bottom_ranks")


def study_config(config: Mapping) -> dict:
    """The parameters of this study: ``datasets`` (dataset -> models), ``protocols``, ``max_k``,
    ``bottom_fraction``, ``popularity_groups`` and ``item_context``."""
    return {"datasets": {d: list(m) for d, m in config["train"].items()}, **config["data_and_models"]}


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from: each model's ``train.json`` and ranks."""
    out = []
    for dataset, models in config["datasets"].items():
        for model in models:
            out.append(str(ranks_path(dataset, model, "unseen").with_name("train.json")))
            out.extend(str(ranks_path(dataset, model, p)) for p in config["protocols"])
    return out


def chunks(config: Mapping) -> list[dict]:
    """This study has no repeated sampling."""
    return []


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """All tables of notebook 00 (see the module docstring)."""
    rows, exact, histograms, bottoms = [], [], [], []
    for dataset, models in config["datasets"].items():
        context = _context(dataset) if config.get("item_context", True) else None
        for model in models:
            info = json.loads(ranks_path(dataset, model, "unseen", root).with_name("train.json").read_text())
            rows.append({
                "dataset": dataset, "model": model, "class": info.get("model_class", ""),
                "hyperparameters": json.dumps(info.get("hyperparameters", {}), sort_keys=True),
                "seed": info.get("seed"), "fit_seconds": info.get("fit_seconds"),
                "rank_seconds": info.get("rank_seconds"),
            })
            for protocol in config["protocols"]:
                ranks = read_model_ranks(dataset, model, protocol, root)
                R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
                table = global_metrics(R, N, METRICS, range(1, config["max_k"] + 1))
                exact.append(table.assign(dataset=dataset, model=model, protocol=protocol))
                histograms.append(_histogram(R, N).assign(dataset=dataset, model=model, protocol=protocol))
                bottoms.append(bottom_shares(ranks, context, fraction=config.get("bottom_fraction", 0.2),
                                             popularity_groups=config.get("popularity_groups", 4))
                               .assign(dataset=dataset, model=model, protocol=protocol))
    training = pd.DataFrame(rows)
    times = ["fit_seconds", "rank_seconds"]
    keys = ["dataset", "model", "protocol"]
    exact = pd.concat(exact, ignore_index=True)
    histogram = pd.concat(histograms, ignore_index=True)
    bottom = pd.concat(bottoms, ignore_index=True)
    return {
        "training": training.drop(columns=times),
        "training_times": training[["dataset", "model", *times]],
        "exact_metrics": exact[[*keys, *[c for c in exact.columns if c not in keys]]],
        "rank_histogram": histogram[[*keys, *[c for c in histogram.columns if c not in keys]]],
        "bottom_ranks": bottom[[*keys, *[c for c in bottom.columns if c not in keys]]],
    }


def _context(dataset: str) -> pd.DataFrame:
    """:func:`~itemsampling_study.rank_tails.held_out_context` of every test user of a registered dataset."""
    from itemsampling.data import load_dataset

    data = load_dataset(dataset)
    users = data.test_users
    return held_out_context(data.train, users, data.test_items[users])


def _histogram(R: np.ndarray, N: np.ndarray, buckets: int = 25) -> pd.DataFrame:
    edges = np.unique(np.geomspace(1, int(N.max()) + 1, buckets).astype(int))
    counts, _ = np.histogram(R, bins=edges)
    return pd.DataFrame({"rank_from": edges[:-1], "rank_to": edges[1:], "fraction": counts / counts.sum()})


def isolated_shares(bottom: pd.DataFrame) -> pd.Series:
    """Per dataset, the share of test users whose held-out item co-occurs with none of their
    training items (``bottom_ranks``; empty without the co-occurrence split)."""
    none = bottom[(bottom["split"] == "cooccurrence") & (bottom["group"] == "none")].drop_duplicates("dataset")
    everyone = bottom[bottom["split"] == "all"].drop_duplicates("dataset").set_index("dataset")["users"]
    return (none.set_index("dataset")["users"] / everyone).dropna()


def sinking_note(bottom: pd.DataFrame, dataset: str) -> str:
    """One sentence, for any notebook that reads ``dataset``'s results, on the model whose held-out
    items sink most there, from notebook 00's ``bottom_ranks`` table (first protocol listed).

    Empty when the table has no co-occurrence split for ``dataset``.
    """
    view = bottom[bottom["protocol"] == bottom["protocol"].iloc[0]]
    split = view[(view["split"] == "cooccurrence") & (view["group"] == "none")]
    everyone = view[(view["split"] == "all")].set_index(["dataset", "model"])
    if dataset not in set(split["dataset"]):
        return ""
    users = isolated_shares(view)
    share = everyone.loc[dataset, "bottom_share"]
    model = share.idxmax()
    none = split[(split["dataset"] == dataset)].set_index("model")["bottom_share"]
    return (f"On {dataset} {users[dataset]:.1%} of the held-out items share no user with any training item of their "
            f"user (at most {users.drop(dataset).max():.1%} on the other datasets); {model} ranks "
            f"{none[model]:.1%} of those in the bottom of the candidates ({share[model]:.1%} of all its held-out "
            "items; notebook 00, `bottom_ranks`). Its bimodal rank distribution there is a property of the model on "
            "this sparse data, not of sampling or of the estimators.")
