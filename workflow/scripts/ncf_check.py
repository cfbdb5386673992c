"""Our five ml-1m models scored on NCF's own ``ml-1m.test.negative``, corrected, and compared with their
exact metrics (``make ncf-check``; numbers in docs/frameworks.md).

For each model of the study on ml-1m: fit it as its committed ranks were fitted (the hyperparameters
and seed of ``results/ranks/ml-1m/<model>/train.json``), score the positive and the 99 negatives of
each line of NCF's file, read them with the NCF reader (:func:`itemsampling.read_run`, which takes
the file's repeated negatives as draws with replacement), correct the run with MN_MES against each
user's N_u (NCF drew the negatives from the items a user has not rated: the ``unseen`` protocol), and
compare with the exact metrics of the same fitted model's global ranks. Writes one row per (model,
metric, K): exact, uncorrected sampled, corrected with its 95% interval, whether the interval holds
the exact value.
"""

from __future__ import annotations

import argparse
import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling import correct, read_run
from itemsampling.data import load_dataset
from itemsampling.data.registry import default_registry
from itemsampling.metrics import global_metrics, metric_weights
from itemsampling.models.registry import make_model
from itemsampling.ranks import global_ranks
from itemsampling.runs import DuplicateNegativesWarning
from itemsampling.small_samples import candidate_duplicates, read_ncf_negatives

MODELS = ("popularity", "ease", "ials", "itemknn", "multivae", "neumf")
METRICS = ("recall", "ndcg")
KS = (1, 5, 10, 20)


def check_model(name: str, dataset, negatives_path: Path, items: np.ndarray, negatives: np.ndarray) -> list[dict]:
    """Rows of one model: exact, sampled and corrected metric@K with the interval."""
    record = json.loads(Path("results/ranks/ml-1m", name, "train.json").read_text())
    model = make_model(name, "ml-1m", record["hyperparameters"])
    model.fit(dataset.train, seed=record["seed"], progress=False)
    users = np.arange(items.size)
    candidates = np.column_stack([items, negatives])
    scores = model.score_items(users, candidates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateNegativesWarning)  # counted in the table's note
        run = read_run(negatives_path, "ncf", scores=scores, n_items=dataset.n_items, model=name)
    unseen = global_ranks(model, dataset.test_items, protocols=["unseen"], seed=record["tie_break_seed"],
                          progress=False)["unseen"].sort_values("user")
    if not np.array_equal(unseen["user"].to_numpy(), users):
        raise ValueError("NCF's file must list every ml-1m user once, in user order")
    n_u = unseen["n_candidates"].to_numpy()
    run = replace(run, n_items=n_u)
    corrected = correct(run, "mn_mes", METRICS, KS, interval=0.95)
    exact = global_metrics(unseen["rank"].to_numpy(), n_u, METRICS, KS)
    rows = []
    for metric in METRICS:
        for k in KS:
            truth = float(exact.query("metric == @metric and k == @k")["value"].iloc[0])
            ours = corrected.query("metric == @metric and k == @k").iloc[0]
            sampled = float(metric_weights(metric, k, candidates.shape[1])[run.ranks - 1].mean())
            rows.append({"model": name, "metric": metric, "k": k, "exact": truth, "sampled": sampled,
                         "corrected": ours["estimate"], "lower": ours["lower"], "upper": ours["upper"],
                         "within": bool(ours["lower"] <= truth <= ours["upper"]),
                         "sampled_gap": sampled - truth, "corrected_gap": ours["estimate"] - truth,
                         "protocol": run.protocol})
    print(f"{name}: recall@10 exact {rows[2]['exact']:.4f}, sampled {rows[2]['sampled']:.4f}, "
          f"corrected {rows[2]['corrected']:.4f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="results/frameworks/ncf_check.csv")
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    dataset = load_dataset("ml-1m")
    path = default_registry().resolve("ml-1m", roles=["ncf_negatives"])["ncf_negatives"]
    items, negatives = read_ncf_negatives(path)
    if not np.array_equal(items, dataset.test_items):
        raise ValueError(f"{path}: its held-out items differ from the ml-1m split's test items")
    duplicates = candidate_duplicates(items, negatives)
    rated = int(dataset.train[np.arange(items.size)[:, None], negatives].sum())
    print(f"NCF's file: {duplicates}; {rated} negatives are items the user rated", flush=True)
    rows = [row for name in args.models for row in check_model(name, dataset, path, items, negatives)]
    table = pd.DataFrame(rows)
    table["duplicate_rows"] = duplicates["rows_with_duplicates"]
    table["rated_negatives"] = rated
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    partial = Path(args.output).with_suffix(".partial")
    table.to_csv(partial, index=False, float_format="%.6g")
    partial.replace(args.output)
    print(f"{int(table['within'].sum())} of {len(table)} cells within the interval -> {args.output}")


if __name__ == "__main__":
    main()
