"""Notebook 05, several held-out items per user: RecBole's Recall@K, NDCG@K and HR@K on a ratio
split, exact, uncorrected sampled and estimated from each positive's sampled rank; rule
``ratio_protocols``, from the committed ratio-split ranks (``results/ranks/<dataset>/ratio/<model>.parquet``,
one row per user and positive, ``itemsampling train --split ratio``).

For every (dataset, model) of the configuration, design and repeat,
:func:`itemsampling.positive_sampling.compare_sampled_metrics` draws each positive's sampled rank
among m = ``negatives`` negatives (``replace``: with replacement, as RecBole draws them) in each
design of ``designs``:

* ``per_positive``: every positive its own m negatives (RecBole's ``uniN``: N negatives per
  positive);
* ``shared``: one set of m negatives per user, shared by her positives.

RecBole draws N negatives per positive but then ranks each positive against the union of all the
negatives drawn for the user's positives (``Trainer._neg_sample_batch_eval``), i.e. the ``shared``
design with up to P_u N negatives (:mod:`itemsampling.positive_sampling`); ``per_positive`` is the
design its configuration describes. Kinds of value: ``exact`` (the full ranking, RecBole's full
evaluation), ``sampled`` (the uncorrected metric among the sampled candidates) and one per
estimator of ``methods`` (:func:`itemsampling.multi_positive.estimate_multi_positive`:
``rank_estimate``, KDD'20 eq. 20 per positive; ``mn_mes``, AAAI'23's MN with the MES prior, on
each positive's kernel).

Tables (``results/tables/05_protocols_in_use/``):

* ``ratio_accuracy``: per (dataset, model, design, kind, metric, K): exact, mean, bias, sd over
  the repeats, RMSE, relative bias;
* ``ratio_winners``: per (design, kind, metric, K): the model pairs (of both datasets) x repeats
  ordered as by the exact metric, and the share.

Configuration: subsection ``ratio`` of section ``protocols_in_use``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling._validation import check_choice
from itemsampling.positive_sampling import DESIGNS, compare_sampled_metrics

from .engine import derive_seed
from .experiments import pooled_order_agreement

__all__ = ["accuracy", "chunks", "findings", "inputs", "model_runs", "ratio_path", "study_config", "study_tables",
           "winners"]


#: the columns of the tables
ACCURACY_COLUMNS = ["dataset", "model", "design", "kind", "metric", "k", "exact", "mean", "bias", "sd", "rmse",
                    "relative_bias", "repeats"]
WINNER_COLUMNS = ["design", "kind", "metric", "k", "agree", "cases", "pairs", "fraction"]


def study_config(config: Mapping) -> dict:
    """Subsection ``ratio`` of ``protocols_in_use`` with the section's cut-offs."""
    section = config["protocols_in_use"]
    return {"ks": section["ks"], **section["ratio"]}


def chunks(config: Mapping) -> list[dict]:
    """None: the study runs in one step (rule ``ratio_protocols``)."""
    return []


def ratio_path(dataset: str, model: str, root: str | Path = ".") -> Path:
    """``results/ranks/<dataset>/ratio/<model>.parquet`` under ``root``."""
    return Path(root) / "results" / "ranks" / dataset / "ratio" / f"{model}.parquet"


def inputs(config: Mapping) -> list[str]:
    """The ratio-split ranks of every (dataset, model)."""
    return [str(ratio_path(d, m)) for d in config["datasets"] for m in config["models"]]


def model_runs(ranks: pd.DataFrame, config: Mapping, seed: int, dataset: str, model: str) -> pd.DataFrame:
    """Every run of one (dataset, model): per design, the exact values (repeat -1) and per repeat
    the sampled and corrected values of :func:`compare_sampled_metrics`, seeded by the labels."""
    frames = []
    for design in config["designs"]:
        check_choice("design", design, DESIGNS)
        rng = np.random.default_rng(derive_seed(seed, dataset, model, "ratio", design, config["negatives"]))
        frame = compare_sampled_metrics(ranks, int(config["negatives"]), design=design, replace=bool(config["replace"]),
                                        repeats=int(config["repeats"]), rng=rng, metrics=tuple(config["metrics"]),
                                        ks=tuple(config["ks"]), methods=tuple(config["methods"]))
        frames.append(frame.assign(dataset=dataset, model=model, design=design))
    out = pd.concat(frames, ignore_index=True)
    return out[["dataset", "model", "design", "repeat", "kind", "metric", "k", "value"]]


def _with_exact(runs: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "model", "design", "metric", "k"]
    exact = runs[runs["kind"] == "exact"][[*keys, "value"]].rename(columns={"value": "exact"})
    return runs[runs["kind"] != "exact"].merge(exact, on=keys, how="left", validate="many_to_one")


def accuracy(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, design, kind, metric, K): exact, mean, bias, sd (ddof = 1), RMSE and
    relative bias (NaN where the exact value is 0) over the repeats."""
    keys = ["dataset", "model", "design", "kind", "metric", "k"]
    frame = _with_exact(runs)
    frame["error"] = frame["value"] - frame["exact"]
    out = frame.groupby(keys, sort=False).agg(exact=("exact", "first"), mean=("value", "mean"), bias=("error", "mean"),
                                              sd=("value", "std"), mse=("error", lambda e: float(np.mean(np.square(e)))),
                                              repeats=("repeat", "size")).reset_index()
    out["rmse"] = np.sqrt(out.pop("mse"))
    out["relative_bias"] = out["bias"] / out["exact"].where(out["exact"] > 0)
    return out[ACCURACY_COLUMNS]


def winners(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (design, kind, metric, K): the model pairs (of every dataset) x repeats whose value
    orders the pair as the exact metric does, and the share."""
    frame = _with_exact(runs)
    return pooled_order_agreement(frame, ["dataset", "design", "kind", "metric", "k"], estimate="value")


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The tables ``ratio_accuracy`` and ``ratio_winners`` (``runs`` is unused: no chunks)."""
    frames = []
    for dataset in config["datasets"]:
        for model in config["models"]:
            path = ratio_path(dataset, model, root)
            if not path.is_file():
                raise FileNotFoundError(f"{path} does not exist; train the model with "
                                        f"`itemsampling train --split ratio` on {dataset}")
            frames.append(model_runs(pd.read_parquet(path), config, seed, dataset, model))
    if not frames:  # no dataset with ratio-split ranks configured
        return {"ratio_accuracy": pd.DataFrame(columns=ACCURACY_COLUMNS), "ratio_winners": pd.DataFrame(columns=WINNER_COLUMNS)}
    runs = pd.concat(frames, ignore_index=True)
    runs["k"] = runs["k"].astype("Int64")
    return {"ratio_accuracy": accuracy(runs), "ratio_winners": winners(runs)}


def findings(tables: Mapping[str, pd.DataFrame], ks) -> pd.DataFrame:
    """The findings of several held-out items per user, read from ``ratio_accuracy`` (median
    relative bias over (dataset, model)) and ``ratio_winners``."""
    acc, win = tables["ratio_accuracy"], tables["ratio_winners"]
    k = 10 if 10 in ks else sorted(ks)[len(ks) // 2]
    names = {"recall": "Recall", "ndcg": "NDCG", "hit": "HR"}
    rows = []
    methods = [kind for kind in acc["kind"].unique() if kind != "sampled"]
    for design in acc["design"].unique():
        sel = acc[(acc["design"] == design) & (acc["k"] == k)]
        bias = sel.groupby(["metric", "kind"], sort=False)["relative_bias"].median()
        text = "; ".join(f"{names.get(m, m)}@{k} {bias[(m, 'sampled')]:+.0%} uncorrected, "
                         + ", ".join(f"{bias[(m, kind)]:+.0%} {kind}" for kind in methods)
                         for m in sel["metric"].unique())
        rows.append((f"Ratio split, negatives {design.replace('_', ' ')}, median relative bias: {text}.",
                     "ratio_accuracy"))
    sel = win[(win["k"] == k) & (win["metric"] == "recall")]
    text = ", ".join(f"{r.design.replace('_', ' ')} {r.kind} {100 * r.fraction:.0f}%" for r in sel.itertuples())
    rows.append((f"Ratio split, Recall@{k}: model pairs ordered as by the full ranking: {text}.", "ratio_winners"))
    return pd.DataFrame(rows, columns=["finding", "table"])
