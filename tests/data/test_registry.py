"""Registry: lookup order, checksums, missing-file messages, the repository registry file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from itemsampling.data import files as files_module
from itemsampling.data import load_dataset
from itemsampling.data.loaders import LOADERS
from itemsampling.data.registry import (
    REGISTRY_PATH,
    ChecksumError,
    Registry,
    default_registry,
    file_digests,
    project_root,
)

REPO = Path(__file__).resolve().parents[2]
ONE = {"toy": {"loader": "ncf_rating", "files": {"f": {"path": "sub/a.txt"}}}}


def test_repository_registry_is_complete_and_consistent():
    spec = json.loads((REPO / REGISTRY_PATH).read_text())
    registry = Registry(spec)
    assert {"ml-1m", "citeulike-a", "ml-100k", "pinterest-subset", "yelp-diffnet", "pinterest-20", "yelp",
            "ml-20m", "synthetic"} <= set(registry.names)
    for name, entry in registry.datasets.items():
        assert entry.loader in set(LOADERS) | {"synthetic"}, name
        assert entry.licence and entry.title, name
        for role, f in entry.files.items():
            assert f.sha256 is None or len(f.sha256) == 64, (name, role)
            assert f.git_blob is None or len(f.git_blob) == 40, (name, role)
            assert f.sources or f.note, f"{name}/{role}: no download address and no note saying why"
            for source in f.sources:
                assert source.url.startswith("https://"), source.url
                if "raw.githubusercontent.com" in source.url:  # pinned to a commit
                    assert len(source.url.split("/")[5]) == 40, source.url


def test_lookup_prefers_repository_then_mirror(tiny):
    registry = tiny.build(ONE, {("toy", "f"): b"x\n"})
    entry = registry.dataset("toy").files["f"]
    assert registry.locate(entry) == (tiny.mirror / "toy" / "sub" / "a.txt", "mirror")
    local = tiny.repo / "data" / "raw" / "toy" / "sub" / "a.txt"
    local.parent.mkdir(parents=True)
    local.write_bytes(b"x\n")
    assert registry.locate(entry) == (local, "repository")
    assert registry.resolve("toy") == {"f": local}


def test_checksum_mismatch_names_file_expected_and_found(tiny):
    registry = tiny.build(ONE, {("toy", "f"): b"x\n"})
    path = tiny.mirror / "toy" / "sub" / "a.txt"
    path.write_bytes(b"y\n")
    with pytest.raises(ChecksumError) as info:
        registry.resolve("toy")
    message = str(info.value)
    assert "toy/sub/a.txt" in message
    assert hashlib.sha256(b"x\n").hexdigest() in message
    assert hashlib.sha256(b"y\n").hexdigest() in message


def test_missing_file_message_names_the_three_ways(tiny):
    spec = {"toy": {"loader": "ncf_rating", "files": {
        "f": {"path": "sub/a.txt", "sha256": "ab" * 32, "sources": [{"url": "https://example.org/a.txt"}]}}}}
    registry = tiny.build(spec, {}, download=False)
    with pytest.raises(FileNotFoundError) as info:
        load_dataset("toy", registry=registry)
    message = str(info.value)
    assert "toy/sub/a.txt" in message and "ab" * 32 in message
    assert str(tiny.repo / "data" / "raw" / "toy" / "sub" / "a.txt") in message  # way 1
    assert "ITEMSAMPLING_DATA" in message and str(tiny.mirror) in message  # way 2
    assert "https://example.org/a.txt" in message  # way 3


def test_missing_derived_file_says_it_cannot_be_downloaded(tiny):
    spec = {"toy": {"loader": "ncf_rating", "files": {"f": {"path": "a.txt", "sha256": "ab" * 32, "note": "derived"}}}}
    registry = tiny.build(spec, {})
    with pytest.raises(FileNotFoundError, match="no public download address"):
        registry.resolve("toy")


def test_all_missing_files_reported_before_any_parsing(tiny, monkeypatch):
    spec = {"toy": {"loader": "ncf_rating", "files": {"train": {"path": "t.rating"}, "test": {"path": "s.rating"}}}}
    registry = tiny.build(spec, {}, download=False)
    monkeypatch.setitem(LOADERS, "ncf_rating", lambda paths, entry: pytest.fail("loader ran without its files"))
    with pytest.raises(FileNotFoundError) as info:
        load_dataset("toy", registry=registry)
    assert "t.rating" in str(info.value) and "s.rating" in str(info.value)


def test_optional_files_are_not_required(tiny):
    spec = {"toy": {"loader": "ncf_rating", "files": {"f": {"path": "a.txt"}, "extra": {"path": "b.txt", "optional": True}}}}
    registry = tiny.build(spec, {("toy", "f"): b"1\n"})
    assert set(registry.resolve("toy")) == {"f"}


def test_git_blob_matches_git_hash_object(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(256)) * 10 + b"\n")
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()
    assert file_digests(path)["git_blob"] == expected


def test_git_blob_only_entry_is_verified(tiny):
    data = b"0\t1\t1\t0\n"
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    spec = {"toy": {"loader": "ncf_rating", "files": {"f": {"path": "a.txt", "git_blob": blob, "sha256": None}}}}
    registry = tiny.build(spec, {("toy", "f"): data})
    assert registry.resolve("toy")["f"].read_bytes() == data
    (tiny.mirror / "toy" / "a.txt").write_bytes(data + b"x")
    with pytest.raises(ChecksumError, match=f"expected git blob {blob}"):
        registry.resolve("toy")


def test_checksums_are_computed_once_per_path_mtime_and_size(tiny, monkeypatch):
    registry = tiny.build(ONE, {("toy", "f"): b"x\n"})
    calls = []
    real_sha256 = hashlib.sha256
    monkeypatch.setattr(files_module.hashlib, "sha256", lambda *a: calls.append(1) or real_sha256(*a))
    registry.resolve("toy")
    registry.resolve("toy")
    assert len(calls) == 1
    path = tiny.mirror / "toy" / "sub" / "a.txt"
    path.write_bytes(b"z\n")  # same size, new content and mtime: hashed again, and rejected
    os.utime(path, ns=(1, 1))
    with pytest.raises(ChecksumError):
        registry.resolve("toy")
    assert len(calls) == 2


def test_unknown_dataset_lists_names(tiny, monkeypatch):
    registry = tiny.build(ONE, {})
    with pytest.raises(ValueError, match="unknown dataset 'nope'; registered datasets: toy"):
        load_dataset("nope", registry=registry)
    monkeypatch.setenv("ITEMSAMPLING_ROOT", str(REPO))
    with pytest.raises(ValueError, match=r"ml-1m.*citeulike-a"):
        load_dataset("nope")


def test_registry_rejects_entries_without_checksum_or_with_escaping_paths():
    with pytest.raises(ValueError, match="needs a 'sha256' or a 'git_blob'"):
        Registry({"datasets": {"toy": {"loader": "x", "files": {"f": {"path": "a"}}}}})
    with pytest.raises(ValueError, match="must be relative"):
        Registry({"datasets": {"toy": {"loader": "x", "files": {"f": {"path": "../a", "sha256": "0" * 64}}}}})


def test_project_root_from_env_or_working_directory(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "registry.json").write_text('{"datasets": {}}')
    (tmp_path / "notebooks").mkdir()
    monkeypatch.delenv("ITEMSAMPLING_ROOT", raising=False)
    monkeypatch.chdir(tmp_path / "notebooks")
    assert project_root() == tmp_path.resolve()
    assert default_registry().names == []
    monkeypatch.setenv("ITEMSAMPLING_ROOT", str(REPO))
    assert project_root() == REPO
    assert "ml-1m" in default_registry().names
