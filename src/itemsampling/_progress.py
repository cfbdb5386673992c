"""Progress bars of long loops (fitting, scoring, adaptive evaluation)."""

from __future__ import annotations

from tqdm import tqdm

__all__ = ["progress_bar"]


def progress_bar(iterable=None, progress: bool | None = None, **kwargs):
    """A tqdm progress bar; ``progress=None`` shows it only when stderr is a terminal."""
    return tqdm(iterable, disable=None if progress is None else not progress, **kwargs)
