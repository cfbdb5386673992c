"""What a study module offers to ``itemsampling study`` and the workflow.

A study is a module (or package) of :mod:`itemsampling_study` that a notebook of
``workflow/notebooks.yaml`` or a rule of its own names. Every study is a :class:`Study`: it picks
its parameters out of the configuration, lists its chunks and the other files its tables are
computed from, and computes its tables. Beyond that a study may be

* a :class:`ChunkedStudy`: its chunks are computed by ``chunk_table`` (a study whose ``chunks``
  are none need not have it);
* a :class:`SizedStudy`: it declares the sample set sizes it draws from each ranks file, which
  the workflow checks against the smallest number of candidates before planning a run;
* a :class:`CategoricalRunsStudy`: its tables step reads the runs with text columns as
  categoricals when ``CATEGORICAL_RUNS`` is true (a study with millions of runs).

:func:`check_study` fails with the names of the members a module lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

import pandas as pd

from itemsampling._validation import check_sample_size

__all__ = ["CategoricalRunsStudy", "ChunkedStudy", "SizedStudy", "Study", "check_sample_sizes", "check_study",
           "members"]


@runtime_checkable
class Study(Protocol):
    """The members every study has."""

    def study_config(self, config: Mapping) -> dict:
        """The study's parameters, picked out of the workflow's configuration."""

    def chunks(self, config: Mapping) -> list[dict]:
        """The labels of every chunk (``dataset``, ``model``, ``protocol``, and ``part`` where the
        study runs several parts on one ranks file); empty for a study without chunks."""

    def inputs(self, config: Mapping) -> list[str]:
        """The files the tables are computed from besides the chunks, relative to the repository root."""

    def study_tables(self, config: Mapping, seed: int, runs: pd.DataFrame | None,
                     root: str | Path = ".") -> dict[str, pd.DataFrame]:
        """Every table of the study by name, from the runs of all chunks (None without chunks) and
        the inputs under ``root``."""


@runtime_checkable
class ChunkedStudy(Study, Protocol):
    """A study with chunks: it computes each of them."""

    def chunk_table(self, config: Mapping, seed: int, labels: Mapping[str, str],
                    ranks: pd.DataFrame) -> pd.DataFrame:
        """The runs of the chunk ``labels``, from the global ranks of its (dataset, model, protocol)."""


@runtime_checkable
class SizedStudy(Study, Protocol):
    """A study that declares the sample set sizes it draws."""

    def sample_sizes(self, config: Mapping) -> dict[tuple[str, str], int]:
        """The largest sample set size drawn from the ranks of each (dataset, protocol)."""


def check_sample_sizes(name: str, study, config: Mapping, smallest_candidates: Callable[[str, str], int | None]) -> None:
    """Every sample size a :class:`SizedStudy` draws fits the candidates of its ranks (1 <= n <= min
    N_u); ``smallest_candidates(dataset, protocol)`` gives min N_u of the ranks there are (None
    before any); a study that declares no sizes passes. The ValueError names ``name``, the
    dataset, the protocol and min N_u."""
    if not isinstance(study, SizedStudy):
        return
    for (dataset, protocol), n in study.sample_sizes(config).items():
        smallest = smallest_candidates(dataset, protocol)
        if smallest is None:
            continue
        try:
            check_sample_size(n, smallest)
        except ValueError as exc:
            raise ValueError(f"config {name} ({dataset}, {protocol}: smallest N_u = {smallest}): {exc}") from None


@runtime_checkable
class CategoricalRunsStudy(Study, Protocol):
    """A study whose tables step may read the runs with text columns as categoricals."""

    #: read the runs with text columns as categoricals (every table is the same either way)
    CATEGORICAL_RUNS: bool


def _declared(protocol: type) -> dict[str, bool]:
    """Every member ``protocol`` requires (its own and those of the protocols of this module it
    extends), and whether it is a function."""
    out: dict[str, bool] = {}
    for cls in reversed(protocol.__mro__):
        if cls.__module__ == __name__:
            out.update(dict.fromkeys(vars(cls).get("__annotations__", {}), False))
            out.update({name: True for name, value in vars(cls).items() if callable(value) and not name.startswith("_")})
    return out


def members(protocol: type) -> tuple[str, ...]:
    """The names of the members ``protocol`` requires, sorted."""
    return tuple(sorted(_declared(protocol)))


def check_study(module: ModuleType, protocol: type = Study) -> ModuleType:
    """``module``, checked to offer every member of ``protocol`` (a function where the protocol
    declares one).

    Raises
    ------
    ValueError
        ``module`` lacks some member; the message names them.
    """
    lacking = [name for name, function in sorted(_declared(protocol).items())
               if not hasattr(module, name) or (function and not callable(getattr(module, name)))]
    if lacking:
        raise ValueError(f"{module.__name__} is not a {protocol.__name__} (itemsampling_study.contract): "
                         f"it lacks {', '.join(lacking)}")
    return module
