"""Notebook 04's configuration expanded: the estimator each name stands for, the parts of the
study, its chunks (one part of one dataset and model) and the targets each part estimates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from itemsampling.estimators import Estimator
from itemsampling.ranks import PROTOCOLS

from ..tables import ranks_path

__all__ = ["CODE_MES", "METRICS", "PRIOR_ESTIMATORS", "chunks", "estimator", "inputs", "parts", "sample_sizes",
           "study_config", "targets"]

#: metrics of the papers' tables
METRICS = ("recall", "ndcg", "ap")
#: estimators whose prior is fitted to the sampled ranks (AAAI'23 §3, App. I)
PRIOR_ESTIMATORS = ("bv_mle", "bv_mes", "mn_mle", "mn_mes")
_NAMED = ("sampled", "cls", "mle", "wmle", "mes", *PRIOR_ESTIMATORS)
#: MES of the AAAI'23 code: n times the squared error of AAAI'21 eq. 25 with η = 0.01, i.e. eq. 26
#: with η/n (the package's ``eta_scale="code"``)
CODE_MES = {"eta": 0.01, "eta_scale": "code"}


def estimator(name: str) -> Estimator:
    """The estimator a configuration names, with the papers' options (the package defaults).

    ``sampled``, ``cls``, ``mle``, ``wmle`` (weight NDCG, C = 10), ``mes`` (η = 0.001 in AAAI'21
    eq. 26), ``bv_mle``, ``bv_mes`` (γ = 0.01), ``mn_mle``, ``mn_mes``; ``mes_code``,
    ``bv_mes_code`` and ``mn_mes_code``: the same with MES as the AAAI'23 code solves it
    (:data:`CODE_MES`: n times the squared error and η = 0.01, i.e. η = 0.01/n in eq. 26); and
    ``bv_<γ>``: BV with a uniform prior and γ (KDD'20 eq. 24-26; the BV of AAAI'23 is
    ``bv_0.01``).
    """
    if name in _NAMED:
        return Estimator(name)
    base = name.removesuffix("_code")
    if base != name and base in ("mes", "bv_mes", "mn_mes"):
        return Estimator(base, CODE_MES, name=name)
    family, _, gamma = name.partition("_")
    try:
        value = float(gamma)
    except ValueError:
        value = -1.0
    if family != "bv" or not value >= 0 or name != f"bv_{value:g}":
        raise ValueError(f"unknown estimator {name!r}: use one of {', '.join(_NAMED)}, mes_code, bv_mes_code, "
                         "mn_mes_code or bv_<γ> (e.g. bv_0.01, written as Python's %g writes γ)")
    return Estimator("bv", {"gamma": value}, name=name)


def _part(role: str, protocol: str, scheme: str, n: int, names: Sequence[str], n_groups: int,
          datasets: Sequence[str]) -> dict:
    for name in names:
        estimator(name)
    return {"role": role, "protocol": protocol, "scheme": scheme, "sample_size": int(n),
            "estimators": list(names), "n_item_groups": int(n_groups), "datasets": list(datasets)}


def parts(config: Mapping) -> dict[str, dict]:
    """Every part of the study (see :mod:`itemsampling_study.estimator_accuracy`), by name.

    Each part has a ``role`` (``paper``, ``pooled``, ``per_user``, ``common``, ``scheme`` or
    ``interval``), a ``protocol``, a ``scheme`` (a key of
    :data:`~itemsampling_study.engine.STUDY_SCHEMES`), one ``sample_size``, its ``estimators`` (names
    of :func:`estimator`), ``n_item_groups`` and the ``datasets`` it runs on (every model of
    ``models``); the ``interval`` part also has the ``level``, ``method`` and cut-offs ``ks`` of
    its intervals. Raises ValueError when a comparison lacks its counterpart among the papers'
    runs.
    """
    protocol, groups, datasets = config["protocol"], config["n_item_groups"], config["datasets"]
    paper = {int(run["sample_size"]): list(run["estimators"]) for run in config["sample_sizes"]}
    out = {f"n{n}": _part("paper", protocol, "binomial", n, names, groups, datasets) for n, names in paper.items()}
    pooled, cand, schemes = config["pooled_prior"], config["candidates"], config["schemes"]
    intervals = config["intervals"]
    for key, section in (("pooled_prior", pooled), ("candidates", cand), ("schemes", schemes),
                         ("intervals", intervals)):
        extra = sorted(set(section["datasets"]) - set(datasets))
        if extra:
            raise ValueError(f"{key}.datasets {extra} are not among the study's datasets {list(datasets)}")
    for n in pooled["sample_sizes"]:
        _counterpart("pooled_prior", paper, n, pooled["estimators"])
        bad = sorted(set(pooled["estimators"]) - set(PRIOR_ESTIMATORS))
        if bad:
            raise ValueError(f"pooled_prior.estimators {bad} have no fitted prior; use {', '.join(PRIOR_ESTIMATORS)}")
        out[f"pooled_n{n}"] = _part("pooled", protocol, "binomial", n, pooled["estimators"], groups,
                                    pooled["datasets"])
    n = int(cand["sample_size"])
    out[f"per_user_n{n}"] = _part("per_user", "unseen", "binomial", n, cand["estimators"], cand["n_item_groups"],
                                  cand["datasets"])
    out[f"common_n{n}"] = _part("common", "unseen", "binomial", n, cand["estimators"], 1, cand["datasets"])
    for n in schemes["sample_sizes"]:
        _counterpart("schemes", paper, n, schemes["estimators"])
        out[f"{schemes['scheme']}_n{n}"] = _part("scheme", protocol, schemes["scheme"], n, schemes["estimators"],
                                                 groups, schemes["datasets"])
    n = int(intervals["sample_size"])
    _counterpart("intervals", paper, n, intervals["estimators"])
    bad = sorted(set(intervals["ks"]) - set(range(1, config["max_k"] + 1)))
    if bad:
        raise ValueError(f"intervals.ks {bad} must lie in 1..max_k = {config['max_k']}")
    out[f"interval_n{n}"] = {**_part("interval", protocol, "binomial", n, intervals["estimators"], groups,
                                     intervals["datasets"]),
                             **{key: intervals[key] for key in ("level", "method", "ks")}}
    return out


def _counterpart(key: str, paper: Mapping[int, list], n: int, names: Sequence[str]) -> None:
    """A comparison at n needs the papers' run at n with the same estimators."""
    if int(n) not in paper:
        raise ValueError(f"{key}: sample size {n} has no run in sample_sizes ({sorted(paper)}) to compare with")
    missing = sorted(set(names) - set(paper[int(n)]))
    if missing:
        raise ValueError(f"{key}: estimators {missing} are not run at n = {n} in sample_sizes")


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``estimator_accuracy`` section."""
    return dict(config["estimator_accuracy"])


def chunks(config: Mapping) -> list[dict]:
    """One chunk per part and (dataset, model): its dataset, model, protocol and part."""
    return [{"dataset": dataset, "model": model, "protocol": spec["protocol"], "part": name}
            for name, spec in parts(config).items() for dataset in spec["datasets"]
            for model in config["models"].values()]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest n drawn from the ranks of each (dataset, protocol) (checked by the workflow)."""
    out: dict[tuple[str, str], int] = {}
    for spec in parts(config).values():
        for dataset in spec["datasets"]:
            key = (dataset, spec["protocol"])
            out[key] = max(out.get(key, 0), spec["sample_size"])
    return out


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from besides the chunks (whose runs carry the exact values):
    the global ranks of every dataset and model under every protocol, for :func:`metric_levels`."""
    return [str(ranks_path(dataset, model, protocol)) for dataset in config["datasets"]
            for model in config["models"].values() for protocol in PROTOCOLS]


def _figure_models(config: Mapping) -> set[tuple[str, str]]:
    """(dataset, model) pairs of the P(R) figures."""
    rd = config["rank_distribution"]
    pairs = {(rd["by_model"]["dataset"], m) for m in rd["by_model"]["models"]}
    return pairs | {(rd["by_sample_size"]["dataset"], rd["by_sample_size"]["model"])}


def targets(config: Mapping, dataset: str, model: str, role: str = "paper") -> list[tuple[str, int]]:
    """Recall, NDCG and AP at K = 1..max_k; in the papers' runs of a model of the P(R) figures,
    Recall also at K = max_k + 1 .. ``rank_distribution.max_rank``; in the ``interval`` part, the
    three metrics at the cut-offs ``intervals.ks``."""
    if role == "interval":
        return [(metric, int(k)) for metric in METRICS for k in config["intervals"]["ks"]]
    top = config["max_k"]
    if role == "paper" and (dataset, model) in _figure_models(config):
        top = max(top, config["rank_distribution"]["max_rank"])
    return [("recall", k) for k in range(1, top + 1)] + [(m, k) for m in METRICS[1:] for k in range(1, config["max_k"] + 1)]
