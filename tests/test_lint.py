"""The code passes the project's linter (``make lint``: ruff with the rules of pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def test_ruff_finds_nothing_in_the_code_the_tests_the_benchmarks_and_the_notebooks():
    result = subprocess.run([str(RUFF), "check", "--no-cache", "src", "tests", "benchmarks", "notebooks"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
