"""Every study the workflow runs keeps the contract of :mod:`itemsampling_study.contract`, and a
module that does not is refused with the names of what it lacks."""

from __future__ import annotations

import sys
import types

import pytest
import yaml

from itemsampling_study.contract import (
    CategoricalRunsStudy,
    ChunkedStudy,
    SizedStudy,
    Study,
    check_study,
    members,
)
from itemsampling_study.notebook_defaults import workflow_config
from itemsampling_study.records import read_records
from itemsampling_study.registry import load_study

from .conftest import REPO

NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())
_TABLES_STEP = "study tables --study "
#: every study the workflow runs: each notebook's own study and the further studies it reads
STUDIES = sorted({spec["study"] for spec in NOTEBOOKS.values()}
                 | {name for spec in NOTEBOOKS.values() for name in spec.get("studies", {})})


@pytest.fixture(scope="module")
def config():
    """config/config.yaml with the schema's defaults, as the workflow reads it."""
    return workflow_config(REPO / "config" / "config.yaml", REPO / "workflow" / "schemas" / "config.schema.yaml")


def test_the_contract_names_the_required_and_the_optional_members():
    assert members(Study) == ("chunks", "inputs", "study_config", "study_tables")
    assert set(members(ChunkedStudy)) - set(members(Study)) == {"chunk_table"}
    assert set(members(SizedStudy)) - set(members(Study)) == {"sample_sizes"}
    assert set(members(CategoricalRunsStudy)) - set(members(Study)) == {"CATEGORICAL_RUNS"}


def test_notebooks_yaml_lists_every_study_whose_tables_are_committed():
    committed = {record["step"].removeprefix(_TABLES_STEP) for record in read_records(REPO / "results" / "tables")
                 .values() if record["step"].startswith(_TABLES_STEP)}
    assert committed == set(STUDIES)
    assert {"live_evaluation", "adaptive_sensitivity", "wmle_readings", "mn_users"} <= committed


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_keeps_the_contract(name, config):
    study = load_study(name)
    assert isinstance(study, Study)
    if study.chunks(study.study_config(config)):
        check_study(study, ChunkedStudy)
    if isinstance(study, CategoricalRunsStudy):
        assert isinstance(study.CATEGORICAL_RUNS, bool)


def test_a_module_that_is_not_a_study_is_refused_by_name(monkeypatch):
    module = types.ModuleType("itemsampling_study.not_a_study")
    module.study_config = lambda config: {}
    module.chunks = ["not", "a", "function"]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(ValueError, match=r"not_a_study is not a Study \(itemsampling_study.contract\): "
                                         r"it lacks chunks, inputs, study_tables$"):
        load_study("not_a_study")


def test_a_study_without_chunks_has_no_chunk_table():
    with pytest.raises(ValueError, match=r"mn_users is not a ChunkedStudy .*: it lacks chunk_table$"):
        check_study(load_study("mn_users"), ChunkedStudy)
