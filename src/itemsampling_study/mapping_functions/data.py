"""The ranks and the runs of notebook 03, looked up by their labels, with the Beta@P parameter
of every draw fitted once (:class:`StudyData`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.mappings import fit_beta

from ..engine import LABELS
from ..tables import read_model_ranks
from .settings import FITTED, chunks, model_pairs, parse_mapping

__all__ = ["StudyData"]


class StudyData:
    """The ranks and the runs of the study, looked up by their labels."""

    def __init__(self, config: Mapping, runs: pd.DataFrame, root: str | Path):
        self.config = config
        self.ranks = {(c["dataset"], c["model"], c["protocol"]): read_model_ranks(c["dataset"], c["model"], c["protocol"], root)
                      for c in chunks(config)}
        self.n_items = {}
        for d, m in model_pairs(config):
            frame = self.ranks.get((d, m, "all"))
            frame = read_model_ranks(d, m, "all", root) if frame is None else frame
            self.n_items[d] = max(self.n_items.get(d, 0), int(frame["n_candidates"].max()))
        keys = [*LABELS, "scheme", "sample_size"]
        self.runs = {key: part.sort_values("k") for key, part in runs.groupby(keys, sort=False)}
        self.a_fitted: dict[tuple, float] = {}

    def users(self, dataset: str, model: str, protocol: str) -> tuple[np.ndarray, np.ndarray]:
        frame = self.ranks[dataset, model, protocol]
        return frame["rank"].to_numpy(np.int64), frame["n_candidates"].to_numpy(np.int64)

    def run(self, dataset, model, protocol, scheme, n) -> pd.DataFrame:
        key = (dataset, model, protocol, scheme, n)
        if key not in self.runs:
            names = [*LABELS, "scheme", "sample_size"]
            raise ValueError(f"the runs lack the draw {dict(zip(names, key, strict=True))}; "
                             "recompute the chunks with this configuration")
        return self.runs[key]

    def shr(self, *key) -> np.ndarray:
        run = self.run(*key)
        return run["hits"].to_numpy() / run["users"].to_numpy()

    def beta_p(self, dataset, model, protocol, scheme, n) -> float:
        """Beta@P of the draw (eq. 19), from its sampled ranks (the counts at each k)."""
        key = (dataset, model, protocol, scheme, n)
        if key not in self.a_fitted:
            counts = np.diff(self.run(*key)["hits"].to_numpy(), prepend=0)
            sampled = np.repeat(np.arange(1, n + 1), counts)
            _, N = self.users(dataset, model, protocol)
            self.a_fitted[key] = fit_beta(sampled, int(N.min()), n)
        return self.a_fitted[key]

    def mapping_args(self, label: str, dataset, model, protocol, scheme, n) -> tuple[str, float | None]:
        kind, a = parse_mapping(label)
        return kind, self.beta_p(dataset, model, protocol, scheme, n) if a == FITTED else a

    def main_keys(self):
        """(dataset, model, protocol, scheme, n) of the main setting of every (dataset, model, protocol)."""
        c = self.config
        return [(d, m, p, c["scheme"], c["sample_size"]) for d in c["datasets"] for m in c["models"]
                for p in c["protocols"]]
