"""Notebook 03: mapping functions SHR@k ≈ HR@f(k) (Li, Jin, Gao & Liu, KDD 2020).

Every table of the notebook, computed from the global ranks of every (dataset, model, protocol)
of the configuration and from one draw of sampled ranks per sampling setting:

* chunks (one per ranks file): the sampled hit ratio SHR@k of one draw and its exact
  expectation E[SHR@k] for k = 1..n, for each (scheme, n) the file needs (:func:`chunk_draws`);
* ``beta_parameters`` (Table 2, eq. 19 on the main draw, with its mean, standard deviation and
  range over ``beta_draws`` draws: the paper prints one value from one draw), ``beta_global_fit`` (the same Beta(a, 1) model fitted
  to the global ranks by maximum likelihood) and ``fig3_rank_cdf`` (Fig. 3: the empirical
  HR@K next to both fitted models);
* ``fig4_relative_difference`` and ``fig5_difference`` (Figs. 4–5: f(k; a) against f(k; 1)
  and against f(k; a_ref));
* ``hit_ratio_curves`` (HR@K of the models the figures draw), ``fig6_sampling_effect``
  (each model's SHR@k placed at its own Beta@P location f(k; a_P));
* ``table3_hit_ratios`` and ``table3_orders`` (Table 3: do SHR@k and HR@f(k) name the same
  winner, and order the models alike?);
* ``fig7_curves`` (Fig. 7: both views of the alignment) and ``varying_k`` (Tables 5–6);
* ``mapping_errors`` (Table 7, against the drawn SHR@k as in the paper) and
  ``mapping_errors_expected`` (the same against E[SHR@k], free of sampling noise);
* ``fig8_sample_sizes`` and ``fig8_errors`` (Fig. 8: the alignment as n grows).

**Settings.** Unless a table says otherwise, the sample set has ``sample_size`` items drawn by
``scheme`` (the paper's default is with replacement, ``binomial``) under every protocol of
``protocols``. Tables 5–6 add sampling without replacement: ``hypergeometric`` among all
items under ``all`` and ``actual`` (the study engine's scheme: without replacement among the
user's unseen items) under ``unseen`` — the paper's three columns "binom", "hyper" and
"actual" (:func:`focus_schemes`). Under ``unseen`` each user has N_u candidates and a global
cut-off K of N items is read as the same fraction of the user's candidates
(:mod:`itemsampling.mappings`); N is the number of items of the dataset (the candidates under
``all``).

**Seeds.** The draw of a (dataset, model, protocol, scheme, n) uses the generator of the study
engine's repeat 0 (:func:`~itemsampling_study.engine.derive_seed`), so it is the same draw in
every notebook that uses the engine, and adding a setting changes no other draw.

Configuration: the ``mapping_functions`` section of ``config/config.yaml`` (see the schema).

=============================== ==============================================================
:mod:`.settings`                 the settings of each table, the chunks and their draws
:mod:`.runs`                     one chunk: SHR@k of one draw and E[SHR@k] (:func:`chunk_table`)
:mod:`.data`                     the ranks and runs, looked up by their labels
:mod:`.beta`                     the Beta(a, 1) model: Table 2, Figs. 3–5
:mod:`.alignment`                SHR@k against HR@f(k): Figs. 6–8, Tables 3, 5–7
:mod:`.study`                    every table (:func:`study_tables`)
:mod:`.summaries`                the tables read for the notebook and its verdicts
=============================== ==============================================================
"""

from __future__ import annotations

from .alignment import (
    ERROR_COLUMNS,
    aligned_curves,
    curve_tables,
    error_rows,
    error_tables,
    growth_curves,
    hit_ratio_curves,
    sampling_effect,
    winner_orders,
    winner_tables,
)
from .beta import beta_draws, beta_tables, parameter_tables
from .data import StudyData
from .runs import chunk_table
from .settings import (
    FITTED,
    chunk_draws,
    chunks,
    focus_ks,
    focus_schemes,
    inputs,
    model_pairs,
    parse_mapping,
    sample_sizes,
    study_config,
)
from .study import study_tables
from .summaries import best_mappings, error_summary, hit_ratio_long, varying_k_summary, with_paper

__all__ = [
    "ERROR_COLUMNS",
    "FITTED",
    "StudyData",
    "aligned_curves",
    "best_mappings",
    "beta_draws",
    "beta_tables",
    "chunk_draws",
    "chunk_table",
    "chunks",
    "curve_tables",
    "error_rows",
    "error_summary",
    "error_tables",
    "focus_ks",
    "focus_schemes",
    "growth_curves",
    "hit_ratio_curves",
    "hit_ratio_long",
    "inputs",
    "model_pairs",
    "parameter_tables",
    "parse_mapping",
    "sample_sizes",
    "sampling_effect",
    "study_config",
    "study_tables",
    "varying_k_summary",
    "winner_orders",
    "winner_tables",
    "with_paper",
]
