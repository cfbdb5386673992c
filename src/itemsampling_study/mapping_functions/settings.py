"""Notebook 03's settings: the mappings a label names, the schemes, sample sizes and cut-offs of
each table, and the chunks of the workflow (one per ranks file) with the draws each holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..tables import ranks_path

__all__ = ["FITTED", "chunk_draws", "chunks", "focus_ks", "focus_schemes", "inputs", "model_pairs",
           "parse_mapping", "sample_sizes", "study_config"]

#: the fitted Beta@P parameter, in mapping labels
FITTED = "P"


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``mapping_functions`` section."""
    return dict(config["mapping_functions"])


def parse_mapping(label: str) -> tuple[str, float | str | None]:
    """``linear``, ``bound``, ``beta@<a>`` or ``beta@P`` as (kind, a); a = ``"P"`` for Beta@P."""
    if label in ("linear", "bound"):
        return label, None
    if isinstance(label, str) and label.startswith("beta@"):
        value = label.removeprefix("beta@")
        if value == FITTED:
            return "beta", FITTED
        try:
            a = float(value)
        except ValueError:
            a = float("nan")
        if np.isfinite(a) and a > 0:
            return "beta", a
    raise ValueError(f"unknown mapping {label!r}; use linear, bound, beta@<a> with a > 0, or beta@P")


def focus_schemes(protocol: str) -> tuple[str, str]:
    """Schemes of Tables 5–6 under a protocol: with replacement, and without replacement among
    the protocol's candidates (``hypergeometric`` under ``all``, ``actual`` under ``unseen``)."""
    return ("binomial", "hypergeometric") if protocol == "all" else ("binomial", "actual")


def focus_ks(ks: Sequence[int], sample_size: int, base_size: int) -> list[int]:
    """The cut-offs of Tables 5–6 for a sample of n items: ``ks`` (chosen for ``base_size``)
    scaled by n / base_size and rounded half up, so they cover the same fraction of the sample
    (the paper: k = 1 at n = 100 becomes k = 10 at n = 1000)."""
    scaled = np.floor(np.asarray(ks) * sample_size / base_size + 0.5).astype(np.int64)
    return sorted(set(np.clip(scaled, 1, sample_size).tolist()))


def model_pairs(config: Mapping) -> list[tuple[str, str]]:
    """Every (dataset, model) of the study: ``datasets`` x ``models``, then the focus and the
    growth model, each once."""
    pairs = [(d, m) for d in config["datasets"] for m in config["models"]]
    for extra in (config["focus"], config["growth"]):
        pairs.append((extra["dataset"], extra["model"]))
    return list(dict.fromkeys(pairs))


def chunks(config: Mapping) -> list[dict]:
    """One chunk per ranks file: every (dataset, model) of the study, under every protocol."""
    return [{"dataset": d, "model": m, "protocol": p} for d, m in model_pairs(config) for p in config["protocols"]]


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from (besides the chunks): the ranks of every chunk, and
    the ``all`` ranks of every model (whose candidates are all N items)."""
    paths = [ranks_path(c["dataset"], c["model"], c["protocol"]) for c in chunks(config)]
    paths += [ranks_path(d, m, "all") for d, m in model_pairs(config)]
    return list(dict.fromkeys(str(p) for p in paths))


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set size drawn from the ranks of each (dataset, protocol) (the
    workflow checks it against the smallest N_u before planning a run)."""
    out: dict[tuple[str, str], int] = {}
    for chunk in chunks(config):
        key = (chunk["dataset"], chunk["protocol"])
        out[key] = max([out.get(key, 0), *(n for _, n in chunk_draws(config, chunk))])
    return out


def chunk_draws(config: Mapping, labels: Mapping[str, str]) -> list[tuple[str, int]]:
    """The (scheme, n) settings drawn for one ranks file: (``scheme``, ``sample_size``) for all;
    :func:`focus_schemes` x ``focus.sample_sizes`` for the focus model (Tables 5–6, Fig. 7);
    ``scheme`` x ``growth.sample_sizes`` for the growth model (Fig. 8)."""
    draws = {(config["scheme"], config["sample_size"])}
    key = (labels["dataset"], labels["model"])
    focus, growth = config["focus"], config["growth"]
    if key == (focus["dataset"], focus["model"]):
        draws |= {(s, n) for s in focus_schemes(labels["protocol"]) for n in focus["sample_sizes"]}
    if key == (growth["dataset"], growth["model"]):
        draws |= {(config["scheme"], n) for n in growth["sample_sizes"]}
    return sorted(draws)
