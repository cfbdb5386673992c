"""Check or rewrite the parameters cell of every notebook from config/config.yaml.

A notebook opened in JupyterLab runs with the defaults of its parameters cell; the workflow runs
it with the parameters of its study. This script keeps the two the same
(itemsampling_study.notebook_defaults). Exit status 1 when a cell differs and --write is not
given.

    python workflow/scripts/notebook_defaults.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from itemsampling_study.notebook_defaults import (
    notebook_defaults,
    parameters_cell,
    parameters_source,
    workflow_config,
    write_parameters_cell,
)
from itemsampling_study.registry import load_study

REPO = Path(__file__).resolve().parents[2]


def configured() -> dict:
    """config/config.yaml with the schema's defaults, as the workflow reads it."""
    return workflow_config(REPO / "config" / "config.yaml", REPO / "workflow" / "schemas" / "config.schema.yaml")


def cells(config: dict) -> dict[Path, str]:
    """The parameters cell of every notebook of workflow/notebooks.yaml, by notebook file."""
    notebooks = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())
    return {REPO / "notebooks" / f"{name}.ipynb": parameters_cell(
        spec["study"], notebook_defaults(load_study(spec["study"]).study_config(config), config["seed"]))
        for name, spec in notebooks.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the cells that differ")
    args = parser.parse_args(argv)
    expected = cells(configured())
    stale = [path for path, source in expected.items() if parameters_source(path) != source]
    for path in stale:
        if args.write:
            write_parameters_cell(path, expected[path])
            print(f"rewrote the parameters cell of {path.relative_to(REPO)}")
        else:
            print(f"{path.relative_to(REPO)}: its parameters cell differs from config/config.yaml", file=sys.stderr)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
