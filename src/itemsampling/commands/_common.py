"""Helpers shared by the command modules.

The module docstring of each command is its ``--help`` description; :func:`plain_text` removes
the reStructuredText markup that documentation tools read but a terminal shows as is.

Output paths are checked before a command reads or computes anything, so that a typo in a
path costs no run time: a file to write must lie in an existing folder and must not be a
folder itself. An existing output file is overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["check_output_dir", "check_output_file", "plain_text"]

#: an interpreted-text role such as :func:`name` or :py:mod:`name` (a leading ``~`` is dropped)
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")
#: an inline literal, ``text``, which may run over several lines
_LITERAL = re.compile(r"``(.+?)``", flags=re.S)


def plain_text(doc: str) -> str:
    """``doc`` without reStructuredText markup: roles and inline literals keep only their text.

    Examples
    --------
    >>> plain_text("Run ``itemsampling train`` (see :mod:`itemsampling.models.registry`).")
    'Run itemsampling train (see itemsampling.models.registry).'
    """
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", doc))


def check_output_file(path: str, option: str = "--output") -> None:
    """Check that ``path`` can be written as a file: its folder exists and it is no folder.

    Raises
    ------
    ValueError
        If ``path`` is an existing folder.
    FileNotFoundError
        If the folder that would hold ``path`` does not exist.
    """
    if Path(path).is_dir():
        raise ValueError(f"{option} {path!r} is a folder; give the name of a file to write")
    _check_parent(path, option)


def check_output_dir(path: str, option: str = "--out-dir") -> None:
    """Check that ``path`` can be used as an output folder (created if missing).

    Raises
    ------
    ValueError
        If ``path`` is an existing file.
    FileNotFoundError
        If the folder that would hold ``path`` does not exist.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise ValueError(f"{option} {path!r} is a file; give a folder (it is created if missing)")
    _check_parent(path, option)


def _check_parent(path: str, option: str) -> None:
    folder = Path(path).parent
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{option} {path!r}: the folder {str(folder)!r} does not exist; "
            "create it first or choose another path"
        )
