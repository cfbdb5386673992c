"""The compendium of itemsampling (the distribution itemsampling-study): the studies, computed from
global ranks and written as tidy tables, their verdicts and figures, and the command
``itemsampling study`` that the workflow runs. It builds on the estimators (:mod:`itemsampling`),
which never import it.

=============================== ==============================================================
:mod:`.command`                  ``itemsampling study`` (entry point of the group ``itemsampling.commands``)
:mod:`.contract`                 what a study module offers (``itemsampling study`` checks it)
:mod:`.engine`                   sample, estimate and tabulate many repeats at once
:mod:`.tables`                   the one reader/writer of ranks and result tables
:mod:`.sampled_metrics`          Krichene & Rendle, KDD 2020 (notebook 01)
:mod:`.readings`                 K&R's recommenders Y, Z under each reading of eqs. 27-30 and tie rule
:mod:`.run_summaries`            K&R Tables 3-4 from repeated runs (means, orders, pairs ordered right)
:mod:`.sampling_theorem`         Li, Jin, Gao & Liu, KDD 2020, §2 (notebook 02)
:mod:`.mapping_functions`        Li, Jin, Gao & Liu, KDD 2020 (notebook 03)
:mod:`.estimator_accuracy`       Jin et al., AAAI 2021; Li et al., AAAI 2023 (notebook 04)
:mod:`.protocols_in_use`         sampled evaluation as practised: tiny n, replacement, designs (notebook 05)
:mod:`.model_pairs`              paired intervals on model pairs, A-vs-A false alarms (notebook 05)
:mod:`.adaptive_sampling`        Li et al., AAAI 2023 §4: blind spot and adaptive sampling (notebook 06)
:mod:`.paper`                    the papers' printed tables, which of our datasets stand in for theirs,
                                 and joins with them that lose no row
:mod:`.verdicts`                 one verdict per claim of the papers, from the tables (verdicts.csv)
:mod:`.experiments`              grids of experiments: errors, order agreement, winners
:mod:`.toy`                      the toy example of Krichene & Rendle (notebook 01)
:mod:`.rank_tails`               where the held-out items sink (notebook 00)
:mod:`.plotting`                 the notebooks' figure style and writer
=============================== ==============================================================
"""
