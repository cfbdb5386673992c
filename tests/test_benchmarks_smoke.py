"""Smoke run of benchmarks/bench_estimators.py --quick: the table parses and the methods agree.

Only the agreement columns are checked (objective gap of MES against cvxpy, max abs difference
of adaptive MLE against per-user EM and of BV/MN against separate solves); timings are never
asserted.
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_estimators.py"
EXPECTED_TASKS = {"mes", "adaptive_mle", "bv", "mn", "estimate"}
END_TO_END = {"mle", "wmle", "mes", "bv_mle", "mn_mes"}
#: the tolerance of each check, independent of the one the script prints
TOLERANCES = {"rel_objective_gap": 1e-6, "max_abs_diff_P(R)": 1e-9, "max_abs_diff_estimate": 1e-8}


def parse_table(stdout: str) -> list[dict[str, str]]:
    lines = [line for line in stdout.splitlines() if line.startswith("|")]
    assert len(lines) >= 3, f"no table in the output:\n{stdout}"
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert set(lines[1].strip("|").split("|")) == {"---"}
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == len(header), line
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def run_quick(script: Path, *args: str) -> str:
    """The standard output of a benchmark script run with ``args``, which must succeed."""
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    csv_path = tmp_path_factory.mktemp("bench") / "quick.csv"
    return run_quick(SCRIPT, "--quick", "--output", str(csv_path)), csv_path


@pytest.mark.slow
def test_quick_table_parses_and_covers_every_comparison(quick_run):
    stdout, csv_path = quick_run
    assert "# load average at start" in stdout
    rows = parse_table(stdout)
    for size in ("a", "b"):
        mine = [r for r in rows if r["size"] == size]
        assert {r["task"] for r in mine} == EXPECTED_TASKS
        assert {r["method"] for r in mine if r["task"] == "estimate"} == END_TO_END
    for r in rows:
        assert float(r["time_s"]) > 0 and float(r["peak_MiB"]) > 0
        if r["baseline"]:
            assert float(r["base_time_s"]) > 0 and float(r["speedup"]) > 0
    with open(csv_path, newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)


@pytest.mark.slow
def test_quick_agreement_within_tolerance(quick_run):
    rows = [r for r in parse_table(quick_run[0]) if r["check"]]
    assert {r["task"] for r in rows} == {"mes", "adaptive_mle", "bv", "mn"}
    assert len(rows) == 8
    for r in rows:
        value = float(r["value"])
        assert math.isfinite(value), r  # e.g. the cvxpy baseline did not finish
        assert value <= TOLERANCES[r["check"]], r
        assert r["ok"] == "yes", r


@pytest.mark.slow
def test_quick_mes_objectives_printed_and_equal(quick_run):
    for r in parse_table(quick_run[0]):
        if r["task"] == "mes":
            fields = dict(item.split("=") for item in r["detail"].split() if item.startswith("f_"))
            ours, cvx = float(fields["f_ours"]), float(fields["f_cvxpy"])
            assert abs(ours - cvx) <= 1e-6 * abs(ours)
            assert ours <= cvx + 1e-9 * abs(ours)  # ours is certified optimal to 1e-10


ENGINE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_engine.py"


@pytest.mark.slow
def test_engine_benchmark_quick_run_agrees_with_estimate():
    stdout = run_quick(ENGINE, "--quick")
    (row,) = parse_table(stdout)
    assert float(row["max_abs_diff"]) <= 1e-12
    # printed, not judged: a quick run on a fast CPU rounds to 0.0 s
    assert all(float(row[column]) >= 0 for column in ("time_s", "speedup", "peak_MiB"))


LIVE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_live_adaptive.py"


@pytest.mark.slow
def test_live_adaptive_benchmark_quick_run():
    stdout = run_quick(LIVE, "--quick")
    rows = {r["quantity"]: r for r in parse_table(stdout)}
    assert set(rows) == {"items scored", "wall time s", "of which estimate s", "recall@10", "ndcg@10"}
    items = rows["items scored"]
    full, live = int(items["full ranking"]), int(items["live adaptive"])
    assert full == 2000 * 1000 and 0 < live < full  # the synthetic data: 2,000 test users x 1,000 items
    assert float(items["live / full"]) == pytest.approx(live / full, abs=1e-4)
    for metric in ("recall@10", "ndcg@10"):
        exact, estimate = (float(rows[metric][c].split()[0]) for c in ("full ranking", "live adaptive"))
        assert 0 < exact <= 1 and 0 <= estimate <= 1


STUDY = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_study.py"
GROUPS = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_groups.py"


@pytest.mark.slow
def test_study_benchmark_quick_run_prints_one_timed_configuration():
    stdout = run_quick(STUDY, "--quick")
    (row,) = parse_table(stdout)
    assert row["dataset"] == "ml-1m" and row["n"] == "100" and row["kernels"] == "20"
    assert float(row["per_draw_s"].split()[0]) > 0 and float(row["study_min"]) > 0
    assert "# projected CPU minutes" in stdout


@pytest.mark.slow
def test_groups_benchmark_reports_changes_far_below_the_noise():
    stdout = run_quick(GROUPS, "--datasets", "pinterest-subset", "--draws", "3")
    rows = parse_table(stdout)
    assert {r["estimator"] for r in rows} >= {"mle", "mes", "bv_mle", "mn_mes"}
    for r in rows:
        assert float(r["shared_vs_groups"]) < 0.2, r  # a small fraction of the sampling noise


ADAPTIVE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_adaptive.py"


@pytest.mark.slow
def test_adaptive_benchmark_quick_run_agrees_with_its_baselines():
    stdout = run_quick(ADAPTIVE, "--quick", "--repeats", "1", "--draws", "2")
    rows = parse_table(stdout)
    assert [(r["task"], r["baseline"]) for r in rows] == [
        ("rank_distribution", "authors' per-user loop"), ("rank_distribution", "whole kernels"),
        ("estimate", "whole kernels"), ("study engine", "whole kernels, first draw"),
        ("study engine", "whole kernels, reused")]
    for r in rows:  # the observed columns and the whole kernels agree to rounding
        assert float(r["time_s"]) > 0 and float(r["speedup"]) > 0
        if r["check"]:
            assert float(r["value"]) <= (1e-12 if r["check"] == "max_abs_diff_P(R)" else 1e-9), r
    assert "# public adaptive MLE vs the authors' per-user loop" in stdout


STACKED = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_stacked_em.py"


@pytest.mark.slow
def test_stacked_em_benchmark_quick_run_agrees_with_one_em_per_repeat():
    stdout = run_quick(STACKED, "--quick")
    rows = {r["method"]: r for r in parse_table(stdout)}
    assert set(rows) == {"stacked EM", "GEMM peak"}
    assert float(rows["stacked EM"]["value"]) <= 1e-9  # the same P(R) to rounding
    assert float(rows["GEMM peak"]["value"]) > 0  # a fraction, printed, not judged


GRAM = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_binomial_gram.py"


@pytest.mark.slow
def test_binomial_gram_benchmark_quick_run_agrees_with_the_panel_gram():
    stdout = run_quick(GRAM, "--quick", "--repeats", "1")
    rows = {r["task"]: r for r in parse_table(stdout)}
    assert set(rows) == {"Gram", "estimate_draws", "build"}
    assert float(rows["Gram"]["value"]) <= 1e-9  # the same Gram matrix to the kernels' rounding
    assert float(rows["estimate_draws"]["value"]) <= 1e-6  # the same estimates
    assert all(float(r["time_s"]) > 0 and float(r["speedup"]) > 0 for r in rows.values())


STACKED_MES = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_stacked_mes.py"


@pytest.mark.slow
def test_stacked_mes_benchmark_quick_run_agrees_with_a_solve_per_draw():
    stdout = run_quick(STACKED_MES, "--quick", "--repeats", "1")
    rows = {r["task"]: r for r in parse_table(stdout)}
    assert set(rows) == {"mes", "mes + bv_mes + mn_mes"}
    for r in rows.values():
        assert float(r["value"]) <= 1e-8  # the same estimates to rounding
        assert float(r["time_s"]) > 0 and float(r["speedup"]) > 0


PROTOCOLS = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_protocols.py"


@pytest.mark.slow
def test_protocols_benchmark_quick_run_prints_each_call():
    stdout = run_quick(PROTOCOLS, "--quick", "--repeats", "1")
    rows = {r["call"]: r for r in parse_table(stdout)}
    assert set(rows) == {"uniform mn_mes", "uniform mn_mes, grid", "hansen_hurwitz", "horvitz_thompson"}
    assert float(rows["uniform mn_mes"]["ratio to uniform mn_mes"]) == 1.0
    # printed, not judged
    assert all(float(r[c]) >= 0 for r in rows.values() for c in ("seconds", "peak_MiB"))


LARGE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_large_catalogue.py"


@pytest.mark.slow
def test_large_catalogue_benchmark_quick_run_agrees_with_the_exact_ranks():
    stdout = run_quick(LARGE, "--quick", "--repeats", "1")
    rows = parse_table(stdout)
    assert {(r["N items"], r["method"], r["grid"]) for r in rows} == {
        (n, m, g) for m in ("mle", "mn_mes", "adaptive_mle") for n, g in (
            ("100,000", "exact"), ("100,000", "coarse"), ("1,000,000", "coarse"))}
    compared = [r for r in rows if r["max_diff"]]
    assert len(compared) == 3 and all(float(r["max_diff"]) < 1e-4 for r in compared)
    # printed, not judged
    assert all(float(r[c]) > 0 for r in rows for c in ("time_s", "peak_MiB"))
