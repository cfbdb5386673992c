"""The study ratio_protocols of notebook 05 on tiny ratio-split ranks: the exact values against the
metrics of the full ranking, the sampled values against a direct computation, the pair orders,
determinism and a missing ranks file."""

from __future__ import annotations

import pandas as pd
import pytest

from itemsampling.multi_positive import multi_positive_metrics
from itemsampling_study import ratio_protocols as rp
from itemsampling_study.tables import write_table

from .protocol_helpers import tiny_ratio_ranks

CONFIG = {"datasets": ["tiny"], "models": ["m1", "m2", "m3"], "negatives": 20, "designs": ["per_positive", "shared"],
          "replace": True, "metrics": ["recall", "ndcg", "hit"], "ks": [1, 5, 10], "repeats": 4,
          "methods": ["rank_estimate", "mn_mes"]}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("ratio")
    for j, (model, scale) in enumerate((("m1", 5.0), ("m2", 20.0), ("m3", 60.0))):
        path = rp.ratio_path("tiny", model, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        tiny_ratio_ranks(scale, 30 + j).to_parquet(path)
    return root


def test_exact_values_are_the_full_rankings_metrics(root):
    ranks = pd.read_parquet(rp.ratio_path("tiny", "m2", root))
    runs = rp.model_runs(ranks, CONFIG, 1, "tiny", "m2")
    exact = runs[runs["kind"] == "exact"]
    assert set(exact["design"]) == {"per_positive", "shared"} and (exact["repeat"] == -1).all()
    users = ranks["user"].to_numpy()
    direct = multi_positive_metrics(ranks["negative_rank"].to_numpy(), users, ["recall", "ndcg", "hit"], [1, 5, 10])
    recall5 = exact[(exact["metric"] == "recall") & (exact["k"] == 5)]["value"]
    assert recall5.nunique() == 1
    assert recall5.iloc[0] == pytest.approx(direct.query("metric == 'recall' and k == 5")["value"].item())
    # Recall@K from the full ranking's positions (column rank), user by user
    per_user = ranks.assign(hit=ranks["rank"] <= 5).groupby("user")["hit"].mean()
    assert recall5.iloc[0] == pytest.approx(per_user.mean())
    assert set(runs["kind"]) == {"exact", "sampled", "rank_estimate", "mn_mes"}
    assert runs[runs["kind"] != "exact"].groupby(["design", "kind", "metric", "k"]).size().eq(4).all()


def test_accuracy_and_winners(root):
    tables = rp.study_tables(CONFIG, 1, None, root)
    acc = tables["ratio_accuracy"]
    assert set(acc["kind"]) == {"sampled", "rank_estimate", "mn_mes"} and (acc["repeats"] == 4).all()
    row = acc.iloc[0]
    assert row["rmse"] ** 2 == pytest.approx(row["bias"] ** 2 + row["sd"] ** 2 * 3 / 4)
    # the sampled metric among 21 candidates exceeds the exact one (a sampled rank <= the global rank)
    sampled = acc[(acc["kind"] == "sampled") & (acc["metric"] == "recall")]
    assert (sampled["bias"] >= 0).all()
    win = tables["ratio_winners"]
    assert list(win.columns) == rp.WINNER_COLUMNS and list(acc.columns) == rp.ACCURACY_COLUMNS
    empty = rp.study_tables({**CONFIG, "datasets": []}, 1, None, root)
    assert all(t.empty for t in empty.values()) and list(empty["ratio_winners"].columns) == rp.WINNER_COLUMNS
    assert (win["pairs"] == 3).all() and (win["cases"] == 12).all() and win["fraction"].between(0, 1).all()


def test_tables_are_deterministic_byte_for_byte(root, tmp_path):
    for attempt in range(2):
        for name, table in rp.study_tables(CONFIG, 1, None, root).items():
            write_table(table, tmp_path / str(attempt) / f"{name}.csv")
    for path in (tmp_path / "0").iterdir():
        assert path.read_bytes() == (tmp_path / "1" / path.name).read_bytes(), path.name


def test_missing_ranks_and_bad_design_are_named(root):
    with pytest.raises(FileNotFoundError, match="--split ratio"):
        rp.study_tables({**CONFIG, "models": ["m9"]}, 1, None, root)
    ranks = pd.read_parquet(rp.ratio_path("tiny", "m1", root))
    with pytest.raises(ValueError, match="design"):
        rp.model_runs(ranks, {**CONFIG, "designs": ["per_user"]}, 1, "tiny", "m1")
