"""What an installed package ships beside the code: licence and type information."""

from __future__ import annotations

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
