"""RecBole metrics that correct a sampled (``uniN``) evaluation, and the export of its ranks.

This module imports RecBole and is importable only where RecBole is; the rest of the package
never imports it. Use inside a RecBole script::

    from itemsampling.recbole_metrics import register
    register()   # adds CorrectedRecall, CorrectedNDCG and SampledRanks to RecBole's metrics
    run_recbole(model="BPR", dataset="ml-100k", config_dict={
        "eval_args": {"split": {"RS": [0.8, 0.1, 0.1]}, "mode": "uni100"}, "catalogue_size": 1682,
        "metrics": ["Recall", "NDCG", "CorrectedRecall", "CorrectedNDCG", "SampledRanks"],
        "valid_metric": "NDCG@10"})

What a metric gets: :func:`register` adds one entry to RecBole's collector, ``rec.positiveranks``,
computed from the same score rows as RecBole's own ``rec.meanrank`` (its collector's
``eval_batch_collect``, which sees each batch's scores and positives;
:func:`itemsampling.score_matrix.positive_counts`): per positive, the number
of the user's candidates that are not positives (its sampled negatives in ``uniN`` mode; every
item outside the user's history in ``full`` mode) scored above it, those tied with it, the
number of those candidates, and the user's number of positives. A positive's rank is 1 + those
above + half of those tied, rounded down (RecBole's average rank of a tie, rounded), among
itself and the negatives: the user's other positives are left out, as
:mod:`itemsampling.runs` reads a run with several positives per user (RecBole's default ratio
split). The catalogue size N is the config's ``catalogue_size`` (RecBole's ``dataset.item_num -
1``: its item count less the padding id 0; 1682 on ml-100k): RecBole 1.2.1 cannot hand its
``data.*`` entries to a metric (its collector calls ``.cpu()`` on an int). In ``full`` mode the
file holds each user's N_u (the positives and the items outside the user's history).

``SampledRanks`` writes these as a CSV (``sampled_ranks_path`` in the config, default
``sampled_ranks.csv``; columns ``user_id, rank, n_candidates, n_items, n_positives, mode``;
``user_id`` numbers the evaluated users in RecBole's order) that
:func:`itemsampling.runs.read_run` reads with ``format="recbole"``. ``CorrectedRecall`` and
``CorrectedNDCG`` report ``mn_mes`` estimates of the global metric at each ``topk``, with one
positive per user or several (in ``full`` mode: the metric itself, as RecBole's ``Recall`` and
``NDCG`` compute it).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import recbole.evaluator.metrics as recbole_metrics
import recbole.evaluator.register as recbole_register
import torch
from recbole.evaluator.base_metric import AbstractMetric
from recbole.evaluator.collector import Collector
from recbole.utils import EvaluatorType

from .multi_positive import multi_positive_metrics
from .nonuniform import hansen_hurwitz_rank
from .runs import correct, read_run
from .score_matrix import positive_counts

__all__ = ["POSITIVE_RANKS", "CorrectedNDCG", "CorrectedRecall", "SampledRanks", "popularity_ranks", "ranks_table",
           "register"]


#: the collector entry that :func:`register` adds
POSITIVE_RANKS = "rec.positiveranks"


def _average_rank(above: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """1 + the negatives above + half those tied, rounded down: RecBole's average rank of a tie."""
    return 1 + above + tied // 2


def ranks_table(dataobject, config) -> pd.DataFrame:
    """The per-positive ranks of a RecBole evaluation (``rec.positiveranks``,
    ``config["catalogue_size"]``): one row per user and positive."""
    table = dataobject.get(POSITIVE_RANKS).numpy().astype(np.int64)
    mode = config["eval_args"]["mode"]
    mode = mode.get("test", mode.get("valid")) if isinstance(mode, dict) else mode
    n_items = config["catalogue_size"]
    full = "full" in str(mode)
    if n_items is None and not full:
        raise ValueError("set 'catalogue_size' in the RecBole config to the number of items N "
                         "(dataset.item_num - 1) so that the sampled run can be corrected")
    users, above, tied, n_negatives, n_positives = (table[:, j] for j in range(5))
    return pd.DataFrame({
        "user_id": users,
        "rank": _average_rank(above, tied),
        "n_candidates": n_negatives + 1,
        "n_items": n_negatives + n_positives if full else int(n_items),
        "n_positives": n_positives,
        "mode": str(mode),
    })


def popularity_ranks(model, eval_data, seed: int = 0) -> pd.DataFrame:
    """The positives of a RecBole ``popN`` evaluation with the Hansen–Hurwitz estimate of their ranks.

    RecBole's popularity sampler draws each negative with probability p_j ∝ (c_j / Σ c)^α (c_j:
    item j's interactions in all phases; α the sampler's ``alpha``), with replacement, and draws
    again while the item is one of the user's (``used_ids``): per draw, q_j = p_j / (1 - Σ_{i used}
    p_i). A user with P_u positives gets m_u = P_u · N draws, and each positive t is ranked against
    all of them (:mod:`itemsampling.positive_sampling`). The Hansen–Hurwitz estimate of the number
    of the user's non-relevant items scored above t is (1/m_u) Σ_{draws d above t} 1 / q_d (a draw
    tied with t is above with probability ½, seeded); its rank estimate is 1 + that
    (:func:`itemsampling.nonuniform.hansen_hurwitz_rank`, unbiased). This scores the evaluation's
    own batches with ``model.predict``, as RecBole's trainer does.

    Parameters
    ----------
    model : recbole.model.abstract_recommender.AbstractRecommender
        The trained model.
    eval_data : recbole.data.dataloader.NegSampleEvalDataLoader
        The ``popN`` test (or validation) data of ``data_preparation``.
    seed : int
        Seed of the tie-breaking.

    Returns
    -------
    pandas.DataFrame
        One row per positive, the columns of ``SampledRanks`` and the estimates: ``user_id`` (the
        users numbered in RecBole's order, as ``SampledRanks`` numbers them), ``rank`` (among the
        positive and the user's distinct drawn negatives), ``n_candidates``, ``n_items`` (the
        catalogue, RecBole's ``item_num - 1``), ``n_positives``, ``mode`` and ``rank_estimate``:
        what :func:`itemsampling.runs.read_run` reads with ``format="recbole"`` as a popularity
        run.
    """
    sampler = eval_data._sampler
    if sampler is None or sampler.distribution != "popularity":
        raise ValueError("popularity_ranks needs a popularity-sampled evaluation (eval_args mode popN)")
    counts = Counter(sampler._get_candidates_list())
    items = np.fromiter(counts, dtype=np.int64)
    weight = (np.fromiter(counts.values(), dtype=np.float64) / sum(counts.values())) ** sampler.alpha
    p = np.zeros(sampler.item_num)
    p[items] = weight / weight.sum()
    config = eval_data.config
    uid_field, iid_field, label_field = config["USER_ID_FIELD"], config["ITEM_ID_FIELD"], config["LABEL_FIELD"]
    rows, offset, gen = [], 0, np.random.default_rng(seed)
    model.eval()
    with torch.no_grad():
        for interaction, row_index, _, _ in eval_data:
            scores = model.predict(interaction).detach().cpu().numpy().astype(np.float64)
            row_index = row_index.numpy()
            users = interaction[uid_field].numpy()
            item_ids = interaction[iid_field].numpy()
            positive = interaction[label_field].numpy() > 0.5
            for row in np.unique(row_index):
                mine = row_index == row
                pos, neg = mine & positive, mine & ~positive
                used = np.fromiter(sampler.used_ids[users[mine][0]], dtype=np.int64)
                q = p[item_ids[neg]] / (1.0 - p[used].sum())
                tied = scores[neg][None, :] == scores[pos][:, None]
                above = (scores[neg][None, :] > scores[pos][:, None]) | (tied & (gen.random(tied.shape) < 0.5))
                distinct = np.unique(item_ids[neg], return_index=True)[1]  # RecBole merges repeated draws
                row_scores = np.concatenate([scores[pos], scores[neg][distinct]])[None, :]
                ranked = positive_counts(row_scores, np.zeros(pos.sum(), dtype=np.int64), np.arange(pos.sum()))
                rows.append(pd.DataFrame({
                    "user_id": offset + row, "rank": _average_rank(ranked[:, 0], ranked[:, 1]),
                    "n_candidates": distinct.size + 1, "n_items": sampler.item_num - 1, "n_positives": int(pos.sum()),
                    "mode": f"pop{eval_data.neg_sample_args['sample_num']}",
                    "rank_estimate": hansen_hurwitz_rank(above, q)}))
            offset += int(row_index.max()) + 1
    return pd.concat(rows, ignore_index=True)


class SampledRanks(AbstractMetric):
    """Writes the run's ranks to ``config['sampled_ranks_path']``; reports the number of rows."""

    metric_type = EvaluatorType.RANKING
    metric_need = (POSITIVE_RANKS,)
    smaller = False

    def __init__(self, config):
        super().__init__(config)
        self.config = config

    def calculate_metric(self, dataobject):
        table = ranks_table(dataobject, self.config)
        path = self.config["sampled_ranks_path"] or "sampled_ranks.csv"
        table.to_csv(path, index=False)
        return {"sampledranks": len(table)}


class _Corrected(AbstractMetric):
    metric_type = EvaluatorType.RANKING
    metric_need = (POSITIVE_RANKS,)
    smaller = False
    metric: str = ""

    def __init__(self, config):
        super().__init__(config)
        self.config = config
        self.topk = config["topk"]

    def calculate_metric(self, dataobject):
        ranks = ranks_table(dataobject, self.config)
        mode = str(ranks["mode"].iloc[0])
        if mode.startswith("pop"):
            raise NotImplementedError(
                f"{type(self).__name__} cannot correct a {mode} evaluation from its ranks: popularity-sampled "
                "negatives have no kernel P(r | R). Score the evaluation with "
                "itemsampling.recbole_metrics.popularity_ranks(model, test_data) and correct it with "
                "itemsampling.correct (Hansen–Hurwitz ranks), or evaluate in uniN mode")
        if mode == "full":  # the full ranking: its own metrics, nothing to correct
            values = multi_positive_metrics(ranks["rank"], ranks["user_id"], self.metric, self.topk)["value"]
        else:
            run = read_run(ranks, "recbole", model=self.config["model"])
            values = correct(run, metrics=[self.metric], ks=self.topk, interval=None)["estimate"]
        name = type(self).__name__.lower()
        return {f"{name}@{k}": round(float(v), self.decimal_place) for k, v in zip(self.topk, values, strict=True)}


class CorrectedRecall(_Corrected):
    """Estimated full-ranking Recall@K of a ``uniN`` run (= hit ratio with one positive per user)."""

    metric = "recall"


class CorrectedNDCG(_Corrected):
    """Estimated full-ranking NDCG@K of a ``uniN`` run."""

    metric = "ndcg"


def register() -> None:
    """Make the metrics known to RecBole, as the classes of ``recbole.evaluator.metrics`` are, and
    let its collector compute ``rec.positiveranks`` when a metric needs it.

    RecBole collects its metrics once, at import, from that module (``cluster_info``) into the
    dictionaries of ``recbole.evaluator.register``; this adds ours to the module and to them.
    The collector's ``eval_batch_collect`` is wrapped once: it runs as before, then appends the
    batch's row and :func:`itemsampling.score_matrix.positive_counts` per positive, with rows
    numbered across batches; its ``get_data_struct`` then resets the entry after each evaluation,
    as it resets RecBole's own.
    """
    for cls in (CorrectedRecall, CorrectedNDCG, SampledRanks):
        name = cls.__name__.lower()
        setattr(recbole_metrics, cls.__name__, cls)
        recbole_register.metrics_dict[name] = cls
        recbole_register.metric_information[name] = cls.metric_need
        recbole_register.metric_types[name] = cls.metric_type
    if not getattr(Collector.eval_batch_collect, "_itemsampling", False):
        Collector.eval_batch_collect = _collecting_positive_ranks(Collector.eval_batch_collect)
        Collector.get_data_struct = _resetting_positive_ranks(Collector.get_data_struct)


def _collecting_positive_ranks(collect):
    def eval_batch_collect(self, scores_tensor, interaction, positive_u, positive_i):
        collect(self, scores_tensor, interaction, positive_u, positive_i)
        if self.register.need(POSITIVE_RANKS):
            rows = positive_u.cpu().numpy()
            counts = positive_counts(scores_tensor.detach().cpu().numpy(), rows, positive_i.cpu().numpy())
            table = torch.from_numpy(np.column_stack([rows, counts]))
            if POSITIVE_RANKS in self.data_struct:  # number the rows after those of earlier batches
                table[:, 0] += int(self.data_struct.get(POSITIVE_RANKS)[:, 0].max()) + 1
            self.data_struct.update_tensor(POSITIVE_RANKS, table)

    eval_batch_collect._itemsampling = True
    return eval_batch_collect


def _resetting_positive_ranks(get_data_struct):
    def get_data_struct_once(self):  # RecBole resets its own rec.* entries after each evaluation
        returned = get_data_struct(self)
        if POSITIVE_RANKS in self.data_struct:
            del self.data_struct[POSITIVE_RANKS]
        return returned

    return get_data_struct_once
