"""The repeat-and-estimate engine of the studies."""

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling.estimators import Estimator
from itemsampling_study.engine import (
    ADAPTIVE_COLUMNS,
    RUN_COLUMNS,
    derive_seed,
    draw_sampled_ranks,
    repeat_adaptive_estimates,
    repeat_estimates,
)

#: the engine's stacked fits sum in an order that depends on the BLAS kernels
pytestmark = pytest.mark.blas_kernels

LABELS = {"dataset": "toy", "model": "m", "protocol": "unseen"}
ESTIMATORS = [Estimator("sampled"), Estimator("bv", {"gamma": 0.1}, name="bv_0.1"), Estimator("mle"),
              Estimator("mn_mes")]
TARGETS = [("recall", 5), ("ndcg", 10), ("auc", None)]


def _ranks(m=500, seed=0):
    rng = np.random.default_rng(seed)
    n_items = 300 - rng.integers(0, 50, size=m)
    return np.minimum(np.ceil(rng.pareto(0.7, size=m) * 4), n_items).astype(np.int64), n_items


def _run(**kwargs):
    R, N = _ranks()
    args = dict(estimators=ESTIMATORS, targets=TARGETS, sample_sizes=[20, 40], seed=3, labels=LABELS,
                schemes=["binomial", "actual"], repeats=4)
    args.update(kwargs)
    return repeat_estimates(R, N, **args)


def test_table_has_the_tidy_columns_and_one_row_per_estimate():
    table = _run()
    assert tuple(table.columns) == RUN_COLUMNS
    assert len(table) == 2 * 2 * 4 * len(ESTIMATORS) * len(TARGETS)
    assert not table.duplicated(["scheme", "sample_size", "repeat", "estimator", "metric", "k"]).any()
    R, _ = _ranks()
    assert table.loc[table["metric"] == "recall", "exact"].iloc[0] == pytest.approx((R <= 5).mean())


def test_a_chunk_of_repeats_reruns_alone_with_the_same_draws_and_the_same_estimates_to_rounding():
    whole = _run()
    part = _run(repeats=2, first_repeat=2)
    chunk = whole[whole["repeat"] >= 2].reset_index(drop=True)
    # the EM and MES fits of a chunk's draws advance together (matrix products over the draws), so
    # another set of draws sums in another order: the estimates agree to rounding, on any BLAS kernels
    pd.testing.assert_frame_equal(chunk, part, check_exact=False, rtol=1e-11, atol=1e-14)
    # the same draws: the uncorrected sampled metric counts each draw's own ranks, no BLAS sum behind it
    counted = chunk["estimator"] == "sampled"
    pd.testing.assert_frame_equal(chunk[counted], part[counted], check_exact=True)
    assert whole.to_csv(index=False) == _run().to_csv(index=False)


def test_draws_do_not_depend_on_the_other_settings():
    alone = _run(sample_sizes=[40], schemes=["actual"])
    both = _run()
    sel = both[(both["sample_size"] == 40) & (both["scheme"] == "actual")].reset_index(drop=True)
    pd.testing.assert_frame_equal(sel, alone, check_exact=True)
    other = _run(labels={**LABELS, "model": "other"})
    assert not np.array_equal(other["estimate"], both["estimate"])


def test_each_estimate_equals_the_public_estimate_on_the_same_draw():
    R, N = _ranks()
    table = _run(schemes=["actual"], sample_sizes=[20], repeats=1)
    rng = np.random.default_rng(derive_seed(3, "toy", "m", "unseen", "actual", 20, 0))
    sampled = its.sample_ranks(R, N, 20, rng=rng, scheme="hypergeometric")  # actual = hypergeometric draws
    for est in ESTIMATORS:
        for metric, k in TARGETS:
            one = its.estimate(sampled, N, 20, est.method, metrics=metric, ks=k, scheme="binomial", **est.options)
            got = table[(table["estimator"] == est.label) & (table["metric"] == metric)]["estimate"]
            assert got.item() == pytest.approx(one["estimate"].item(), rel=1e-12, abs=1e-15), (est.label, metric)


def test_actual_sampling_follows_the_hypergeometric_law():
    R = np.full(20_000, 30)
    ranks = its.sample_ranks(R, 100, 10, rng=derive_seed(1, "x"), scheme="hypergeometric")
    pmf = its.rank_kernel(100, 10, "hypergeometric")[29]
    observed = np.bincount(ranks - 1, minlength=10) / ranks.size
    np.testing.assert_allclose(observed, pmf, atol=0.01)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="labels must name"):
        _run(labels={"dataset": "toy"})
    with pytest.raises(ValueError, match="unknown scheme"):
        _run(schemes=["poisson"])
    with pytest.raises(ValueError, match="integer seed"):
        _run(seed=None)
    with pytest.raises(ValueError, match="first_repeat"):
        _run(first_repeat=-1)


def test_draws_alone_are_the_draws_that_are_estimated():
    R, N = _ranks()
    table = _run(schemes=["actual"], sample_sizes=[20], repeats=2, first_repeat=1)
    sampled = draw_sampled_ranks(R, N, 20, seed=3, labels=LABELS, scheme="actual", repeat=2)
    want = its.estimate(sampled, N, 20, "mle", metrics="recall", ks=5)["estimate"].item()
    got = table.query("repeat == 2 and estimator == 'mle' and metric == 'recall'")["estimate"].item()
    assert got == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="unknown scheme"):
        draw_sampled_ranks(R, N, 20, seed=3, labels=LABELS, scheme="poisson", repeat=0)


def test_timing_adds_the_seconds_of_each_draw_and_changes_nothing_else():
    timed = _run(timing=True)
    assert list(timed.columns) == [*RUN_COLUMNS, "seconds"]
    pd.testing.assert_frame_equal(timed.drop(columns="seconds"), _run(), check_exact=True)
    per_draw = timed.groupby(["scheme", "sample_size", "repeat"])["seconds"]
    assert (per_draw.nunique() == 1).all() and (timed["seconds"] > 0).all()


# ----------------------------------------------------------------------------- adaptive sampling


def _adaptive(**kwargs):
    R, N = _ranks()
    args = dict(targets=TARGETS, n0=10, n_max_values=[40, 160], seed=3, labels=LABELS, repeats=3)
    args.update(kwargs)
    return repeat_adaptive_estimates(R, N, **args)


def test_adaptive_table_has_its_columns_and_one_row_per_estimate():
    table = _adaptive()
    assert tuple(table.columns) == ADAPTIVE_COLUMNS
    assert len(table) == 2 * 3 * len(TARGETS)
    assert set(table["estimator"]) == {"adaptive_mle"} and set(table["sample_size"]) == {40, 160}
    assert table.groupby(["sample_size", "repeat"])["mean_sample_size"].nunique().eq(1).all()
    assert table.to_csv(index=False) == _adaptive().to_csv(index=False)


@pytest.mark.parametrize("scheme", ["binomial", "actual"])
def test_each_adaptive_estimate_is_the_public_adaptive_mle_on_the_same_draw(scheme):
    R, N = _ranks()
    table = _adaptive(scheme=scheme, n_max_values=[160], repeats=2)
    draw = "hypergeometric" if scheme == "actual" else scheme
    for repeat in (0, 1):
        rng = np.random.default_rng(derive_seed(3, "toy", "m", "unseen", scheme, "adaptive", 10, repeat))
        ranks, sizes = its.adaptive_sample_ranks(R, N, 10, 160, rng=rng, scheme=draw)
        rows = table[table["repeat"] == repeat]
        assert rows["mean_sample_size"].iloc[0] == pytest.approx(sizes.mean())
        for metric, k in TARGETS:
            one = its.estimate(ranks, N, sizes, "adaptive_mle", metrics=metric, ks=k, scheme="binomial")
            got = rows[rows["metric"] == metric]["estimate"].item()
            assert got == pytest.approx(one["estimate"].item(), rel=1e-12, abs=1e-15), metric


def test_adaptive_draws_of_two_terminal_sizes_are_the_same_items_cut_at_two_ceilings():
    R, N = _ranks()
    for repeat in range(3):
        seed = derive_seed(3, "toy", "m", "unseen", "binomial", "adaptive", 10, repeat)
        small = its.adaptive_sample_ranks(R, N, 10, 40, rng=np.random.default_rng(seed))
        large = its.adaptive_sample_ranks(R, N, 10, 160, rng=np.random.default_rng(seed))
        below = large[1] <= 40
        np.testing.assert_array_equal(small[1], np.minimum(large[1], 40))
        np.testing.assert_array_equal(small[0][below], large[0][below])
        assert (small[0][~below] == 1).all()  # still first at the lower ceiling
    alone = _adaptive(n_max_values=[40])
    both = _adaptive()
    pd.testing.assert_frame_equal(both[both["sample_size"] == 40].reset_index(drop=True), alone, check_exact=True)


def test_adaptive_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="labels must name"):
        _adaptive(labels={"dataset": "toy"})
    with pytest.raises(ValueError, match="at least one terminal size"):
        _adaptive(n_max_values=[])
    with pytest.raises(ValueError, match="n_max = 1000 exceeds"):
        _adaptive(n_max_values=[1000])
    with pytest.raises(ValueError, match="must not exceed n_max"):
        _adaptive(n0=80, n_max_values=[40])
