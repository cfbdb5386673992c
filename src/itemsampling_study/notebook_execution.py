"""Executed notebooks as deterministic functions of their inputs.

Papermill stamps an executed notebook with wall-clock times (of the run and of every cell), the
paths it was given and a random id for the cell of injected parameters, so every rerun changed
all six committed notebooks although their outputs were the same. :func:`execute_notebook` runs
a notebook with papermill and then :func:`tidy_executed_notebook` keeps only what depends on the
inputs: the parameters, the outputs, each cell's status, paths relative to the repository, and a
fixed id for the injected cell. The rule ``notebook_*`` and ``make figures``
(``workflow/scripts/replot.py``) both execute notebooks through it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from itemsampling._files import replace_with

__all__ = ["INJECTED_CELL_ID", "KERNEL_ARGUMENTS", "execute_notebook", "tidy_executed_notebook"]

#: id of the cell of parameters that papermill injects (its own is random)
INJECTED_CELL_ID = "injected-parameters"
#: papermill's metadata that records when and how long, not what
_TIMES = ("start_time", "end_time", "duration")


def tidy_executed_notebook(notebook: dict, input_path: str, output_path: str) -> dict:
    """``notebook`` (an executed notebook as JSON) without times, with the given paths and the
    injected cell's fixed id (:data:`INJECTED_CELL_ID`); changed in place and returned."""
    papermill = notebook.get("metadata", {}).get("papermill", {})
    for key in _TIMES:
        papermill.pop(key, None)
    papermill.update(input_path=input_path, output_path=output_path)
    for cell in notebook["cells"]:
        metadata = cell.get("metadata", {})
        metadata.pop("execution", None)
        for key in _TIMES:
            metadata.get("papermill", {}).pop(key, None)
        if "injected-parameters" in metadata.get("tags", []):
            cell["id"] = INJECTED_CELL_ID
    return notebook


#: the kernel's own log shows errors only: its warning about unencrypted TCP on localhost would
#: read like a failure in the output of ``make figures`` (warnings of the notebook's code are
#: cell outputs and stay visible there)
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]


def execute_notebook(source: str | Path, output: str | Path, parameters: Mapping, root: str | Path = ".") -> Path:
    """Execute the notebook ``source`` with ``parameters`` from ``root`` and write it, tidied, to
    ``output`` (atomically: a notebook that fails leaves no output, and papermill's error is
    raised with the failing cell).

    Paths in the notebook's metadata are written relative to ``root``.
    """
    import papermill  # the workflow's dependency, not the estimators'

    root, source, output = Path(root), Path(source), Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".ipynb", dir=output.parent)
    os.close(fd)
    try:
        papermill.execute_notebook(str(source), tmp, parameters=dict(parameters), kernel_name="python3",
                                   cwd=str(root), progress_bar=False, extra_arguments=KERNEL_ARGUMENTS)
        notebook = json.loads(Path(tmp).read_text())

        def relative(path: Path) -> str:
            return os.path.relpath(path.resolve(), root.resolve())

        tidy_executed_notebook(notebook, relative(source), relative(output))
        Path(tmp).write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
        replace_with(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return output
