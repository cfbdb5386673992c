"""The committed tables do not depend on the number of BLAS threads of the machine that made them.

Multithreaded BLAS sums in a different order than single-threaded BLAS; the CLS correction of AUC
then differs in the eighth digit (its least squares problem is ill-conditioned), which the ten
significant digits of the tables would show. The study command therefore computes with one BLAS
thread whatever the environment asks for. This runs the study of notebook 01 through the command
line, as the workflow does, with one and with two BLAS threads in the environment, on ranks large
enough that BLAS splits its products (N = 3,000 candidates, n = 101).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import json_file

pytestmark = [pytest.mark.slow, pytest.mark.blas_kernels]

CONFIG = {"dataset": "mid", "protocol": "unseen", "recommenders": {"X": "m1", "Y": "m2"}, "sample_size": 101,
          "repeats": 3, "scheme": "binomial", "k": 10, "gammas": [1.0, 0.01], "curve_gamma": 0.1,
          "curve_sample_sizes": [51, 101], "n_item_groups": 3, "toy_repeats": 5,
          "sensitivity": {"recommenders": [], "readings": [], "ties": ["random"]},
          "model_hyperparameters": {"m1": {}, "m2": {}}}
#: the console script of the environment that runs the tests
ITEMSAMPLING = str(Path(sys.executable).with_name("itemsampling"))
TABLES = ["table3_runs", "table3", "table4", "fig6_expected_recall"]


def _run(root: Path, threads: int, out: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    config = json_file(out.parent / f"{out.name}.json", CONFIG)
    common = ["--study", "sampled_metrics", "--config", config, "--seed", "3", "--root", str(root)]
    runs = []
    for model in CONFIG["recommenders"].values():
        run = out / f"{model}.parquet"
        subprocess.run([ITEMSAMPLING, "study", "chunk", *common, "--dataset", "mid",
                        "--model", model, "--protocol", "unseen", "--output", str(run)],
                       env=env, check=True, capture_output=True)
        runs.append(str(run))
    all_tables = ["table1_toy_exact", "table2_toy_sampled", "fig2_toy_expected", "fig3_expected_vs_true_rank",
                  "fig4_corrected_ap", "fig4_expected_corrected_ap", "rank_summary", "fig5_rank_histogram",
                  "table3_runs", "table3", "table3_orders", "table4", "fig6_expected_recall",
                  "fig6_smallest_sample", "sensitivity_summary", "sensitivity", "sensitivity_table4",
                  "sensitivity_orders", "sensitivity_paper", "ties", "sensitivity_table3", "sensitivity_pairs",
                  "fig6_closest_reading"]
    subprocess.run([ITEMSAMPLING, "study", "tables", *common, "--runs", *runs,
                    "--tables", *all_tables, "--out-dir", str(out)], env=env, check=True, capture_output=True)


def test_study_tables_are_identical_with_one_and_two_blas_threads(tmp_path, fake_ranks):
    for j, (model, scale) in enumerate((("m1", 40.0), ("m2", 90.0))):
        folder = tmp_path / "results" / "ranks" / "mid" / model
        folder.mkdir(parents=True)
        fake_ranks(2000, 3000, scale, seed=j).to_parquet(folder / "unseen.parquet")
    outputs = {}
    for threads in (1, 2):
        out = tmp_path / f"threads{threads}"
        out.mkdir()
        _run(tmp_path, threads, out)
        outputs[threads] = {name: (out / f"{name}.csv").read_bytes() for name in TABLES}
    for name in TABLES:
        assert outputs[1][name] == outputs[2][name], name
