"""How notebook 01 depends on the readings of K&R eqs. 27–30 and on the ranking of ties.

Krichene & Rendle (KDD 2020, §9) define recommenders Y and Z by eqs. 27–30, which leave
choices open (:mod:`itemsampling.models.itemknn`): whether s_ii is kept, whether an item is
one of its own k' neighbours, whose row of s'' scores an item (eq. 30 as printed reads the
target's row, under which the norm of eq. 29 cancels) and the norm of eq. 29. Nor does the
paper say how a held-out item is ranked among items with the same score
(:data:`itemsampling.ranks.TIES`). A *reading* is a named set of item-kNN options, applied on
top of the configured hyper-parameters of each recommender of ``sensitivity.recommenders``;
the reading that changes nothing is the *default* (the equations as printed).

Every chunk refits one recommender under one reading on the study's dataset (the
recommenders the readings do not concern, K&R's X, are refitted once, as configured: part
:data:`AS_CONFIGURED`), ranks its test users under each tie rule and repeats the sampling and
estimation of Tables 3–4 on those ranks. The draws are seeded by (dataset, model, protocol,
scheme, n, repeat), not by the reading or the tie rule, so readings are compared on the same
random numbers. A recommender fitted as configured (reading :data:`AS_CONFIGURED`, or the default
reading) is checked against its committed ``train.json`` and ranks, and its runs under random
ties are made on the committed ranks, so that they are the main runs exactly on every machine
(a refit on other BLAS kernels lands a few near-ties away: :mod:`itemsampling_study.refits`).

Tables (:func:`sensitivity_tables`):

* ``sensitivity_summary``: one row per reading and tie rule — the exact and sampled order of
  Recall@K, how many orders agree with K&R's, the distance of the exact metrics of the reading
  recommenders to K&R Table 3, and the Table 4 counts of BV (γ = ``curve_gamma``) and of the
  rank estimate;
* ``sensitivity``: per reading, tie rule and recommender, the exact Recall@K, NDCG@K, AP and
  AUC, the mean sampled Recall@K, the users whose held-out item ties with another candidate or
  scores 0, and those ranked in the bottom half;
* ``sensitivity_table4``: per reading, tie rule and method, how many of Table 4's Recall, NDCG
  and AP comparisons are right in at least 90% of the runs, how many are right more (less)
  often than with the uncorrected metric, next to the same counts of K&R's Table 4;
* ``sensitivity_orders``: per reading, tie rule, metric and method, the order of the
  recommenders by the exact metric and by the mean over the runs, next to K&R's (Table 3);
* ``sensitivity_paper``: every exact value against K&R Table 3 (ml-1m only);
* ``ties``: the default reading under each tie rule, one row per recommender.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from itemsampling._validation import check_choice
from itemsampling.models.registry import check_hyperparameters, make_model
from itemsampling.ranks import TIES, global_ranks

from .engine import RUN_COLUMNS, repeat_estimates
from .paper import paper_table
from .refits import check_record, compare_refit_ranks
from .run_summaries import mean_orders, order_agreement, summarize_runs
from .tables import train_record_path

__all__ = [
    "AS_CONFIGURED",
    "COMPARED_METRICS",
    "SENSITIVITY_COLUMNS",
    "check_sensitivity",
    "default_reading",
    "refit_ranks",
    "runs_by_reading",
    "sensitivity_chunk",
    "sensitivity_chunks",
    "sensitivity_tables",
    "split_runs",
    "table4_summary",
]

#: part of the chunk of a recommender that the readings do not change (refitted as configured)
AS_CONFIGURED = "as_configured"
#: columns that a sensitivity chunk adds to :data:`~itemsampling_study.engine.RUN_COLUMNS`
SENSITIVITY_COLUMNS = ("reading", "ties", "tied_users", "zero_score_users", "bottom_half")
#: the metrics of Table 4 whose comparisons :func:`table4_summary` counts (AUC is always right)
COMPARED_METRICS = ("recall", "ndcg", "ap")
#: a comparison counts as reliable when it is right in at least this fraction of the runs
RELIABLE = 0.9
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _readings(config: Mapping) -> dict[str, dict]:
    """Reading name -> item-kNN options, in the order of the configuration."""
    return {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in config["sensitivity"]["readings"]}


def _fit_options(config: Mapping, label: str, reading: str) -> dict:
    """Hyper-parameters of recommender ``label`` under ``reading`` (its configured ones if none)."""
    model = config["recommenders"][label]
    options = dict(config["model_hyperparameters"][model])
    if label in config["sensitivity"]["recommenders"]:
        options.update(_readings(config)[reading])
    return options


def _is_default(config: Mapping, label: str, reading: str) -> bool:
    """Whether ``reading`` leaves recommender ``label`` as configured (same fitted model)."""
    model, dataset = config["recommenders"][label], config["dataset"]
    configured = make_model(model, dataset, config["model_hyperparameters"][model]).hyperparameters
    return make_model(model, dataset, _fit_options(config, label, reading)).hyperparameters == configured


def default_reading(config: Mapping) -> str:
    """The reading that leaves every recommender of ``sensitivity.recommenders`` as configured."""
    names = [name for name in _readings(config)
             if all(_is_default(config, label, name) for label in config["sensitivity"]["recommenders"])]
    if len(names) != 1:
        raise ValueError("sampled_metrics.sensitivity.readings must hold exactly one reading that changes "
                         f"nothing (the configured models, e.g. {{name: printed}}); found {names or 'none'}")
    return names[0]


def check_sensitivity(config: Mapping) -> None:
    """Check the ``sensitivity`` part of a study configuration (with ``model_hyperparameters``).

    Raises
    ------
    ValueError
        For a reading recommender that is not a label of ``recommenders``, a reading name that
        is not a plain file name or repeats, an option the model does not accept, a tie rule not
        in :data:`~itemsampling.ranks.TIES`, a tie list without ``random`` or no default reading.
    """
    spec = config["sensitivity"]
    if not spec["readings"]:
        return
    unknown = sorted(set(spec["recommenders"]) - set(config["recommenders"]))
    if unknown or not spec["recommenders"]:
        raise ValueError(f"sampled_metrics.sensitivity.recommenders must be labels of recommenders "
                         f"({', '.join(config['recommenders'])}), got {list(spec['recommenders'])}")
    names = [r.get("name") for r in spec["readings"]]
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name) or name == AS_CONFIGURED:
            raise ValueError(f"a reading needs a name of letters, digits, '_', '.' or '-' (not {AS_CONFIGURED!r}), "
                             f"got {name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"reading names must be distinct, got {names}")
    for label in spec["recommenders"]:
        for name, options in _readings(config).items():
            try:
                check_hyperparameters(config["recommenders"][label], options)
            except ValueError as exc:
                raise ValueError(f"sampled_metrics.sensitivity reading {name!r}: {exc}") from None
    for ties in spec["ties"]:
        check_choice("sensitivity tie rule", ties, TIES)
    if "random" not in spec["ties"]:
        raise ValueError("sampled_metrics.sensitivity.ties must include 'random' (the ties of the main runs)")
    default_reading(config)


def sensitivity_chunks(config: Mapping) -> list[dict]:
    """One chunk per (reading, reading recommender), and one per other recommender (as configured)."""
    if not config["sensitivity"]["readings"]:
        return []
    out = []
    for label, model in config["recommenders"].items():
        parts = list(_readings(config)) if label in config["sensitivity"]["recommenders"] else [AS_CONFIGURED]
        out.extend({"dataset": config["dataset"], "model": model, "protocol": config["protocol"], "part": part}
                   for part in parts)
    return out


def refit_ranks(config: Mapping, seed: int, label: str, reading: str) -> tuple[dict[str, pd.DataFrame], np.ndarray]:
    """Fit recommender ``label`` under ``reading`` on the study's dataset and rank its test users.

    The model is fitted with ``seed`` (as ``itemsampling train`` does with the study seed).

    Returns
    -------
    ranks : dict of str to pandas.DataFrame
        Tie rule -> ranks table (``user, item, rank, n_candidates``), for every rule of
        :data:`~itemsampling.ranks.TIES`; ``random`` uses ``seed`` for the tie-break keys.
    target_scores : numpy.ndarray
        The score of each test user's held-out item.
    """
    from itemsampling.data import load_dataset

    dataset = load_dataset(config["dataset"])
    model = make_model(config["recommenders"][label], config["dataset"], _fit_options(config, label, reading))
    model.fit(dataset.train, seed=seed, progress=False)
    protocol = config["protocol"]
    ranks = {ties: global_ranks(model, dataset.test_items, protocols=[protocol], seed=seed, ties=ties,
                                progress=False)[protocol] for ties in TIES}
    users = ranks["random"]["user"].to_numpy()
    scores = model.score_items(users, ranks["random"]["item"].to_numpy()[:, None])[:, 0]
    return ranks, scores


def sensitivity_chunk(config: Mapping, seed: int, labels: Mapping[str, str], committed: pd.DataFrame,
                      estimators: Sequence, targets: Sequence[tuple[str, int | None]]) -> pd.DataFrame:
    """The runs of one recommender under one reading, for every tie rule of ``sensitivity.ties``.

    Parameters
    ----------
    config : mapping
        The study parameters (with ``sensitivity`` and ``model_hyperparameters``).
    seed : int
        Study seed: fit, tie-break and draws (the draws as in the main runs).
    labels : mapping
        ``dataset``, ``model``, ``protocol`` and ``part`` (the reading, or :data:`AS_CONFIGURED`).
    committed : pandas.DataFrame
        The committed ranks of the model; a model fitted as configured must land within rounding
        of them, and its runs under random ties use them.
    estimators, targets
        What the main runs estimate (:func:`~itemsampling_study.sampled_metrics.estimators`,
        :func:`~itemsampling_study.sampled_metrics.targets`).

    Returns
    -------
    pandas.DataFrame
        :data:`~itemsampling_study.engine.RUN_COLUMNS` and :data:`SENSITIVITY_COLUMNS`.
    """
    label = {model: label for label, model in config["recommenders"].items()}[labels["model"]]
    reading = labels["part"]
    ranks, scores = refit_ranks(config, seed, label, reading)
    if reading == AS_CONFIGURED or _is_default(config, label, reading):
        _use_committed(config, seed, labels, ranks, committed)
    tied = int((ranks["pessimistic"]["rank"] > ranks["optimistic"]["rank"]).sum())
    frames = []
    for ties in config["sensitivity"]["ties"]:
        R, N = ranks[ties]["rank"].to_numpy(), ranks[ties]["n_candidates"].to_numpy()
        runs = repeat_estimates(R, N, estimators=estimators, targets=targets, sample_sizes=[config["sample_size"]],
                                seed=seed, labels={k: labels[k] for k in ("dataset", "model", "protocol")},
                                schemes=[config["scheme"]], repeats=config["repeats"],
                                n_groups=config["n_item_groups"], progress=False)
        frames.append(runs.assign(reading=reading, ties=ties, tied_users=tied,
                                  zero_score_users=int((scores == 0).sum()), bottom_half=int((R > N / 2).sum())))
    return pd.concat(frames, ignore_index=True)


def _use_committed(config: Mapping, seed: int, labels: Mapping[str, str], ranks: dict[str, pd.DataFrame],
                   committed: pd.DataFrame) -> None:
    """Put the committed ranks in place of the refit's under random ties, for a recommender fitted
    as configured, so that its runs are those of the main runs on every machine.

    The committed ``train.json`` must record the configured hyper-parameters and the study seed,
    and the refit must land within rounding of the committed ranks
    (:mod:`itemsampling_study.refits`); how far it landed is printed to the chunk's log.
    """
    model, dataset, protocol = labels["model"], labels["dataset"], labels["protocol"]
    what = f"{model} on {dataset} ({protocol})"
    hyperparameters = make_model(model, dataset, config["model_hyperparameters"][model]).hyperparameters
    check_record(train_record_path(dataset, model), dataset, hyperparameters, seed, what)
    columns = list(ranks["random"].columns)
    print(compare_refit_ranks(ranks["random"], committed[columns], what), file=sys.stderr)
    ranks["random"] = committed[columns].sort_values("user", kind="stable").reset_index(drop=True)


def runs_by_reading(config: Mapping, runs: pd.DataFrame) -> pd.DataFrame:
    """The sensitivity runs with a ``recommender`` label, those of :data:`AS_CONFIGURED` copied to
    every reading, in the order (reading, tie rule, recommender) of the configuration."""
    labels = {model: label for label, model in config["recommenders"].items()}
    runs = runs.assign(recommender=runs["model"].map(labels))
    fixed = runs[runs["reading"] == AS_CONFIGURED]
    readings = list(_readings(config))
    runs = pd.concat([runs[runs["reading"] != AS_CONFIGURED], *(fixed.assign(reading=r) for r in readings)],
                     ignore_index=True)
    order = {"reading": readings, "ties": list(config["sensitivity"]["ties"]), "recommender": list(config["recommenders"])}
    return runs.sort_values(list(order), key=lambda s: s.map({v: i for i, v in enumerate(order[s.name])}),
                            kind="stable").reset_index(drop=True)


def _sensitivity(config: Mapping, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (reading, tie rule, recommender): exact metrics and mean sampled Recall@K."""
    keys = ["reading", "ties", "recommender", "model"]
    counts = runs.drop_duplicates(keys)[[*keys, "tied_users", "zero_score_users", "bottom_half"]]
    exact = runs.drop_duplicates([*keys, "metric"]).pivot(index=keys, columns="metric", values="exact")
    recall = runs[(runs["estimator"] == "sampled") & (runs["metric"] == "recall")]
    sampled = recall.groupby(keys, sort=False)["estimate"].mean().rename("sampled_recall")
    out = counts.merge(exact[["recall", "ndcg", "ap", "auc"]].reset_index(), on=keys).merge(
        sampled.reset_index(), on=keys)
    default = default_reading(config)
    out.insert(2, "default", (out["reading"] == default) & (out["ties"] == "random"))
    return out


def table4_summary(table4: pd.DataFrame, agree: str = "agree") -> pd.DataFrame:
    """Per method: of the Recall, NDCG and AP comparisons of a Table 4, how many are right in at
    least 90% of the runs, and how many more (fewer, as many) times than the uncorrected metric.

    Parameters
    ----------
    table4 : pandas.DataFrame
        Columns ``recommender_a``, ``recommender_b``, ``metric``, ``method`` and ``agree``
        (correct runs out of ``repeats``, or K&R's percentages with ``repeats`` = 100).
    agree : str
        Column of the correct runs.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``comparisons``, ``reliable`` (right in >= 90% of the runs),
        ``better``, ``same`` and ``worse`` (than the method ``sampled`` on the same comparison).
    """
    columns = ["method", "comparisons", "reliable", "better", "same", "worse"]
    cells = table4[table4["metric"].isin(COMPARED_METRICS)]
    keys = ["recommender_a", "recommender_b", "metric"]
    base = cells[cells["method"] == "sampled"].set_index(keys)[agree]
    rows = []
    for method, part in cells.groupby("method", sort=False):
        mine = part.set_index(keys)[agree]
        other = base.reindex(mine.index)
        fraction = mine / part.set_index(keys)["repeats"]
        rows.append({"method": method, "comparisons": int(mine.size), "reliable": int((fraction >= RELIABLE).sum()),
                     "better": int((mine > other).sum()), "same": int((mine == other).sum()),
                     "worse": int((mine < other).sum())})
    return pd.DataFrame(rows, columns=columns)


def _paper_table4(config: Mapping) -> pd.DataFrame:
    """K&R Table 4 summarised by :func:`table4_summary` (empty unless the study is on ml-1m)."""
    paper = paper_table("krichene2020kdd_table4").assign(repeats=100)
    if config["dataset"] != "ml-1m":
        paper = paper.iloc[:0]
    summary = table4_summary(paper, agree="paper_agree")
    return summary.drop(columns="comparisons").add_prefix("paper_").rename(columns={"paper_method": "method"})


def _sensitivity_table4(config: Mapping, runs: pd.DataFrame) -> pd.DataFrame:

    frames = []
    for (reading, ties), part in runs.groupby(["reading", "ties"], sort=False):
        summary = table4_summary(order_agreement(part.drop(columns=list(SENSITIVITY_COLUMNS))))
        frames.append(summary.assign(reading=reading, ties=ties))
    out = pd.concat(frames, ignore_index=True).merge(_paper_table4(config), on="method", how="left")
    default = default_reading(config)
    out.insert(0, "default", (out["reading"] == default) & (out["ties"] == "random"))
    return out[["reading", "ties", "default", *[c for c in out.columns if c not in ("reading", "ties", "default")]]]


def _paper_orders(config: Mapping) -> pd.DataFrame:
    """The orders of X, Y, Z in K&R Table 3 by metric and method (empty unless on ml-1m)."""

    paper = paper_table("krichene2020kdd_table3")
    if config["dataset"] != "ml-1m":
        paper = paper.iloc[:0]
    exact = paper[paper["method"] == "exact"].set_index(["metric", "recommender"])["paper_percent"].rename("exact")
    table3 = paper[paper["method"] != "exact"].rename(columns={"paper_percent": "mean"}).join(
        exact, on=["metric", "recommender"])
    orders = mean_orders(table3) if len(table3) else pd.DataFrame(columns=["metric", "method", "order", "exact_order"])
    return orders[["metric", "method", "order", "exact_order"]].add_prefix("paper_").rename(
        columns={"paper_metric": "metric", "paper_method": "method"})


def _sensitivity_orders(config: Mapping, runs: pd.DataFrame) -> pd.DataFrame:

    frames = [mean_orders(summarize_runs(part)).assign(reading=reading, ties=ties)
              for (reading, ties), part in runs.groupby(["reading", "ties"], sort=False)]
    out = pd.concat(frames, ignore_index=True).drop(columns="agrees")
    out = out.merge(_paper_orders(config), on=["metric", "method"], how="left")
    default = default_reading(config)
    out.insert(0, "default", (out["reading"] == default) & (out["ties"] == "random"))
    return out[["reading", "ties", "default", "metric", "method", "order", "exact_order", "paper_order",
                "paper_exact_order"]]


def _sensitivity_paper(config: Mapping, sensitivity: pd.DataFrame) -> pd.DataFrame:
    """Exact metrics of every reading against K&R Table 3, in percent (ml-1m only)."""
    ours = sensitivity.melt(id_vars=["reading", "ties", "default", "recommender"],
                            value_vars=["recall", "ndcg", "ap", "auc"], var_name="metric", value_name="ours")
    paper = paper_table("krichene2020kdd_table3").query("method == 'exact'")[["metric", "recommender", "paper_percent"]]
    if config["dataset"] != "ml-1m":
        paper = paper.iloc[:0]
    out = ours.assign(ours_percent=100 * ours["ours"]).drop(columns="ours").merge(
        paper, on=["metric", "recommender"], how="inner")
    return out.assign(difference=out["ours_percent"] - out["paper_percent"])


def _sensitivity_summary(config: Mapping, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (reading, tie rule) from the other sensitivity tables (module docstring)."""
    keys = ["reading", "ties", "default"]
    orders = tables["sensitivity_orders"]
    recall = orders[orders["metric"] == "recall"]
    out = recall.drop_duplicates(keys)[[*keys, "exact_order"]].merge(
        recall[recall["method"] == "sampled"][[*keys, "order"]].rename(columns={"order": "sampled_order"}), on=keys)
    exact = orders.drop_duplicates([*keys, "metric"])
    counts = {"exact_orders_as_paper": exact.assign(same=exact["exact_order"] == exact["paper_exact_order"]),
              "mean_orders_as_paper": orders.assign(same=orders["order"] == orders["paper_order"])}
    for name, frame in counts.items():
        out = out.merge(frame.groupby(keys, sort=False)["same"].sum().rename(name).reset_index(), on=keys)
    paper = tables["sensitivity_paper"]
    paper = paper[paper["recommender"].isin(config["sensitivity"]["recommenders"])].assign(
        gap=lambda t: t["difference"].abs(), cell=lambda t: t["recommender"] + " " + t["metric"])
    worst = paper.sort_values("gap", ascending=False, kind="stable").drop_duplicates(keys)
    out = out.merge(paper.groupby(keys, sort=False)["gap"].mean().rename("paper_mean_abs_difference").reset_index(),
                    on=keys, how="left")
    out = out.merge(worst[[*keys, "gap", "cell"]].rename(columns={"gap": "paper_max_abs_difference",
                                                                  "cell": "paper_max_difference_at"}),
                    on=keys, how="left")
    if paper.empty:
        out[["exact_orders_as_paper", "mean_orders_as_paper"]] = np.nan
    table4 = tables["sensitivity_table4"].set_index([*keys, "method"])
    bv = f"bv_{float(config['curve_gamma']):g}"
    for method, columns in ((bv, ["reliable"]), ("rank_estimate", ["better", "same", "worse"])):
        part = table4.xs(method, level="method")[columns + [f"paper_{c}" for c in columns]]
        out = out.merge(part.add_prefix(f"{method}_").reset_index(), on=keys, how="left")
    return out


def _ties(config: Mapping, sensitivity: pd.DataFrame) -> pd.DataFrame:
    """The default reading under each tie rule: one row per recommender."""
    rows = sensitivity[sensitivity["reading"] == default_reading(config)]
    wide = rows.pivot(index=["recommender", "model", "tied_users", "zero_score_users"], columns="ties",
                      values=["recall", "auc", "bottom_half"])
    wide = wide[[(m, t) for m in ("recall", "auc", "bottom_half") for t in config["sensitivity"]["ties"]]]
    wide.columns = [f"{m}_{t}" for m, t in wide.columns]
    order = {label: i for i, label in enumerate(config["recommenders"])}
    return wide.reset_index().sort_values("recommender", key=lambda s: s.map(order)).reset_index(drop=True)


def _empty_tables(config: Mapping) -> dict[str, pd.DataFrame]:
    """The tables without rows (a configuration without readings)."""
    keys = ["reading", "ties", "default"]
    bv = f"bv_{float(config['curve_gamma']):g}"
    columns = {
        "sensitivity_summary": [*keys, "exact_order", "sampled_order", "exact_orders_as_paper", "mean_orders_as_paper",
                                "paper_mean_abs_difference", "paper_max_abs_difference", "paper_max_difference_at",
                                f"{bv}_reliable", f"{bv}_paper_reliable",
                                *[f"rank_estimate_{p}{c}" for p in ("", "paper_") for c in ("better", "same", "worse")]],
        "sensitivity": [*keys, "recommender", "model", "tied_users", "zero_score_users", "bottom_half",
                        "recall", "ndcg", "ap", "auc", "sampled_recall"],
        "sensitivity_table4": [*keys, "method", "comparisons", "reliable", "better", "same", "worse",
                               "paper_reliable", "paper_better", "paper_same", "paper_worse"],
        "sensitivity_orders": [*keys, "metric", "method", "order", "exact_order", "paper_order", "paper_exact_order"],
        "sensitivity_paper": [*keys, "recommender", "metric", "ours_percent", "paper_percent", "difference"],
        "ties": ["recommender", "model", "tied_users", "zero_score_users",
                 *[f"{m}_{t}" for m in ("recall", "auc", "bottom_half") for t in config["sensitivity"]["ties"]]],
    }
    return {name: pd.DataFrame(columns=names) for name, names in columns.items()}


def sensitivity_tables(config: Mapping, runs: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """``sensitivity_summary``, ``sensitivity``, ``sensitivity_table4``, ``sensitivity_orders``,
    ``sensitivity_paper`` and ``ties`` (see the module docstring) from the runs of :func:`sensitivity_chunk`; tables without rows when there are
    no readings."""
    if runs is None:
        return _empty_tables(config)
    runs = runs_by_reading(config, runs)
    sensitivity = _sensitivity(config, runs)
    tables = {"sensitivity": sensitivity, "sensitivity_table4": _sensitivity_table4(config, runs),
              "sensitivity_orders": _sensitivity_orders(config, runs),
              "sensitivity_paper": _sensitivity_paper(config, sensitivity), "ties": _ties(config, sensitivity)}
    return {"sensitivity_summary": _sensitivity_summary(config, tables), **tables}


def split_runs(runs: pd.DataFrame | None) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The main runs (:data:`~itemsampling_study.engine.RUN_COLUMNS`) and the sensitivity runs."""
    if runs is None or "reading" not in runs.columns:
        return runs, None
    mine = runs["reading"].notna()
    return runs.loc[~mine, list(RUN_COLUMNS)].reset_index(drop=True), runs[mine].reset_index(drop=True)
