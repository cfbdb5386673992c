"""RecBole metrics that correct a sampled (``uniN``) evaluation, and the export of its ranks.

This module imports RecBole and is importable only where RecBole is; the rest of the package
never imports it. Use inside a RecBole script::

    from itemsampling.recbole_metrics import register
    register()   # adds CorrectedRecall, CorrectedNDCG and SampledRanks to RecBole's metrics
    run_recbole(model="BPR", dataset="ml-100k", config_dict={
        "eval_args": {"split": {"LS": "valid_and_test"}, "order": "TO", "mode": "uni100"},
        "metrics": ["Recall", "NDCG", "CorrectedRecall", "CorrectedNDCG", "SampledRanks"]})

What RecBole gives per user (its collector's ``rec.meanrank``): the sum of the positives'
ranks among the user's candidates (ties get their average rank), the number of candidates
(items with a finite score: the positive and its distinct sampled negatives) and the number of
positives. With one positive per user (a leave-one-out split) the first is the positive's rank
r_u and the second n_u. The catalogue size N is the config's ``catalogue_size`` (RecBole's
``dataset.item_num - 1``: its item count less the padding id 0; 1682 on ml-100k): RecBole 1.2.1
cannot hand its ``data.*`` entries to a metric (its collector calls ``.cpu()`` on an int). In
``full`` mode n_u is N_u itself, the items left after the user's history is masked.

``SampledRanks`` writes these as a CSV (``sampled_ranks_path`` in the config, default
``sampled_ranks.csv``; columns ``user_id, rank, n_candidates, n_items, mode``) that
:func:`itemsampling.runs.read_run` reads with ``format="recbole"``. ``CorrectedRecall`` and
``CorrectedNDCG`` report ``mn_mes`` estimates of the global metric at each ``topk``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import recbole.evaluator.metrics as recbole_metrics
import recbole.evaluator.register as recbole_register
from recbole.evaluator.base_metric import AbstractMetric
from recbole.utils import EvaluatorType

from .runs import correct, read_run

__all__ = ["CorrectedNDCG", "CorrectedRecall", "SampledRanks", "ranks_table", "register"]


def ranks_table(dataobject, config) -> pd.DataFrame:
    """The per-user ranks of a RecBole evaluation (``rec.meanrank``, ``config["catalogue_size"]``).

    A user with several positives gets one row per positive, each with their mean rank, so that
    :func:`itemsampling.runs.read_run` sees several positives (not supported yet).
    """
    mean_rank = dataobject.get("rec.meanrank").numpy()
    rank_sum, n_candidates, n_positives = mean_rank[:, 0], mean_rank[:, 1], mean_rank[:, 2].astype(np.int64)
    mode = config["eval_args"]["mode"]
    mode = mode.get("test", mode.get("valid")) if isinstance(mode, dict) else mode
    users = np.repeat(np.arange(rank_sum.size), n_positives)
    n_items = config["catalogue_size"]
    if n_items is None and "full" not in str(mode):
        raise ValueError("set 'catalogue_size' in the RecBole config to the number of items N "
                         "(dataset.item_num - 1) so that the sampled run can be corrected")
    return pd.DataFrame({
        "user_id": users,
        "rank": np.rint(np.repeat(rank_sum / n_positives, n_positives)).astype(np.int64),
        "n_candidates": np.repeat(n_candidates.astype(np.int64), n_positives),
        "n_items": np.repeat(n_candidates.astype(np.int64), n_positives) if n_items is None else int(n_items),
        "mode": str(mode),
    })


class SampledRanks(AbstractMetric):
    """Writes the run's ranks to ``config['sampled_ranks_path']``; reports the number of rows."""

    metric_type = EvaluatorType.RANKING
    metric_need = ("rec.meanrank",)
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
    metric_need = ("rec.meanrank",)
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
    """Estimated full-ranking Recall@K (= hit ratio, one positive per user) of a ``uniN`` run."""

    metric = "recall"


class CorrectedNDCG(_Corrected):
    """Estimated full-ranking NDCG@K of a ``uniN`` run."""

    metric = "ndcg"


def register() -> None:
    """Make the metrics known to RecBole, as the classes of ``recbole.evaluator.metrics`` are.

    RecBole collects its metrics once, at import, from that module (``cluster_info``) into the
    dictionaries of ``recbole.evaluator.register``; this adds ours to the module and to them.
    """
    for cls in (CorrectedRecall, CorrectedNDCG, SampledRanks):
        name = cls.__name__.lower()
        setattr(recbole_metrics, cls.__name__, cls)
        recbole_register.metrics_dict[name] = cls
        recbole_register.metric_information[name] = cls.metric_need
        recbole_register.metric_types[name] = cls.metric_type
