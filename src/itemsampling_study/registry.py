"""The studies by name: :func:`load_study` finds the module ``itemsampling_study.<name>`` of a
study (for the workflow, the ``itemsampling study`` command, the scripts and the tests), and
:func:`notebook_parameters` gives the parameters its notebook runs with."""

from __future__ import annotations

import importlib

from .contract import check_study
from .records import canonical_config

__all__ = ["load_study", "notebook_parameters"]


def load_study(name: str):
    """The study module ``itemsampling_study.<name>``, checked to keep the contract of
    :class:`~itemsampling_study.contract.Study` (a ValueError names what it lacks)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a study is named by a module of itemsampling_study, got {name!r}")
    try:
        module = importlib.import_module(f"itemsampling_study.{name}")
    except ModuleNotFoundError:
        raise ValueError(f"unknown study {name!r}: there is no module itemsampling_study.{name}") from None
    return check_study(module)


def notebook_parameters(study: str, config: dict, root: str) -> dict:
    """Papermill parameters of the notebook of ``study``: its study's parameters, the seed and the
    folder that holds results/ and figures/, every mapping's keys sorted as in the steps that made
    the tables (and in the notebook's defaults, :mod:`~itemsampling_study.notebook_defaults`)."""
    return canonical_config({**load_study(study).study_config(config), "seed": config["seed"], "root": root})
