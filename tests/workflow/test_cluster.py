"""The workflow on a SLURM cluster: the profile fitted to the node, and the smoke study through
profiles/slurm on a one-node cluster (workflow/cluster/start.sh) giving the local run's tables."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from itemsampling_study.reproduction import compare_tables, read_tree

from .conftest import REPO

CLUSTER = REPO / "workflow" / "cluster"


def _fit():
    spec = importlib.util.spec_from_file_location("fit_resources", CLUSTER / "fit_resources.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DRY_RUN = """
rule train_and_rank:
    resources: tmpdir=/tmp, mem_mb=16000, mem=16 GB, runtime=480, cpus_per_task=4
localrule verify_data:
    resources: tmpdir=/tmp, mem_mb=2000, mem=2 GB, runtime=30, cpus_per_task=1
rule train_and_rank:
    resources: tmpdir=/tmp, mem_mb=24000, runtime=480, cpus_per_task=4
rule study_chunk:
    resources: tmpdir=/tmp, mem_mb=4000, runtime=120, cpus_per_task=1
"""


def test_rules_that_ask_for_more_than_the_largest_node_are_lowered_to_it():
    fit = _fit()
    assert fit.largest_node("2 22057\n16 128000+\n") == (16, 128000)
    asked = fit.requests(DRY_RUN)
    assert asked == {"train_and_rank": {"mem_mb": 24000, "cpus_per_task": 4},
                     "verify_data": {"mem_mb": 2000, "cpus_per_task": 1},
                     "study_chunk": {"mem_mb": 4000, "cpus_per_task": 1}}
    options, notes, problems = fit.fitted(asked, 2, 32000)
    assert options == ["--set-threads", "train_and_rank=2",
                       "--set-resources", "train_and_rank:cpus_per_task=2", "train_and_rank:mem_mb=24000"]
    assert notes == ["train_and_rank asks for 4 CPUs and 24000 MB; the largest node has 2 CPUs and 32000 MB: "
                     "it gets 2 CPUs and 24000 MB"]
    assert problems == []
    assert fit.fitted(asked, 64, 512000) == ([], [], [])
    with pytest.raises(ValueError, match="no node"):
        fit.largest_node("\n")


def test_a_rule_that_needs_more_memory_than_any_node_is_an_error_before_submission():
    fit = _fit()
    options, notes, problems = fit.fitted(fit.requests(DRY_RUN), 2, 22057)
    assert options == [] and notes == []
    assert len(problems) == 1 and problems[0].startswith(
        "train_and_rank asks for 24000 MB, more than the largest node's 22057 MB: it cannot run on this cluster")
    options, notes, problems = fit.fitted(fit.requests(DRY_RUN), 2, 22057, lower_memory=True)
    assert options == ["--set-threads", "train_and_rank=2",
                       "--set-resources", "train_and_rank:cpus_per_task=2", "train_and_rank:mem_mb=22057"]
    assert problems == [] and "it gets 2 CPUs and 22057 MB" in notes[0]


def test_the_options_carry_the_resources_of_every_rule_that_the_profile_and_the_arguments_give():
    """A --set-resources on the command line replaces the profile's, which hold every rule's memory
    and run time: the printed one carries them, with the arguments' added and the lowered ones."""
    fit = _fit()
    profile = str(REPO / "profiles" / "slurm")
    argv, given = fit.given_resources(["--profile", profile, "--set-resources", "study_chunk:slurm_partition=short",
                                       "verify_data:runtime=45", "--jobs", "4"])
    assert argv == ["--profile", profile, "--jobs", "4"]
    assert given["study_chunk"] == {"runtime": 120, "slurm_partition": "short"}
    assert given["verify_data"] == {"mem_mb": 2000, "runtime": 45}
    assert given["tables_04_estimators"] == {"mem_mb": 6000}
    options, notes, problems = fit.fitted(fit.requests(DRY_RUN), 2, 32000, given=given)
    assert len(notes) == 1 and problems == []
    assert options[:3] == ["--set-threads", "train_and_rank=2", "--set-resources"]
    entries = options[3:]
    assert {"train_and_rank:mem_mb=24000", "train_and_rank:runtime=480", "train_and_rank:cpus_per_task=2",
            "study_chunk:slurm_partition=short", "study_chunk:runtime=120", "tables_04_estimators:mem_mb=6000"} <= set(entries)
    assert len(entries) == sum(len(values) for values in given.values())
    assert fit.fitted({}, 2, 32000, given={"r": {"slurm_account": "0042"}})[0] == ["--set-resources", "r:slurm_account='0042'"]
    with pytest.raises(ValueError, match=r"no config\.yaml"):
        fit.given_resources(["--profile", str(REPO / "profiles")])


def _smoke(folder, *extra):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "snakemake", "--configfile", "config/smoke.yaml", "--directory",
                           str(folder), *extra], cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)


@pytest.mark.slow
@pytest.mark.workflow
@pytest.mark.skipif(os.environ.get("ITEMSAMPLING_CLUSTER_CHECK") != "1",
                    reason="the smoke study through SLURM takes about 13 minutes on 2 cores: make cluster-check runs it")
def test_the_smoke_study_through_slurm_gives_the_local_tables(tmp_path):
    started = subprocess.run([str(CLUSTER / "start.sh")], capture_output=True, text=True, timeout=900)
    if started.returncode == 3:
        pytest.skip(started.stderr.strip())
    assert started.returncode == 0, started.stderr
    try:
        local = _smoke(tmp_path / "local", "--cores", "2")
        assert local.returncode == 0, local.stderr[-3000:]
        slurm_args = ["--profile", "profiles/slurm", "--jobs", "4"]
        fitted = subprocess.run([sys.executable, str(CLUSTER / "fit_resources.py"), *slurm_args, "--configfile",
                                 "config/smoke.yaml", "--directory", str(tmp_path / "slurm")], cwd=REPO,
                                capture_output=True, text=True, timeout=600)
        assert fitted.returncode == 0, fitted.stderr
        slurm = _smoke(tmp_path / "slurm", *slurm_args, *fitted.stdout.split())
        assert slurm.returncode == 0, slurm.stdout[-3000:] + slurm.stderr[-3000:]
    finally:
        subprocess.run([str(CLUSTER / "stop.sh")], timeout=120)
    report = compare_tables(read_tree(tmp_path / "local" / "results" / "tables"),
                            read_tree(tmp_path / "slurm" / "results" / "tables"))
    compared = report[report["class"] != "times"]
    assert len(compared) > 50 and compared["identical"].all(), compared[~compared["identical"]].to_string()
