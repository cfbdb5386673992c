"""Committed means reproduced: every committed table is what its step of the workflow wrote, with
the parameters of config/config.yaml (itemsampling_study.records)."""

from __future__ import annotations

import json
import os
import stat

import pytest
import yaml

from itemsampling_study.notebook_defaults import workflow_config
from itemsampling_study.records import (
    canonical_config,
    check_records,
    read_records,
    record_path,
    write_record,
)
from itemsampling_study.registry import load_study
from itemsampling_study.tables import write_table

from .conftest import REPO

TABLES = REPO / "results" / "tables"
NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())


@pytest.fixture(scope="module")
def config():
    """config/config.yaml with the schema's defaults, as the workflow reads it."""
    return workflow_config(REPO / "config" / "config.yaml", REPO / "workflow" / "schemas" / "config.schema.yaml")


def _expected(step: str, config) -> tuple[dict, int | None]:
    """The parameters and seed that the workflow passes to ``step``."""
    if step == "study datasets":
        return {"datasets": sorted(config["train"])}, None
    if step == "study verdicts":
        return {"notebooks": {name: spec["study"] for name, spec in sorted(NOTEBOOKS.items())}}, None
    study = step.removeprefix("study tables --study ")
    return canonical_config(load_study(study).study_config(config)), config["seed"]


def test_every_committed_table_is_what_its_step_wrote():
    problems = check_records(TABLES)
    assert not problems, "committed tables that no step of `make reproduce` wrote as they are:\n" + "\n".join(problems)


def test_every_step_ran_with_the_configured_parameters(config):
    records = read_records(TABLES)
    steps = {record["step"] for record in records.values()}
    expected_steps = {"study datasets", *(f"study tables --study {spec['study']}" for spec in NOTEBOOKS.values()),
                      *(f"study tables --study {study}" for spec in NOTEBOOKS.values() for study in spec.get("studies", {})),
                      "study verdicts"}
    assert {"study tables --study live_evaluation", "study tables --study wmle_readings", "study tables --study mn_users",
            "study tables --study adaptive_sensitivity", "study tables --study model_pairs"} <= expected_steps
    assert steps == expected_steps
    for path, record in records.items():
        parameters, seed = _expected(record["step"], config)
        assert record["seed"] == seed, path
        # compared as JSON text: the order of the keys (which orders rows) matters too
        assert json.dumps(record["config"]) == json.dumps(parameters), (
            f"{path.relative_to(REPO)} was written with other parameters than config/config.yaml's: rerun its step")


# ---------------------------------------------------------------- the guard itself


@pytest.fixture
def written(tmp_path):
    import pandas as pd

    folder = tmp_path / "tables" / "nb"
    tables = [write_table(pd.DataFrame({"x": [i, i + 1]}), folder / f"t{i}.csv") for i in range(2)]
    write_record(record_path(folder, "study"), step="study tables --study s", config={"b": 1, "a": {"d": 2, "c": 3}},
                 seed=7, tables=tables)
    return tmp_path / "tables"


def test_records_hold_the_canonical_parameters(written):
    (record,) = read_records(written).values()
    assert list(record["config"]) == ["a", "b"] and list(record["config"]["a"]) == ["c", "d"]
    assert record["seed"] == 7 and sorted(record["tables"]) == ["t0.csv", "t1.csv"]
    assert check_records(written) == []


def test_a_table_changed_after_its_step_is_caught(written):
    table = written / "nb" / "t1.csv"
    table.write_text(table.read_text().replace("2", "3"))
    (problem,) = check_records(written)
    assert "nb/t1.csv is not what 'study tables --study s' wrote" in problem


def test_a_table_without_a_step_and_a_missing_table_are_caught(written):
    (written / "nb" / "hand_made.csv").write_text("x\n1\n")
    (written / "nb" / "t0.csv").unlink()
    problems = check_records(written)
    assert any("nb/hand_made.csv has no record" in p for p in problems)
    assert any("nb/t0.csv is named by study.record.json but missing" in p for p in problems)


def test_a_record_names_only_tables_of_its_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t.csv").write_text("x\n")
    with pytest.raises(ValueError, match="not in the folder"):
        write_record(record_path(tmp_path, "s"), step="s", config={}, seed=None, tables=[tmp_path / "a" / "t.csv"])


def test_tables_and_records_are_as_readable_as_other_files(written):
    umask = os.umask(0)
    os.umask(umask)
    for path in (written / "nb").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path.name
