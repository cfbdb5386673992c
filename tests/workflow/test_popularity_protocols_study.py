"""The study popularity_protocols of notebook 05 on tiny popularity profiles: the runs against
independent formulations (the uniform draw of the engine, the plug-in of the Hansen–Hurwitz
estimates), the strata, the budgets of the designs, the pair orders, determinism and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.kernels import KernelCache
from itemsampling.popularity_profiles import popularity_sampled_ranks, write_profile
from itemsampling_study import popularity_protocols as pp
from itemsampling_study.engine import derive_seed, draw_sampled_ranks
from itemsampling_study.tables import table_path, write_table

from .protocol_helpers import CLASS_SIZES, tiny_profile

CONFIG = {"datasets": ["tiny"], "models": ["m1", "m2", "m3"], "protocol": "unseen", "n_item_groups": 2,
          "metrics": ["recall", "ndcg"], "ks": [1, 5], "negatives": 10, "alphas": [0.5, 1.0],
          "as_uniform_alphas": [1.0], "level": 0.95, "repeats": 3, "strata": 3,
          "proxy": {"uniform_weight": 0.5, "alpha": 1.0}, "design_repeats": 2}
@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Profiles of three models and notebook 05's designs table (budgets 8 and 20 items per user)."""
    root = tmp_path_factory.mktemp("popularity")
    for j, (model, scale) in enumerate((("m1", 5.0), ("m2", 20.0), ("m3", 60.0))):
        write_profile(tiny_profile(scale, 50 + j), pp.profile_path("tiny", model, root))
    rows = [{"dataset": "tiny", "model": m, "n_max": n, "design": d, "metric": "recall", "k": 1,
             "items_per_user": b if d == "uniform_mn_mes" else b + 0.3}
            for m in CONFIG["models"] for n, b in ((40, 8.0), (80, 20.0)) for d in ("adaptive_mle", "uniform_mn_mes")]
    write_table(pd.DataFrame(rows), table_path(pp.NOTEBOOK, "designs", root))
    return root


@pytest.fixture(scope="module")
def runs(root):
    frames = []
    for model in CONFIG["models"]:
        profile = pp.read_profile(pp.profile_path("tiny", model, root))
        labels = {"dataset": "tiny", "model": model, "protocol": "unseen"}
        frames.append(pp.model_runs(profile, CONFIG, 1, labels, {40: 8, 80: 20}, KernelCache()))
    return pd.concat(frames, ignore_index=True)


def test_runs_hold_every_sampler_and_estimator(runs):
    assert list(runs.columns) == list(pp.RUN_COLUMNS)
    protocols = runs[runs["part"] == "protocols"]
    found = set(map(tuple, protocols[["sampler", "estimator"]].drop_duplicates().to_numpy()))
    assert found == {("popularity_0.5", "sampled"), ("popularity_0.5", "hansen_hurwitz"), ("popularity_1", "sampled"),
                     ("popularity_1", "hansen_hurwitz"), ("popularity_1", "mn_mes_as_uniform"),
                     ("stratified", "sampled"), ("stratified", "horvitz_thompson"), ("uniform", "sampled"),
                     ("uniform", "mn_mes")}
    assert protocols["lower"].notna().all() and (protocols["lower"] <= protocols["upper"]).all()
    assert protocols.groupby(["model", "sampler", "estimator", "metric", "k"]).size().eq(CONFIG["repeats"]).all()


def test_sampled_and_corrected_values_against_direct_computations(root, runs):
    """The popularity 'sampled' Recall@K is the share of users with r_u <= K in the seeded draw,
    the Hansen–Hurwitz one the share with floor(R̂_u) <= K; the uniform one is the engine's draw."""
    profile = pp.read_profile(pp.profile_path("tiny", "m2", root))
    rng = np.random.default_rng(derive_seed(1, "tiny", "m2", "unseen", "popularity_1", 10, 2))
    r, hh = popularity_sampled_ranks(profile, 1.0, 10, rng=rng)

    def value(sampler, estimator):
        return runs[(runs["model"] == "m2") & (runs["sampler"] == sampler) & (runs["estimator"] == estimator)
                    & (runs["repeat"] == 2) & (runs["metric"] == "recall") & (runs["k"] == 5)]["estimate"].item()

    assert value("popularity_1", "sampled") == pytest.approx(np.mean(r[0] <= 5))
    assert value("popularity_1", "hansen_hurwitz") == pytest.approx(np.mean(np.floor(hh[0] + 1e-9) <= 5))
    labels = {"dataset": "tiny", "model": "m2", "protocol": "unseen"}
    u = draw_sampled_ranks(profile.ranks, profile.n_candidates, 11, seed=1, labels=labels, scheme="binomial", repeat=2)
    assert value("uniform", "sampled") == pytest.approx(np.mean(u <= 5))
    exact = runs[(runs["model"] == "m2") & (runs["metric"] == "recall") & (runs["k"] == 5)]["exact"]
    assert exact.nunique() == 1 and exact.iloc[0] == pytest.approx(np.mean(profile.ranks <= 5))


def test_class_strata_cut_equal_item_counts_in_popularity_order():
    np.testing.assert_array_equal(pp.class_strata([10, 10, 10, 10], 2), [0, 0, 1, 1])
    np.testing.assert_array_equal(pp.class_strata([1, 1, 100], 3), [0, 0, 1])  # a huge class leaves a stratum empty
    strata = pp.class_strata(CLASS_SIZES, 3)
    assert (np.diff(strata) >= 0).all() and strata.max() == 2
    np.testing.assert_array_equal(pp._allocation(10, 3), [4, 3, 3])


def test_designs_score_the_budget_of_the_uniform_designs(root, runs):
    table = pp.design_errors(runs)
    assert set(table["design"]) == {"popularity_corrected", "proxy_importance"}
    assert dict(zip(table["n_max"], table["items_per_user"], strict=True)) == {40: 8.0, 80: 20.0}
    assert pp._budgets(pd.read_csv(table_path(pp.NOTEBOOK, "designs", root)), "tiny", "m1") == {40: 8, 80: 20}
    assert (table["relative_error"].dropna() >= 0).all() and (table["repeats"] == 2).all()


def test_winners_count_every_pair_and_repeat(runs):
    table = pp.winners(runs)
    assert (table["pairs"] == 3).all() and (table["cases"] == 3 * CONFIG["repeats"]).all()
    assert table["fraction"].between(0, 1).all()


def test_tables_are_deterministic_byte_for_byte(root, tmp_path):
    for attempt in range(2):
        for name, table in pp.study_tables(CONFIG, 1, None, root).items():
            write_table(table, tmp_path / str(attempt) / f"{name}.csv")
    names = sorted(p.name for p in (tmp_path / "0").iterdir())
    assert names == ["popularity_accuracy.csv", "popularity_designs.csv", "popularity_winners.csv"]
    for name in names:
        assert (tmp_path / "0" / name).read_bytes() == (tmp_path / "1" / name).read_bytes(), name


def test_missing_inputs_are_named(root, tmp_path):
    with pytest.raises(FileNotFoundError, match="itemsampling profile"):
        pp.study_tables({**CONFIG, "models": ["m1", "m9"]}, 1, None, root)
    with pytest.raises(ValueError, match="designs table has no uniform_mn_mes rows"):
        pp._budgets(pd.DataFrame(columns=["dataset", "model", "design", "n_max", "items_per_user"]), "tiny", "m1")
    assert str(pp.profile_path("tiny", "m1")) in pp.inputs(CONFIG)
