"""The Li et al. study of notebook 03: draws, tables recomputed independently, determinism, CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.cli import main as cli
from itemsampling.mappings import fit_beta, mapping
from itemsampling.simulation import expected_sampled_rank_pmf, sample_ranks
from itemsampling_study import mapping_functions as mf
from itemsampling_study.engine import derive_seed
from itemsampling_study.paper import PAPER_DATASETS, paper_table
from itemsampling_study.tables import read_model_ranks

from .conftest import json_file

CONFIG = {"datasets": ["tiny"], "models": ["m1", "m2"], "protocols": ["all", "unseen"], "scheme": "binomial",
          "sample_size": 20, "beta_draws": 4, "ks": [1, 2, 5, 10], "mappings": ["linear", "bound", "beta@1", "beta@0.5", "beta@P"],
          "curve_mappings": ["linear", "bound", "beta@0.5"], "winner_mappings": ["linear", "beta@0.5"],
          "relative_parameters": [0.2, 0.8], "nearby_parameters": [0.26, 0.34], "reference_parameter": 0.3,
          "focus": {"dataset": "tiny", "model": "m1", "sample_sizes": [20, 50]},
          "growth": {"dataset": "tiny", "model": "m2", "sample_sizes": [10, 20, 50], "mapping": "beta@0.5"}}


def _runs(root, config=CONFIG, seed=3):
    return pd.concat([mf.chunk_table(config, seed, c, read_model_ranks(c["dataset"], c["model"], c["protocol"], root))
                      for c in mf.chunks(config)], ignore_index=True)


@pytest.fixture
def tables(tiny_results):
    return mf.study_tables(CONFIG, 3, _runs(tiny_results), tiny_results)


def _draw(root, model, protocol, scheme, n, seed=3):
    """The sampled ranks of one setting, redrawn from the engine's seed of repeat 0."""
    frame = read_model_ranks("tiny", model, protocol, root)
    law = {"binomial": "binomial", "hypergeometric": "hypergeometric", "actual": "hypergeometric"}[scheme]
    rng = np.random.default_rng(derive_seed(seed, "tiny", model, protocol, scheme, n, 0))
    R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
    return R, N, sample_ranks(R, N, n, rng=rng, scheme=law)


def test_chunks_and_their_draws():
    assert len(mf.chunks(CONFIG)) == 4
    assert mf.chunk_draws(CONFIG, {"dataset": "tiny", "model": "m1", "protocol": "unseen"}) == [
        ("actual", 20), ("actual", 50), ("binomial", 20), ("binomial", 50)]
    assert mf.chunk_draws(CONFIG, {"dataset": "tiny", "model": "m2", "protocol": "all"}) == [
        ("binomial", 10), ("binomial", 20), ("binomial", 50)]
    assert mf.focus_schemes("all") == ("binomial", "hypergeometric")
    assert mf.focus_ks([1, 2, 5, 10, 20, 50], 1000, 100) == [10, 20, 50, 100, 200, 500]
    assert mf.focus_ks([1, 5], 50, 20) == [3, 13]  # half up, not to even
    assert mf.focus_ks([1, 50], 20, 100) == [1, 10]


@pytest.mark.parametrize(("model", "protocol", "scheme", "n"),
                         [("m1", "unseen", "actual", 50), ("m2", "all", "binomial", 10)])
def test_chunk_holds_the_engines_draw_and_its_exact_expectation(tiny_results, model, protocol, scheme, n):
    labels = {"dataset": "tiny", "model": model, "protocol": protocol}
    chunk = mf.chunk_table(CONFIG, 3, labels, read_model_ranks("tiny", model, protocol, tiny_results))
    part = chunk[(chunk["scheme"] == scheme) & (chunk["sample_size"] == n)]
    R, N, r = _draw(tiny_results, model, protocol, scheme, n)
    np.testing.assert_array_equal(part["hits"], [(r <= k).sum() for k in range(1, n + 1)])
    law = "binomial" if scheme == "binomial" else "hypergeometric"
    np.testing.assert_allclose(part["expected_shr"], np.cumsum(expected_sampled_rank_pmf(R, N, n, law)), atol=1e-12)
    assert (part["users"] == R.size).all() and part["k"].tolist() == list(range(1, n + 1))


def test_beta_parameters_refit_from_the_draw(tiny_results, tables):
    beta = tables["beta_parameters"]
    assert list(beta.columns) == ["dataset", "model", "protocol", "scheme", "sample_size", "a", "draws", "a_mean",
                                  "a_sd", "a_min", "a_max"]
    assert len(beta) == 4
    for row in beta.itertuples():
        _, N, r = _draw(tiny_results, row.model, row.protocol, row.scheme, row.sample_size)
        assert row.a == pytest.approx(fit_beta(r, N, row.sample_size), rel=1e-12)
        assert row.draws == CONFIG["beta_draws"]
        assert row.a_min <= row.a <= row.a_max and row.a_min <= row.a_mean <= row.a_max
        assert row.a_sd > 0  # independent draws of a few hundred users give different fits


def test_beta_spread_refits_independent_draws(tiny_results):
    """Draw j of the spread is the engine's repeat j, drawn here independently of the study."""
    ranks = read_model_ranks("tiny", "m2", "all", tiny_results)
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    key = ("tiny", "m2", "all", "binomial", 20)
    fits = mf.beta_draws(R, N, key, 3, 4)
    for j, a in enumerate(fits):
        rng = np.random.default_rng(derive_seed(3, *key, j))
        assert a == pytest.approx(fit_beta(sample_ranks(R, N, 20, rng=rng, scheme="binomial"), N, 20), rel=1e-12)
    assert len(set(fits)) == 4


def test_mapping_errors_recomputed_in_integer_arithmetic(tiny_results, tables):
    errors = tables["mapping_errors"]
    assert list(errors.columns) == ["dataset", "model", "protocol", "scheme", "sample_size", "mapping", "error",
                                    "value"]
    n = CONFIG["sample_size"]
    k = np.arange(1, n + 1)
    for model in CONFIG["models"]:
        for protocol in CONFIG["protocols"]:
            R, N, r = _draw(tiny_results, model, protocol, "binomial", n)
            shr = (r[:, None] <= k).mean(axis=0)
            # linear (eq. 9): R <= (k-1)(N_u-1)/(n-1) + 1  <=>  (R-1)(n-1) <= (k-1)(N_u-1)
            hr = ((R[:, None] - 1) * (n - 1) <= (k - 1) * (N[:, None] - 1)).mean(axis=0)
            got = errors[(errors["model"] == model) & (errors["protocol"] == protocol)
                         & (errors["mapping"] == "linear")].set_index("error")["value"]
            assert got["abs"] == pytest.approx(np.abs(hr - shr).mean(), rel=1e-12)
            assert got["abs@1"] == pytest.approx(abs(hr[0] - shr[0]), rel=1e-12)
            assert got["rel@2-10"] == pytest.approx(np.mean(np.abs(hr - shr)[1:10] / shr[1:10]), rel=1e-12)
    expected = tables["mapping_errors_expected"]
    assert set(expected["mapping"]) == set(CONFIG["mappings"]) and len(expected) == len(errors)


def test_winners_and_orders_read_from_the_hit_ratios(tables):
    hits, orders = tables["table3_hit_ratios"], tables["table3_orders"]
    assert len(orders) == 2 * len(hits) // len(CONFIG["models"])
    for row in orders.itertuples():
        part = hits[(hits["protocol"] == row.protocol) & (hits["k"] == row.k) & (hits["mapping"] == row.mapping)]
        column = "shr" if row.sampled == "draw" else "expected_shr"
        best = part.loc[part[column].idxmax()]
        assert row.winner_sampled == best["model"]
        assert row.winner_hr == part.loc[part["hr"].idxmax(), "model"]
        assert row.hr_shortfall == pytest.approx(part["hr"].max() - best["hr"])
        assert row.same_winner == (row.winner_sampled == row.winner_hr)


def test_curves_and_mapping_tables(tiny_results, tables):
    curves = tables["hit_ratio_curves"]
    R, N, _ = _draw(tiny_results, "m1", "all", "binomial", 20)
    part = curves[(curves["model"] == "m1") & (curves["protocol"] == "all")]
    N_total = int(part["n_items"].iloc[0])
    assert N_total == N.max()
    # with one N for everybody the scaled cut-off is K itself; the tiny 'all' ranks have per-user N_u
    want = [((R - 1) * (N_total - 1) <= (K - 1) * (N - 1)).mean() for K in part["K"]]
    np.testing.assert_allclose(part["hr"], want, rtol=1e-15)
    fig5 = tables["fig5_difference"]
    assert (fig5[fig5["k"] == CONFIG["sample_size"]]["difference"].abs() < 1e-6).all()  # Lemma 3.1
    assert (fig5[fig5["a"] < 0.3]["difference"] <= 1e-9).all() and (fig5[fig5["a"] > 0.3]["difference"] >= -1e-9).all()
    fig4 = tables["fig4_relative_difference"]
    k = np.arange(1, CONFIG["sample_size"] + 1)
    f, f1 = (mapping(k, N_total, CONFIG["sample_size"], "beta", a=a) for a in (0.2, 1.0))
    np.testing.assert_allclose(fig4[fig4["a"] == 0.2]["relative_difference"], (f - f1) / f1, rtol=1e-12)
    varying = tables["varying_k"]
    assert sorted(set(zip(varying["protocol"], varying["scheme"], strict=True))) == [
        ("all", "binomial"), ("all", "hypergeometric"), ("unseen", "actual"), ("unseen", "binomial")]
    assert sorted(set(varying[varying["sample_size"] == 50]["k"])) == mf.focus_ks(CONFIG["ks"], 50, 20)
    assert set(tables["fig8_sample_sizes"]["sample_size"]) == {10, 20, 50}
    for name, frame in tables.items():
        assert "protocol" in frame.columns or name.startswith(("fig4", "fig5")), name


def test_summaries_by_hand():
    errors = pd.DataFrame({"dataset": "d", "model": ["a", "a", "b", "b", "c", "c"], "protocol": "all",
                           "mapping": ["x", "y"] * 3, "error": "abs", "value": [1.0, 2.0, 3.0, 3.0, 9.0, 0.0]})
    summary = mf.error_summary(errors, exclude_models=["c"])
    assert summary.loc[("all", "x"), "abs"] == 2.0 and summary.loc[("all", "y"), "abs"] == 2.5
    wins = mf.best_mappings(errors, exclude_models=["c"])
    assert wins.loc[("all", "x"), "abs"] == 2 and wins.loc[("all", "y"), "abs"] == 1  # a tie counts for both
    curves = pd.DataFrame({"dataset": "d", "model": "a", "k": [1, 1], "shr": [0.5, 0.5],
                           "expected_shr": [0.4, 0.4], "mapping": ["bound", "linear"], "location": [2.0, 1.0],
                           "hr": [0.3, 0.1]})
    long = mf.hit_ratio_long(curves)
    assert long.set_index("mapping")["value"].to_dict() == {"sampled": 0.5, "bound": 0.3, "linear": 0.1}


@pytest.mark.parametrize("label", ["spline", "beta@0", "beta@-1", "beta@x", "beta@"])
def test_bad_mapping_labels_are_rejected(label):
    with pytest.raises(ValueError, match="unknown mapping"):
        mf.parse_mapping(label)
    assert mf.parse_mapping("beta@0.5") == ("beta", 0.5) and mf.parse_mapping("beta@P") == ("beta", "P")


def test_paper_tables_of_li_et_al_have_their_source():
    sizes = {"li2020kdd_table2": 16, "li2020kdd_table3": 216, "li2020kdd_table5": 72, "li2020kdd_table6": 72,
             "li2020kdd_table7": 72}
    for name, rows in sizes.items():
        table = paper_table(name)
        assert len(table) == rows and table["source"].str.contains("doi:10.1145/3394486.3403262").all(), name
    assert set(paper_table("li2020kdd_table2")["paper_dataset"]) == set(PAPER_DATASETS.values())


def test_cli_writes_identical_tables_twice(tiny_results, tmp_path):
    config = json_file(tmp_path / "config.json", CONFIG)
    root = str(tiny_results)
    runs = []
    for chunk in mf.chunks(CONFIG):
        out = tmp_path / f"{chunk['model']}_{chunk['protocol']}.parquet"
        assert cli(["study", "chunk", "--study", "mapping_functions", "--config", config, "--seed", "3",
                    "--root", root, "--dataset", "tiny", "--model", chunk["model"], "--protocol",
                    chunk["protocol"], "--output", str(out)]) == 0
        runs.append(str(out))
    names = list(mf.study_tables(CONFIG, 3, pd.concat(pd.read_parquet(p) for p in runs), tiny_results))
    for folder in ("a", "b"):
        assert cli(["study", "tables", "--study", "mapping_functions", "--config", config, "--seed", "3",
                    "--root", root, "--runs", *runs, "--tables", *names, "--out-dir", str(tmp_path / folder)]) == 0
    for name in names:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()


def test_missing_draw_is_a_clear_error(tiny_results):
    runs = _runs(tiny_results)
    with pytest.raises(ValueError, match="lack the draw"):
        mf.study_tables({**CONFIG, "sample_size": 21}, 3, runs, tiny_results)
