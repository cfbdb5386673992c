"""RecBole metrics that correct a sampled (``uniN``) evaluation, and the export of its ranks.

This module imports RecBole and is importable only where RecBole is; the rest of the package
never imports it. Use inside a RecBole script::

    from itemsampling.recbole_metrics import register
    register()   # adds CorrectedRecall, CorrectedNDCG and SampledRanks to RecBole's metrics
    run_recbole(model="BPR", dataset="ml-100k", config_dict={
        "eval_args": {"split": {"LS": "valid_and_test"}, "order": "TO", "mode": "uni100"},
        "metrics": ["Recall", "NDCG", "CorrectedRecall", "CorrectedNDCG", "SampledRanks"]})

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
positive per user or several.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import recbole.evaluator.metrics as recbole_metrics
import torch
import recbole.evaluator.register as recbole_register
from recbole.evaluator.base_metric import AbstractMetric
from recbole.evaluator.collector import Collector
from recbole.utils import EvaluatorType

from .runs import correct, read_run
from .score_matrix import positive_counts

__all__ = ["POSITIVE_RANKS", "CorrectedNDCG", "CorrectedRecall", "SampledRanks", "ranks_table", "register"]


#: the collector entry that :func:`register` adds
POSITIVE_RANKS = "rec.positiveranks"


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
        "rank": 1 + above + tied // 2,
        "n_candidates": n_negatives + 1,
        "n_items": n_negatives + n_positives if full else int(n_items),
        "n_positives": n_positives,
        "mode": str(mode),
    })


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
        run = read_run(ranks_table(dataobject, self.config), "recbole", model=self.config["model"])
        table = correct(run, metrics=[self.metric], ks=self.topk, interval=None)
        name = type(self).__name__.lower()
        return {f"{name}@{k}": round(float(v), self.decimal_place) for k, v in zip(table["k"], table["estimate"],
                                                                                   strict=True)}


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
    numbered across batches.
    """
    for cls in (CorrectedRecall, CorrectedNDCG, SampledRanks):
        name = cls.__name__.lower()
        setattr(recbole_metrics, cls.__name__, cls)
        recbole_register.metrics_dict[name] = cls
        recbole_register.metric_information[name] = cls.metric_need
        recbole_register.metric_types[name] = cls.metric_type
    if not getattr(Collector.eval_batch_collect, "_itemsampling", False):
        Collector.eval_batch_collect = _collecting_positive_ranks(Collector.eval_batch_collect)


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
