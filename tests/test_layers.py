"""The packages' layer map (``[tool.importlinter]`` in pyproject.toml): the estimators
(``itemsampling``) never import the compendium (``itemsampling_study``), a module imports only from
its own layer or the layers below, modules of one layer do not import each other, and the modules
of every package import each other without circles; every import, also inside a function, checked
by import-linter on the source in src/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(source: Path) -> subprocess.CompletedProcess:
    """lint-imports with the contracts of pyproject.toml on the package found first in ``source``."""
    path = os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))
    return subprocess.run([str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache", "--no-logo"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True,
                          timeout=300)


def test_no_module_imports_from_a_layer_above_its_own():
    result = _lint(REPO / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


def _function_import(module: str, target: str, name: str) -> tuple[str, str]:
    """A function appended to ``module`` (a path below src/) that imports ``name`` from ``target``."""
    return module, f"\n\ndef _imported():\n    from {target} import {name}\n\n    return {name}\n"


BROKEN_MAPS = [
    # the estimators import the compendium, even inside a function
    pytest.param([_function_import("itemsampling/kernels.py", "itemsampling_study", "tables")],
                 "itemsampling.kernels -> itemsampling_study.tables", id="estimators-import-compendium"),
    # an upward import within the estimators
    pytest.param([_function_import("itemsampling/kernels.py", ".estimators", "estimate")],
                 "itemsampling.kernels -> itemsampling.estimators", id="upward"),
    # em and mes share a floor: neither may import the other
    pytest.param([_function_import("itemsampling/em.py", ".mes", "DEFAULT_TOL")], "itemsampling.em -> itemsampling.mes",
                 id="same-floor"),
    # the compendium's helpers share a floor too, also across the lines of a layer written over two lines
    pytest.param([_function_import("itemsampling_study/toy.py", ".engine", "LABELS")],
                 "itemsampling_study.toy -> itemsampling_study.engine", id="compendium-same-floor"),
    # two modules of a sub-package of the compendium that import each other form a circle
    pytest.param([_function_import("itemsampling_study/verdicts/estimator_accuracy/bias.py", ".", "levels"),
                  _function_import("itemsampling_study/verdicts/estimator_accuracy/levels.py", ".", "bias")],
                 "No import circles among the modules of a package BROKEN", id="circle"),
]


@pytest.mark.parametrize(("edits", "message"), BROKEN_MAPS)
def test_a_forbidden_import_breaks_the_map(tmp_path, edits, message):
    """The check reads the source it is given and fails on each kind of forbidden import."""
    for package in ("itemsampling", "itemsampling_study"):
        shutil.copytree(REPO / "src" / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    for module, code in edits:
        path = tmp_path / module
        path.write_text(path.read_text() + code)
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert message in result.stdout


@pytest.mark.parametrize("package", ["itemsampling", "itemsampling_study"])
def test_the_readme_names_every_layer_and_top_level_module(package):
    """The README's paragraph on how the code is laid out matches the tree."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## How the code is laid out"):]
    section = section[: section.index("\n## ", 1)]
    package = REPO / "src" / package
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(name for name in names if f"`{name}`" not in section)
    assert not missing, f"the README's layout paragraph does not name {missing}"
