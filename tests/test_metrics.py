import numpy as np
import pytest

import itemsampling as its


def test_ndcg_weights_match_definition():
    w = its.metric_weights("ndcg", 2, 4)
    np.testing.assert_allclose(w, [1.0, 1.0 / np.log2(3), 0.0, 0.0])


def test_global_metrics_brute_force():
    rng = np.random.default_rng(0)
    ranks = rng.integers(1, 200, size=500)
    out = its.global_metrics(ranks, 200, ["recall", "ndcg", "ap", "auc"], [1, 7, 50, None])
    for metric in ["recall", "ndcg", "ap", "auc"]:
        for k in [1, 7, 50, None]:
            w = its.metric_weights(metric, k, 200)
            got = out[(out.metric == metric) & (out.k.isna() if k is None else out.k == k)].value.item()
            assert got == pytest.approx(w[ranks - 1].mean(), rel=1e-12)
    out = its.global_metrics(ranks, 200, ["precision"], [7])
    prec = out.value.item()
    assert prec == pytest.approx((ranks <= 7).mean() / 7)


def test_per_user_candidates_change_auc_only():
    ranks = np.array([1, 3, 10])
    n_u = np.array([20, 30, 40])
    out = its.global_metrics(ranks, n_u, ["auc"], [None])
    assert out.value.item() == pytest.approx(np.mean((n_u - ranks) / (n_u - 1)))


@pytest.mark.parametrize(
    ("ranks", "n_items", "match"),
    [([0, 1], 10, "1..n"), ([1, 11], 10, "1..n"), ([1.5], 10, "whole"), ([np.nan], 10, "NaN"),
     ([], 10, "empty"), ([1], 1, "n_items")],
)
def test_bad_input(ranks, n_items, match):
    with pytest.raises(ValueError, match=match):
        its.global_metrics(ranks, n_items)


def test_unknown_metric():
    with pytest.raises(ValueError, match="unknown metric 'foo'; allowed"):
        its.metric_weights("foo", 10, 100)
