"""A notebook opened in JupyterLab runs as given: its defaults are the configured parameters, and it
runs top to bottom from notebooks/ on the committed tables."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
import yaml

from itemsampling_study.notebook_defaults import (
    WIDTH,
    notebook_defaults,
    parameters_cell,
    parameters_source,
    read_parameters_cell,
    write_parameters_cell,
)

from .conftest import REPO

NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())


def _script():
    spec = importlib.util.spec_from_file_location("notebook_defaults", REPO / "workflow" / "scripts" / "notebook_defaults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_notebook_defaults_to_the_parameters_the_workflow_passes():
    script = _script()
    config = script.configured()
    from itemsampling_study.registry import notebook_parameters

    for name, spec in NOTEBOOKS.items():
        passed = notebook_parameters(spec["study"], config, ".")
        passed.pop("root"), passed.pop("seed")  # sorted among the keys here; last in the cell
        # the values, and the order of every mapping's keys (which orders rows and panels)
        assert json.dumps(read_parameters_cell(REPO / "notebooks" / f"{name}.ipynb")) == json.dumps(
            notebook_defaults(passed, config["seed"])), (
            f"notebooks/{name}.ipynb: its defaults are not config/config.yaml's; "
            "run python workflow/scripts/notebook_defaults.py --write")
    assert script.main([]) == 0


def test_a_generated_cell_defines_its_defaults_within_the_line_width(tmp_path):
    defaults = notebook_defaults({"b": [1, 2.5, None, True], "a": {"z": "x", "y": [{"k": i, "long_name": "v" * 9}
                                                                                  for i in range(9)]}}, 3)
    source = parameters_cell("s", defaults)
    assert max(len(line) for line in source.splitlines()) <= WIDTH
    names: dict = {}
    exec(source, {}, names)
    assert names.pop("root") is None and json.dumps(names) == json.dumps(defaults)
    assert list(names) == ["a", "b", "seed"] and list(names["a"]) == ["y", "z"]
    packed = parameters_cell("s", {"names": [f"estimator_{i}" for i in range(30)]})
    assert len(packed.splitlines()) <= 3 + 5 and max(len(line) for line in packed.splitlines()) <= WIDTH
    with pytest.raises(TypeError, match="JSON value"):
        parameters_cell("s", {"x": {1, 2}})
    notebook = tmp_path / "n.ipynb"
    shutil.copy(REPO / "notebooks" / "02_sampling_theorem.ipynb", notebook)
    assert write_parameters_cell(notebook, source) and not write_parameters_cell(notebook, source)
    assert parameters_source(notebook) == source and read_parameters_cell(notebook) == names


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """The committed tables and notebooks, in a folder laid out like the repository."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(REPO / "results" / "tables", root / "results" / "tables")
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    (root / "Snakefile").touch()
    return root


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_each_notebook_runs_from_its_folder_with_its_own_defaults(name, clone):
    papermill = pytest.importorskip("papermill")
    out = clone / f"{name}.executed.ipynb"
    papermill.execute_notebook(str(clone / "notebooks" / f"{name}.ipynb"), str(out), kernel_name="python3",
                               cwd=str(clone / "notebooks"), progress_bar=False)
    executed = json.loads(out.read_text())
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "warnings or progress bars in the outputs"
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= len(NOTEBOOKS[name]["figures"])
    assert (clone / "figures" / name).is_dir() and not (clone / "notebooks" / "figures").exists()
