"""The studies of the compendium, computed from global ranks and written as tidy tables.

=============================== ==============================================================
:mod:`.engine`                   sample, estimate and tabulate many repeats at once
:mod:`.tables`                   the one reader/writer of ranks and result tables
:mod:`.sampled_metrics`          Krichene & Rendle, KDD 2020 (notebook 01)
:mod:`.adaptive_sampling`        Li et al., AAAI 2023 §4: blind spot and adaptive sampling (notebook 05)
=============================== ==============================================================
"""
