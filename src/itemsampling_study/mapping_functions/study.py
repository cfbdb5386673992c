"""Every table of notebook 03, from the chunks and the ranks (:func:`study_tables`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .alignment import (
    curve_tables,
    error_tables,
    growth_curves,
    hit_ratio_curves,
    sampling_effect,
    winner_tables,
)
from .beta import beta_tables, parameter_tables
from .data import StudyData
from .settings import parse_mapping

__all__ = ["study_tables"]


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 03 (listed in :mod:`itemsampling_study.mapping_functions`) from
    the chunks and the ranks.

    Parameters
    ----------
    config : mapping
        The ``mapping_functions`` section of the configuration.
    seed : int
        Study seed (the chunks hold the main draws; the spread of Beta@P draws more).
    runs : pandas.DataFrame
        The chunks of :func:`chunk_table`, concatenated (any order).
    root : str or Path
        Repository root (where ``results/ranks`` is).
    """
    for label in (*config["mappings"], *config["curve_mappings"], *config["winner_mappings"],
                  config["growth"]["mapping"]):
        parse_mapping(label)
    study = StudyData(config, runs, root)
    return {
        **beta_tables(study, seed),
        **parameter_tables(config, study.n_items[config["focus"]["dataset"]]),
        "hit_ratio_curves": hit_ratio_curves(study),
        "fig6_sampling_effect": sampling_effect(study),
        **winner_tables(study),
        **curve_tables(study),
        **error_tables(study),
        "fig8_sample_sizes": growth_curves(study),
    }
