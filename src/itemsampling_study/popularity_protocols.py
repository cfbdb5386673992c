"""Notebook 05, popularity-sampled negatives: the uncorrected popularity-sampled metric against its
Hansen–Hurwitz correction, the uniform estimators fed popularity-sampled ranks, a stratified design,
and the popularity and proxy-guided designs at notebook 05's equal scoring budgets; rule
``popularity_protocols``, from the committed popularity profiles
(``results/ranks/<dataset>/<model>/popularity_profile.parquet``,
:mod:`itemsampling.popularity_profiles`).

For every (dataset, model) of ``models`` and every repeat, each user draws m = ``negatives``
negatives from her unseen items (protocol of the profiles):

* ``popularity_<α>`` for α in ``alphas``: with replacement, p_j ∝ c_j^α (BERT4Rec and RecBole's
  ``popN``: α = 1; :func:`~itemsampling.popularity_profiles.popularity_sampled_ranks`). Estimators:
  ``sampled``, the metric at the sampled rank among the m + 1 items (what is published);
  ``hansen_hurwitz``, the plug-in :func:`~itemsampling.nonuniform.corrected_estimate` at the
  Hansen–Hurwitz rank estimates, with its analytic interval at ``level``; ``mn_mes_as_uniform``,
  MN_MES on the same sampled ranks as if they had been drawn uniformly (binomial kernel): what a
  practitioner gets who feeds popularity-sampled ranks to the uniform estimators (for α in
  ``as_uniform_alphas`` only: MN_MES is the costly part of the study);
* ``stratified``: the classes cut into ``strata`` strata of about equal numbers of items in
  popularity order, m / ``strata`` draws without replacement in each
  (:func:`~itemsampling.popularity_profiles.stratified_sampled_ranks`); ``sampled`` and
  ``horvitz_thompson`` (plug-in at the HT rank estimates, analytic interval);
* ``uniform``: m uniform draws with replacement (sample set n = m + 1, the draws of
  :func:`~.engine.draw_sampled_ranks`); ``sampled`` and ``mn_mes`` (the reference).

With α > 0 an item nobody trained on (count 0) is never drawn: when such items score above the
target, the Hansen–Hurwitz estimate misses them (:func:`popularity_sampled_ranks`), a bias that
is part of what this study measures.

Designs at an equal budget (notebook 05's ``designs`` table gives, per (dataset, model, n_max),
the b items per user of its uniform designs): ``popularity_corrected``, b − 1 popularity^1 draws
with the Hansen–Hurwitz correction; ``proxy_importance``, b − 1 draws from the defensive mixture
p_j = λ/(N_u − 1) + (1 − λ) c_j^α / Z_u (:func:`~itemsampling.popularity_profiles.mixture_sampled_ranks`,
λ = ``proxy.uniform_weight``, α = ``proxy.alpha``: popularity is the cheap proxy score), with the
Hansen–Hurwitz correction.

Tables (``results/tables/05_protocols_in_use/``):

* ``popularity_accuracy``: per (dataset, model, sampler, estimator, metric, K): exact value, mean,
  bias, sd over the repeats, RMSE, relative bias and RMSE, interval coverage;
* ``popularity_winners``: per (sampler, estimator, metric, K): the model pairs x repeats whose
  estimate orders the pair as the exact metric does (every dataset's pairs);
* ``popularity_designs``: the columns of notebook 05's ``designs`` for the two designs above.

Configuration: subsection ``popularity`` of section ``protocols_in_use``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling.estimators import Estimator, estimate_draws
from itemsampling.kernels import KernelCache
from itemsampling.nonuniform import corrected_estimate
from itemsampling.popularity_profiles import (
    PROFILE_FILE,
    mixture_sampled_ranks,
    popularity_sampled_ranks,
    read_profile,
    stratified_sampled_ranks,
)

from . import protocols_in_use
from .engine import derive_seed, draw_sampled_ranks, exact_values
from .experiments import estimate_errors, pooled_order_agreement
from .tables import table_path

__all__ = ["accuracy", "chunks", "class_strata", "design_errors", "findings", "inputs", "model_runs", "profile_path",
           "sample_sizes", "study_config", "study_tables", "winners"]

NOTEBOOK = "05_protocols_in_use"
#: the columns of a (dataset, model)'s runs
RUN_COLUMNS = ("dataset", "model", "part", "sampler", "estimator", "n_max", "items_per_user", "repeat", "metric",
               "k", "estimate", "exact", "lower", "upper")


def study_config(config: Mapping) -> dict:
    """Subsection ``popularity`` of ``protocols_in_use`` with the section's datasets, protocol,
    metrics, cut-offs and item groups."""
    section = config["protocols_in_use"]
    return {**{key: section[key] for key in ("datasets", "protocol", "n_item_groups", "metrics", "ks")},
            **section["popularity"]}


def chunks(config: Mapping) -> list[dict]:
    """None: the study runs in one step (rule ``popularity_protocols``)."""
    return []


def profile_path(dataset: str, model: str, root: str | Path = ".") -> Path:
    """``results/ranks/<dataset>/<model>/popularity_profile.parquet`` under ``root``."""
    return Path(root) / "results" / "ranks" / dataset / model / PROFILE_FILE


def inputs(config: Mapping) -> list[str]:
    """The popularity profiles of every (dataset, model) and notebook 05's ``designs`` table (the
    budgets)."""
    return [*(str(profile_path(d, m)) for d in config["datasets"] for m in config["models"]),
            str(table_path(NOTEBOOK, "designs"))]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The uniform reference's sample set size (m + 1) on each dataset's ranks."""
    return {(d, config["protocol"]): int(config["negatives"]) + 1 for d in config["datasets"]}


def class_strata(class_sizes, n_strata: int) -> np.ndarray:
    """Stratum of each popularity class: the classes in popularity order cut into ``n_strata``
    runs of about equal numbers of items (a class goes to the stratum of its middle item), the
    strata relabelled 0..H'-1 (H' <= ``n_strata``: a class larger than a stratum leaves some empty)."""
    sizes = np.asarray(class_sizes, dtype=np.float64)
    if sizes.ndim != 1 or sizes.sum() <= 0 or n_strata < 1:
        raise ValueError("class_sizes must be a non-empty 1-D array with items, n_strata >= 1")
    middle = (np.cumsum(sizes) - sizes / 2) / sizes.sum()
    raw = np.minimum((middle * n_strata).astype(np.int64), n_strata - 1)
    return np.unique(raw, return_inverse=True)[1].reshape(-1)


def _allocation(n_draws: int, n_strata: int) -> np.ndarray:
    """``n_draws`` split as evenly as possible over the strata (the first get the remainder)."""
    return np.full(n_strata, n_draws // n_strata) + (np.arange(n_strata) < n_draws % n_strata)


def _plug_in(rank_estimates: np.ndarray, n_items: int, targets, level: float | None) -> pd.DataFrame:
    metrics = list(dict.fromkeys(m for m, _ in targets))
    ks = list(dict.fromkeys(k for _, k in targets))
    table = corrected_estimate(rank_estimates, n_items, metrics, ks, interval=level).set_index(["metric", "k"])
    return table.loc[pd.MultiIndex.from_tuples(targets, names=["metric", "k"])].reset_index()


def _rows(table: pd.DataFrame, exact: np.ndarray, **labels) -> pd.DataFrame:
    out = table.assign(exact=exact, **labels)
    for name in ("lower", "upper"):
        if name not in out:
            out[name] = np.nan
    return out


def model_runs(profile, config: Mapping, seed: int, labels: Mapping[str, str], budgets: Mapping[int, int],
               cache: KernelCache) -> pd.DataFrame:
    """Every run of one (dataset, model) from its profile (module docstring): part ``protocols``
    (the samplers at m = ``negatives``) and part ``designs`` (``budgets``: n_max -> b)."""
    targets = [(m, int(k)) for m in config["metrics"] for k in config["ks"]]
    R, N = profile.ranks, profile.n_candidates
    exact = exact_values(R, N, targets)
    m, level, repeats = int(config["negatives"]), config["level"], int(config["repeats"])
    top, key = int(N.max()), [labels["dataset"], labels["model"], labels["protocol"]]
    frames = []

    def add(table, **columns):
        frames.append(_rows(table, exact, **labels, **columns))

    for alpha in config["alphas"]:
        sampler = f"popularity_{alpha:g}"
        draws = []
        for rep in range(repeats):
            rng = np.random.default_rng(derive_seed(seed, *key, sampler, m, rep))
            r, hh = popularity_sampled_ranks(profile, alpha, m, rng=rng)
            draws.append(r[0])
            common = dict(part="protocols", sampler=sampler, repeat=rep)
            add(_plug_in(r[0], m + 1, targets, level), estimator="sampled", **common)
            add(_plug_in(hh[0], top, targets, level), estimator="hansen_hurwitz", **common)
        if alpha not in config["as_uniform_alphas"]:
            continue
        tables = estimate_draws(draws, N, m + 1, [Estimator("mn_mes")], targets=targets, scheme="binomial",
                                n_groups=config["n_item_groups"], cache=cache, warn=False, interval=level)
        for rep, table in enumerate(tables):
            add(table, part="protocols", sampler=sampler, repeat=rep, estimator="mn_mes_as_uniform")
    strata = class_strata(profile.pool.sum(axis=0), int(config["strata"]))
    allocation = _allocation(m, int(strata.max()) + 1)
    for rep in range(repeats):
        rng = np.random.default_rng(derive_seed(seed, *key, "stratified", m, rep))
        r, ht = stratified_sampled_ranks(profile, strata, allocation, rng=rng)
        common = dict(part="protocols", sampler="stratified", repeat=rep)
        add(_plug_in(r[0], m + 1, targets, level), estimator="sampled", **common)
        add(_plug_in(ht[0], top, targets, level), estimator="horvitz_thompson", **common)
    uniform = [draw_sampled_ranks(R, N, m + 1, seed=seed, labels=labels, scheme="binomial", repeat=rep)
               for rep in range(repeats)]
    tables = estimate_draws(uniform, N, m + 1, [Estimator("mn_mes")], targets=targets, scheme="binomial",
                            n_groups=config["n_item_groups"], cache=cache, warn=False, interval=level)
    for rep, (r, table) in enumerate(zip(uniform, tables, strict=True)):
        add(_plug_in(r, m + 1, targets, level), part="protocols", sampler="uniform", repeat=rep, estimator="sampled")
        add(table, part="protocols", sampler="uniform", repeat=rep, estimator="mn_mes")
    proxy = config["proxy"]
    for n_max, budget in sorted(budgets.items()):
        for design, weight, alpha in (("popularity_corrected", 0.0, 1.0),
                                      ("proxy_importance", proxy["uniform_weight"], proxy["alpha"])):
            for rep in range(int(config["design_repeats"])):
                rng = np.random.default_rng(derive_seed(seed, *key, design, budget, rep))
                _, hh = mixture_sampled_ranks(profile, alpha, weight, budget - 1, rng=rng)
                add(_plug_in(hh[0], top, targets, None), part="designs", sampler=design, estimator="hansen_hurwitz",
                    repeat=rep, n_max=int(n_max), items_per_user=float(budget))
    out = pd.concat(frames, ignore_index=True)
    for name in ("n_max", "items_per_user"):
        if name not in out:
            out[name] = np.nan
    out["k"] = out["k"].astype("Int64")
    out["n_max"] = out["n_max"].astype("Int64")
    return out[list(RUN_COLUMNS)]


def _budgets(designs: pd.DataFrame, dataset: str, model: str) -> dict[int, int]:
    """n_max -> b, the items per user of notebook 05's uniform designs on (dataset, model)."""
    sel = designs[(designs["dataset"] == dataset) & (designs["model"] == model)
                  & (designs["design"] == "uniform_mn_mes")]
    if sel.empty:
        raise ValueError(f"notebook 05's designs table has no uniform_mn_mes rows of {dataset} {model}: "
                         "run its tables (rule tables_05_protocols_in_use) first")
    return {int(n): round(float(v)) for n, v in sel.groupby("n_max")["items_per_user"].first().items()}


def accuracy(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, sampler, estimator, metric, K) of part ``protocols``: exact, mean,
    bias, sd (ddof = 1), RMSE, relative bias and RMSE (NaN where the exact value is 0) and the
    coverage of the intervals."""
    keys = ["dataset", "model", "sampler", "estimator", "metric", "k"]
    return estimate_errors(runs[runs["part"] == "protocols"], keys)


def winners(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (sampler, estimator, metric, K) of part ``protocols``: the model pairs (of every
    dataset) x repeats whose estimate orders the pair as the exact metric does, and the share."""
    frame = runs[runs["part"] == "protocols"]
    return pooled_order_agreement(frame, ["dataset", "sampler", "estimator", "metric", "k"])


def design_errors(runs: pd.DataFrame) -> pd.DataFrame:
    """Part ``designs`` in the columns of notebook 05's ``designs`` table
    (:func:`.protocols_in_use.design_errors`)."""
    return protocols_in_use.design_errors(runs.rename(columns={"sampler": "design",
                                                                "items_per_user": "mean_sample_size"}))


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The tables ``popularity_accuracy``, ``popularity_winners`` and ``popularity_designs``
    (``runs`` is unused: no chunks)."""
    designs = pd.read_csv(table_path(NOTEBOOK, "designs", root))
    frames = []
    for dataset in config["datasets"]:
        cache = KernelCache()
        for model in config["models"]:
            profile = read_profile(profile_path(dataset, model, root))
            if profile.protocol != config["protocol"]:
                raise ValueError(f"{dataset} {model}: the profile is of protocol {profile.protocol!r}, "
                                 f"the study's is {config['protocol']!r}")
            labels = {"dataset": dataset, "model": model, "protocol": config["protocol"]}
            frames.append(model_runs(profile, config, seed, labels, _budgets(designs, dataset, model), cache))
    runs = pd.concat(frames, ignore_index=True)
    return {"popularity_accuracy": accuracy(runs), "popularity_winners": winners(runs),
            "popularity_designs": design_errors(runs)}


# ----------------------------------------------------------------------------- findings


def _share(value: float) -> str:
    return f"{100 * value:.0f}%"


def findings(tables: Mapping[str, pd.DataFrame], ks) -> pd.DataFrame:
    """The findings of popularity-sampled negatives: sentences whose numbers are read from
    ``popularity_accuracy``, ``popularity_winners``, ``popularity_designs`` and notebook 05's
    ``designs`` (medians over (dataset, model); the share of pairs over every dataset's pairs)."""
    acc, win = tables["popularity_accuracy"], tables["popularity_winners"]
    k_small, k_mid = min(ks), (10 if 10 in ks else sorted(ks)[len(ks) // 2])
    top = sorted(s for s in acc["sampler"].unique() if s.startswith("popularity_"))[-1]

    def median(sampler, estimator, k, column, metric="recall"):
        sel = acc[(acc["sampler"] == sampler) & (acc["estimator"] == estimator) & (acc["k"] == k)
                  & (acc["metric"] == metric)]
        return float(sel[column].median()) if column != "coverage" else float(sel[column].mean())

    def bias(sampler, estimator, k, metric="recall"):
        return f"{median(sampler, estimator, k, 'relative_bias', metric):+.0%}"

    rows = []
    for metric, name in (("recall", "Recall"), ("ndcg", "NDCG")):
        rows.append((f"{top} negatives, {name}@{k_mid}, median relative bias over datasets and models: uncorrected "
                     f"{bias(top, 'sampled', k_mid, metric)}, Hansen-Hurwitz plug-in {bias(top, 'hansen_hurwitz', k_mid, metric)} "
                     f"(its 95% intervals cover the exact value in {_share(median(top, 'hansen_hurwitz', k_mid, 'coverage', metric))} "
                     f"of the runs), MN_MES fed the same ranks as if uniform {bias(top, 'mn_mes_as_uniform', k_mid, metric)}; "
                     f"uniform negatives with MN_MES {bias('uniform', 'mn_mes', k_mid, metric)}.", "popularity_accuracy"))
    rows.append((f"At K = {k_small} the plug-in cannot correct: each draw above the target adds 1/(m p_j) >= 1 to "
                 f"the Hansen-Hurwitz rank (no item holds 1/m of the sampling mass), so its Recall@{k_small} is the "
                 f"uncorrected one "
                 f"({bias(top, 'hansen_hurwitz', k_small)} vs {bias(top, 'sampled', k_small)}); the stratified "
                 f"design with Horvitz-Thompson: {bias('stratified', 'horvitz_thompson', k_mid)} at K = {k_mid}.",
                 "popularity_accuracy"))
    sel = win[(win["k"] == k_mid) & (win["metric"] == "recall")].set_index(["sampler", "estimator"])["fraction"]
    rows.append((f"Recall@{k_mid} orders model pairs as the exact metric does in {_share(sel[(top, 'sampled')])} of the "
                 f"runs with {top} negatives uncorrected, {_share(sel[(top, 'hansen_hurwitz')])} corrected by "
                 f"Hansen-Hurwitz, {_share(sel[('uniform', 'mn_mes')])} with uniform negatives and MN_MES.",
                 "popularity_winners"))
    designs = pd.concat([tables["designs"], tables["popularity_designs"]], ignore_index=True)
    sel = designs[(designs["metric"] == "ndcg") & (designs["k"] == k_mid)]
    sel = sel[sel["model"].isin(tables["popularity_designs"]["model"].unique())]
    mean = sel.groupby("design", sort=False)["relative_error"].mean()
    rows.append((f"At an equal budget, NDCG@{k_mid}'s relative error over the models with a profile: "
                 + ", ".join(f"{d} {_share(v)}" for d, v in mean.items()) + ".", "designs, popularity_designs"))
    return pd.DataFrame(rows, columns=["finding", "table"])
