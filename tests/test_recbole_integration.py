"""RecBole itself, on a tiny generated dataset: the per-positive ranks our collector entry writes
(``SampledRanks``) against a direct count from the trained model's own scores, the corrected
metrics inside ``run_recbole``'s trainer, and the popularity ranks of a ``popN`` evaluation.

Runs where RecBole is installed (``make recbole-test`` builds its environment, ``.ci/run`` calls
it); skipped elsewhere."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

recbole = pytest.importorskip("recbole")

from recbole.config import Config  # noqa: E402
from recbole.data import create_dataset, data_preparation  # noqa: E402
from recbole.utils import get_model, get_trainer, init_seed  # noqa: E402

from itemsampling import correct, read_run  # noqa: E402
from itemsampling.recbole_metrics import popularity_ranks, register  # noqa: E402

N_USERS, N_ITEMS = 60, 90


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    """60 users with 8 to 20 items each, popular items more often: RecBole's atomic file."""
    rng = np.random.default_rng(0)
    weight = 1 / np.arange(1, N_ITEMS + 1)
    rows = []
    for user in range(1, N_USERS + 1):
        items = rng.choice(np.arange(1, N_ITEMS + 1), rng.integers(8, 21), replace=False, p=weight / weight.sum())
        rows += [(user, item, float(t)) for t, item in enumerate(items)]
    root = tmp_path_factory.mktemp("recbole")
    (root / "tiny").mkdir()
    table = pd.DataFrame(rows)
    table.to_csv(root / "tiny" / "tiny.inter", sep="\t", index=False,
                 header=["user_id:token", "item_id:token", "timestamp:float"])
    (root / "catalogue").write_text(str(table[1].nunique()))  # the items that occur: RecBole's item_num - 1
    logging.disable(logging.WARNING)
    register()
    return root


METRICS = ["Recall", "NDCG", "CorrectedRecall", "CorrectedNDCG", "SampledRanks"]


def _config(root, mode, split, ranks_path, metrics=METRICS):
    return Config(model="BPR", dataset="tiny", config_dict={
        "data_path": str(root), "seed": 1, "reproducibility": True, "device": "cpu", "use_gpu": False,
        "epochs": 2, "train_batch_size": 256, "show_progress": False, "state": "ERROR",
        "load_col": {"inter": ["user_id", "item_id", "timestamp"]},
        "eval_args": {"split": split, "order": "RO", "group_by": "user", "mode": mode},
        "metrics": metrics, "topk": [5],
        "valid_metric": "NDCG@5", "sampled_ranks_path": str(ranks_path), "checkpoint_dir": str(root / "saved"),
        "catalogue_size": int((root / "catalogue").read_text()),
    })


@pytest.fixture(scope="module")
def trained(data_root):
    cfg = _config(data_root, "full", {"RS": [0.6, 0.2, 0.2]}, data_root / "train.csv")
    init_seed(cfg["seed"], cfg["reproducibility"])
    train, valid, _ = data_preparation(cfg, create_dataset(cfg))
    model = get_model("BPR")(cfg, train._dataset)
    get_trainer(cfg["MODEL_TYPE"], "BPR")(cfg, model).fit(train, valid, saved=False, show_progress=False)
    return model


def _evaluate(root, model, mode, metrics=METRICS):
    cfg = _config(root, mode, {"RS": [0.6, 0.2, 0.2]}, root / f"{mode}.csv", metrics)
    init_seed(cfg["seed"], cfg["reproducibility"])
    _, _, test = data_preparation(cfg, create_dataset(cfg))
    result = get_trainer(cfg["MODEL_TYPE"], "BPR")(cfg, model).evaluate(test, load_best_model=False,
                                                                        show_progress=False)
    return result, test, pd.read_csv(root / f"{mode}.csv")


def test_full_ranks_are_the_models_own(data_root, trained):
    """In full mode each positive's rank among the user's non-history items, other positives left
    out, counted directly from the model's scores of every item."""
    result, test, ranks = _evaluate(data_root, trained, "full")
    import torch

    want = []
    with torch.no_grad():
        for interaction, history, positive_u, positive_i in test:
            scores = trained.full_sort_predict(interaction).view(len(interaction), -1).numpy().copy()
            scores[:, 0] = -np.inf
            scores[history[0].numpy(), history[1].numpy()] = -np.inf
            for row in range(len(interaction)):
                mine = positive_i.numpy()[positive_u.numpy() == row]
                negatives = np.setdiff1d(np.flatnonzero(np.isfinite(scores[row])), mine)
                for item in mine:
                    above = (scores[row, negatives] > scores[row, item]).sum()
                    tied = (scores[row, negatives] == scores[row, item]).sum()
                    want.append((1 + above + tied // 2, negatives.size + mine.size, mine.size))
    got = ranks[["rank", "n_items", "n_positives"]].to_numpy()
    np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(np.array(want), axis=0))
    assert set(result) >= {"recall@5", "correctedrecall@5", "correctedndcg@5"}
    # full mode: nothing to correct, and our definitions of several positives are RecBole's
    assert result["correctedrecall@5"] == pytest.approx(result["recall@5"], abs=1e-4)
    assert result["correctedndcg@5"] == pytest.approx(result["ndcg@5"], abs=1e-4)
    import recbole.evaluator.register as recbole_register

    from itemsampling.recbole_metrics import CorrectedRecall

    assert recbole_register.metrics_dict["correctedrecall"] is CorrectedRecall


def test_sampled_runs_are_corrected_with_several_positives(data_root, trained):
    result, _, ranks = _evaluate(data_root, trained, "uni20")
    # each positive's 20 draws, with replacement, merged: at most 20 P_u distinct negatives
    assert ranks["n_positives"].max() > 1 and (ranks["n_candidates"] <= 1 + 20 * ranks["n_positives"]).all()
    table = correct(read_run(ranks, "recbole", model="BPR"), metrics=["recall"], ks=[5])
    assert table["protocol"].iloc[0] == "several_positives"
    assert table["estimate"].iloc[0] == pytest.approx(result["correctedrecall@5"], abs=1e-4)


def test_popularity_ranks_are_hansen_hurwitz_estimates(data_root, trained):
    with pytest.raises(NotImplementedError, match="popularity_ranks"):
        _evaluate(data_root, trained, "pop20")
    _, test, _ = _evaluate(data_root, trained, "pop20", ["Recall", "SampledRanks"])
    ranks = popularity_ranks(trained, test)
    assert list(ranks.columns) == ["user_id", "rank", "n_candidates", "n_items", "n_positives", "mode",
                                   "rank_estimate"]
    assert (ranks["rank_estimate"] >= 1).all() and (ranks["rank"] <= ranks["n_candidates"]).all()
    assert ranks.groupby("user_id")["n_positives"].transform("size").eq(ranks["n_positives"]).all()
    run = read_run(ranks, "recbole", model="BPR")
    assert run.protocol == "popularity" and run.n_items == int((data_root / "catalogue").read_text())
    assert correct(run, metrics=["recall"], ks=[5])["estimate"].between(0, 1).all()
