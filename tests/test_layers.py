"""The package's layer map (``[tool.importlinter]`` in pyproject.toml): a module imports only from
its own layer or the layers below, modules of one layer do not import each other, and the modules
of every package import each other without circles; every import, also inside a function, checked
by import-linter on the source in src/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_an_import_from_a_layer_above_breaks_the_map(tmp_path):
    """The check reads the source it is given, and fails on an upward import, even one inside a function."""
    shutil.copytree(REPO / "src" / "itemsampling", tmp_path / "itemsampling",
                    ignore=shutil.ignore_patterns("__pycache__"))
    kernels = tmp_path / "itemsampling" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n\ndef _tables():\n    from .studies import tables\n\n    return tables\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "itemsampling.kernels -> itemsampling.studies.tables" in result.stdout


def test_an_import_between_modules_of_one_floor_breaks_the_map(tmp_path):
    """em and mes share a floor: neither may import the other."""
    shutil.copytree(REPO / "src" / "itemsampling", tmp_path / "itemsampling",
                    ignore=shutil.ignore_patterns("__pycache__"))
    em = tmp_path / "itemsampling" / "em.py"
    em.write_text(em.read_text() + "\n\ndef _tol():\n    from .mes import DEFAULT_TOL\n\n    return DEFAULT_TOL\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "itemsampling.em -> itemsampling.mes" in result.stdout


def test_an_import_circle_inside_a_package_breaks_the_contract(tmp_path):
    """Two modules of the studies package that import each other (inside functions) form a circle."""
    shutil.copytree(REPO / "src" / "itemsampling", tmp_path / "itemsampling",
                    ignore=shutil.ignore_patterns("__pycache__"))
    studies = tmp_path / "itemsampling" / "studies"
    for here, there in (("tables", "records"), ("records", "tables")):
        module = studies / f"{here}.py"
        module.write_text(module.read_text() + f"\n\ndef _other():\n    from . import {there}\n\n    return {there}\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "No import circles among the modules of a package BROKEN" in result.stdout


def test_the_readme_names_every_layer_and_top_level_module():
    """The README's paragraph on how the code is laid out matches the tree."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## How the code is laid out"):]
    section = section[: section.index("\n## ", 1)]
    package = REPO / "src" / "itemsampling"
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(name for name in names if f"`{name}`" not in section)
    assert not missing, f"the README's layout paragraph does not name {missing}"
