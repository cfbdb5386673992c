"""A file of a dataset as the registry lists it, and how to check it against its checksums.

The lowest layer of :mod:`itemsampling.data`: :mod:`.fetch` downloads such a file and
:mod:`.registry` finds it, both checking it here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["ChecksumError", "FileEntry", "Source", "check_file", "file_digests"]


class ChecksumError(ValueError):
    """A data file does not have the checksum the registry lists for it."""


@dataclass(frozen=True)
class Source:
    """One place a file can be downloaded from.

    ``member`` names a file inside a zip archive at ``url`` (the archive is verified with
    ``archive_sha256`` / ``archive_md5`` when given, then the member with the file's checksums).
    """

    url: str
    member: str | None = None
    archive_sha256: str | None = None
    archive_md5: str | None = None


@dataclass(frozen=True)
class FileEntry:
    """A file of a dataset, as listed in the registry."""

    dataset: str
    role: str
    folder: str
    path: str
    sha256: str | None = None
    git_blob: str | None = None
    md5: str | None = None
    size: int | None = None
    member: str | None = None
    optional: bool = False
    sources: tuple[Source, ...] = ()
    note: str = ""

    @property
    def relpath(self) -> PurePosixPath:
        """Path relative to a data folder: ``<folder>/<path>``."""
        return PurePosixPath(self.folder) / self.path

    @property
    def checksums(self) -> dict[str, str]:
        """The digests the registry knows for this file, by kind (sha256, git_blob, md5)."""
        known = {"sha256": self.sha256, "git_blob": self.git_blob, "md5": self.md5}
        return {kind: value for kind, value in known.items() if value}

    def describe(self) -> str:
        """``'<folder>/<path>' (sha256 ...)`` for messages."""
        kind, value = next(iter(self.checksums.items()), ("checksum", "unknown"))
        return f"'{self.relpath}' ({kind.replace('_', ' ')} {value})"


_DIGEST_CACHE: dict[tuple[str, int, int], dict[str, str]] = {}


def file_digests(path: str | os.PathLike) -> dict[str, str]:
    """sha256, git blob id (``git hash-object``) and md5 of a file, cached per process.

    The cache key is (resolved path, modification time in ns, size), so a file that changes
    is hashed again.
    """
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _DIGEST_CACHE:
        sha256, md5 = hashlib.sha256(), hashlib.md5()
        blob = hashlib.sha1(f"blob {stat.st_size}\0".encode())
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                sha256.update(chunk)
                md5.update(chunk)
                blob.update(chunk)
        _DIGEST_CACHE[key] = {"sha256": sha256.hexdigest(), "git_blob": blob.hexdigest(), "md5": md5.hexdigest()}
    return _DIGEST_CACHE[key]


def check_file(entry: FileEntry, path: str | os.PathLike) -> None:
    """Raise :class:`ChecksumError` unless ``path`` has every checksum ``entry`` lists.

    The message names the file, where it was found, and the expected and found digests.
    """
    found = file_digests(path)
    wrong = [kind for kind, value in entry.checksums.items() if found[kind] != value.lower()]
    if wrong:
        details = "; ".join(
            f"expected {kind.replace('_', ' ')} {entry.checksums[kind]}, found {found[kind]}" for kind in wrong
        )
        raise ChecksumError(
            f"checksum mismatch for '{entry.relpath}' of dataset {entry.dataset!r} at {path}: {details}. "
            "The file is corrupt or a different version; delete it and provide the registered file."
        )
