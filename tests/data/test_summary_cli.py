"""dataset_summary and the ``itemsampling data stats|verify`` commands on a tiny repository."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from itemsampling.cli import main
from itemsampling.data import dataset_summary, make_synthetic


def test_summary_counts_distinct_pairs_users_items_density():
    data = make_synthetic(120, 60, avg_items=6, seed=5)
    dense = data.train.toarray()
    dense[np.arange(120), data.test_items] = 1
    row = dataset_summary({"s": data}).iloc[0]
    assert row["interactions"] == dense.sum() and row["users"] == 120 and row["items"] == 60
    assert np.isclose(row["density"], dense.mean())
    assert row["train_interactions"] + row["test_users"] == row["interactions"]


def _tiny_repository(tiny, ok: bool = True):
    """A repository with a registry of one small dataset in the mirror (corrupt if not ok)."""
    spec = {"toy": {"loader": "ncf_rating", "title": "toy", "licence": "none", "files": {
        "train": {"path": "t.train.rating"}, "test": {"path": "t.test.rating"}}}}
    registry = tiny.build(spec, {("toy", "train"): b"0\t1\t1\t0\n0\t2\t1\t0\n1\t2\t1\t0\n",
                                 ("toy", "test"): b"0\t3\t1\t0\n1\t1\t1\t0\n"})
    spec["toy"]["files"] = {role: {"path": f.path, "sha256": f.sha256} for role, f in registry.dataset("toy").files.items()}
    (tiny.repo / "data").mkdir(exist_ok=True)
    (tiny.repo / "data" / "registry.json").write_text(json.dumps({"datasets": spec}))
    if not ok:
        (tiny.mirror / "toy" / "t.test.rating").write_bytes(b"0\t2\t1\t0\n")


def test_cli_stats_writes_csv(tiny, tmp_path, capsys):
    _tiny_repository(tiny)
    out = tmp_path / "stats.csv"
    assert main(["data", "stats", "--dataset", "toy", "--output", str(out)]) == 0
    table = pd.read_csv(out)
    assert table[["dataset", "interactions", "users", "items"]].values.tolist() == [["toy", 5, 2, 3]]
    assert not (tmp_path / "stats.record.json").exists()  # a step's record is the compendium's (study datasets)
    assert main(["data", "stats"]) == 0  # default: every dataset whose files are available
    assert "toy" in capsys.readouterr().out


def test_cli_study_datasets_writes_the_table_with_its_record(tiny, tmp_path):
    _tiny_repository(tiny)
    out = tmp_path / "datasets.csv"
    assert main(["study", "datasets", "--dataset", "toy", "--output", str(out)]) == 0
    table = pd.read_csv(out)
    assert table[["dataset", "interactions", "users", "items"]].values.tolist() == [["toy", 5, 2, 3]]
    record = json.loads((tmp_path / "datasets.record.json").read_text())
    assert (record["step"], record["config"], list(record["tables"])) == ("study datasets", {"datasets": ["toy"]},
                                                                        ["datasets.csv"])


def test_cli_verify_lists_where_files_were_found(tiny, capsys):
    _tiny_repository(tiny)
    assert main(["data", "verify"]) == 0
    out = capsys.readouterr().out
    assert f"mirror: {tiny.mirror / 'toy' / 't.train.rating'}" in out
    assert "loadable: toy" in out


def test_cli_verify_fails_on_a_corrupt_file(tiny, capsys):
    _tiny_repository(tiny, ok=False)
    assert main(["data", "verify"]) == 1
    captured = capsys.readouterr()
    assert "mismatch" in captured.out and "t.test.rating" in captured.err


def test_cli_unknown_dataset_is_an_error(tiny, capsys):
    _tiny_repository(tiny)
    assert main(["data", "stats", "--dataset", "nope"]) == 2
    assert "registered datasets: toy" in capsys.readouterr().err
