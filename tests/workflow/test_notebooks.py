"""Each notebook of workflow/notebooks.yaml runs under papermill on tiny tables and shows its figures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from itemsampling.popularity_profiles import write_profile
from itemsampling_study import (
    adaptive_sensitivity,
    live_evaluation,
    mn_users,
    model_pairs,
    popularity_protocols,
    ratio_protocols,
    wmle_readings,
)
from itemsampling_study.registry import load_study
from itemsampling_study.tables import find_root, read_table, write_table
from itemsampling_study.verdicts import CHECKS_PATH, VERDICTS_PATH, verdict_tables

from .protocol_helpers import tiny_profile, tiny_ratio_ranks

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())

papermill = pytest.importorskip("papermill")


def test_notebooks_have_one_parameters_cell_and_no_outputs():
    for name in NOTEBOOKS:
        nb = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, name
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), name
        assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_the_root_is_found_from_any_folder_below_it(tmp_path):
    (tmp_path / "Snakefile").touch()
    (tmp_path / "notebooks").mkdir()
    assert find_root(tmp_path / "notebooks") == tmp_path.resolve()
    with pytest.raises(FileNotFoundError, match="no Snakefile"):
        find_root("/")


def test_a_missing_table_names_the_snakemake_target(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"snakemake --cores 2 results/tables/01_sampled_metrics/table3.csv"):
        read_table("01_sampled_metrics", "table3", tmp_path)


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_notebook_runs_on_tiny_tables_and_shows_every_figure(name, tiny_results, train_synthetic):
    spec = NOTEBOOKS[name]
    study, config = load_study(spec["study"]), spec["test"]
    chunks = [study.chunk_table(config, 0, chunk, pd.read_parquet(
        tiny_results / "results" / "ranks" / chunk["dataset"] / chunk["model"] / f"{chunk['protocol']}.parquet"))
        for chunk in study.chunks(config)]
    runs = pd.concat(chunks, ignore_index=True) if chunks else None
    tables = study.study_tables(config, 0, runs, tiny_results)
    assert set(tables) == set(spec["tables"])
    for table, frame in tables.items():
        write_table(frame, tiny_results / "results" / "tables" / name / f"{table}.csv")
    studies, further = spec.get("studies", {}), {}  # the tables of the further studies the notebook reads
    if "live_evaluation" in studies:  # models trained on the synthetic data
        live = live_evaluation.study_config({"adaptive_sampling": config})
        train_synthetic(tiny_results, live["models"])
        further["live_evaluation"] = live_evaluation.study_tables(live, 0, None, tiny_results)
    if "adaptive_sensitivity" in studies:
        sensitivity = adaptive_sensitivity.study_config({"adaptive_sampling": config})
        further["adaptive_sensitivity"] = adaptive_sensitivity.study_tables(sensitivity, 0, None, tiny_results)
    if "model_pairs" in studies:
        pairs = model_pairs.study_config({"protocols_in_use": config})
        further["model_pairs"] = model_pairs.study_tables(pairs, 0, None, tiny_results)
    if {"popularity_protocols", "ratio_protocols"} <= set(studies):  # profiles and ratio ranks written here
        further.update(_tiny_protocols(tiny_results, config))
    if {"wmle_readings", "mn_users"} <= set(studies):
        further.update(_tiny_checks(tiny_results, config))
    assert {study: set(made) for study, made in further.items()} == {study: set(t) for study, t in studies.items()}
    for made in further.values():
        for table, frame in made.items():
            write_table(frame, tiny_results / "results" / "tables" / name / f"{table}.csv")
    assert all((tiny_results / "results" / "tables" / name / f"{table}.csv").is_file() for table in spec.get("inputs", []))
    if importlib.util.find_spec(f"itemsampling_study.verdicts.{spec['study']}"):  # the notebook ends with its verdicts
        verdicts, checks = verdict_tables({name: spec["study"]}, tiny_results)
        write_table(verdicts, tiny_results / VERDICTS_PATH)
        write_table(checks, tiny_results / CHECKS_PATH)
    (tiny_results / "Snakefile").touch()  # marks the root that the notebook looks for by default
    (tiny_results / "notebooks").mkdir()
    out = tiny_results / f"{name}.ipynb"
    papermill.execute_notebook(str(REPO / "notebooks" / f"{name}.ipynb"), str(out), parameters={**config, "seed": 0},
                               kernel_name="python3", cwd=str(tiny_results / "notebooks"), progress_bar=False)
    assert "root = None" in (REPO / "notebooks" / f"{name}.ipynb").read_text()
    executed = json.loads(out.read_text())
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    expected = [f for f in spec["figures"] for _ in (config["datasets"] if f.get("per") == "dataset" else [0])]
    assert len(images) == len(expected)
    assert not [o for o in outputs if o.get("name") == "stderr"], "warnings or progress bars in the outputs"
    assert not (tiny_results / "notebooks" / "figures").exists()  # writes only under the root
    for figure in spec["figures"]:
        stems = [f"{figure['name']}_{d}" for d in config["datasets"]] if figure.get("per") == "dataset" \
            else [figure["name"]]
        for stem in stems:
            assert (tiny_results / "figures" / name / f"{stem}.pdf").exists(), stem


def _tiny_protocols(root: Path, config: dict) -> dict:
    """The tables of studies popularity_protocols and ratio_protocols for the tiny run of notebook
    05, from tiny popularity profiles and ratio ranks of its models (the designs table of its own
    study is written before)."""
    section = {"protocols_in_use": config}
    popularity, ratio = popularity_protocols.study_config(section), ratio_protocols.study_config(section)
    for j, model in enumerate(popularity["models"]):
        write_profile(tiny_profile(10.0 + 30 * j, j), popularity_protocols.profile_path("tiny", model, root))
    for j, model in enumerate(ratio["models"]):
        path = ratio_protocols.ratio_path("tiny", model, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        tiny_ratio_ranks(10.0 + 30 * j, j).to_parquet(path)
    return {"popularity_protocols": popularity_protocols.study_tables(popularity, 0, None, root),
            "ratio_protocols": ratio_protocols.study_tables(ratio, 0, None, root)}


def _tiny_checks(root: Path, config: dict) -> dict:
    """The tables of studies wmle_readings (on ranks with one N for all users, written here) and
    mn_users (per-user N_u of the tiny ranks) for the tiny run of notebook 04, by study."""
    rng = np.random.default_rng(0)
    for model in config["models"].values():
        out = root / "results" / "ranks" / "tiny_n" / model
        out.mkdir(parents=True)
        pd.DataFrame({"user": np.arange(300), "item": 0, "rank": np.minimum(400, rng.geometric(0.03, 300)),
                      "n_candidates": 400}).to_parquet(out / "all.parquet")
    common = {"repeats": 2, "sample_size": 20, "models": config["models"]}
    wmle = {**common, "datasets": ["tiny_n"], "sources": ["ranks", "simulated_ours"], "k": 5, "c": 10,
            "readings": ["mle", "as_printed", "ceil", "weight_sum", "converged"], "converged_steps": 50}
    mn = {**common, "datasets": config["datasets"], "protocol": "unseen", "n_item_groups": [1, 2], "k": 5,
          "max_k": config["max_k"], "estimators": ["mle", "mn_mle", "mn_mle_total", "mn_mes", "mn_mes_total"]}
    return {"wmle_readings": wmle_readings.study_tables(wmle, 0, None, root),
            "mn_users": mn_users.study_tables(mn, 0, None, root)}


@pytest.mark.slow
@pytest.mark.notebook
def test_make_figures_redraws_the_committed_figures_from_the_committed_tables(tmp_path):
    """`make figures` (workflow/scripts/replot.py) in a clone: same pixels, nothing else changes."""
    import subprocess
    import sys

    import matplotlib.image as mpimg

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    done = subprocess.run([sys.executable, str(clone / "workflow" / "scripts" / "replot.py")], cwd=clone,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in NOTEBOOKS:  # every notebook is redrawn, or named with the tables it lacks
        skipped = f"{name}: not redrawn, its study has not been run" in done.stderr
        assert skipped == any(not (clone / "results" / "tables" / name / f"{t}.csv").is_file()
                              for t in NOTEBOOKS[name]["tables"]), name
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    assert not [line for line in changed if line and not line[3:].startswith(("figures/", "results/notebooks/"))]
    pngs = sorted(clone.glob("figures/*/*.png"))
    assert pngs
    for png in pngs:
        committed = REPO / png.relative_to(clone)
        assert (mpimg.imread(png) == mpimg.imread(committed)).all(), png.name


def test_every_figure_and_report_table_has_a_caption():
    captions = REPO / "workflow" / "report"
    assert (captions / "workflow.rst").is_file() and (captions / "notebook.rst").is_file()
    for name, spec in NOTEBOOKS.items():
        assert set(spec.get("report_tables", [])) <= set(spec["tables"]), name
        for caption in [f["name"] for f in spec["figures"]] + spec.get("report_tables", []):
            assert (captions / name / f"{caption}.rst").is_file(), (name, caption)


def test_every_caption_is_valid_restructured_text():
    """A caption with, say, |x| unescaped (a substitution in reStructuredText) prints an error
    in the middle of the report."""
    from docutils import nodes
    from docutils.core import publish_doctree

    for path in sorted((REPO / "workflow" / "report").rglob("*.rst")):
        tree = publish_doctree(path.read_text(), settings_overrides={"report_level": 5, "halt_level": 5})
        messages = [*tree.findall(nodes.system_message), *tree.transform_messages]
        errors = [node.astext() for node in messages if node["level"] >= 2]
        assert not errors, (path.name, errors)
        assert not list(tree.findall(nodes.problematic)), path.name
