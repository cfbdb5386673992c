"""The dataset registry: which files each dataset needs, their checksums and where to find them.

The registry is the JSON file ``data/registry.json`` at the repository root. A file of dataset
``d`` is looked up, in this order, at

1. ``<root>/data/raw/<folder>/<path>`` in the repository (``<root>`` is ``$ITEMSAMPLING_ROOT``
   if set, else the nearest folder at or above the working directory that holds
   ``data/registry.json``, else the source checkout this package was installed from);
2. ``$ITEMSAMPLING_DATA/<folder>/<path>`` (a local mirror, e.g. a shared data folder);
3. a download from the registry's sources into ``<root>/data/raw/<folder>/<path>``
   (see :mod:`itemsampling.data.fetch`; written atomically and verified).

``<folder>`` is the dataset's folder (its name unless the registry says otherwise; a file may
name another dataset's folder to share it). Every file found or downloaded is checked against
its sha256 (or git blob id when only that is known); hashes are computed once per process
for a given (path, modification time, size).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath

from .fetch import download_file
from .files import ChecksumError, FileEntry, Source, check_file, file_digests

__all__ = [
    "ChecksumError",
    "DatasetEntry",
    "FileEntry",
    "Registry",
    "Source",
    "default_registry",
    "file_digests",
    "project_root",
]

#: registry file, relative to the repository root
REGISTRY_PATH = Path("data") / "registry.json"
#: environment variable naming the repository root
ROOT_ENV = "ITEMSAMPLING_ROOT"
#: environment variable naming a local mirror of the data folders
MIRROR_ENV = "ITEMSAMPLING_DATA"


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset of the registry: loader name, provenance and files by role."""

    name: str
    loader: str
    folder: str
    title: str = ""
    homepage: str = ""
    licence: str = ""
    files: dict[str, FileEntry] = field(default_factory=dict)

    @property
    def required_files(self) -> dict[str, FileEntry]:
        """The files the loader reads (registry files not marked ``optional``)."""
        return {role: f for role, f in self.files.items() if not f.optional}


def _parse_dataset(name: str, spec: dict) -> DatasetEntry:
    if "loader" not in spec:
        raise ValueError(f"registry entry {name!r} has no 'loader'")
    folder = spec.get("folder", name)
    files = {}
    for role, fspec in spec.get("files", {}).items():
        if "path" not in fspec:
            raise ValueError(f"registry file {name}/{role} has no 'path'")
        if not (fspec.get("sha256") or fspec.get("git_blob")):
            raise ValueError(f"registry file {name}/{role} needs a 'sha256' or a 'git_blob' checksum")
        if PurePosixPath(fspec["path"]).is_absolute() or ".." in PurePosixPath(fspec["path"]).parts:
            raise ValueError(f"registry file {name}/{role}: path must be relative, got {fspec['path']!r}")
        files[role] = FileEntry(
            dataset=name,
            role=role,
            folder=fspec.get("folder", folder),
            path=fspec["path"],
            sha256=fspec.get("sha256"),
            git_blob=fspec.get("git_blob"),
            md5=fspec.get("md5"),
            size=fspec.get("size"),
            member=fspec.get("member"),
            optional=bool(fspec.get("optional", False)),
            sources=tuple(Source(**src) for src in fspec.get("sources", ())),
            note=fspec.get("note", ""),
        )
    return DatasetEntry(
        name=name,
        loader=spec["loader"],
        folder=folder,
        title=spec.get("title", ""),
        homepage=spec.get("homepage", ""),
        licence=spec.get("licence", ""),
        files=files,
    )


def project_root() -> Path:
    """The repository root whose ``data/raw`` holds local data files.

    ``$ITEMSAMPLING_ROOT`` if set; otherwise the nearest folder at or above the working
    directory that contains ``data/registry.json``; otherwise the source checkout of this
    package (an editable install); otherwise the working directory.
    """
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).expanduser().resolve()
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        if (folder / REGISTRY_PATH).is_file():
            return folder
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / REGISTRY_PATH).is_file():
        return checkout
    return cwd


# ---------------------------------------------------------------------------------------------
# checksums, computed once per (path, mtime, size)

# ---------------------------------------------------------------------------------------------


class Registry:
    """Datasets by name, built from the registry dictionary (the parsed ``registry.json``).

    Parameters
    ----------
    spec : dict
        ``{"datasets": {name: {"loader": ..., "folder": ..., "files": {role: {...}}}}}``.
    root : path, optional
        Repository root (its ``data/raw`` is searched first and receives downloads);
        default :func:`project_root` at the time of each lookup.
    mirror : path, optional
        Local mirror folder; default ``$ITEMSAMPLING_DATA`` at the time of each lookup.
    download : bool
        Whether files not found locally may be downloaded.
    """

    def __init__(self, spec: dict, *, root=None, mirror=None, download: bool = True):
        if "datasets" not in spec:
            raise ValueError("a registry needs a 'datasets' mapping")
        self.datasets = {name: _parse_dataset(name, s) for name, s in spec["datasets"].items()}
        self._root = Path(root) if root is not None else None
        self._mirror = Path(mirror) if mirror is not None else None
        self.download = download

    @classmethod
    def from_file(cls, path: str | os.PathLike, **kwargs) -> Registry:
        """Read a registry JSON file."""
        with open(path, encoding="utf-8") as fh:
            return cls(json.load(fh), **kwargs)

    @property
    def names(self) -> list[str]:
        """Registered dataset names."""
        return list(self.datasets)

    @property
    def root(self) -> Path:
        """Repository root (see :func:`project_root`)."""
        return self._root if self._root is not None else project_root()

    @property
    def mirror(self) -> Path | None:
        """Local mirror folder, or ``None`` when ``$ITEMSAMPLING_DATA`` is unset."""
        if self._mirror is not None:
            return self._mirror
        env = os.environ.get(MIRROR_ENV)
        return Path(env).expanduser() if env else None

    def dataset(self, name: str) -> DatasetEntry:
        """The entry of dataset ``name``; ``ValueError`` listing the names if unknown."""
        if name not in self.datasets:
            raise ValueError(f"unknown dataset {name!r}; registered datasets: {', '.join(self.names)}")
        return self.datasets[name]

    def raw_path(self, entry: FileEntry) -> Path:
        """Where the file lives (or is downloaded to) inside the repository."""
        return self.root / "data" / "raw" / Path(entry.relpath)

    def locate(self, entry: FileEntry) -> tuple[Path | None, str]:
        """Find a file locally, verified: ``(path, "repository" | "mirror")`` or ``(None, "")``."""
        candidates = [(self.raw_path(entry), "repository")]
        if self.mirror is not None:
            candidates.append((self.mirror / Path(entry.relpath), "mirror"))
        for path, where in candidates:
            if path.is_file():
                check_file(entry, path)
                return path, where
        return None, ""

    def fetch(self, entry: FileEntry, *, download: bool | None = None) -> tuple[Path, str]:
        """Locate or download one file: ``(path, "repository" | "mirror" | "download")``.

        Raises
        ------
        FileNotFoundError
            If the file is not found and cannot be downloaded; the message names the file and
            the three ways to provide it.
        ChecksumError
            If a file found or downloaded has the wrong checksum.
        """
        path, where = self.locate(entry)
        if path is not None:
            return path, where
        download = self.download if download is None else download
        if not download:
            raise FileNotFoundError(self._missing_message(entry, "downloads are switched off"))
        if not entry.sources:
            raise FileNotFoundError(self._missing_message(entry, "no public download address exists for it"))
        target = self.raw_path(entry)
        failures = []
        for source in entry.sources:
            try:
                download_file(entry, source, target)
                return target, "download"
            except ChecksumError:
                raise
            except OSError as exc:  # URLError, HTTPError, zip member missing, disk errors
                failures.append(f"{source.url}: {exc}")
        raise FileNotFoundError(self._missing_message(entry, "download failed: " + " | ".join(failures)))

    def resolve(self, name: str, roles=None, *, download: bool | None = None) -> dict[str, Path]:
        """Paths of the files a dataset needs (all required roles by default), before any compute.

        Every file is located (or downloaded) and verified first; if any is missing, one
        ``FileNotFoundError`` names all missing files and the three ways to provide them.
        """
        entry = self.dataset(name)
        wanted = entry.required_files if roles is None else {r: entry.files[r] for r in roles}
        paths, missing = {}, []
        for role, fentry in wanted.items():
            try:
                paths[role] = self.fetch(fentry, download=download)[0]
            except FileNotFoundError as exc:
                missing.append(str(exc))
        if missing:
            raise FileNotFoundError("\n".join(missing))
        return paths

    def _missing_message(self, entry: FileEntry, why_no_download: str) -> str:
        mirror = self.mirror
        mirror_state = (
            f"it is {mirror}, which has no such file" if mirror is not None else "it is not set"
        )
        urls = ", ".join(s.url + (f" (member {s.member})" if s.member else "") for s in entry.sources)
        download = f"download it from {urls}" if urls else "download it"
        hint = f" Note: {entry.note}" if entry.note else ""
        return (
            f"dataset {entry.dataset!r} needs the file {entry.describe()}, which was not found. "
            f"Provide it in one of three ways: "
            f"(1) put it at {self.raw_path(entry)} (the repository's data/raw; the root is "
            f"${ROOT_ENV} or the working directory); "
            f"(2) set ${MIRROR_ENV} to a folder holding {entry.relpath} ({mirror_state}); "
            f"(3) {download} — {why_no_download}.{hint}"
        )


@cache
def _registry_at(path: str) -> Registry:
    return Registry.from_file(path)


def default_registry() -> Registry:
    """The registry of the repository (``<project_root()>/data/registry.json``)."""
    path = project_root() / REGISTRY_PATH
    if not path.is_file():
        raise FileNotFoundError(
            f"no dataset registry at {path}; run from the repository or set ${ROOT_ENV} to its root"
        )
    return _registry_at(str(path))
