"""What an installed package ships: the code of its own distribution, licence and type information."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is part of Python 3.11+")

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_licence_file_is_the_mit_licence_the_metadata_declares():
    assert _pyproject()["project"]["license"] == "MIT"  # an SPDX expression (PEP 639)
    assert _pyproject()["project"]["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")


def test_the_type_marker_is_package_data():
    """PEP 561: py.typed must be in the package and listed as package data to reach the wheel."""
    assert "py.typed" in _pyproject()["tool"]["setuptools"]["package-data"]["itemsampling"]
    assert (ROOT / "src" / "itemsampling" / "py.typed").is_file()


def test_every_parameter_of_the_public_functions_is_typed():
    """Array inputs as numpy.typing.ArrayLike, seeds as Generator | int | None, and so on: editors
    and type checkers see what each public function takes (PEP 561, py.typed)."""
    import inspect

    import itemsampling

    untyped = [f"{name}({p.name})" for name in itemsampling.__all__
               if inspect.isfunction(function := getattr(itemsampling, name))
               for p in inspect.signature(function).parameters.values()
               if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert untyped == []


def _wheel(source: Path, out: Path) -> zipfile.ZipFile:
    """The wheel pip builds from ``source`` (no dependencies, this environment's setuptools)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel)


def _sources(package: str) -> set[str]:
    """The files below src/ that a wheel of ``package`` must ship (Python files and data)."""
    root = ROOT / "src"
    return {p.relative_to(root).as_posix() for p in (root / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", ".csv", ".typed"}}


def _metadata(wheel: zipfile.ZipFile, name: str) -> str:
    (path,) = (n for n in wheel.namelist() if n.endswith(f".dist-info/{name}"))
    return wheel.read(path).decode()


@pytest.mark.slow
def test_the_estimators_wheel_ships_the_estimators_alone(tmp_path):
    """``pip install itemsampling`` gets the package itemsampling and nothing of the compendium;
    its required dependencies are the numerical stack alone."""
    wheel = _wheel(ROOT, tmp_path)
    shipped = {n for n in wheel.namelist() if ".dist-info/" not in n}
    assert shipped == _sources("itemsampling")
    assert {n.split("/")[0] for n in shipped} == {"itemsampling"}
    required = [line for line in _metadata(wheel, "METADATA").splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert sorted(line.split()[1].split(">")[0] for line in required) == [
        "numpy", "pandas", "scipy", "threadpoolctl", "tqdm"]
    assert "Requires-Dist: itemsampling-study==0.1.0; extra == \"study\"" in _metadata(wheel, "METADATA")


@pytest.mark.slow
def test_the_compendium_wheel_ships_the_studies_their_tables_and_the_study_command(tmp_path):
    wheel = _wheel(ROOT / "compendium", tmp_path)
    shipped = {n for n in wheel.namelist() if ".dist-info/" not in n}
    assert shipped == _sources("itemsampling_study")
    assert sum(n.startswith("itemsampling_study/paper/") and n.endswith(".csv") for n in shipped) >= 16
    assert "[itemsampling.commands]\nstudy = itemsampling_study.command" in _metadata(wheel, "entry_points.txt")
    assert "Requires-Dist: itemsampling[data,models]==0.1.0" in _metadata(wheel, "METADATA")


def test_the_study_command_comes_from_the_compendium_entry_point():
    """The command line finds ``itemsampling study`` through the installed compendium's entry point."""
    from itemsampling.cli import COMMAND_MODULES, command_modules

    assert "itemsampling_study.command" not in COMMAND_MODULES
    assert command_modules()[-1] == "itemsampling_study.command"
