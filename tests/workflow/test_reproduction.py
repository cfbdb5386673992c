"""make check's verdict: byte for byte on the machine kind that made the tables, within tolerance elsewhere."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from itemsampling.provenance import machine_record, reproduction_key
from itemsampling_study.reproduction import (
    TOLERANCES,
    check_reproduction,
    compare_table,
    compare_tables,
    table_class,
)
from itemsampling_study.tables import write_table

from .conftest import REPO

#: machine records and the bytes-or-tolerance verdict depend on the kernels of the machine that runs them
pytestmark = pytest.mark.blas_kernels


def _csv(frame: pd.DataFrame, tmp_path, name="t") -> bytes:
    return write_table(frame, tmp_path / f"{name}.csv").read_bytes()


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"model": ["a", "b", "c", "d"], "k": [1, 5, 10, 20], "value": rng.random(4),
                         "count": [3, 4, 5, 6]})


@pytest.fixture
def record():
    return machine_record()


def _on_other_kernels(record: dict) -> dict:
    """The record of a machine whose first BLAS library runs other kernels than this one's.

    A named kernel would be this machine's own on a machine of that kind, so the other kernel is
    one that no BLAS library names."""
    other = copy.deepcopy(record)
    other["blas"][0]["core_type"] = f"not-{record['blas'][0]['core_type']}"
    return other


def test_the_record_names_the_kernels_and_versions_and_nothing_of_the_host(record):
    assert record["blas"] and all({"library", "version", "core_type", "threads"} <= set(b) for b in record["blas"])
    assert record["packages"]["numpy"] == np.__version__
    assert machine_record() == record  # no time, no host name: the same machine gives the same record
    other = copy.deepcopy(record)
    other["cpu"] = "another CPU with the same kernels"
    assert reproduction_key(other) == reproduction_key(record)
    assert reproduction_key(_on_other_kernels(record)) != reproduction_key(record)
    # numpy's own loops: the same BLAS kernels with AVX-512 dispatch or without differ in the last bits
    assert record["numpy_simd"]["dispatched"] is not None
    wider = copy.deepcopy(record)
    wider["numpy_simd"] = {"baseline": ["X86_V2"], "dispatched": ["X86_V3", "X86_V4", "AVX512_ICL"]}
    narrower = copy.deepcopy(record)
    narrower["numpy_simd"] = {"baseline": ["X86_V2"], "dispatched": ["X86_V3"]}
    assert reproduction_key(wider) != reproduction_key(narrower)
    older = {k: v for k, v in record.items() if k != "numpy_simd"}  # a record made before numpy's SIMD was kept
    assert reproduction_key(older) != reproduction_key(record)


def test_the_wall_time_tables_are_those_that_workflow_notebooks_yaml_declares():
    """make check compares every table but those of the class ``times``: exactly the ones each
    notebook declares under ``timings``, among its tables, its studies' tables and inputs."""
    notebooks = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())
    for notebook, spec in notebooks.items():
        names = [*spec["tables"], *(t for tables in spec.get("studies", {}).values() for t in tables),
                 *spec.get("inputs", [])]
        assert set(spec.get("timings", [])) <= set(names), notebook
        for name in names:
            assert (table_class(f"{notebook}/{name}") == "times") == (name in spec.get("timings", [])), (notebook, name)


def test_classes_of_tables():
    assert table_class("04_estimators/chunk_times") == "times"
    assert table_class("01_sampled_metrics/sensitivity") == "refit"
    assert table_class("06_adaptive_sampling/live_evaluation") == "monte_carlo"
    assert table_class("04_estimators/relative_error") == "numeric"


def test_numeric_tables_within_and_beyond_their_tolerance(table):
    rtol = TOLERANCES["numeric"]["rtol"]
    near = table.assign(value=table["value"] * (1 + rtol / 10))
    diff = compare_table("04_estimators/x", table, near)
    assert diff.within and not diff.identical and diff.max_rel == pytest.approx(rtol / 10, rel=1e-3)
    far = table.assign(value=table["value"] * (1 + 10 * rtol))
    assert not compare_table("04_estimators/x", table, far).within
    assert compare_table("04_estimators/x", table, far).cells_beyond == 4
    assert not compare_table("04_estimators/x", table, table.assign(count=table["count"] + [0, 0, 1, 0])).within
    text = compare_table("04_estimators/x", table, table.assign(model=["a", "c", "b", "d"]))
    assert not text.within and "'model' differs in 2 rows" in text.problem
    shape = compare_table("04_estimators/x", table, table.iloc[:3])
    assert not shape.within and "rows" in shape.problem


def test_cls_rows_are_compared_with_the_ill_conditioned_tolerance(table):
    table = table.assign(estimator=["cls", "mle", "cls", "bv"])
    moved = table.assign(value=table["value"] + np.array([2.5e-4, 0, -2.5e-4, 0]))
    assert compare_table("01_sampled_metrics/table3_runs", table, moved).within
    mle = table.assign(value=table["value"] + np.array([0, 2.5e-4, 0, 0]))
    assert compare_table("01_sampled_metrics/table3_runs", table, mle).cells_beyond == 1


def test_refit_tables_allow_a_few_users_worth(table):
    moved = table.assign(value=table["value"] + 5 / 6040, count=table["count"] + [0, 0, 0, 0])
    assert compare_table("01_sampled_metrics/sensitivity", table, moved).within
    assert not compare_table("01_sampled_metrics/sensitivity", table, table.assign(value=table["value"] + 0.01)).within


def test_monte_carlo_tables_compare_means_in_standard_errors():
    committed = pd.DataFrame({"model": ["a", "b"], "repeats": [5, 5], "items_per_user": [100.0, 200.0],
                              "mean": [0.10, 0.20], "std": [0.02, 0.05]})
    se = np.sqrt(2 * committed["std"] ** 2 / 5)
    other = committed.assign(mean=committed["mean"] + 3 * se, std=committed["std"] * 1.5,
                             items_per_user=committed["items_per_user"] * 1.01)
    assert compare_table("06_adaptive_sampling/live_evaluation", committed, other.assign(std=committed["std"])).within
    assert not compare_table("06_adaptive_sampling/live_evaluation", committed,
                             committed.assign(mean=committed["mean"] + 5 * se)).within


def test_the_verdict_is_bytes_on_the_same_machine_and_tolerance_on_another(table, record, tmp_path):
    committed = {"04_estimators/x": _csv(table, tmp_path), "04_estimators/chunk_times": b"a\n1\n"}
    near = {"04_estimators/x": _csv(table.assign(value=table["value"] * (1 + 1e-8)), tmp_path),
            "04_estimators/chunk_times": b"a\n2\n"}
    ok, report = check_reproduction(committed, dict(committed), record, record)
    assert ok and "byte for byte" in report and "1 of 1 tables byte-identical" in report
    ok, report = check_reproduction(committed, near, record, record)
    assert not ok and "04_estimators/x [numeric]" in report and "NOT reproduce" in report
    other = _on_other_kernels(record)
    old, new = record["blas"][0]["core_type"], other["blas"][0]["core_type"]
    ok, report = check_reproduction(committed, near, record, other)
    assert ok and "within tolerance" in report and f" {old} x" in report and f" {new} x" in report
    far = {**near, "04_estimators/x": _csv(table.assign(value=table["value"] + 0.1), tmp_path)}
    ok, report = check_reproduction(committed, far, record, other)
    assert not ok and "BEYOND tolerance (4 cells)" in report
    ok, report = check_reproduction(committed, near, None, record)
    assert ok and "no provenance record of the committed results" in report
    ok, _ = check_reproduction(committed, near, record, other, mode="bytes")
    assert not ok
    missing = compare_tables(committed, {"04_estimators/chunk_times": b"a\n1\n"})
    assert "missing from the rerun" in missing.set_index("table").loc["04_estimators/x", "problem"]
    with pytest.raises(ValueError, match="mode must be"):
        check_reproduction(committed, near, record, record, mode="roughly")


def test_the_make_check_script_reads_the_commit_and_the_work_tree(table, record, tmp_path):
    repo = tmp_path / "repo"
    (repo / "results" / "tables" / "04_estimators").mkdir(parents=True)
    write_table(table, repo / "results" / "tables" / "04_estimators" / "x.csv")
    (repo / "results" / "provenance.json").write_text(json.dumps(record))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "tables"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    script = [sys.executable, str(REPO / "workflow" / "scripts" / "check_reproduction.py")]

    def check():
        return subprocess.run(script, cwd=repo, capture_output=True, text=True)

    assert check().returncode == 0
    write_table(table.assign(value=table["value"] * (1 + 1e-8)), repo / "results" / "tables" / "04_estimators" / "x.csv")
    result = check()
    assert result.returncode == 1 and "byte for byte" in result.stdout
    other = _on_other_kernels(record)
    (repo / "results" / "provenance.json").write_text(json.dumps(other))
    result = check()
    assert result.returncode == 0 and "within tolerance" in result.stdout, result.stdout + result.stderr


def test_order_flips_of_refit_tables_are_noted_not_counted():
    orders = pd.DataFrame({"method": ["mle", "bv"], "order": ["X > Y > Z", "Y > X > Z"], "value": [0.1, 0.2]})
    flipped = orders.assign(order=["Y > X > Z", "Y > X > Z"])
    refit = compare_table("01_sampled_metrics/sensitivity_orders", orders, flipped)
    assert refit.within and "'order' differs in 1 rows" in refit.note
    numeric = compare_table("04_estimators/winners", orders, flipped)  # elsewhere an order is a result
    assert not numeric.within and "'order' differs in 1 rows (text)" in numeric.problem


def test_counts_of_repeats_of_refit_tables_may_move_by_a_few_repeats():
    """A near-tied pair flips in a few repeats on other kernels: up to 3 of 100 pass, 4 do not,
    in the count and in its share alike; elsewhere a count of repeats is exact."""
    pairs = pd.DataFrame({"method": ["mle", "bv"], "agree": [64, 90], "repeats": [100, 100],
                          "fraction": [0.64, 0.90]})
    moved = pairs.assign(agree=[66, 87], fraction=[0.66, 0.87])
    assert compare_table("01_sampled_metrics/sensitivity_pairs", pairs, moved).within
    further = pairs.assign(agree=[60, 90], fraction=[0.60, 0.90])
    assert compare_table("01_sampled_metrics/sensitivity_pairs", pairs, further).cells_beyond == 2
    assert not compare_table("04_estimators/pairs", pairs, moved).within
