"""Readings of K&R eqs. 27-30 and tie rules (notebook 01's sensitivity tables), on synthetic data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from itemsampling.data import load_dataset
from itemsampling.metrics import global_metrics
from itemsampling.models.registry import make_model
from itemsampling.ranks import global_ranks
from itemsampling_study import readings as rd
from itemsampling_study import sampled_metrics as sm
from itemsampling_study.paper import paper_table
from itemsampling_study.tables import train_record_path

from .conftest import REPO

SEED = 3
CONFIG = {
    "dataset": "synthetic", "protocol": "unseen", "recommenders": {"X": "popularity", "Y": "krZ"},
    "sample_size": 21, "repeats": 6, "scheme": "binomial", "k": 10, "gammas": [0.1], "curve_gamma": 0.1,
    "curve_sample_sizes": [11, 21], "n_item_groups": 2, "toy_repeats": 5,
    "model_hyperparameters": {"popularity": {}, "krZ": {"q": 1.0, "k": None, "k_prime": 10, "normalize": True,
                                                        "self_similarity": True}},
    "sensitivity": {"recommenders": ["Y"], "ties": ["random", "pessimistic", "optimistic"],
                    "readings": [{"name": "printed"}, {"name": "history_l1", "orientation": "history", "norm": "l1"},
                                 {"name": "no_self", "self_similarity": False}]},
}


@pytest.fixture(scope="module", autouse=True)
def study_root(tmp_path_factory):
    """A repository root of its own (the chunks read each model's train.json from it)."""
    root = tmp_path_factory.mktemp("root")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        yield root


def _write_record(model: str, hyperparameters: dict, seed: int = SEED) -> None:
    """The train.json of `itemsampling train` (the fields the check reads)."""
    path = train_record_path("synthetic", model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dataset": "synthetic", "model": model, "hyperparameters": hyperparameters,
                                "seed": seed}))


@pytest.fixture(scope="module")
def committed(study_root):
    """The ranks `itemsampling train` writes for each model (fitted and tie-broken with SEED)."""
    dataset = load_dataset("synthetic")
    out = {}
    for model in CONFIG["recommenders"].values():
        fitted = make_model(model, "synthetic", CONFIG["model_hyperparameters"][model]).fit(dataset.train, seed=SEED)
        out[model] = global_ranks(fitted, dataset.test_items, protocols=["unseen"], seed=SEED)["unseen"]
        _write_record(model, fitted.hyperparameters)
    return out


@pytest.fixture(scope="module")
def chunks(committed):
    return {(c["model"], c["part"]): sm.chunk_table(CONFIG, SEED, c, committed[c["model"]])
            for c in sm.chunks(CONFIG) if "part" in c}


@pytest.fixture(scope="module")
def main_runs(committed):
    return pd.concat([sm.chunk_table(CONFIG, SEED, c, committed[c["model"]]) for c in sm.chunks(CONFIG)
                      if "part" not in c], ignore_index=True)


def test_chunks_are_one_per_reading_and_one_for_the_other_recommenders():
    parts = [(c["model"], c["part"]) for c in sm.chunks(CONFIG) if "part" in c]
    assert parts == [("popularity", rd.AS_CONFIGURED), ("krZ", "printed"), ("krZ", "history_l1"), ("krZ", "no_self")]
    assert rd.default_reading(CONFIG) == "printed"
    assert rd.sensitivity_chunks({**CONFIG, "sensitivity": {**CONFIG["sensitivity"], "readings": []}}) == []


def test_the_configured_study_has_the_printed_equations_as_default():
    config = sm.study_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    assert rd.default_reading(config) == "printed"
    assert len([c for c in sm.chunks(config) if "part" in c]) == 1 + 2 * len(config["sensitivity"]["readings"])


@pytest.mark.parametrize(("change", "message"), [
    ({"recommenders": ["W"]}, "labels of recommenders"),
    ({"readings": [{"name": "printed"}, {"name": "a/b"}]}, "needs a name"),
    ({"readings": [{"name": "printed"}, {"name": "printed", "norm": "l1"}]}, "distinct"),
    ({"readings": [{"name": "printed"}, {"name": "bad", "neighbours": 3}]}, "reading 'bad'.*no hyper-parameter"),
    ({"readings": [{"name": "l1", "norm": "l1", "orientation": "history"}]}, "exactly one reading"),
    ({"readings": [{"name": "printed"}, {"name": "again", "self_similarity": True}]}, "exactly one reading"),
    ({"ties": ["pessimistic"]}, "must include 'random'"),
    ({"ties": ["random", "worst"]}, "tie rule"),
])
def test_bad_sensitivity_configurations_are_rejected(change, message):
    with pytest.raises(ValueError, match=message):
        rd.check_sensitivity({**CONFIG, "sensitivity": {**CONFIG["sensitivity"], **change}})


def test_default_reading_under_random_ties_repeats_the_main_runs_exactly(chunks, main_runs):
    for model, part in (("krZ", "printed"), ("popularity", rd.AS_CONFIGURED)):
        mine = chunks[model, part]
        mine = mine[mine["ties"] == "random"].drop(columns=list(rd.SENSITIVITY_COLUMNS)).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, main_runs[main_runs["model"] == model].reset_index(drop=True))


def test_stale_committed_ranks_are_refused(committed):
    chunk = next(c for c in sm.chunks(CONFIG) if c.get("part") == "printed")
    stale = committed["krZ"].assign(rank=committed["krZ"]["rank"].iloc[::-1].to_numpy())
    with pytest.raises(ValueError, match=r"not the committed model.*retrain"):
        sm.chunk_table(CONFIG, SEED, chunk, stale)


def test_ranks_committed_with_other_hyperparameters_are_refused(committed):
    chunk = next(c for c in sm.chunks(CONFIG) if c.get("part") == "printed")
    record = json.loads(train_record_path("synthetic", "krZ").read_text())
    try:
        _write_record("krZ", {**record["hyperparameters"], "k_prime": 20})
        with pytest.raises(ValueError, match=r"fitted with another hyperparameters .*k_prime.*retrain"):
            sm.chunk_table(CONFIG, SEED, chunk, committed["krZ"])
        _write_record("krZ", record["hyperparameters"], seed=SEED + 1)
        with pytest.raises(ValueError, match="another seed"):
            sm.chunk_table(CONFIG, SEED, chunk, committed["krZ"])
    finally:
        _write_record("krZ", record["hyperparameters"])


def test_a_refit_a_rank_away_runs_on_the_committed_ranks_and_says_how_far(committed, capsys):
    """Other BLAS kernels move a few near-tied held-out items by a rank: the chunk still runs, on
    the committed ranks, and its log says how many moved."""
    chunk = next(c for c in sm.chunks(CONFIG) if c.get("part") == "printed")
    ranks = committed["krZ"]
    moved = ranks.assign(rank=np.where(np.arange(len(ranks)) % 7 == 0, ranks["rank"] + 1, ranks["rank"]))
    moved["rank"] = np.minimum(moved["rank"], moved["n_candidates"])
    runs = sm.chunk_table(CONFIG, SEED, chunk, moved)
    log = capsys.readouterr().err
    differ = int((moved["rank"] != ranks["rank"]).sum())
    assert differ > 0 and f"moves {differ} of {len(ranks)} held-out items" in log and "at most 1" in log
    main = sm.chunk_table(CONFIG, SEED, {k: chunk[k] for k in ("dataset", "model", "protocol")}, moved)
    mine = runs[runs["ties"] == "random"].drop(columns=list(rd.SENSITIVITY_COLUMNS)).reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, main.reset_index(drop=True))


def test_tie_rules_and_counts_against_a_direct_computation(chunks):
    """Exact values under each rule equal the metrics of ranks computed from the scores directly."""
    dataset = load_dataset("synthetic")
    model = make_model("krZ", "synthetic", {**CONFIG["model_hyperparameters"]["krZ"], "orientation": "history",
                                            "norm": "l1"}).fit(dataset.train)
    users = dataset.test_users
    scores = model.score(users).astype(np.float64)
    target = scores[np.arange(users.size), dataset.test_items[users]]
    candidate = ~dataset.train[users].toarray().astype(bool)
    candidate[np.arange(users.size), dataset.test_items[users]] = False
    above = ((scores > target[:, None]) & candidate).sum(axis=1)
    tied = ((scores == target[:, None]) & candidate).sum(axis=1)
    N = candidate.sum(axis=1) + 1
    runs = chunks["krZ", "history_l1"]
    assert (runs["tied_users"] == (tied > 0).sum()).all()
    assert (runs["zero_score_users"] == (target == 0).sum()).all()
    assert (tied > 0).sum() > 0  # the synthetic data do have ties under k' = 10
    for ties, R in (("pessimistic", 1 + above + tied), ("optimistic", 1 + above)):
        got = runs[(runs["ties"] == ties)].drop_duplicates("metric").set_index("metric")["exact"]
        for metric, k in sm.targets(10):
            want = global_metrics(R, N, metric, k)["value"].iloc[0]
            assert got[metric] == pytest.approx(want, rel=1e-12), (ties, metric)
        assert (runs.loc[runs["ties"] == ties, "bottom_half"] == (R > N / 2).sum()).all()
    auc = runs.drop_duplicates(["ties", "metric"]).query("metric == 'auc'").set_index("ties")["exact"]
    assert auc["optimistic"] >= auc["random"] >= auc["pessimistic"] and auc["optimistic"] > auc["pessimistic"]


def test_sensitivity_tables_recomputed_from_the_runs(chunks):
    runs = pd.concat(chunks.values(), ignore_index=True)
    tables = rd.sensitivity_tables(CONFIG, runs)
    sens = tables["sensitivity"]
    assert len(sens) == 3 * 3 * 2 and sens["default"].sum() == 2
    assert sens[sens["default"]]["reading"].unique().tolist() == ["printed"]
    row = sens[(sens["reading"] == "no_self") & (sens["ties"] == "pessimistic") & (sens["recommender"] == "Y")].iloc[0]
    part = chunks["krZ", "no_self"].query("ties == 'pessimistic'")
    assert row["sampled_recall"] == pytest.approx(part.query("estimator == 'sampled' and metric == 'recall'")
                                                  ["estimate"].mean(), rel=1e-12)
    assert row["auc"] == part.query("metric == 'auc'")["exact"].iloc[0]
    x_rows = sens[(sens["recommender"] == "X") & (sens["ties"] == "random")]
    assert x_rows["reading"].tolist() == ["printed", "history_l1", "no_self"] and x_rows["recall"].nunique() == 1
    ties = tables["ties"]
    assert ties["recommender"].tolist() == ["X", "Y"]
    y = sens[(sens["reading"] == "printed") & (sens["recommender"] == "Y")].set_index("ties")
    assert ties.set_index("recommender").loc["Y", "auc_pessimistic"] == y.loc["pessimistic", "auc"]
    assert tables["sensitivity_paper"].empty  # K&R report ml-1m only
    orders = tables["sensitivity_orders"]
    assert len(orders) == 3 * 3 * 4 * 4 and orders["paper_order"].isna().all()
    for (reading, ties), part in sens.groupby(["reading", "ties"]):
        want = " > ".join(part.sort_values("recall", ascending=False, kind="stable")["recommender"])
        got = orders[(orders["reading"] == reading) & (orders["ties"] == ties) & (orders["metric"] == "recall")]
        assert (got["exact_order"] == want).all()
        want = " > ".join(part.sort_values("sampled_recall", ascending=False, kind="stable")["recommender"])
        assert got.set_index("method").loc["sampled", "order"] == want
    t4 = tables["sensitivity_table4"]
    assert len(t4) == 3 * 3 * 4 and t4["comparisons"].eq(3).all() and t4["paper_reliable"].isna().all()
    sampled = t4[t4["method"] == "sampled"]
    assert (sampled["same"] == 3).all() and (sampled[["better", "worse"]] == 0).all().all()


def test_the_paper_orders_are_those_the_paper_states():
    """K&R §6.2: exact Z > Y > X on Recall, NDCG and AP; sampled Recall reversed, X > Y > Z;
    AUC consistent."""
    orders = rd._paper_orders({"dataset": "ml-1m"}).set_index(["metric", "method"])
    for metric in ("recall", "ndcg", "ap"):
        assert orders.loc[(metric, "sampled"), "paper_exact_order"] == "Z > Y > X"
    assert orders.loc[("recall", "sampled"), "paper_order"] == "X > Y > Z"
    assert orders.loc[("auc", "sampled"), "paper_order"] == orders.loc[("auc", "sampled"), "paper_exact_order"]
    assert rd._paper_orders({"dataset": "ml-100k"}).empty


def test_table4_summary_by_hand():
    table4 = pd.DataFrame({"recommender_a": "X", "recommender_b": ["Y", "Y", "Z", "Z", "Y", "Y", "Z", "Z"],
                           "metric": ["recall", "auc"] * 4, "repeats": 10,
                           "method": ["sampled"] * 4 + ["bv_0.1"] * 4, "agree": [3, 10, 10, 10, 9, 10, 8, 4]})
    out = rd.table4_summary(table4).set_index("method")
    assert out.loc["bv_0.1"].to_dict() == {"comparisons": 2, "reliable": 1, "better": 1, "same": 0, "worse": 1}
    assert out.loc["sampled"].to_dict() == {"comparisons": 2, "reliable": 1, "better": 0, "same": 2, "worse": 0}


def test_the_paper_table4_summary_counts_what_the_paper_says():
    """K&R §6.3: BV 0.1 orders "all but one comparison" correctly in > 90% of the runs (of the
    Recall, NDCG and AP comparisons: 8 of 9), and the rank estimate is never worse than the
    uncorrected metric (7 better, 2 as good: NDCG and AP of Y vs Z, both 100)."""
    paper = rd.table4_summary(paper_table("krichene2020kdd_table4").assign(repeats=100), agree="paper_agree")
    paper = paper.set_index("method")
    assert paper.loc["bv_0.1", "reliable"] == 8 and paper.loc["bv_0.1", "comparisons"] == 9
    assert paper.loc["rank_estimate", ["better", "same", "worse"]].tolist() == [7, 2, 0]
