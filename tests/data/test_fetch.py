"""Downloads: file:// sources, zip members, atomic writes, failures."""

from __future__ import annotations

import hashlib
import io
import urllib.error

import pytest

from itemsampling.data import fetch
from itemsampling.data.registry import ChecksumError

PAYLOAD = b"0\t1\t1\t0\n1\t2\t1\t0\n"


def _spec(url: str, *, sha256: str | None = None, member: str | None = None, **source) -> dict:
    src = {"url": url, **source}
    if member:
        src["member"] = member
    return {"toy": {"loader": "ncf_rating", "files": {"f": {
        "path": "sub/f.rating", "sha256": sha256 or hashlib.sha256(PAYLOAD).hexdigest(), "sources": [src]}}}}


def _leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_download_from_file_url_lands_in_data_raw(tiny, tmp_path):
    source = tmp_path / "server" / "f.rating"
    source.parent.mkdir()
    source.write_bytes(PAYLOAD)
    registry = tiny.build(_spec(source.as_uri()), {})
    path, where = registry.fetch(registry.dataset("toy").files["f"])
    assert where == "download"
    assert path == tiny.repo / "data" / "raw" / "toy" / "sub" / "f.rating"
    assert path.read_bytes() == PAYLOAD
    assert _leftovers(tiny.repo / "data" / "raw") == ["f.rating"]
    # the second lookup finds the downloaded file in the repository
    assert registry.fetch(registry.dataset("toy").files["f"])[1] == "repository"


def test_download_with_wrong_checksum_leaves_nothing(tiny, tmp_path):
    source = tmp_path / "f.rating"
    source.write_bytes(PAYLOAD + b"tampered")
    registry = tiny.build(_spec(source.as_uri()), {})
    with pytest.raises(ChecksumError) as info:
        registry.resolve("toy")
    assert hashlib.sha256(PAYLOAD).hexdigest() in str(info.value)
    assert hashlib.sha256(PAYLOAD + b"tampered").hexdigest() in str(info.value)
    assert _leftovers(tiny.repo / "data" / "raw") == []


def test_download_of_zip_member(tiny, tmp_path, make_zip):
    archive = tmp_path / "archive.zip"
    archive.write_bytes(make_zip("toy/u.data", PAYLOAD))
    digest = hashlib.md5(archive.read_bytes()).hexdigest()
    registry = tiny.build(_spec(archive.as_uri(), member="toy/u.data", archive_md5=digest), {})
    path = registry.resolve("toy")["f"]
    assert path.read_bytes() == PAYLOAD
    assert _leftovers(tiny.repo / "data" / "raw") == ["f.rating"]


def test_download_of_zip_with_wrong_archive_checksum_or_member(tiny, tmp_path, make_zip):
    archive = tmp_path / "archive.zip"
    archive.write_bytes(make_zip("toy/u.data", PAYLOAD))
    registry = tiny.build(_spec(archive.as_uri(), member="toy/u.data", archive_sha256="0" * 64), {})
    with pytest.raises(ChecksumError, match="archive"):
        registry.resolve("toy")
    registry = tiny.build(_spec(archive.as_uri(), member="toy/other"), {})
    with pytest.raises(FileNotFoundError, match="no member 'toy/other'"):
        registry.resolve("toy")
    assert _leftovers(tiny.repo / "data" / "raw") == []


def test_failed_download_names_the_three_ways(tiny, monkeypatch):
    def offline(url, timeout):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(fetch, "urlopen", offline)
    registry = tiny.build(_spec("https://example.org/f.rating"), {})
    with pytest.raises(FileNotFoundError) as info:
        registry.resolve("toy")
    message = str(info.value)
    assert "toy/sub/f.rating" in message and "data/raw" in message and "ITEMSAMPLING_DATA" in message
    assert "download failed" in message and "no network" in message


def test_interrupted_download_leaves_no_partial_file(tiny, monkeypatch):
    class Broken(io.BytesIO):
        def read(self, size=-1):
            if self.tell() > 4:
                raise ConnectionResetError("connection lost")
            return super().read(5)

    monkeypatch.setattr(fetch, "urlopen", lambda url, timeout: Broken(PAYLOAD))
    registry = tiny.build(_spec("https://example.org/f.rating"), {})
    with pytest.raises(FileNotFoundError, match="connection lost"):
        registry.resolve("toy")
    assert _leftovers(tiny.repo / "data" / "raw") == []
