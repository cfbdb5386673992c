"""The studies of the compendium, computed from global ranks and written as tidy tables.

=============================== ==============================================================
:mod:`.engine`                   sample, estimate and tabulate many repeats at once
:mod:`.tables`                   the one reader/writer of ranks and result tables
:mod:`.sampled_metrics`          Krichene & Rendle, KDD 2020 (notebook 01)
:mod:`.sampling_theorem`         Li, Jin, Gao & Liu, KDD 2020, §2 (notebook 02)
:mod:`.mapping_functions`        Li, Jin, Gao & Liu, KDD 2020 (notebook 03)
:mod:`.adaptive_sampling`        Li et al., AAAI 2023 §4: blind spot and adaptive sampling (notebook 05)
=============================== ==============================================================
"""
