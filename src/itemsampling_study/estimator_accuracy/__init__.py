"""Notebook 04: how well the estimators recover global metrics (Jin et al., AAAI 2021; Li et al.,
AAAI 2023), on the papers' four datasets and five models.

**Runs.** The configuration (section ``estimator_accuracy``) is expanded into *parts*
(:func:`parts`), each a set of draws of sampled ranks and the estimators run on every draw:

* ``n<n>`` — the papers' runs: for every sample set size n of ``sample_sizes`` (n = 100 and 500:
  the held-out item and n - 1 items sampled with replacement), its own list of estimators, on
  every dataset and model, under the papers' ``protocol`` (``all``: rank among all items);
* ``pooled_n<n>`` — BV and MN with a prior fitted *once to the ranks of all repeats together*
  (:func:`pooled_estimators`), what the AAAI 2023 authors' code did (it averaged the MES estimates
  of the 100 repeats), against our default, a prior fitted to each repeat's own ranks;
* ``per_user_n<n>`` and ``common_n<n>`` — under the ``unseen`` protocol user u has N_u candidates:
  the estimators given N_u (``n_item_groups`` groups of users by N_u) against the same estimators
  given one common N (one group, the mean N_u), on the same draws;
* ``<scheme>_n<n>`` — items drawn without replacement (``actual``: as a toolkit samples items;
  the estimators still assume sampling with replacement) against the binomial draws of ``n<n>``;
* ``interval_n<n>`` — the same draws as ``n<n>`` with a confidence interval around every
  estimate (:mod:`itemsampling.intervals`, section ``intervals``: level, method, cut-offs
  ``ks``), to measure how often it covers the exact value.

A chunk of the workflow is one part of one (dataset, model): :func:`chunks`, :func:`chunk_table`.
Draws are seeded by (dataset, model, protocol, scheme, n, repeat) and not by the part, so the parts
of a comparison see the same sampled ranks wherever their settings agree.

**Targets.** Recall, NDCG and AP at K = 1..``max_k`` for every estimator; for the models of the
P(R) figures also Recall@K for K up to ``rank_distribution.max_rank``: the estimated Recall@K of an
estimator that defines P(R) is its CDF at K (AAAI'21 eq. 14), so the learned pmf and CDF are read
from these targets (:func:`rank_distribution_table`).

**Tables** (:func:`study_tables`): ``metrics_at_k`` (AAAI'21 Tables 2-3, 6-7), ``winners`` and
``true_winners`` (AAAI'21 Tables 4, 8-10; AAAI'23 Tables 3, 8), ``rank_distribution`` (AAAI'21
Figs. 2-3), ``relative_error`` (AAAI'23 Tables 1, 6, 9, 10), ``pooled_prior``, ``candidates`` and
``schemes`` (the comparisons above, as average relative errors), ``interval_coverage``
(:func:`interval_coverage_table`), ``metric_levels`` (:func:`metric_levels`: the level of every model's
metrics under both protocols, read from the global ranks, to compare with the papers' levels) and
``chunk_times`` (wall time of every chunk; the only table that differs between reruns).

=============================== ==============================================================
:mod:`.parts`                    the configuration expanded into parts, chunks and targets
:mod:`.runs`                     the runs of one chunk (:func:`chunk_table`)
:mod:`.aggregation`              the tables, from the runs of all chunks (:func:`study_tables`)
:mod:`.comparisons`              the tables held against the papers'
:mod:`.layouts`                  the tables laid out as the papers print them
=============================== ==============================================================
"""

from .aggregation import (
    CATEGORICAL_RUNS,
    chunk_times,
    comparison_tables,
    interval_coverage_table,
    metric_levels,
    metrics_at_k,
    rank_distribution_table,
    relative_errors,
    study_tables,
    true_winners,
    winners,
)
from .comparisons import (
    bias_comparison,
    cdf_error,
    level_comparison,
    li2020kdd_hit_ratios,
    min_sampled_hit_ratio,
    relative_error_comparison,
    variant_comparison,
    winner_comparison,
)
from .layouts import estimator_label, metrics_at_k_layout, relative_error_layout, winners_layout
from .parts import (
    CODE_MES,
    METRICS,
    PRIOR_ESTIMATORS,
    chunks,
    estimator,
    inputs,
    parts,
    sample_sizes,
    study_config,
    targets,
)
from .runs import chunk_table, pooled_estimators

__all__ = [
    "CATEGORICAL_RUNS",
    "CODE_MES",
    "METRICS",
    "PRIOR_ESTIMATORS",
    "bias_comparison",
    "cdf_error",
    "chunk_table",
    "chunk_times",
    "chunks",
    "comparison_tables",
    "estimator",
    "estimator_label",
    "inputs",
    "interval_coverage_table",
    "level_comparison",
    "li2020kdd_hit_ratios",
    "metric_levels",
    "metrics_at_k",
    "metrics_at_k_layout",
    "min_sampled_hit_ratio",
    "parts",
    "pooled_estimators",
    "rank_distribution_table",
    "relative_error_comparison",
    "relative_error_layout",
    "relative_errors",
    "sample_sizes",
    "study_config",
    "study_tables",
    "targets",
    "true_winners",
    "variant_comparison",
    "winner_comparison",
    "winners",
    "winners_layout",
]
