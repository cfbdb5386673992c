"""Atomic writes that leave files as readable as any other the user makes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_text_file", "replace_with"]


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


@contextmanager
def atomic_text_file(path: str | Path) -> Iterator[IO[str]]:
    """A text file to write that appears at ``path`` only when the block ends without an error
    (:func:`replace_with`); on an error the temporary file is removed and ``path`` is untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            yield fh
        replace_with(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
