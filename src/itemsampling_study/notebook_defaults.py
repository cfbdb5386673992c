"""The parameters cell of each notebook, written from config/config.yaml.

The workflow runs a notebook with the parameters of its study (``study_config`` of the config,
keys sorted as the workflow passes them); a reader who opens the notebook in JupyterLab runs it
with the defaults of its parameters cell. So that both give the same notebook, the cell is
generated from the configuration (:func:`parameters_cell`), checked by a test
(``tests/workflow/test_notebook_defaults.py``) and rewritten by
``python workflow/scripts/notebook_defaults.py --write`` after the configuration changes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .records import canonical_config

__all__ = ["notebook_defaults", "parameters_cell", "parameters_source", "read_parameters_cell", "workflow_config", "write_parameters_cell"]

#: longest line of a generated cell
WIDTH = 110
#: the last line of every parameters cell
ROOT_LINE = "root = None  # folder that holds results/ and figures/; None: the repository this notebook is in"


def workflow_config(configfile: str | Path, schema: str | Path) -> dict:
    """The configuration as the workflow reads it: ``configfile`` with the defaults of ``schema``
    (``workflow/schemas/config.schema.yaml``; Snakemake's ``validate``)."""
    import yaml
    from snakemake.utils import validate

    config = yaml.safe_load(Path(configfile).read_text())
    validate(config, str(schema))
    return config


def notebook_defaults(study_config: Mapping, seed: int) -> dict:
    """The defaults of a notebook: its study's parameters as the workflow passes them, and the seed."""
    return {**canonical_config(study_config), "seed": seed}


def _flat(value) -> str:
    """``value`` as a Python literal on one line (strings in double quotes)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"a notebook parameter must be a JSON value, got {type(value).__name__}")


def _literal(value, column: int) -> str:
    """``value`` as a Python literal that starts at ``column``, one item per line where it does not fit."""
    flat = _flat(value)
    if column + len(flat) <= WIDTH or not isinstance(value, (list, tuple, Mapping)) or not value:
        return flat
    pad = "\n" + " " * (column + 1)
    if isinstance(value, Mapping):
        items = [f"{_flat(k)}: {_literal(v, column + 3 + len(_flat(k)))}" for k, v in value.items()]
        return "{" + ("," + pad).join(items) + "}"
    if not any(isinstance(v, (list, tuple, Mapping)) for v in value):  # scalars: as many per line as fit
        lines, line = [], ""
        for item in map(_flat, value):
            if line and column + 1 + len(line) + len(item) + 2 > WIDTH:
                lines.append(line.rstrip())
                line = ""
            line += item + ", "
        return "[" + pad.join([*lines, line.rstrip(", ")]) + "]"
    return "[" + ("," + pad).join(_literal(v, column + 1) for v in value) + "]"


def parameters_cell(study: str, defaults: Mapping) -> str:
    """Source of the parameters cell of the notebook of ``study`` with ``defaults``."""
    lines = [f"# parameters of study {study} from config/config.yaml, as the workflow passes them",
             "# (rewritten by `python workflow/scripts/notebook_defaults.py --write` when the config changes)"]
    lines += [f"{name} = {_literal(value, len(name) + 3)}" for name, value in defaults.items()]
    return "\n".join([*lines, ROOT_LINE])


def _cell(notebook: dict) -> dict:
    tagged = [c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1:
        raise ValueError(f"a notebook needs exactly one cell tagged 'parameters', found {len(tagged)}")
    return tagged[0]


def parameters_source(path: str | Path) -> str:
    """Source of the parameters cell of the notebook at ``path``."""
    return "".join(_cell(json.loads(Path(path).read_text()))["source"])


def read_parameters_cell(path: str | Path) -> dict:
    """The defaults of a notebook: the names its parameters cell defines (``root`` left out)."""
    names: dict = {}
    exec(parameters_source(path), {}, names)  # the notebook's own cell, as JupyterLab would run it
    names.pop("root", None)
    return names


def write_parameters_cell(path: str | Path, source: str) -> bool:
    """Replace the parameters cell of the notebook at ``path`` by ``source``; True if it changed."""
    path = Path(path)
    notebook = json.loads(path.read_text())
    cell = _cell(notebook)
    lines = source.splitlines(keepends=True)
    if cell["source"] == lines:
        return False
    cell["source"] = lines
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    return True
