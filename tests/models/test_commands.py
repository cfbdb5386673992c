"""``itemsampling train`` and ``itemsampling ranks`` end to end on the synthetic dataset."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemsampling.cli import main
from itemsampling.commands.train import parse_overrides


def test_parse_overrides():
    assert parse_overrides(["l2=500", "k=none", "normalize=true", "q=2.5", "name=x=y"]) == {
        "l2": 500, "k": None, "normalize": True, "q": 2.5, "name": "x=y"}
    with pytest.raises(ValueError, match="key=value"):
        parse_overrides(["l2"])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """itemknn on the registry's synthetic data, once with its state saved and once without."""
    root = tmp_path_factory.mktemp("ranks")
    for name, extra in (("saved", []), ("refit", ["--max-state-mb", "0"])):
        status = main(["train", "--dataset", "synthetic", "--model", "itemknn", "--set", "k=20", "--seed", "4",
                       "--out-dir", str(root / name), "--no-progress", *extra])
        assert status == 0
    return root


def test_train_writes_ranks_and_record(trained):
    record = json.loads((trained / "saved" / "train.json").read_text())
    assert record["hyperparameters"]["k"] == 20 and record["seed"] == 4 and record["state"] == "model.npz"
    assert record["fit_seconds"] >= 0 and record["rank_seconds"] >= 0
    # the machine that fitted it (BLAS kernels, versions); torch's part only for a torch model
    assert record["machine"]["packages"]["numpy"] == np.__version__ and record["machine"]["blas"]
    assert "torch" not in record["machine"]
    assert json.loads((trained / "refit" / "train.json").read_text())["state"] is None
    for protocol in ("unseen", "all"):
        frame = pd.read_parquet(trained / "saved" / f"{protocol}.parquet")
        assert list(frame.columns) == ["user", "item", "rank", "n_candidates"]
        assert len(frame) == record["n_test_users"]
        assert frame["rank"].between(1, frame["n_candidates"]).all()
        pd.testing.assert_frame_equal(frame, pd.read_parquet(trained / "refit" / f"{protocol}.parquet"))
        expected = (frame["rank"] <= 10).mean()
        assert record["metrics"][protocol]["recall@10"] == pytest.approx(expected)


def test_a_recorded_state_that_is_missing_is_refitted(trained, tmp_path):
    """model.npz is not committed with the ranks: without it, the model is fitted again."""
    from itemsampling.data import load_dataset
    from itemsampling.models.trained import load_trained

    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "train.json").write_text((trained / "saved" / "train.json").read_text())
    dataset = load_dataset("synthetic")
    refitted, record = load_trained(copy, dataset)
    saved, _ = load_trained(trained / "saved", dataset)
    assert record["state"] == "model.npz"
    np.testing.assert_array_equal(refitted.score(np.arange(50)), saved.score(np.arange(50)))


@pytest.mark.parametrize("variant", ["saved", "refit"])
def test_full_sample_reproduces_the_global_ranks(trained, tmp_path, variant):
    """With n = N items drawn without replacement, the sampled rank is the global rank."""
    n_items = json.loads((trained / variant / "train.json").read_text())["n_items"]
    out = tmp_path / "full.parquet"
    assert main(["ranks", "--dataset", "synthetic", "--model", "itemknn", "--model-dir", str(trained / variant),
                 "--protocol", "all", "--sample-size", str(n_items), "--seed", "1", "--output", str(out),
                 "--no-progress"]) == 0
    sampled = pd.read_parquet(out)
    glob = pd.read_parquet(trained / variant / "all.parquet")
    np.testing.assert_array_equal(sampled["rank"].to_numpy(), glob["rank"].to_numpy())


def test_ranks_command_fixed_and_adaptive(trained, tmp_path):
    base = ["ranks", "--dataset", "synthetic", "--model", "itemknn", "--model-dir", str(trained / "saved"),
            "--protocol", "unseen", "--seed", "2", "--no-progress"]
    fixed = tmp_path / "fixed.csv"
    assert main([*base, "--sample-size", "50", "--repeats", "2", "--replace", "--output", str(fixed)]) == 0
    frame = pd.read_csv(fixed)
    assert len(frame) == 2 * 2000 and frame["rank"].between(1, 50).all()
    adaptive = tmp_path / "adaptive.csv"
    assert main([*base, "--adaptive", "--n0", "10", "--n-max", "200", "--output", str(adaptive)]) == 0
    sizes = pd.read_csv(adaptive)["sample_size"]
    assert set(sizes.unique()) <= {10, 20, 40, 80, 160, 200}


def test_command_errors(trained, tmp_path, capsys):
    base = ["ranks", "--dataset", "synthetic", "--model", "itemknn", "--protocol", "all", "--output",
            str(tmp_path / "x.csv")]
    assert main([*base, "--model-dir", str(tmp_path / "nothing"), "--sample-size", "5"]) == 2
    assert "run `itemsampling train" in capsys.readouterr().err
    assert main([*base, "--model-dir", str(trained / "saved")]) == 2
    assert "--sample-size is required" in capsys.readouterr().err
    assert main([*base, "--model-dir", str(trained / "saved"), "--adaptive", "--n0", "5"]) == 2
    assert main(["train", "--dataset", "synthetic", "--model", "ease", "--set", "lambda=3",
                 "--out-dir", str(tmp_path / "e")]) == 2
    assert "no hyper-parameter 'lambda'" in capsys.readouterr().err


def test_train_records_torch_kernels_and_threads_for_a_torch_model(tmp_path, monkeypatch):
    """A torch fit's bits depend on torch's CPU kernels and threads: train.json names them."""
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert main(["train", "--dataset", "synthetic", "--model", "neumf", "--set", "n_epochs=1", "--seed", "4",
                 "--protocols", "unseen", "--out-dir", str(tmp_path), "--no-progress"]) == 0
    record = json.loads((tmp_path / "train.json").read_text())
    assert record["machine"]["torch"] == {"version": torch.__version__,
                                          "cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": 1}
