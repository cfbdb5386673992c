"""Executed notebooks and figures are deterministic functions of their inputs: a rerun from the
same tables writes the same files, and `make figures` on a clean clone leaves it clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from itemsampling_study.notebook_execution import (
    INJECTED_CELL_ID,
    execute_notebook,
    tidy_executed_notebook,
)

from .conftest import REPO

papermill = pytest.importorskip("papermill")


def _notebook(path):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("x = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# tiny"), params, nbformat.v4.new_code_cell("print(x * 2)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_tidy_keeps_what_the_inputs_determine():
    executed = {"metadata": {"papermill": {"start_time": "t0", "end_time": "t1", "duration": 2.5, "parameters": {"x": 3},
                                           "input_path": "/abs/notebooks/a.ipynb", "exception": None}},
                "cells": [{"id": "f00d", "metadata": {"tags": ["injected-parameters"], "execution": {"iopub": "t"},
                                                      "papermill": {"duration": 1, "status": "completed"}}},
                          {"id": "c1", "metadata": {"papermill": {"start_time": "t", "exception": False}}}]}
    tidy = tidy_executed_notebook(executed, "notebooks/a.ipynb", "results/notebooks/a.ipynb")
    assert tidy["metadata"]["papermill"] == {"parameters": {"x": 3}, "input_path": "notebooks/a.ipynb",
                                             "output_path": "results/notebooks/a.ipynb", "exception": None}
    assert tidy["cells"][0] == {"id": INJECTED_CELL_ID, "metadata": {"tags": ["injected-parameters"],
                                                                    "papermill": {"status": "completed"}}}
    assert tidy["cells"][1]["metadata"] == {"papermill": {"exception": False}}


#: what the kernel sometimes logs while it is shut down, after the notebook is written; nothing
#: of ours can cause or prevent either:
#: - a traceback when its control handler flushes stderr after the iopub socket is closed (a race
#:   inside ipykernel, ipython/ipykernel#1518);
#: - one line when jupyter_client's shutdown, which sends SIGINT before its shutdown request,
#:   finds the kernel still inside a message handler (ipykernel catches and logs the interrupt)
_SHUTDOWN_RACE = re.compile(r"ERROR:tornado\.general:Uncaught exception in ZMQStream callback\n"
                            r"Traceback \(most recent call last\):\n(?:[ \t].*\n)*"
                            r"zmq\.error\.ZMQError: Socket operation on non-socket\n"
                            r"|\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.\n")


def test_the_shutdown_race_filter_removes_only_those_lines():
    race = ("ERROR:tornado.general:Uncaught exception in ZMQStream callback\nTraceback (most recent call last):\n"
            '  File "zmqstream.py", line 585, in _log_error\n    f.result()\n'
            "zmq.error.ZMQError: Socket operation on non-socket\n")
    interrupt = "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.\n"
    assert _SHUTDOWN_RACE.sub("", race) == ""
    assert _SHUTDOWN_RACE.sub("", interrupt + race) == ""
    assert _SHUTDOWN_RACE.sub("", race + "WARNING: unencrypted TCP\n") == "WARNING: unencrypted TCP\n"
    other = "[IPKernelApp] ERROR | Exception in message handler:\n"
    assert _SHUTDOWN_RACE.sub("", interrupt + other) == other


def test_a_rerun_writes_the_same_bytes_with_relative_paths(tmp_path, capfd):
    source = _notebook(tmp_path / "nb.ipynb")
    first = execute_notebook(source, tmp_path / "out" / "a.ipynb", {"x": 21}, tmp_path).read_bytes()
    second = execute_notebook(source, tmp_path / "out" / "a.ipynb", {"x": 21}, tmp_path).read_bytes()
    assert first == second
    # not even the kernel's warning about unencrypted TCP
    assert _SHUTDOWN_RACE.sub("", capfd.readouterr().err) == ""
    executed = json.loads(first)
    assert executed["metadata"]["papermill"]["input_path"] == "nb.ipynb"
    assert "42" in json.dumps(executed["cells"][-1]["outputs"])
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["a.ipynb"]  # no temporary file left


def test_a_failing_notebook_leaves_no_output(tmp_path):
    source = _notebook(tmp_path / "broken.ipynb")
    nb = nbformat.read(source, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("undefined_name"))
    nbformat.write(nb, source)
    with pytest.raises(papermill.PapermillExecutionError, match="NameError"):
        execute_notebook(source, tmp_path / "out" / "a.ipynb", {}, tmp_path)
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.slow
@pytest.mark.notebook
def test_make_figures_on_a_clean_clone_leaves_it_clean(tmp_path):
    """`make figures` (workflow/scripts/replot.py) redraws every figure and executed notebook from
    the committed tables: the same bytes, so git sees no change."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(clone / "src")}
    result = subprocess.run([sys.executable, "workflow/scripts/replot.py", "--html"], cwd=clone, env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout
    assert status == "", f"make figures changed committed files:\n{status}"
