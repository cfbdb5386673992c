"""The Snakemake workflow: dry runs, lint, schema errors and a smoke run that is deterministic."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from itemsampling_study.notebook_defaults import workflow_config
from itemsampling_study.records import canonical_config
from itemsampling_study.registry import load_study

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())

pytestmark = pytest.mark.workflow

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def _snakemake(*args, cwd, timeout=600):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--configfile", str(REPO / "config" / "smoke.yaml")],
        ["--profile", str(REPO / "profiles" / "slurm")],
        ["--profile", str(REPO / "profiles" / "slurm"), "--configfile", str(REPO / "config" / "smoke.yaml")],
    ],
    ids=["default", "smoke", "slurm", "slurm-smoke"],
)
def test_dry_run(extra, tmp_path):
    result = _snakemake("-n", "--directory", str(tmp_path), *extra, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    for rule in ("study_chunk", "tables_01_sampled_metrics", "notebook_00_data_and_models", "notebook_html"):
        assert rule in result.stdout, rule


@pytest.mark.slow
def test_a_fresh_clone_reruns_the_study_without_retraining(tmp_path):
    """The global ranks are committed results: `make reproduce` on a fresh clone reruns every
    study step but trains no model (a rule that made the data check an input of a step that reads
    the ranks once made Snakemake plan all 33 trainings)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--profile", "profiles/local"], cwd=clone,
                            env={**os.environ, "PYTHONPATH": str(clone / "src")}, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    planned = {line.split()[0] for line in result.stdout.splitlines() if line.strip() and line.split()[-1].isdigit()}
    assert "study_chunk" in planned and "tables_04_estimators" in planned
    assert "train_and_rank" not in planned and "train_and_rank_ratio" not in planned


def test_every_rule_a_profile_names_exists():
    """Snakemake ignores settings of a rule that does not exist, silently."""
    result = _snakemake("--list-rules", cwd=REPO)
    assert result.returncode == 0, result.stderr
    rules = set(result.stdout.split())
    for profile in (REPO / "profiles").glob("*/config.yaml"):
        settings = yaml.safe_load(profile.read_text())
        named = set(settings.get("set-resources", {})) | set(settings.get("set-threads", {}))
        assert named <= rules, f"{profile.relative_to(REPO)} names rules that do not exist: {sorted(named - rules)}"


def test_the_rules_leave_memory_and_run_time_to_the_profiles_and_slurm_gives_each_at_least_the_local_memory():
    """Memory and run time are set per rule in the profiles only; a job on the cluster gets at least
    the memory it gets locally (its run time matters on the cluster only)."""
    rules = "\n".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    assert "resources:" not in rules and "mem_mb" not in rules and "runtime" not in rules
    local, slurm = (yaml.safe_load((REPO / "profiles" / name / "config.yaml").read_text()) for name in ("local", "slurm"))

    def memory(profile, rule):
        return profile["set-resources"].get(rule, {}).get("mem_mb", profile["default-resources"]["mem_mb"])

    for rule in {None, *local["set-resources"], *slurm["set-resources"]}:
        assert memory(slurm, rule) >= memory(local, rule), rule
    assert not any("runtime" in values for values in local["set-resources"].values())


def test_lint_finds_nothing_but_the_missing_per_rule_environments():
    """Rules deliberately run in the environment that runs Snakemake (docs/study.md), so the
    only lint allowed is the request for a conda environment or container per rule."""
    result = _snakemake("--lint", cwd=REPO)
    output = result.stdout + result.stderr
    lints = [line.strip() for line in output.splitlines() if line.strip().startswith("* ")]
    if "Congratulations" not in output:
        assert set(lints) == {"* Specify a conda environment or container for each rule.:"}, output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sampled_metrics:\n  repeats: 0\n", "0 is less than the minimum of 2"),
        ("sampled_metrics:\n  scheme: poisson\n", "poisson"),
        ("sampled_metrics:\n  sensitivity:\n    readings: [{name: printed}, {name: bad, neighbours: 3}]\n",
         "sampled_metrics.sensitivity reading 'bad': model 'krY' has no hyper-parameter 'neighbours'"),
        ("sampled_metrics:\n  sensitivity:\n    readings: [{name: printed}]\n    ties: [pessimistic]\n",
         "must include 'random'"),
        ("unknown_key: 1\n", "unknown_key"),
        ("train:\n  ml-1m: [nosuch]\n", "not in `models`"),
        ("adaptive_sampling:\n  live: {dataset: synthetic}\n",
         "study live_evaluation of notebook 06_adaptive_sampling needs the ranks of model 'ease' on dataset "
         "'synthetic'; add it to train.synthetic"),
        ("train:\n  ml-10m: [popularity]\n", "unknown dataset 'ml-10m'; registered datasets"),
        ("models:\n  nosuch: {}\n", "config models.nosuch: unknown model 'nosuch'"),
        ("models:\n  ease: {lambda: 3}\n", "config models.ease: model 'ease' has no hyper-parameter 'lambda'"),
        ("hyperparameters:\n  ml-1m:\n    itemknn: {neighbours: 5}\n",
         "config hyperparameters.ml-1m.itemknn: model 'itemknn' has no hyper-parameter 'neighbours'"),
    ],
)
def test_bad_config_is_rejected_with_a_readable_message(text, message, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    result = _snakemake("-n", "--directory", str(tmp_path), "--configfile", str(bad), cwd=REPO)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_a_sample_size_above_the_smallest_number_of_candidates_is_rejected_by_the_dry_run(tmp_path):
    ranks = tmp_path / "results" / "ranks" / "ml-1m" / "krX"
    ranks.mkdir(parents=True)
    shutil.copy(REPO / "results" / "ranks" / "ml-1m" / "krX" / "unseen.parquet", ranks)
    smallest = int(pd.read_parquet(ranks / "unseen.parquet")["n_candidates"].min())
    config = tmp_path / "big.yaml"
    config.write_text(f"sampled_metrics:\n  sample_size: {smallest + 1}\n")
    result = _snakemake("-n", "--directory", str(tmp_path), "--configfile", str(config), cwd=REPO)
    assert result.returncode != 0
    assert f"smallest N_u = {smallest}" in result.stdout + result.stderr
    assert f"sample_size n={smallest + 1} is out of range" in result.stdout + result.stderr
    config.write_text(f"sampled_metrics:\n  sample_size: {smallest}\n")
    result = _snakemake("-n", "--directory", str(tmp_path), "--configfile", str(config), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_job_reads_its_parameters_from_a_file_rewritten_only_when_they_change(tmp_path):
    """No JSON on a shell line: a dry run writes each study's parameters to
    results/configs/studies/<study>.json, which its commands name; a changed config rewrites the
    files of the studies that read the changed key, and no other (their dates rerun the jobs)."""
    smoke = REPO / "config" / "smoke.yaml"
    result = _snakemake("-n", "-p", "--directory", str(tmp_path), "--configfile", str(smoke), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    commands = [line for line in result.stdout.splitlines() if "itemsampling study" in line]
    assert commands and not [line for line in commands if "'{" in line]
    assert "--config results/configs/studies/mn_users.json" in result.stdout
    config = workflow_config(smoke, REPO / "workflow" / "schemas" / "config.schema.yaml")
    folder = tmp_path / "results" / "configs"
    studies = {path.stem: json.loads(path.read_text()) for path in (folder / "studies").glob("*.json")}
    assert studies == {name: canonical_config(load_study(name).study_config(config)) for name in studies}
    assert set(studies) >= {spec["study"] for spec in NOTEBOOKS.values()} | {"mn_users", "live_evaluation"}
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in folder.rglob("*.json")}
    changed = yaml.safe_load(smoke.read_text())
    changed["estimator_checks"]["mn"]["k"] = 5
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(changed))
    result = _snakemake("-n", "--directory", str(tmp_path), "--configfile", str(tmp_path / "changed.yaml"), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    rewritten = {path.relative_to(folder).as_posix() for path, (_, mtime) in before.items() if path.stat().st_mtime_ns != mtime}
    assert rewritten == {path.relative_to(folder).as_posix() for path, (text, _) in before.items() if path.read_bytes() != text}
    assert "studies/mn_users.json" in rewritten and "studies/estimator_accuracy.json" not in rewritten


def _digests(root: Path) -> dict[str, str]:
    files = sorted([*root.glob("results/tables/*/*.csv"), *root.glob("figures/*/*.pdf")])
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.slow
@pytest.mark.skipif(not any((folder / "ml-100k").is_dir() for folder in
                            (REPO / "data" / "raw", Path(os.environ.get("ITEMSAMPLING_DATA", "/nonexistent")))),
                    reason="the smoke run needs ml-100k (in data/raw/ or $ITEMSAMPLING_DATA)")
def test_smoke_run_writes_every_output_and_reruns_identically(tmp_path):
    smoke = ["--directory", str(tmp_path), "--configfile", str(REPO / "config" / "smoke.yaml"), "--cores", "2"]
    result = _snakemake(*smoke, cwd=REPO, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    expected = [f"results/notebooks/{nb}.{ext}" for nb in NOTEBOOKS for ext in ("ipynb", "html")]
    expected += [f"results/tables/{nb}/{name}.csv" for nb, spec in NOTEBOOKS.items() for name in spec["tables"]]
    expected += ["results/tables/00_data_and_models/datasets.csv"]
    config = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())

    def datasets(notebook):  # the datasets of a notebook's per-dataset figures
        return load_study(NOTEBOOKS[notebook]["study"]).study_config(config)["datasets"]

    expected += [f"figures/{nb}/{f['name']}{'_' + d if f.get('per') else ''}.{ext}"
                 for nb, spec in NOTEBOOKS.items() for f in spec["figures"]
                 for d in (datasets(nb) if f.get("per") else ("",)) for ext in ("pdf", "png")]
    missing = [p for p in expected if not (tmp_path / p).exists()]
    assert not missing
    before = _digests(tmp_path)
    shutil.rmtree(tmp_path / "results" / "tables" / "01_sampled_metrics")
    result = _snakemake(*smoke, "--forcerun", "notebook_00_data_and_models", cwd=REPO, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert _digests(tmp_path) == before


def test_slurm_profile_gives_each_rule_its_threads_and_resources(tmp_path):
    # a dry run caps threads at --cores; on a cluster each job gets a node's cores
    result = _snakemake("-n", "--profile", str(REPO / "profiles" / "slurm"), "--directory", str(tmp_path),
                        "--cores", "64", cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = result.stdout.split("\nrule ")
    train = [job for job in jobs if job.startswith("train_and_rank:")]
    assert train and all("threads: 4" in job and "OMP_NUM_THREADS=4" in job for job in train)
    assert all("mem_mb=16000" in job and "cpus_per_task=4" in job and "runtime=480" in job for job in train)
    chunks = [job for job in jobs if job.startswith("study_chunk:")]
    assert chunks and all("OMP_NUM_THREADS=1" in job and "mem_mb=4000" in job and "runtime=120" in job for job in chunks)
    tables = [job for job in jobs if job.startswith("tables_04_estimators:")]  # a rule made per notebook
    assert len(tables) == 1 and "mem_mb=6000" in tables[0]
    assert "Using workflow specific profile" not in result.stdout + result.stderr  # the local profile stays local
