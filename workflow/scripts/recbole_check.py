"""Our correction of RecBole's uni100 runs against RecBole's own full ranking (``make recbole-check``).

Runs in the RecBole environment (.venv-recbole). For each dataset (ml-100k, ml-1m), split and model
(BPR, NeuMF): train once with a fixed seed, then evaluate the same trained model with ``mode: full`` (the truth)
and ``mode: uni100`` (sampled); the uni100 run's per-positive ranks go through
:func:`itemsampling.correct`, with each user's N_u (the candidates of the full ranking: the
catalogue less the user's history items) read from the full run, and the analytic 95% interval: with
one positive per user by MN_MES, with several by ``posterior_mle``, which keeps every positive's
own n (RecBole draws 100 negatives per positive and ranks each positive among the union of its
user's draws, so n grows with the user's positives) and whose interval carries its fit's part. Splits:

* ``loo``: leave-one-out (one test positive per user, ordered by time);
* ``ratio``: RecBole's default ratio split (80/10/10 of each user's items, random order), so
  several test positives per user.

The same model is evaluated in ``mode: pop100`` too (popularity-sampled negatives), corrected with
Hansen–Hurwitz rank estimates (:func:`itemsampling.recbole_metrics.popularity_ranks`). Writes one
row per (dataset, split, model, mode, metric, K) with RecBole's full and sampled values, our
estimate and its 95% interval, and whether the interval holds the full value.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import recbole
from recbole.config import Config
from recbole.data import create_dataset, data_preparation
from recbole.utils import get_model, get_trainer, init_seed

from itemsampling import correct, read_run
from itemsampling.recbole_metrics import popularity_ranks, register
from itemsampling.runs import Run

KS = (5, 10, 20)
METRICS = {"recall": "recall", "ndcg": "ndcg"}
EPOCHS = {"BPR": 10, "NeuMF": 5}


def _ml_100k(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "ml-100k" / "u.data", sep="\t", header=None,
                       names=["user_id", "item_id", "rating", "timestamp"])


def _ml_1m(folder: Path) -> pd.DataFrame:
    """ml-1m's complete interactions, each user's chronological rank as its time (no timestamps)."""
    table = pd.read_csv(folder / "ml-1m" / "ml-1m.interactions.tsv.gz", sep="\t")
    return table.rename(columns={"chrono_rank": "timestamp"})[["user_id", "item_id", "timestamp"]]


#: the datasets, read from the data folder into RecBole's atomic columns
DATASETS = {"ml-100k": _ml_100k, "ml-1m": _ml_1m}
_TYPES = {"user_id": "token", "item_id": "token", "rating": "float", "timestamp": "float"}


def atomic_file(dataset: str, data_root: Path) -> tuple[int, list[str]]:
    """The dataset as RecBole's atomic file ``<dataset>/<dataset>.inter``; its number of items N and
    its columns. RecBole reads ml-100k from its own bundled copy whatever the data path; that copy
    is checked to hold the same ratings as ours."""
    table = DATASETS[dataset](Path(os.environ.get("ITEMSAMPLING_DATA", "data/raw")))
    target = data_root / dataset / f"{dataset}.inter"
    target.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(target, sep="\t", index=False, header=[f"{c}:{_TYPES[c]}" for c in table.columns])
    if dataset == "ml-100k":
        bundled = pd.read_csv(Path(recbole.__file__).parent / "dataset_example" / "ml-100k" / "ml-100k.inter", sep="\t")
        bundled.columns = table.columns
        if not bundled.sort_values(["user_id", "item_id"], ignore_index=True).equals(
                table.sort_values(["user_id", "item_id"], ignore_index=True)):
            raise RuntimeError("RecBole's bundled ml-100k differs from ours")
    return int(table["item_id"].nunique()), list(table.columns)


SPLITS = {
    "loo": {"split": {"LS": "valid_and_test"}, "order": "TO", "group_by": "user"},
    "ratio": {"split": {"RS": [0.8, 0.1, 0.1]}, "order": "RO", "group_by": "user"},  # RecBole's default
}


@dataclass(frozen=True)
class Setup:
    """One check: the dataset (its atomic file under ``data_root``), its number of items and columns,
    the split."""

    dataset: str
    n_items: int
    columns: list
    split: str
    data_root: Path


def config(model: str, setup: Setup, mode: str, ranks_path: Path) -> Config:
    data_root, split = setup.data_root, setup.split
    return Config(model=model, dataset=setup.dataset, config_dict={
        "data_path": str(data_root), "seed": 2020, "reproducibility": True, "device": "cpu", "use_gpu": False,
        "epochs": EPOCHS[model], "train_batch_size": 2048, "show_progress": False, "state": "ERROR",
        "eval_args": {**SPLITS[split], "mode": mode},
        "metrics": ["Recall", "NDCG", "SampledRanks"], "topk": list(KS), "valid_metric": "NDCG@10",
        "sampled_ranks_path": str(ranks_path), "checkpoint_dir": str(data_root / "saved"),
        "catalogue_size": setup.n_items,  # RecBole's dataset.item_num - 1 (1682 on ml-100k)
        "load_col": {"inter": setup.columns},
    })


def evaluate(model_obj, model: str, setup: Setup, mode: str, ranks_path: Path):
    """RecBole's metrics of the trained model in ``mode``, and the test data it evaluated."""
    cfg = config(model, setup, mode, ranks_path)
    init_seed(cfg["seed"], cfg["reproducibility"])
    _, _, test_data = data_preparation(cfg, create_dataset(cfg))
    trainer = get_trainer(cfg["MODEL_TYPE"], cfg["model"])(cfg, model_obj)
    return trainer.evaluate(test_data, load_best_model=False, show_progress=False), test_data


def check(model: str, setup: Setup) -> list[dict]:
    data_root, name = setup.data_root, f"{setup.dataset} {setup.split} {model}"
    cfg = config(model, setup, "full", data_root / "train_ranks.csv")
    cfg["metrics"] = ["Recall", "NDCG"]
    init_seed(cfg["seed"], cfg["reproducibility"])
    train_data, valid_data, _ = data_preparation(cfg, create_dataset(cfg))
    model_obj = get_model(cfg["model"])(cfg, train_data._dataset).to(cfg["device"])
    trainer = get_trainer(cfg["MODEL_TYPE"], cfg["model"])(cfg, model_obj)
    start = time.perf_counter()
    trainer.fit(train_data, valid_data, saved=False, show_progress=False)
    print(f"{name}: trained in {time.perf_counter() - start:.0f} s")
    full, _ = evaluate(model_obj, model, setup, "full", data_root / "full.csv")
    uni, _ = evaluate(model_obj, model, setup, "uni100", data_root / "uni100.csv")
    full_ranks, uni_ranks = pd.read_csv(data_root / "full.csv"), pd.read_csv(data_root / "uni100.csv")
    positives = full_ranks[["user_id", "n_positives"]]
    if not positives.equals(uni_ranks[["user_id", "n_positives"]]):
        raise RuntimeError("the full and uni100 evaluations list different users or positives")
    uni_ranks["n_items"] = full_ranks["n_items"]  # N_u: the candidates of the full ranking
    run = read_run(uni_ranks, "recbole", model=model)
    method = "posterior_mle" if run.protocol == "several_positives" else "mn_mes"
    tables = {"uni100": (uni, method, correct(run, method, list(METRICS), list(KS), interval=0.95))}
    # pop100: RecBole's metrics from its own draw; the correction from a second draw of the same
    # sampler, scored by popularity_ranks (Hansen–Hurwitz ranks: RecBole's file keeps ranks only)
    pop, pop_data = evaluate(model_obj, model, setup, "pop100", data_root / "pop100.csv")
    pop_ranks = popularity_ranks(model_obj, pop_data)
    if not pop_ranks[["user_id", "n_positives"]].equals(positives):
        raise RuntimeError("the full and pop100 evaluations list different users or positives")
    pop_run = Run(pop_ranks["rank"], pop_ranks["n_candidates"], setup.n_items, "popularity", model,
                  pop_ranks["user_id"].to_numpy(), rank_estimates=pop_ranks["rank_estimate"].to_numpy())
    tables["pop100"] = (pop, "hansen_hurwitz",
                        correct(pop_run, "hansen_hurwitz", list(METRICS), list(KS), interval=0.95))
    rows = []
    for mode, (sampled, method, table) in tables.items():
        for row in table.itertuples():
            key = f"{METRICS[row.metric]}@{row.k}"
            rows.append({"dataset": setup.dataset, "split": setup.split, "model": model, "mode": mode, "method": method,
                         "metric": row.metric, "k": row.k, "recbole_full": full[key], "recbole_sampled": sampled[key],
                         "corrected": row.estimate, "lower": row.lower, "upper": row.upper,
                         "within": bool(row.lower <= full[key] <= row.upper),
                         "uncorrected_gap": sampled[key] - full[key], "corrected_gap": row.estimate - full[key]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", required=True)
    parser.add_argument("--work", default="results/frameworks/recbole_work")
    parser.add_argument("--models", nargs="+", default=list(EPOCHS))
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=list(SPLITS))
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    register()
    data_root = Path(args.work).resolve()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for dataset in args.datasets:
        n_items, columns = atomic_file(dataset, data_root)
        for split in args.splits:
            for model in args.models:  # the table is written after each model
                rows += check(model, Setup(dataset, n_items, columns, split, data_root))
                table = pd.DataFrame(rows)
                table.to_csv(args.output, index=False, float_format="%.4f")
    print(table.to_string(index=False, float_format="%.4f"))
    print(f"within the interval: {table['within'].sum()} of {len(table)} cells")


if __name__ == "__main__":
    main()
