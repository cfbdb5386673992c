"""Each notebook runs under papermill with tiny parameters and writes its tables and figures."""

from __future__ import annotations

import json

import pytest

from itemsampling import experiments_krichene as ek
from itemsampling.experiments_krichene import load_ranks

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]

papermill = pytest.importorskip("papermill")

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def _run(name, tmp_path, parameters):
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(str(REPO / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters,
                               kernel_name="python3", cwd=str(tmp_path), progress_bar=False)
    return out


def test_notebooks_have_one_parameters_cell_and_no_outputs():
    for name in ("00_data_and_models", "01_sampled_metrics"):
        nb = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, name
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), name
        assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_data_and_models_notebook(tiny_results):
    _run("00_data_and_models", tiny_results,
         {"datasets": {"tiny": ["m1", "m2"]}, "protocols": ["unseen", "all"], "max_k": 5, "root": str(tiny_results)})
    for name in ("training", "training_times", "exact_metrics"):
        assert (tiny_results / "results" / "tables" / "00_data_and_models" / f"{name}.csv").exists()
    for kind in ("metrics_at_k", "rank_distribution"):
        for ext in ("pdf", "png"):
            assert (tiny_results / "figures" / "00_data_and_models" / f"{kind}_tiny.{ext}").exists()


def test_sampled_metrics_notebook(tiny_results):
    ranks = {label: load_ranks(tiny_results / "results" / "ranks" / "tiny" / m / "unseen.parquet")
             for label, m in (("X", "m1"), ("Y", "m2"))}
    tables = ek.sampled_metrics_tables(ranks, sample_size=21, repeats=3, seed=0, k=10, gammas=[0.1],
                                       scheme="binomial", n_groups=2, curve_sample_sizes=[11, 21],
                                       curve_gamma=0.1)
    for name, frame in tables.items():
        ek.write_table(frame, tiny_results / "results" / "tables" / "01_sampled_metrics" / f"{name}.csv")
    _run("01_sampled_metrics", tiny_results,
         {"dataset": "tiny", "recommenders": {"X": "m1", "Y": "m2"}, "sample_size": 21, "repeats": 3,
          "gammas": [0.1], "toy_repeats": 5, "root": str(tiny_results)})
    for name in ("table1_toy_exact", "table2_toy_sampled"):
        assert (tiny_results / "results" / "tables" / "01_sampled_metrics" / f"{name}.csv").exists()
    for name in ("fig1_metric_vs_rank", "fig2_toy_expected_vs_sample_size", "fig3_expected_vs_true_rank",
                 "fig4_corrected_ap", "fig5_rank_distributions", "fig6_expected_recall_vs_sample_size"):
        assert (tiny_results / "figures" / "01_sampled_metrics" / f"{name}.pdf").exists(), name
