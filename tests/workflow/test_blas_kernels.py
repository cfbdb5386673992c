"""The smoke study on another machine, simulated: other OpenBLAS kernels and thread counts.

``OPENBLAS_CORETYPE`` makes OpenBLAS use the kernels it would pick on another CPU (Haswell and
Zen: AVX2; SkylakeX: AVX-512; Sandybridge: AVX without FMA; Prescott: SSE3 only). The smoke
workflow, up to its tables, is run once as this machine runs it and once under each kernel (with
one or two cores, which changes the threads of the training steps). Each run must finish, and
its tables must reproduce the reference run's within the tolerances of ``make check``
(:mod:`itemsampling_study.reproduction`). A kernel that this CPU cannot run (AVX-512 on an AVX2
machine) or that OpenBLAS maps to this machine's own kernels is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from itemsampling_study.reproduction import compare_tables, read_tree

from .conftest import REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not any((folder / "ml-100k").is_dir() for folder in
                               (REPO / "data" / "raw", Path(os.environ.get("ITEMSAMPLING_DATA", "/nonexistent")))),
                       reason="the smoke run needs ml-100k (in data/raw/ or $ITEMSAMPLING_DATA)"),
]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
#: the steps that compute tables (the notebooks only draw them)
UNTIL = ["dataset_summary", "live_evaluation", *(f"tables_{nb}" for nb in (
    "00_data_and_models", "01_sampled_metrics", "02_sampling_theorem", "03_mapping_functions", "04_estimators",
    "06_adaptive_sampling"))]
#: kernel -> cores of its run
KERNELS = {"Haswell": 1, "Zen": 2, "SkylakeX": 2, "Sandybridge": 1, "Prescott": 2}


def _kernels(coretype: str | None) -> tuple[int, str]:
    """Exit status of a small matrix product under ``coretype`` and the kernels OpenBLAS used."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    probe = ("import numpy, threadpoolctl; numpy.ones((64, 64)) @ numpy.ones((64, 64)); "
             "print(sorted({i.get('architecture') for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'}))")
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout.strip()


def _smoke_tables(folder: Path, coretype: str | None, cores: int) -> dict[str, bytes]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["MPLBACKEND"] = "Agg"
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    result = subprocess.run([*SNAKEMAKE, "--directory", str(folder), "--configfile", str(REPO / "config" / "smoke.yaml"),
                             "--cores", str(cores), "--until", *UNTIL], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=900)
    logs = "\n".join(p.read_text(errors="replace")[-1500:] for p in (folder / "results" / "logs").rglob("*.log")
                     if "rror" in p.read_text(errors="replace"))
    assert result.returncode == 0, f"the smoke study failed under {coretype or 'this machine'}'s kernels:\n" \
        + result.stderr[-3000:] + logs[-3000:]
    return read_tree(folder / "results" / "tables")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The smoke tables as this machine computes them, and its kernels."""
    status, native = _kernels(None)
    assert status == 0
    return native, _smoke_tables(tmp_path_factory.mktemp("reference"), None, 2)


@pytest.mark.parametrize("coretype", list(KERNELS))
def test_the_smoke_study_reproduces_under_other_kernels(coretype, reference, tmp_path):
    native, expected = reference
    status, used = _kernels(coretype)
    if status != 0:
        pytest.skip(f"this CPU cannot run OpenBLAS's {coretype} kernels (a matrix product exits with {status})")
    if used == native:
        pytest.skip(f"OpenBLAS runs {coretype} with this machine's own kernels ({used}): the reference run")
    report = compare_tables(expected, _smoke_tables(tmp_path, coretype, KERNELS[coretype]))
    compared = report[report["class"] != "times"]
    assert len(compared) > 50
    beyond = compared[~compared["within"]]
    assert beyond.empty, f"under {coretype} ({used}) these tables moved beyond tolerance:\n{beyond.to_string()}"
    print(report[~report["identical"]].to_string())
