"""Paired comparison of two models (:mod:`itemsampling.compare`): Monte Carlo coverage of the true
difference, the A-vs-A false-alarm rate, and Holm's adjustment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling import global_metrics
from itemsampling.cli import main
from itemsampling.compare import compare, compare_many, holm
from itemsampling.runs import Run

N, M, N_NEG, K = 400, 800, 99, 20


def _paired_runs(rng, shift_a, shift_b, k=K):
    """Two models scoring all N items of M users; ranks of the same positive among the same negatives.

    Returns the runs and the difference of their exact global Recall@k (the truth of these users)."""
    base = rng.normal(size=(M, N))
    scores = [base + 0.5 * rng.normal(size=(M, N)) for _ in range(2)]
    for score, shift in zip(scores, (shift_a, shift_b), strict=True):
        score[:, 0] += shift  # item 0 is each user's positive
    negatives = np.stack([rng.choice(np.arange(1, N), N_NEG, replace=False) for _ in range(M)])
    out, truth = [], []
    for name, score in zip("AB", scores, strict=True):
        global_rank = 1 + (score[:, 1:] > score[:, :1]).sum(axis=1)
        sampled = 1 + (np.take_along_axis(score, negatives, axis=1) > score[:, :1]).sum(axis=1)
        out.append(Run(sampled, N_NEG + 1, N, "uniform_without_replacement", name))
        truth.append(global_metrics(global_rank, N, ["recall"], [k])["value"].iloc[0])
    return out, truth[0] - truth[1]


def test_paired_interval_covers_the_true_difference():
    rng = np.random.default_rng(0)
    covered = []
    for _ in range(60):
        (a, b), truth = _paired_runs(rng, 2.0, 1.7)
        result = compare(a, b, "recall", K, method="mn", level=0.9)
        covered.append(result["lower"] <= truth <= result["upper"])
    # 90% intervals: 60 replicates cover at least 45 times unless the coverage is far below 0.9
    assert np.mean(covered) >= 0.75


def test_a_versus_a_false_alarm_rate():
    rng = np.random.default_rng(1)
    alarms = []
    for _ in range(60):
        (a, b), _ = _paired_runs(rng, 1.8, 1.8)
        alarms.append(compare(a, b, "recall", K, method="mn", level=0.9)["p_value"] < 0.1)
    assert np.mean(alarms) <= 0.25  # nominal 0.1; binomial(60, 0.1) exceeds 15 with probability < 1e-3


def test_holm_against_its_definition():
    p = np.array([0.01, 0.04, 0.03, 0.5])
    # sorted 0.01, 0.03, 0.04, 0.5 -> 4*0.01, max(.04, 3*.03), max(.09, 2*.04), max(.09, .5)
    np.testing.assert_allclose(holm(p), [0.04, 0.09, 0.09, 0.5])


def test_compare_many_and_the_command(tmp_path, capsys):
    rng = np.random.default_rng(2)
    (a, b), _ = _paired_runs(rng, 2.0, 1.0)
    c = Run(b.ranks, b.sample_size, N, b.protocol, "C")
    table = compare_many([a, b, c], method="mn")
    assert table[["model_a", "model_b"]].to_numpy().tolist() == [["A", "B"], ["A", "C"], ["B", "C"]]
    assert table["significant"].tolist() == [True, True, False]
    for run in (a, b):
        pd.DataFrame({"user_id": run.users, "rank": run.ranks, "n_candidates": N_NEG + 1, "n_items": N,
                      "mode": "uni49"}).to_csv(tmp_path / f"{run.model}.csv", index=False)
    assert main(["compare", str(tmp_path / "A.csv"), str(tmp_path / "B.csv"), "--format", "recbole",
                 "--method", "mn"]) == 0
    out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert out["p_holm"].iloc[0] < 0.05


def test_runs_of_different_users_are_refused():
    run = Run([1, 2, 3], 10, 100, "uniform_without_replacement", "A")
    other = Run([1, 2], 10, 100, "uniform_without_replacement", "B")
    with pytest.raises(ValueError, match="same users"):
        compare(run, other)
