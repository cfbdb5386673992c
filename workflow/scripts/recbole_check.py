"""Our correction of RecBole's uni100 runs against RecBole's own full ranking (``make recbole-check``).

Runs in the RecBole environment (.venv-recbole). For each split and model (BPR, NeuMF): train once
on ml-100k with a fixed seed, then evaluate the same trained model with ``mode: full`` (the truth)
and ``mode: uni100`` (sampled); the uni100 run's per-positive ranks go through
:func:`itemsampling.correct`, with each user's N_u (the candidates of the full ranking: the
catalogue less the user's history items) read from the full run. Splits:

* ``loo``: leave-one-out (one test positive per user, ordered by time);
* ``ratio``: RecBole's default ratio split (80/10/10 of each user's items, random order), so
  several test positives per user.

A ``pop100`` evaluation is tried too, and its error recorded. Writes one row per (split, model,
metric, K) with RecBole's full and uni100 values, our estimate and its 95% interval, and whether
the interval holds the full value.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import pandas as pd
from recbole.config import Config
from recbole.data import create_dataset, data_preparation
from recbole.utils import get_model, get_trainer, init_seed

from itemsampling import correct, read_run
from itemsampling.recbole_metrics import register

KS = (5, 10, 20)
METRICS = {"recall": "recall", "ndcg": "ndcg"}
EPOCHS = {"BPR": 10, "NeuMF": 5}


def atomic_files(data_root: Path) -> Path:
    """ml-100k's u.data as RecBole's atomic file ``ml-100k/ml-100k.inter``."""
    source = Path(os.environ.get("ITEMSAMPLING_DATA", "data/raw")) / "ml-100k" / "u.data"
    target = data_root / "ml-100k" / "ml-100k.inter"
    target.parent.mkdir(parents=True, exist_ok=True)
    table = pd.read_csv(source, sep="\t", header=None, names=["user_id", "item_id", "rating", "timestamp"])
    table.to_csv(target, sep="\t", index=False,
                 header=["user_id:token", "item_id:token", "rating:float", "timestamp:float"])
    return data_root


SPLITS = {
    "loo": {"split": {"LS": "valid_and_test"}, "order": "TO", "group_by": "user"},
    "ratio": {"split": {"RS": [0.8, 0.1, 0.1]}, "order": "RO", "group_by": "user"},  # RecBole's default
}


def config(model: str, data_root: Path, mode: str, ranks_path: Path, split: str) -> Config:
    return Config(model=model, dataset="ml-100k", config_dict={
        "data_path": str(data_root), "seed": 2020, "reproducibility": True, "device": "cpu", "use_gpu": False,
        "epochs": EPOCHS[model], "train_batch_size": 2048, "show_progress": False, "state": "ERROR",
        "eval_args": {**SPLITS[split], "mode": mode},
        "metrics": ["Recall", "NDCG", "SampledRanks"], "topk": list(KS), "valid_metric": "NDCG@10",
        "sampled_ranks_path": str(ranks_path), "checkpoint_dir": str(data_root / "saved"),
        "catalogue_size": 1682,  # ml-100k's items (RecBole's dataset.item_num - 1)
    })


def evaluate(model_obj, model: str, data_root: Path, mode: str, ranks_path: Path, split: str) -> dict:
    cfg = config(model, data_root, mode, ranks_path, split)
    init_seed(cfg["seed"], cfg["reproducibility"])
    _, _, test_data = data_preparation(cfg, create_dataset(cfg))
    trainer = get_trainer(cfg["MODEL_TYPE"], cfg["model"])(cfg, model_obj)
    return trainer.evaluate(test_data, load_best_model=False, show_progress=False)


def check(model: str, data_root: Path, split: str) -> list[dict]:
    cfg = config(model, data_root, "full", data_root / "train_ranks.csv", split)
    cfg["metrics"] = ["Recall", "NDCG"]
    init_seed(cfg["seed"], cfg["reproducibility"])
    train_data, valid_data, _ = data_preparation(cfg, create_dataset(cfg))
    model_obj = get_model(cfg["model"])(cfg, train_data._dataset).to(cfg["device"])
    trainer = get_trainer(cfg["MODEL_TYPE"], cfg["model"])(cfg, model_obj)
    start = time.perf_counter()
    trainer.fit(train_data, valid_data, saved=False, show_progress=False)
    print(f"{split} {model}: trained in {time.perf_counter() - start:.0f} s")
    full = evaluate(model_obj, model, data_root, "full", data_root / "full.csv", split)
    uni = evaluate(model_obj, model, data_root, "uni100", data_root / "uni100.csv", split)
    full_ranks, uni_ranks = pd.read_csv(data_root / "full.csv"), pd.read_csv(data_root / "uni100.csv")
    if not full_ranks[["user_id", "n_positives"]].equals(uni_ranks[["user_id", "n_positives"]]):
        raise RuntimeError("the full and uni100 evaluations list different users or positives")
    uni_ranks["n_items"] = full_ranks["n_items"]  # N_u: the candidates of the full ranking
    run = read_run(uni_ranks, "recbole", model=model)
    table = correct(run, "mn_mes", list(METRICS), list(KS), interval=0.95)
    try:
        evaluate(model_obj, model, data_root, "pop100", data_root / "pop100.csv", split)
        correct(read_run(data_root / "pop100.csv", "recbole", model=model))
        pop = "corrected"
    except NotImplementedError as exc:
        pop = str(exc).split(";")[0] + ": not supported yet"
    print(f"{split} {model} pop100: {pop}")
    rows = []
    for row in table.itertuples():
        key = f"{METRICS[row.metric]}@{row.k}"
        rows.append({"split": split, "model": model, "metric": row.metric, "k": row.k, "recbole_full": full[key],
                     "recbole_uni100": uni[key], "corrected": row.estimate, "lower": row.lower, "upper": row.upper,
                     "within": bool(row.lower <= full[key] <= row.upper),
                     "uncorrected_gap": uni[key] - full[key], "corrected_gap": row.estimate - full[key]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", required=True)
    parser.add_argument("--work", default="results/frameworks/recbole_work")
    parser.add_argument("--models", nargs="+", default=list(EPOCHS))
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=list(SPLITS))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    register()
    data_root = atomic_files(Path(args.work).resolve())
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for split in args.splits:
        for model in args.models:  # the table is written after each model
            rows += check(model, data_root, split)
            table = pd.DataFrame(rows)
            table.to_csv(args.output, index=False, float_format="%.4f")
    print(table.to_string(index=False, float_format="%.4f"))
    print(f"within the interval: {table['within'].sum()} of {len(table)} cells")


if __name__ == "__main__":
    main()
