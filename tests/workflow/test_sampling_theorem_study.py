"""The sampling-theorem study of notebook 02: runs against an independent recomputation, the
pair and concentration tables against hand computations, determinism, configuration checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from itemsampling.cli import main as cli
from itemsampling.hit_ratio import hit_ratio_curve, hoeffding_radius, sampled_hit_ratio_moments
from itemsampling.mappings import mapping
from itemsampling.simulation import sample_ranks
from itemsampling_study import sampling_theorem as st
from itemsampling_study.engine import derive_seed

from .conftest import json_file

CONFIG = {"datasets": ["tiny"], "models": ["m1", "m2"], "protocols": ["all", "unseen"], "sample_size": 20,
          "scheme": "binomial", "repeats": 6, "mapping": {"kind": "beta", "a": 0.5}, "figure_dataset": "tiny",
          "figure_model": "m1", "example_pair": ["m1", "m2"], "zoom_ranks": [[1, 60], [10, 30]],
          "zoom_sampled_ranks": [[1, 5], [2, 4]], "curve_points": 30, "fig2_ks": [1, 2, 5],
          "user_counts": [50, 100, 1000], "concentration_ks": [1, 5], "hoeffding_delta": 0.05, "hoeffding_t": 0.01}
LABELS = {"dataset": "tiny", "model": "m1", "protocol": "unseen"}


@pytest.fixture
def ranks(fake_ranks):
    return fake_ranks(300, 400, 30.0, 1)


def test_chunk_draws_are_the_sampled_hit_ratio_of_the_engine_draws(ranks):
    runs = st.chunk_table(CONFIG, 3, LABELS, ranks)
    assert sorted(runs["users"].unique()) == [50, 100, 300]  # 1000 > 300 users is dropped
    full = runs[runs["users"] == 300]
    assert full["k"].nunique() == 20 and full["repeat"].nunique() == 6
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    for repeat in (0, 5):
        rng = np.random.default_rng(derive_seed(3, "tiny", "m1", "unseen", "binomial", 20, repeat))
        r = sample_ranks(R, N, 20, rng)
        want = [(r <= k).mean() for k in range(1, 21)]
        got = full[full["repeat"] == repeat].sort_values("k")["estimate"].to_numpy()
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert set(runs.loc[runs["users"] < 300, "k"]) == {1, 5}
    pd.testing.assert_frame_equal(runs, st.chunk_table(CONFIG, 3, LABELS, ranks.sample(frac=1, random_state=0)))


def test_user_subsets_depend_on_seed_dataset_and_count_only(ranks):
    users = ranks["user"].to_numpy()
    a = st.user_subset(users, 50, 7, "tiny")
    assert a.size == 50 and np.unique(a).size == 50 and (np.diff(a) > 0).all() and np.isin(a, users).all()
    np.testing.assert_array_equal(a, st.user_subset(users[::-1], 50, 7, "tiny"))
    assert not np.array_equal(a, st.user_subset(users, 50, 7, "other"))


def test_sampled_curves_are_eq_4_and_5_and_the_mapping(ranks):
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    hr = hit_ratio_curve(R, N)
    draws = np.random.default_rng(0).uniform(size=(4, 20))
    curves = st.sampled_curves(CONFIG, R, N, hr, draws)
    mean, var = sampled_hit_ratio_moments(R, N, 20)
    np.testing.assert_allclose(curves["expected"], mean)
    np.testing.assert_allclose(curves["std"], np.sqrt(var))
    n_bar = int(np.rint(N.mean()))
    f = mapping(np.arange(1, 21), n_bar, 20, "beta", 0.5)
    np.testing.assert_allclose(curves["f_k"], f)
    np.testing.assert_allclose(curves["hr_at_f_k"], [(R <= np.floor(x)).mean() for x in f])
    np.testing.assert_allclose(curves["mc_std"], draws.std(axis=0, ddof=1))
    np.testing.assert_array_equal(curves["draw"], draws[0])


def _pair_inputs(R_a, R_b, N, draws_a, draws_b, config=CONFIG):
    hr = {"a": hit_ratio_curve(R_a, N), "b": hit_ratio_curve(R_b, N)}
    curves = pd.concat([st.sampled_curves(config, R, N, hr[m], d).assign(model=m)
                        for m, R, d in (("a", R_a, draws_a), ("b", R_b, draws_b))], ignore_index=True)
    return hr, curves, {"a": draws_a, "b": draws_b}


def test_pair_table_of_a_dominating_pair():
    rng = np.random.default_rng(1)
    N = 400
    R_a = np.minimum(1 + rng.geometric(1 / 20, 300), N)
    R_b = np.minimum(R_a + rng.geometric(0.05, 300), N)
    config = {**CONFIG, "repeats": 200}
    draws = {m: np.stack([np.cumsum(np.bincount(sample_ranks(R, N, 20, rng), minlength=21)[1:]) / 300
                          for _ in range(200)]) for m, R in (("a", R_a), ("b", R_b))}
    hr, curves, by_model = _pair_inputs(R_b, R_a, N, draws["b"], draws["a"], config)
    row = st.pair_table(hr, curves, by_model).iloc[0]
    assert (row["model_a"], row["model_b"]) == ("b", "a")  # oriented: the dominating model first
    assert row["hr_relation"] == "a dominates" and row["hr_crossings"] == 0 and row["max_reverse_gap"] == 0
    assert row["expected_order_kept"] and row["sampled_flips"] == 0 and row["min_expected_gap"] > 0
    assert row["winner_agreement"] == 1 and row["disagree_ks"] == ""
    assert row["mc_max_abs_z"] < 4.5
    # where the expected gap is large against the Monte Carlo error, the mean of the draws keeps the order
    a, b = (curves[curves["model"] == m].sort_values("k") for m in ("b", "a"))
    gap = a["expected"].to_numpy() - b["expected"].to_numpy()
    clear = gap > 5 * np.hypot(a["std"].to_numpy(), b["std"].to_numpy()) / np.sqrt(200)
    assert clear[:5].all() and (draws["a"].mean(axis=0) - draws["b"].mean(axis=0))[clear].min() > 0
    assert clear.mean() <= row["mc_mean_order_kept"] <= 1


def test_pair_table_of_a_crossing_pair_matches_a_hand_computation():
    N = 1000
    R_a, R_b = np.repeat([1, 900], 50), np.full(100, 300)
    rng = np.random.default_rng(2)
    draws_a, draws_b = rng.uniform(size=(5, 20)), rng.uniform(size=(5, 20))
    hr, curves, draws = _pair_inputs(R_a, R_b, N, draws_a, draws_b)
    row = st.pair_table(hr, curves, draws).iloc[0]
    gap = hr[row["model_a"]] - hr[row["model_b"]]
    assert row["hr_relation"] == "cross" and row["max_reverse_gap"] == pytest.approx(-gap.min())
    nonzero = np.flatnonzero(gap != 0)
    changes = nonzero[1:][np.sign(gap[nonzero[1:]]) != np.sign(gap[nonzero[:-1]])]
    assert row["hr_crossings"] == changes.size and row["first_crossing"] == changes[0] + 1  # K is 1-based
    a, b = (curves[curves["model"] == m].sort_values("k") for m in (row["model_a"], row["model_b"]))
    expected = a["expected"].to_numpy() - b["expected"].to_numpy()
    at_f = a["hr_at_f_k"].to_numpy() - b["hr_at_f_k"].to_numpy()
    valid = (np.abs(expected) > st.TIE) & (at_f != 0)
    assert row["winner_agreement"] == pytest.approx((np.sign(expected) == np.sign(at_f))[valid].mean())
    assert row["sampled_flips"] >= 1 and not row["expected_order_kept"]
    se = np.hypot(a["std"].to_numpy(), b["std"].to_numpy()) / np.sqrt(5)
    z = np.abs((draws[row["model_a"]] - draws[row["model_b"]]).mean(axis=0) - expected)[se > 0] / se[se > 0]
    assert row["mc_max_abs_z"] == pytest.approx(z.max())


def test_concentration_table_against_a_hand_computation(ranks):
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    draws = np.random.default_rng(3).uniform(0.2, 0.6, size=(8, 2))
    out = st.concentration_table(CONFIG, R, N, draws, 300)
    mean, var = sampled_hit_ratio_moments(R, N, 20)
    ks = np.array([1, 5])
    np.testing.assert_allclose(out["expected"], mean[ks - 1])
    dev = np.abs(draws - mean[ks - 1])
    np.testing.assert_allclose(out["max_abs_deviation"], dev.max(axis=0))
    assert out["hoeffding_radius"].iloc[0] == pytest.approx(np.sqrt(np.log(2 / 0.05) / 600))
    assert out["hoeffding_radius"].iloc[0] == pytest.approx(float(hoeffding_radius(300, 0.05)))
    np.testing.assert_allclose(out["normal_radius"], stats.norm.ppf(0.975) * np.sqrt(var[ks - 1]))
    np.testing.assert_allclose(out["share_beyond_t"], (dev >= 0.01).mean(axis=0))
    assert out["hoeffding_bound_t"].iloc[0] == pytest.approx(min(1.0, 2 * np.exp(-2 * 300 * 0.01**2)))


def test_k_ranges():
    assert st.k_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert st.k_ranges([]) == ""


def test_study_config_rejects_inconsistent_sections():
    config = {"sampling_theorem": CONFIG}
    assert st.study_config(config) == CONFIG
    for change, message in (({"figure_model": "m3"}, "figure_model"), ({"example_pair": ["m1", "x"]}, "example_pair"),
                            ({"figure_dataset": "nosuch"}, "figure_dataset"), ({"fig2_ks": [21]}, "fig2_ks"),
                            ({"mapping": {"kind": "beta"}}, "parameter a"),
                            ({"mapping": {"kind": "bound", "a": 0.5}}, "parameter a")):
        with pytest.raises(ValueError, match=message):
            st.study_config({"sampling_theorem": {**CONFIG, **change}})


def test_tables_are_written_identically_twice_through_the_cli(tiny_results, tmp_path):
    config, root = json_file(tmp_path / "config.json", CONFIG), str(tiny_results)
    runs = []
    for chunk in st.chunks(CONFIG):
        out = tmp_path / f"{chunk['model']}_{chunk['protocol']}.parquet"
        assert cli(["study", "chunk", "--study", "sampling_theorem", "--config", config, "--seed", "4", "--root", root,
                    "--dataset", chunk["dataset"], "--model", chunk["model"], "--protocol", chunk["protocol"],
                    "--output", str(out)]) == 0
        runs.append(str(out))
    tables = st.study_tables(CONFIG, 4, pd.concat(pd.read_parquet(p) for p in runs), tiny_results)
    for name, frame in tables.items():
        assert "protocol" in frame.columns and "dataset" in frame.columns, name
    assert set(tables["theorem_pairs"]["protocol"]) == {"all", "unseen"} and len(tables["theorem_pairs"]) == 2
    summary = st.theorem_summary(tables["theorem_pairs"])
    assert summary["pairs"].tolist() == [1, 1]
    assert (summary["dominating"] + summary["crossing"] == summary["pairs"]).all()
    spread = st.concentration_summary(tables["concentration"])
    assert spread["users"].tolist() == [50, 100, 300]
    for folder in ("a", "b"):
        assert cli(["study", "tables", "--study", "sampling_theorem", "--config", config, "--seed", "4",
                    "--root", root, "--runs", *runs, "--tables", *tables, "--out-dir", str(tmp_path / folder)]) == 0
    for name in tables:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
