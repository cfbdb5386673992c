from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from itemsampling.metrics import global_metrics
from itemsampling_study.experiments import (
    average_relative_error,
    pairwise_order_agreement,
    relative_error,
    winner_counts,
)


def test_relative_error_elementwise():
    np.testing.assert_allclose(relative_error([1.1, 0.5, 2.0], [1.0, 1.0, 4.0]), [0.1, 0.5, 0.5])
    out = relative_error([0.0, 0.1], [0.0, 0.0])
    assert out[0] == 0 and np.isinf(out[1])


def _truth(models=("X", "Y"), metrics=("recall", "ndcg"), ks=range(1, 51), seed=0):
    rng = np.random.default_rng(seed)
    frames = []
    for i, model in enumerate(models):
        ranks = rng.integers(1, 200 + 100 * i, size=500)
        frame = global_metrics(ranks, 2000, metrics, ks)
        frame.insert(0, "model", model)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_average_relative_error_recovers_known_perturbation():
    truth = _truth()
    assert (truth["value"] > 0).all()
    rng = np.random.default_rng(1)
    est = truth.rename(columns={"value": "estimate"})
    est = pd.concat([est.assign(method="m1"), est.assign(method="m2")], ignore_index=True)
    eps = rng.uniform(-0.3, 0.3, size=len(est))
    est["estimate"] = est["estimate"] * (1 + eps)
    est["eps"] = np.abs(eps)
    out = average_relative_error(est.drop(columns="eps"), truth)
    assert set(out.columns) == {"model", "metric", "method", "average_relative_error"}
    assert len(out) == 2 * 2 * 2
    direct = est.groupby(["model", "metric", "method"])["eps"].mean()
    got = out.set_index(["model", "metric", "method"])["average_relative_error"]
    np.testing.assert_allclose(got.loc[direct.index], direct, rtol=1e-10)


def test_average_relative_error_uses_only_requested_ks():
    truth = _truth(models=("X",), metrics=("recall",), ks=range(1, 61))
    est = truth.rename(columns={"value": "estimate"})
    est.loc[est["k"] > 50, "estimate"] *= 3  # outside K = 1..50: ignored
    est.loc[est["k"] == 1, "estimate"] *= 1.5
    out = average_relative_error(est, truth)
    assert out["average_relative_error"].iloc[0] == pytest.approx(0.5 / 50)


def test_average_relative_error_rejects_incomplete_input():
    truth = _truth(models=("X",), metrics=("recall",))
    est = truth.rename(columns={"value": "estimate"})
    with pytest.raises(ValueError, match="miss some of the cut-offs"):
        average_relative_error(est[est["k"] != 7], truth)
    with pytest.raises(ValueError, match="no exact value"):
        average_relative_error(est, truth[truth["k"] != 7])
    with pytest.raises(ValueError, match="lacks column"):
        average_relative_error(est.drop(columns="estimate"), truth)


def _random_experiment(seed, n_models=3, repeats=30, ties=False):
    rng = np.random.default_rng(seed)
    models = [f"M{i}" for i in range(n_models)]
    settings = [("recall", 10), ("ndcg", 10), ("ndcg", 20)]
    truth = pd.DataFrame(
        [(m, metric, k, rng.integers(0, 3) if ties else rng.random()) for m in models for metric, k in settings],
        columns=["model", "metric", "k", "value"],
    )
    true = {(m, metric, k): v for m, metric, k, v in truth.itertuples(index=False)}
    rows = []
    for method in ("a", "b"):
        for rep in range(repeats):
            for m in models:
                for metric, k in settings:
                    value = true[m, metric, k]
                    noise = rng.integers(-1, 2) if ties else rng.normal(0, 0.3)
                    rows.append((method, rep, m, metric, k, value + noise))
    est = pd.DataFrame(rows, columns=["method", "repeat", "model", "metric", "k", "estimate"])
    return est, truth


def _as_dicts(est, truth):
    """Plain dictionaries {(metric, k): {model: value}} and {(method, repeat, metric, k): {model: estimate}}."""
    true, estimate = {}, {}
    for m, metric, k, v in truth[["model", "metric", "k", "value"]].itertuples(index=False):
        true.setdefault((metric, k), {})[m] = v
    for method, rep, m, metric, k, v in est[["method", "repeat", "model", "metric", "k", "estimate"]].itertuples(
            index=False):
        estimate.setdefault((method, rep, metric, k), {})[m] = v
    return true, estimate


@pytest.mark.parametrize("ties", [False, True])
def test_winner_counts_match_brute_force(ties):
    est, truth = _random_experiment(2, ties=ties)
    out = winner_counts(est, truth)
    assert set(out.columns) == {"method", "metric", "k", "correct", "repeats", "fraction"}
    true, estimate = _as_dicts(est, truth)
    for row in out.itertuples():
        t = true[row.metric, row.k]
        true_best = {m for m, v in t.items() if v == max(t.values())}
        correct = 0
        for rep in range(30):
            e = estimate[row.method, rep, row.metric, row.k]
            correct += {m for m, v in e.items() if v == max(e.values())} == true_best
        assert row.correct == correct and row.repeats == 30
        assert row.fraction == pytest.approx(correct / 30)
    assert 0 < out["correct"].sum() < out["repeats"].sum()  # the data exercise both outcomes


def test_winner_counts_perfect_and_wrong_estimates():
    est, truth = _random_experiment(3, repeats=5)
    perfect = est.merge(truth, on=["model", "metric", "k"]).assign(estimate=lambda d: d["value"]).drop(columns="value")
    assert (winner_counts(perfect, truth)["correct"] == 5).all()
    reversed_ = perfect.assign(estimate=lambda d: -d["estimate"])
    assert (winner_counts(reversed_, truth)["correct"] == 0).all()


@pytest.mark.parametrize("ties", [False, True])
def test_pairwise_order_agreement_matches_brute_force(ties):
    est, truth = _random_experiment(4, ties=ties)
    out = pairwise_order_agreement(est, truth)
    assert len(out) == 2 * 3 * 3  # methods x settings x pairs
    true, estimate = _as_dicts(est, truth)
    for row in out.itertuples():
        t = true[row.metric, row.k]
        agree = 0
        for rep in range(30):
            e = estimate[row.method, rep, row.metric, row.k]
            agree += np.sign(e[row.model_a] - e[row.model_b]) == np.sign(t[row.model_a] - t[row.model_b])
        assert row.agree == agree and row.repeats == 30
    assert {tuple(p) for p in out[["model_a", "model_b"]].drop_duplicates().to_numpy()} == set(
        combinations(["M0", "M1", "M2"], 2)
    )


def test_pairwise_order_agreement_handles_untruncated_metric():
    # k is missing for untruncated metrics (global_metrics with ks=None): rows must still pair up
    truth = pd.concat([global_metrics(np.array([1, 5, 9]) * (i + 1), 100, "auc", None).assign(model=m)
                       for i, m in enumerate("XY")], ignore_index=True)
    est = pd.concat([truth.rename(columns={"value": "estimate"}).assign(repeat=r) for r in range(3)],
                    ignore_index=True)
    out = pairwise_order_agreement(est, truth)
    assert len(out) == 1 and out["agree"].iloc[0] == 3 and out["repeats"].iloc[0] == 3


def test_pairwise_order_agreement_needs_two_models():
    est, truth = _random_experiment(5, n_models=1, repeats=2)
    with pytest.raises(ValueError, match="at least two models"):
        pairwise_order_agreement(est, truth)
