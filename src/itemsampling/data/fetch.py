"""Download a registry file atomically and verify it.

A download is streamed into a temporary file next to its target, verified, and only then
renamed onto the target (``os.replace``), so an interrupted or corrupt download never leaves
a half-written file behind. A source may name a member of a zip archive: the archive is
downloaded to a temporary file, verified when the registry knows its checksum, and the member
is extracted the same way.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from .._files import replace_with
from .files import ChecksumError, FileEntry, Source, check_file

__all__ = ["download_file", "urlopen"]

#: the function used to open URLs; tests may replace it
urlopen = urllib.request.urlopen
#: seconds to wait for a server before giving up
TIMEOUT = 60


def _download_to(url: str, folder: Path) -> Path:
    """Stream ``url`` into a new temporary file in ``folder`` and return its path."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urlopen(url, timeout=TIMEOUT) as response:
            shutil.copyfileobj(response, out, 1 << 20)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _check_archive(path: Path, source: Source) -> None:
    expected = {"sha256": source.archive_sha256, "md5": source.archive_md5}
    for kind, value in expected.items():
        if value:
            digest = hashlib.new(kind)
            with open(path, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
            found = digest.hexdigest()
            if found != value.lower():
                raise ChecksumError(
                    f"checksum mismatch for the archive {source.url}: expected {kind} {value}, found {found}"
                )


def download_file(entry: FileEntry, source: Source, target: str | os.PathLike) -> Path:
    """Download ``entry`` from ``source`` to ``target``, atomically and verified.

    Raises
    ------
    OSError
        If the download fails (``urllib.error.URLError`` is an ``OSError``) or the archive has
        no such member; nothing is left at ``target``.
    ChecksumError
        If the downloaded file (or archive) has the wrong checksum; nothing is left at ``target``.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _download_to(source.url, target.parent)
    try:
        if source.member is not None:
            _check_archive(tmp, source)
            archive, tmp = tmp, None
            try:
                fd, name = tempfile.mkstemp(dir=target.parent, prefix=".extract-", suffix=".part")
                tmp = Path(name)
                with zipfile.ZipFile(archive) as zf, os.fdopen(fd, "wb") as out:
                    try:
                        member = zf.open(source.member)
                    except KeyError as exc:
                        raise FileNotFoundError(f"archive {source.url} has no member {source.member!r}") from exc
                    with member:
                        shutil.copyfileobj(member, out, 1 << 20)
            except zipfile.BadZipFile as exc:
                raise OSError(f"{source.url} is not a valid zip archive: {exc}") from exc
            finally:
                archive.unlink(missing_ok=True)
        check_file(entry, tmp)
        replace_with(tmp, target)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise
    return target
