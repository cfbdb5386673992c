"""``itemsampling estimate-sampled`` and ``estimate-positives`` mirror the Python functions."""

import io

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling import nonuniform as nu
from itemsampling.cli import main
from itemsampling.multi_positive import estimate_multi_positive

N_ITEMS, USERS, DRAWS = 200, 300, 19


@pytest.fixture
def sample(tmp_path):
    rng = np.random.default_rng(0)
    counts = np.append(rng.zipf(1.7, N_ITEMS - 1).clip(max=1000).astype(float), 0)  # last: target
    p = nu.popularity_probabilities(counts, alpha=0.5)
    draws = nu.draw_negatives(USERS, DRAWS, 1, probabilities=p)
    ranks = rng.integers(1, 60, USERS)
    above = (7 * draws + 13 * np.arange(USERS)[:, None]) % (N_ITEMS - 1) < (ranks - 1)[:, None]
    table = pd.DataFrame({"user": np.repeat(np.arange(USERS), DRAWS), "negative": draws.ravel(),
                          "above": above.ravel().astype(int), "positive": N_ITEMS - 1})
    path = tmp_path / "negatives.csv"
    table.to_csv(path, index=False)
    probs = tmp_path / "p.npy"
    np.save(probs, p)
    return path, probs, table, p


def _read(capsys):
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def test_popularity_sampled_estimate_matches_the_function(sample, capsys):
    path, probs, table, p = sample
    assert main(["estimate-sampled", str(path), "--n-items", str(N_ITEMS), "--sampler", "popularity",
                 "--probabilities", str(probs), "--metric", "ndcg", "--k", "10", "--interval", "0.9"]) == 0
    got = _read(capsys)
    want = nu.estimate_sampled(table["user"], table["negative"], table["above"] == 1, N_ITEMS,
                               method="hansen_hurwitz", probabilities=p, metrics="ndcg", ks=[10],
                               interval=0.9)
    np.testing.assert_allclose(got[["estimate", "se", "lower", "upper"]], want[["estimate", "se", "lower", "upper"]])


def test_a_uniform_method_under_popularity_warns_and_falls_back(sample, capsys):
    path, probs, *_ = sample
    with pytest.warns(UserWarning, match="cannot honour the popularity sampler"):
        assert main(["estimate-sampled", str(path), "--n-items", str(N_ITEMS), "--sampler", "popularity",
                     "--probabilities", str(probs), "--method", "mn_mes", "--k", "5"]) == 0


def test_uniform_sampler_goes_to_estimate(sample, capsys):
    path, _, table, _ = sample
    assert main(["estimate-sampled", str(path), "--n-items", str(N_ITEMS), "--sampler", "uniform",
                 "--method", "mle", "--metric", "recall", "--k", "10"]) == 0
    ranks = 1 + table.groupby("user")["above"].sum().to_numpy()
    want = its.estimate(ranks, N_ITEMS, DRAWS + 1, "mle", "recall", [10])
    assert _read(capsys)["estimate"].iloc[0] == pytest.approx(want["estimate"].iloc[0])


def test_bad_input_gets_clear_errors(sample, tmp_path, capsys):
    path, probs, table, p = sample
    bad = tmp_path / "bad.npy"
    np.save(bad, p * 2)
    args = ["estimate-sampled", str(path), "--n-items", str(N_ITEMS), "--sampler", "popularity"]
    assert main([*args, "--probabilities", str(bad)]) == 2
    assert "not 1" in capsys.readouterr().err
    outside = tmp_path / "outside.csv"
    table.assign(negative=table["negative"] + N_ITEMS).to_csv(outside, index=False)
    assert main(["estimate-sampled", str(outside), *args[2:], "--probabilities", str(probs)]) == 2
    assert "catalogue" in capsys.readouterr().err
    own = tmp_path / "own.csv"
    table.assign(positive=table["negative"]).to_csv(own, index=False)
    assert main(["estimate-sampled", str(own), *args[2:], "--probabilities", str(probs)]) == 2
    assert "own negative" in capsys.readouterr().err


def test_estimate_positives_matches_the_function(tmp_path, capsys):
    rng = np.random.default_rng(2)
    users = np.repeat(np.arange(100), 4)
    ranks = rng.integers(1, 51, users.size)
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"user": users, "rank": ranks}).to_csv(path, index=False)
    assert main(["estimate-positives", str(path), "--n-items", "1000", "--sample-size", "50",
                 "--k", "10,20"]) == 0
    got = _read(capsys)
    want = estimate_multi_positive(ranks, users, 1000, 50, ks=[10, 20])
    np.testing.assert_allclose(got["estimate"], want["estimate"])


def test_estimate_positives_takes_a_method_per_positive_sizes_and_an_interval(tmp_path, capsys):
    rng = np.random.default_rng(3)
    users = np.repeat(np.arange(200), 3)
    sizes = np.where(users % 2 == 0, 50, 40)
    ranks = rng.integers(1, 41, users.size)
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"user": users, "rank": ranks, "sample_size": sizes, "n_items": 998}).to_csv(path, index=False)
    assert main(["estimate-positives", str(path), "--method", "mle", "--scheme", "binomial", "--interval", "0.9",
                 "--k", "10", "--metric", "ndcg"]) == 0
    got = _read(capsys)
    want = estimate_multi_positive(ranks, users, 998, sizes, "ndcg", [10], method="mle", scheme="binomial",
                                   interval=0.9)
    np.testing.assert_allclose(got[["estimate", "lower", "upper"]], want[["estimate", "lower", "upper"]])
    pd.DataFrame({"user": users, "rank": ranks}).to_csv(path, index=False)
    assert main(["estimate-positives", str(path), "--sample-size", "50"]) == 2
    assert "no column n_items: give --n-items" in capsys.readouterr().err
