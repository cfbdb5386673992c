"""Fixtures for the data tests: tiny registries over files written into ``tmp_path``, and the
skip rule of the integration tests (they need the real datasets in ``$ITEMSAMPLING_DATA``)."""

from __future__ import annotations

import copy
import hashlib
import io
import os
import zipfile
from pathlib import Path

import pytest

from itemsampling.data.registry import Registry


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip ``@pytest.mark.integration`` tests (before their fixtures load any data) unless
    ``$ITEMSAMPLING_DATA`` names a folder."""
    if item.get_closest_marker("integration") is None:
        return
    folder = os.environ.get("ITEMSAMPLING_DATA")
    if not folder:
        pytest.skip("needs the real datasets: set ITEMSAMPLING_DATA to the data mirror (e.g. ../shared/data)")
    if not Path(folder).is_dir():
        pytest.skip(f"ITEMSAMPLING_DATA={folder} is not a folder")


def zip_bytes(member: str, data: bytes) -> bytes:
    """A zip archive holding one member."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(member, data)
    return buffer.getvalue()


class TinyData:
    """Build registries over small files in a temporary repository and mirror.

    ``build(datasets, contents, place="mirror")``: ``datasets`` is the registry's
    ``datasets`` mapping without checksums; ``contents[(dataset, role)]`` is the bytes of
    each file, which is written to ``<place>/<folder>/<path>`` and registered with its sha256.
    """

    def __init__(self, base: Path, monkeypatch):
        self.base = base
        self.repo = base / "repo"
        self.mirror = base / "mirror"
        self.repo.mkdir()
        self.mirror.mkdir()
        monkeypatch.setenv("ITEMSAMPLING_ROOT", str(self.repo))
        monkeypatch.setenv("ITEMSAMPLING_DATA", str(self.mirror))

    def build(self, datasets: dict, contents: dict, place: str = "mirror", **kwargs) -> Registry:
        datasets = copy.deepcopy(datasets)
        folder_of = {"mirror": self.mirror, "repo": self.repo / "data" / "raw"}[place]
        for (name, role), data in contents.items():
            spec = datasets[name]
            fspec = spec["files"][role]
            fspec.setdefault("sha256", hashlib.sha256(data).hexdigest())
            target = folder_of / fspec.get("folder", spec.get("folder", name)) / fspec["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        for spec in datasets.values():
            for fspec in spec.get("files", {}).values():
                fspec.setdefault("sha256", "0" * 64)
        return Registry({"datasets": datasets}, **kwargs)


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> TinyData:
    """A :class:`TinyData` whose repository and mirror are the environment's for this test."""
    return TinyData(tmp_path, monkeypatch)


@pytest.fixture
def make_zip():
    """``make_zip(member, data) -> bytes``."""
    return zip_bytes
