"""Atomic writes that leave files as readable as any other the user makes."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["replace_with"]


def replace_with(tmp: str | Path, target: str | Path) -> None:
    """Move the finished temporary file ``tmp`` onto ``target`` in one step.

    :func:`tempfile.mkstemp` creates files readable by their owner only; they get the mode of
    a file created the usual way (0o666 less the umask) first, so tables, records and datasets
    can be read by the rest of a group on a shared file system.
    """
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, target)
