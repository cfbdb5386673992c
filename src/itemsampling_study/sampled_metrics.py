"""Notebook 01: sampled metrics are inconsistent, corrections help (Krichene & Rendle, KDD 2020).

Every table of the notebook, computed from the global ranks of K&R's recommenders X, Y, Z (§6,
§9) and from the toy example (§3.2):

* toy example: ``table1_toy_exact`` (Table 1), ``table2_toy_sampled`` (Table 2, Monte Carlo and
  the exact expectation, eq. 16), ``fig2_toy_expected`` (the expectation against n),
  ``fig3_expected_vs_true_rank`` (E[M(r) | R]) and ``fig4_corrected_ap`` /
  ``fig4_expected_corrected_ap`` (CLS and BV corrections of AP, and their expectation);
* real data: ``table3_runs`` (every run of the repeat-and-estimate engine, one chunk per
  recommender), ``table3`` (mean ± std against the exact value), ``table3_orders`` (does the
  mean order the recommenders as the exact metric?), ``table4`` (how often each run orders a
  pair correctly), ``rank_summary`` and ``fig5_rank_histogram`` (Fig. 5), ``fig6_expected_recall`` (expected
  Recall@K against the sample size, eq. 16) and ``fig6_smallest_sample`` (the smallest m with
  the exact order);
* readings of K&R eqs. 27–30 and tie rules (:mod:`itemsampling_study.readings`): each
  reading recommender refitted under each reading, one chunk per (recommender, reading), and
  the tables ``sensitivity_summary``, ``sensitivity``, ``sensitivity_table4``,
  ``sensitivity_orders``, ``sensitivity_paper`` and ``ties``; ``sensitivity_table3`` and
  ``sensitivity_pairs`` (Tables 3 and 4 under every reading and tie rule) and
  ``fig6_closest_reading`` (the curve of Fig. 6 under the reading closest to K&R's Table 3,
  :func:`closest_reading`).

Configuration: the ``sampled_metrics`` section of ``config/config.yaml`` (see the schema).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr

from itemsampling import corrections
from itemsampling._validation import check_choice, check_ranks
from itemsampling.candidates import item_groups
from itemsampling.estimators import Estimator
from itemsampling.kernels import log_kernel_block, rank_kernel
from itemsampling.metrics import global_metrics, metric_weights, rank_weight

from . import toy
from .engine import STUDY_SCHEMES, repeat_estimates
from .paper import paper_table
from .readings import (
    check_sensitivity,
    default_reading,
    refit_ranks,
    runs_by_reading,
    sensitivity_chunk,
    sensitivity_chunks,
    sensitivity_tables,
    split_runs,
)
from .run_summaries import mean_orders, order_agreement, summarize_runs
from .tables import ranks_path, read_model_ranks

__all__ = [
    "PAPER_METHODS",
    "chunk_table",
    "chunks",
    "closest_reading",
    "corrected_ap",
    "estimators",
    "expected_metric_curve",
    "expected_vs_true_rank",
    "inputs",
    "mean_orders",
    "order_agreement",
    "paper_with_our_spreads",
    "predicted_agreement",
    "rank_histogram",
    "rank_summary",
    "reading_tables",
    "sample_sizes",
    "smallest_correct_sample",
    "study_config",
    "study_tables",
    "summarize_runs",
    "table3_layout",
    "table4_layout",
    "targets",
    "toy_expected_curves",
    "toy_tables",
]

#: Column order of K&R Tables 3–4 (after "Exact").
PAPER_METHODS = ("sampled", "rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001")
#: Sample set size of K&R Fig. 4 (m = 100 sampled items).
FIG4_SAMPLE_SIZE = 101
#: Entries of P(r | R) evaluated at once by :func:`expected_metric_curve` (~100 MB).
_BLOCK_ENTRIES = 2**23


def targets(k: int) -> list[tuple[str, int | None]]:
    """The (metric, K) pairs of K&R Tables 3–4: Recall@K and NDCG@K; AP and AUC without cut-off.

    K&R §6 report "Recall@10 = HR@10 and NDCG@10. In addition, we report AP and AUC" — both
    untruncated (their exact AP of X, 3.75, is the untruncated mean reciprocal rank; AP@10 is
    about 1.2 points lower).
    """
    return [("recall", k), ("ndcg", k), ("ap", None), ("auc", None)]


def estimators(gammas: Sequence[float]) -> list[Estimator]:
    """The sampled metric, rank estimate (eq. 20), CLS (eq. 21) and BV γ (eq. 25), uniform prior."""
    return [Estimator("sampled"), Estimator("rank_estimate"), Estimator("cls")] + [
        Estimator("bv", {"gamma": float(g)}, name=f"bv_{float(g):g}") for g in gammas
    ]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set size n drawn from the ranks of each (dataset, protocol): the
    workflow checks it against the smallest N_u before planning a run. (The Fig. 6 curve keeps
    only its sample sizes up to the smallest N_u.)"""
    return {(config["dataset"], config["protocol"]): int(config["sample_size"])}


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Every run of one recommender (one chunk of ``table3_runs``), or of one reading.

    ``repeats`` draws of n = ``sample_size`` items per user with the user's own N_u, each
    estimated by :func:`estimators`; the corrections use ``n_item_groups`` groups of users by
    N_u (:mod:`itemsampling.candidates`), as K&R do. A chunk with a ``part`` (a reading) refits
    the recommender and runs the same on its ranks
    (:func:`~itemsampling_study.readings.sensitivity_chunk`).
    """
    if "part" in labels:
        return sensitivity_chunk(config, seed, labels, ranks, estimators(config["gammas"]), targets(config["k"]))
    return repeat_estimates(
        ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy(), estimators=estimators(config["gammas"]),
        targets=targets(config["k"]), sample_sizes=[config["sample_size"]], seed=seed, labels=labels,
        schemes=[config["scheme"]], repeats=config["repeats"], n_groups=config["n_item_groups"],
    )


def table3_layout(table3: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Table 3 as printed by K&R: rows (metric, recommender), cells ``mean ± std`` in percent."""
    t = table3.copy()
    t["cell"] = [f"{100 * m:.{digits}f} ± {100 * s:.{digits}f}" for m, s in zip(t["mean"], t["std"], strict=True)]
    metric_order = list(dict.fromkeys(t["metric"]))
    wide = t.pivot(index=["metric", "recommender"], columns="method", values="cell")
    wide = wide[list(dict.fromkeys(t["method"]))]
    exact = t.drop_duplicates(["metric", "recommender"]).set_index(["metric", "recommender"])["exact"]
    wide.insert(0, "exact", [f"{100 * v:.{digits}f}" for v in exact.reindex(wide.index)])
    order = sorted(wide.index, key=lambda i: (metric_order.index(i[0]), i[1]))
    return wide.loc[order]


def table4_layout(table4: pd.DataFrame) -> pd.DataFrame:
    """Table 4 as printed by K&R: rows (pair, metric), one column of agreeing runs per method."""
    t = table4.copy()
    t["pair"] = t["recommender_a"] + " vs " + t["recommender_b"]
    methods = [m for m in PAPER_METHODS if m in set(t["method"])]
    methods += sorted(set(t["method"]) - set(methods))
    wide = t.pivot(index=["pair", "metric"], columns="method", values="agree")[methods]
    metric_order = {m: i for i, m in enumerate(("recall", "ndcg", "ap", "auc"))}
    order = sorted(wide.index, key=lambda i: (i[0], metric_order.get(i[1], 9), i[1]))
    return wide.loc[order]


def rank_histogram(ranks: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Users per bucket of global rank (Fig. 5): buckets of 100 over all ranks (``panel`` =
    ``all``) and buckets of 5 over the top 100 (``top``)."""
    n_max = max(int(f["n_candidates"].max()) for f in ranks.values())
    panels = {"all": np.arange(1, n_max + 101, 100), "top": np.arange(1, 102, 5)}
    frames = []
    for label, frame in ranks.items():
        for panel, edges in panels.items():
            counts, _ = np.histogram(frame["rank"], bins=edges)
            frames.append(pd.DataFrame({"recommender": label, "panel": panel, "rank_from": edges[:-1],
                                        "rank_to": edges[1:], "users": counts}))
    return pd.concat(frames, ignore_index=True)


def rank_summary(ranks: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per recommender: users, held-out items in the top 100, and in the bottom half (Fig. 5)."""
    rows = []
    for label, frame in ranks.items():
        R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
        rows.append({"recommender": label, "users": R.size, "top_100": int((R <= 100).sum()),
                     "bottom_half": int((R > N / 2).sum())})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- toy example


def toy_tables(repeats: int, seed: int, scheme: str) -> dict[str, pd.DataFrame]:
    """K&R Tables 1 and 2 next to the paper's numbers.

    ``table1_toy_exact``: recommender, metric, k, exact, paper. ``table2_toy_sampled``: mean and
    std over ``repeats`` Monte Carlo repetitions (m = 99), the exact expectation (eq. 16) and
    the paper's mean and std.
    """
    def long(frame: pd.DataFrame, name: str) -> pd.DataFrame:
        out = frame.reset_index().melt(id_vars="recommender", var_name="column", value_name=name)
        split = out["column"].str.partition("@")
        out.insert(1, "metric", split[0])
        out.insert(2, "k", pd.array([int(k) if k else None for k in split[2]], dtype="Int64"))
        return out.drop(columns="column")

    keys = ["recommender", "metric", "k"]
    paper1 = paper_table("krichene2020kdd_table1")[[*keys, "paper"]]
    table1 = long(toy.exact_table(), "exact").merge(paper1, on=keys, how="left")
    simulated = toy.simulated_sampled_table(repeats, toy.TOY_SAMPLE_SIZE, rng=seed, scheme=scheme)
    table2 = long(simulated["mean"].rename_axis("recommender"), "mean")
    table2 = table2.merge(long(simulated["std"].rename_axis("recommender"), "std"), on=keys)
    table2 = table2.merge(long(toy.expected_sampled_table(toy.TOY_SAMPLE_SIZE, scheme=scheme), "expected"), on=keys)
    paper2 = paper_table("krichene2020kdd_table2")[[*keys, "paper_mean", "paper_std"]]
    table2 = table2.merge(paper2, on=keys, how="left")
    return {"table1_toy_exact": table1, "table2_toy_sampled": table2}


def toy_expected_curves(scheme: str, points: int = 40) -> pd.DataFrame:
    """Expected sampled metric of A, B, C for sample sets from 2 items to all N (Fig. 2)."""
    sizes = np.unique(np.geomspace(2, toy.TOY_N_ITEMS, points).astype(int))
    rows = []
    for n in sizes.tolist():
        table = toy.expected_sampled_table(n, scheme=scheme)
        for metric, k in toy.TOY_METRICS:
            column = f"{metric}@{k}" if k is not None else metric
            rows.extend((n, name, metric, k, float(table.loc[name, column])) for name in table.index)
    out = pd.DataFrame(rows, columns=["sample_size", "recommender", "metric", "k", "expected"])
    out["k"] = out["k"].astype("Int64")
    return out


def expected_vs_true_rank(scheme: str, sample_sizes: Sequence[int] = (2, 11, 101, 1001),
                          top: int = 1000) -> pd.DataFrame:
    """E[M(r) | R] = Σ_r P(r | R) M(r) of the sampled metric for R = 1..top, and M(R) (Fig. 3)."""
    N = toy.TOY_N_ITEMS
    R = np.arange(1, top + 1)
    frames = []
    for metric, k in toy.TOY_METRICS:
        exact = metric_weights(metric, k, N)[:top]
        for n in sample_sizes:
            expected = rank_kernel(N, n, scheme)[:top] @ corrections.sampled([(metric, k)], n)[:, 0]
            frames.append(pd.DataFrame({"metric": metric, "k": k, "sample_size": n, "rank": R,
                                        "expected": expected, "exact": exact}))
    out = pd.concat(frames, ignore_index=True)
    out["k"] = out["k"].astype("Int64")
    return out


def corrected_ap(gammas: Sequence[float], scheme: str, sample_size: int = FIG4_SAMPLE_SIZE,
                 points: int = 400) -> dict[str, pd.DataFrame]:
    """AP corrected by CLS and BV γ on the toy catalogue (uniform prior; Fig. 4).

    ``fig4_corrected_ap``: M̂(r) for r = 1..n; ``fig4_expected_corrected_ap``: its expectation
    E[M̂(r) | R] = Σ_r P(r | R) M̂(r) on ``points`` log-spaced global ranks, with AP(R) = 1/R.
    """
    N, n = toy.TOY_N_ITEMS, sample_size
    ap = metric_weights("ap", None, N)
    kernel = rank_kernel(N, n, scheme)
    corrected = {"sampled": corrections.sampled([("ap", None)], n)[:, 0],
                 "cls": corrections.cls(ap, N, n, scheme=scheme, kernel=kernel)}
    for g in gammas:
        corrected[f"bv_{float(g):g}"] = corrections.bv_operator(N, n, gamma=g, scheme=scheme, kernel=kernel).apply(ap)
    R = np.unique(np.geomspace(1, N, points).astype(int))
    r = np.arange(1, n + 1)
    on_sample = pd.concat([pd.DataFrame({"method": m, "sampled_rank": r, "value": v}) for m, v in corrected.items()],
                          ignore_index=True)
    expected = pd.concat([pd.DataFrame({"method": m, "rank": R, "expected": kernel[R - 1] @ v, "exact": ap[R - 1]})
                          for m, v in corrected.items()], ignore_index=True)
    return {"fig4_corrected_ap": on_sample, "fig4_expected_corrected_ap": expected}


# ----------------------------------------------------------------------------- Figure 6


def _expected_values(R: np.ndarray, N: np.ndarray, group: np.ndarray, corrected: np.ndarray,
                     sample_size: int, scheme: str) -> np.ndarray:
    """(1/M) Σ_u Σ_r P(r | R_u; N_u, n) M̂_{g(u)}(r) for every column of M̂ (K&R eq. 16).

    ``corrected`` has shape (groups, n, columns); users with the same (N_u, group, R_u) share
    one kernel row, evaluated in log space.
    """
    keys = np.stack([N, group, R], axis=1)
    unique, counts = np.unique(keys, axis=0, return_counts=True)
    r = np.arange(1, sample_size + 1)
    step = max(1, _BLOCK_ENTRIES // sample_size)
    total = np.zeros(corrected.shape[2])
    for n_value in np.unique(unique[:, 0]):
        same = unique[:, 0] == n_value
        rows, weight = unique[same], counts[same]
        for start in range(0, rows.shape[0], step):
            block = rows[start : start + step]
            prob = np.exp(log_kernel_block(block[:, 2], r, int(n_value), sample_size, scheme))
            prob /= prob.sum(axis=1, keepdims=True)
            per_row = np.einsum("ur,urc->uc", prob, corrected[block[:, 1]])
            total += weight[start : start + step] @ per_row
    return total / R.size


def _curve_correction(method: str, gamma: float | None, metric: str, k: int | None,
                      n_items: int, sample_size: int, scheme: str) -> np.ndarray:
    """M̂ of one metric for one (N, n): shape (n,)."""
    if method == "sampled":
        return corrections.sampled([(metric, k)], sample_size)[:, 0]
    weights = rank_weight(metric, np.arange(1, n_items + 1), n_items, k)
    if method == "bv":
        return corrections.bv_operator(n_items, sample_size, gamma=gamma, scheme=scheme).apply(weights)
    if method == "cls":
        return corrections.cls(weights, n_items, sample_size, scheme=scheme)
    return corrections.rank_estimate(weights, n_items, sample_size)


def expected_metric_curve(ranks: Mapping[str, pd.DataFrame], sample_sizes: Sequence[int],
                          metric: str = "recall", k: int | None = 10,
                          methods: Sequence[tuple[str, float | None]] = (("sampled", None), ("bv", 0.1)),
                          scheme: str = "binomial", n_groups: int = 20) -> pd.DataFrame:
    """Expected metric against the sample set size, uncorrected and corrected (K&R Fig. 6).

    E[(1/M) Σ_u M̂(r_u)] = (1/M) Σ_u Σ_r P(r | R_u; N_u, n) M̂_g(u)(r) (eq. 16) is computed
    exactly, not simulated, for every n of ``sample_sizes`` that is at most the smallest N_u.

    Parameters
    ----------
    ranks : mapping of str to pandas.DataFrame
        Label -> ranks table (``rank``, ``n_candidates``).
    sample_sizes : sequence of int
        Sample set sizes n.
    metric, k : str, int or None
        The metric.
    methods : sequence of (str, float or None)
        ``("sampled", None)``, ``("rank_estimate", None)``, ``("cls", None)`` or ``("bv", γ)``.
    scheme : {"binomial", "hypergeometric", "actual"}
        A scheme of :data:`itemsampling_study.engine.STUDY_SCHEMES`: how items are drawn and which
        kernel the corrections assume.
    n_groups : int
        Groups of users by N_u for the corrections (:mod:`itemsampling.candidates`).

    Returns
    -------
    pandas.DataFrame
        Columns ``recommender``, ``sample_size``, ``method``, ``metric``, ``k``, ``expected``
        and ``exact``.
    """
    draw, kernel = STUDY_SCHEMES[check_choice("scheme", scheme, STUDY_SCHEMES)]
    study = {label: (check_ranks(f["rank"].to_numpy(), f["n_candidates"].to_numpy(), name=f"{label} ranks"),
                     f["n_candidates"].to_numpy(np.int64)) for label, f in ranks.items()}
    smallest = min(int(N.min()) for _, N in study.values())
    sizes = sorted({int(n) for n in sample_sizes if 2 <= int(n) <= smallest})
    if not sizes:
        raise ValueError(f"no sample size in {list(sample_sizes)} lies in 2..{smallest} (the smallest N_u)")
    for method, _ in methods:
        check_choice("curve method", method, ("sampled", "rank_estimate", "cls", "bv"))
    labels = [m if m != "bv" else f"bv_{g:g}" for m, g in methods]
    rows = []
    cache: dict[tuple, np.ndarray] = {}
    for label, (R, N) in study.items():
        exact = float(global_metrics(R, N, metric, k)["value"].iloc[0])
        group, group_n = item_groups(N, n_groups)
        for n in sizes:
            mats = np.empty((group_n.size, n, len(methods)))
            for g, n_g in enumerate(group_n.tolist()):
                for j, (method, gamma) in enumerate(methods):
                    key = (method, gamma, n_g, n)
                    if key not in cache:
                        cache[key] = _curve_correction(method, gamma, metric, k, n_g, n, kernel)
                    mats[g, :, j] = cache[key]
            values = _expected_values(R, N, group, mats, n, draw)
            rows.extend((label, n, name, metric, k, v, exact) for name, v in zip(labels, values, strict=True))
    out = pd.DataFrame(rows, columns=["recommender", "sample_size", "method", "metric", "k", "expected", "exact"])
    out["k"] = out["k"].astype("Int64")
    return out


def smallest_correct_sample(curve: pd.DataFrame) -> pd.DataFrame:
    """Per method, the smallest m = n - 1 of the curve from which on the expected metric orders
    each pair of recommenders (``pair`` = ``"X vs Y"``) and, with three or more, all of them
    (``"all"``) as the exact
    metric does, at that m and at every larger m of the curve (K&R Fig. 6: "needs m = 1000
    samples to order X and Y correctly"); missing when even the largest m does not.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``pair`` and ``smallest_sampled_items`` (nullable integer).
    """
    labels = list(dict.fromkeys(curve["recommender"]))
    groups = [[a, b] for i, a in enumerate(labels) for b in labels[i + 1:]] + ([labels] if len(labels) > 2 else [])
    rows = []
    for method, part in curve.groupby("method", sort=False):
        exact = part.drop_duplicates("recommender").set_index("recommender")["exact"]
        expected = part.pivot(index="sample_size", columns="recommender", values="expected").sort_index()
        for group in groups:
            truth = exact[group].sort_values(kind="stable").index.tolist()
            right = np.array([row.sort_values(kind="stable").index.tolist() == truth
                              for _, row in expected[group].iterrows()])
            wrong = np.flatnonzero(~right)
            first = 0 if wrong.size == 0 else wrong[-1] + 1
            size = int(expected.index[first]) - 1 if first < right.size else None
            rows.append({"method": method, "pair": " vs ".join(group) if len(group) == 2 else "all",
                         "smallest_sampled_items": size})
    out = pd.DataFrame(rows)
    out["smallest_sampled_items"] = out["smallest_sampled_items"].astype("Int64")
    return out


# ----------------------------------------------------------------------------- readings


def closest_reading(summary: pd.DataFrame) -> tuple[str, str] | None:
    """The (reading, tie rule) of ``sensitivity_summary`` whose exact metrics of the reading
    recommenders are closest to K&R's Table 3 (smallest ``paper_mean_abs_difference``; the first
    in the order of the configuration on a tie), or ``None`` without readings or off ml-1m.

    The rule looks at the exact metrics only, a fact of the setup: notebook 01 grades the claims
    of K&R about Y and Z on this reading (not those about the exact metrics themselves, which
    would pick their own setup).
    """
    distance = pd.to_numeric(summary.get("paper_mean_abs_difference", pd.Series(dtype=float)), errors="coerce")
    if not distance.notna().any():
        return None
    row = summary.loc[distance.idxmin()]
    return str(row["reading"]), str(row["ties"])


def reading_tables(config: Mapping, seed: int, reading_runs: pd.DataFrame | None, summary: pd.DataFrame,
                   ranks: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Tables 3 and 4 under every reading and tie rule, and Fig. 6 under the closest one.

    ``sensitivity_table3`` (:func:`summarize_runs`) and ``sensitivity_pairs``
    (:func:`order_agreement`) of the runs of each (reading, tie rule), ``default`` marking the
    main runs; ``fig6_closest_reading``: :func:`expected_metric_curve` of Recall@K, uncorrected
    and BV γ = ``curve_gamma``, under :func:`closest_reading` of ``summary``: the reading
    recommenders refitted as their chunks refit them
    (:func:`~itemsampling_study.readings.refit_ranks`), the others on their committed ``ranks``.
    Tables without rows when there are no readings.
    """
    keys = ["reading", "ties", "default"]
    tables = {"sensitivity_table3": pd.DataFrame(columns=[*keys, "metric", "k", "recommender", "exact", "method",
                                                          "mean", "std"]),
              "sensitivity_pairs": pd.DataFrame(columns=[*keys, "metric", "k", "method", "recommender_a",
                                                         "recommender_b", "agree", "repeats", "fraction"]),
              "fig6_closest_reading": pd.DataFrame(columns=["reading", "ties", "recommender", "sample_size", "method",
                                                            "metric", "k", "expected", "exact"])}
    if reading_runs is None:
        return tables
    default = default_reading(config)
    parts = runs_by_reading(config, reading_runs).groupby(["reading", "ties"], sort=False)
    for name, summarize in (("sensitivity_table3", summarize_runs), ("sensitivity_pairs", order_agreement)):
        tables[name] = pd.concat([_with_keys(summarize(part), {"reading": reading, "ties": ties,
                                                               "default": reading == default and ties == "random"})
                                  for (reading, ties), part in parts], ignore_index=True)
    closest = closest_reading(summary)
    if closest is not None:
        reading, ties = closest
        refits = {label: ranks[label] if (reading, ties) == (default, "random")
                  else refit_ranks(config, seed, label, reading)[0][ties]
                  for label in config["sensitivity"]["recommenders"]}
        curve = expected_metric_curve({**ranks, **refits}, config["curve_sample_sizes"], "recall", config["k"],
                                      (("sampled", None), ("bv", float(config["curve_gamma"]))),
                                      config["scheme"], config["n_item_groups"])
        tables["fig6_closest_reading"] = _with_keys(curve, {"reading": reading, "ties": ties})
    return tables


def predicted_agreement(table3: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    """Table 4 predicted from Table 3: a run orders a pair right with probability Φ(d / s).

    d is the gap of the two recommenders' means in the order of their exact values, s =
    sqrt(std_a² + std_b²) the spread of the difference of two independent runs (the draws of each
    recommender are seeded apart).

    Parameters
    ----------
    table3 : pandas.DataFrame
        Columns ``metric``, ``recommender``, ``exact``, ``method``, ``mean`` and ``std`` (Table 3).
    table4 : pandas.DataFrame
        Columns ``metric``, ``method``, ``recommender_a``, ``recommender_b``, ``agree`` and
        ``repeats`` (Table 4).

    Returns
    -------
    pandas.DataFrame
        ``table4``'s keys, ``fraction`` (observed, agree / repeats) and ``predicted``.
    """
    keys = ["metric", "method", "recommender"]
    cells = table3.set_index(keys)
    a = cells.reindex(pd.MultiIndex.from_frame(table4[["metric", "method", "recommender_a"]].set_axis(keys, axis=1)))
    b = cells.reindex(pd.MultiIndex.from_frame(table4[["metric", "method", "recommender_b"]].set_axis(keys, axis=1)))
    gap = (a["mean"].to_numpy() - b["mean"].to_numpy()) * np.sign(a["exact"].to_numpy() - b["exact"].to_numpy())
    spread = np.hypot(a["std"].to_numpy(), b["std"].to_numpy())
    return table4[["metric", "method", "recommender_a", "recommender_b"]].assign(
        fraction=(table4["agree"] / table4["repeats"]).to_numpy(), predicted=ndtr(gap / spread))


def paper_with_our_spreads(table3: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """K&R's Tables 3 and 4 (their exact values, means and counts of 100 runs) with the standard
    deviations of ``table3`` (ours, not the printed ±): the input of :func:`predicted_agreement`
    for the paper's own recommenders."""
    paper = paper_table("krichene2020kdd_table3").assign(value=lambda t: t["paper_percent"] / 100)
    exact = paper[paper["method"] == "exact"].set_index(["metric", "recommender"])["value"].rename("exact")
    means = paper[paper["method"] != "exact"][["metric", "recommender", "method", "value"]].rename(
        columns={"value": "mean"}).join(exact, on=["metric", "recommender"])
    ours = table3[["metric", "recommender", "method", "std"]]
    table4 = paper_table("krichene2020kdd_table4").rename(columns={"paper_agree": "agree"}).assign(repeats=100)
    return means.merge(ours, on=["metric", "recommender", "method"]), table4.drop(columns="source")


# ----------------------------------------------------------------------------- all tables


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``sampled_metrics`` section, and in
    ``model_hyperparameters`` the configured hyper-parameters of its recommenders on its dataset
    (the readings refit them; checked by
    :func:`~itemsampling_study.readings.check_sensitivity`)."""
    out = dict(config["sampled_metrics"])
    per_dataset = config.get("hyperparameters", {}).get(out["dataset"], {})
    out["model_hyperparameters"] = {model: {**config["models"].get(model, {}), **per_dataset.get(model, {})}
                                    for model in out["recommenders"].values()}
    check_sensitivity(out)
    return out


def chunks(config: Mapping) -> list[dict]:
    """One chunk of runs per recommender (its dataset, model, protocol), then one per reading
    (:func:`~itemsampling_study.readings.sensitivity_chunks`)."""
    return [{"dataset": config["dataset"], "model": model, "protocol": config["protocol"]}
            for model in config["recommenders"].values()] + sensitivity_chunks(config)


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from (besides the chunks): the recommenders' ranks."""
    return [str(ranks_path(c["dataset"], c["model"], c["protocol"])) for c in chunks(config)]


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 01 from the runs of all recommenders and their global ranks.

    Parameters
    ----------
    config : mapping
        The ``sampled_metrics`` section of the configuration.
    seed : int
        Study seed (the toy Monte Carlo uses it directly).
    runs : pandas.DataFrame
        The chunks of :func:`chunk_table`, concatenated (any order).
    root : str or Path
        Repository root (where ``results/ranks`` is).
    """
    runs, reading_runs = split_runs(runs)
    ranks = {label: read_model_ranks(config["dataset"], model, config["protocol"], root)
             for label, model in config["recommenders"].items()}
    labels = {model: label for label, model in config["recommenders"].items()}
    runs = runs.assign(recommender=runs["model"].map(labels))
    order = {label: i for i, label in enumerate(config["recommenders"])}
    runs = runs.sort_values(["recommender", "repeat"], key=lambda s: s.map(order) if s.name == "recommender" else s,
                            kind="stable").reset_index(drop=True)
    table3 = summarize_runs(runs)
    curve = expected_metric_curve(ranks, config["curve_sample_sizes"], "recall", config["k"],
                                  (("sampled", None), ("bv", float(config["curve_gamma"]))),
                                  config["scheme"], config["n_item_groups"])
    kernel = _kernel_scheme(config["scheme"])
    sensitivity = sensitivity_tables(config, reading_runs)
    toy_keys = {"dataset": "toy", "protocol": "all"}
    real_keys = {"dataset": config["dataset"], "protocol": config["protocol"]}
    sampled = {"scheme": config["scheme"], "sample_size": config["sample_size"]}
    tables = {
        **{name: _with_keys(frame, {**toy_keys, **({"scheme": kernel, "sample_size": toy.TOY_SAMPLE_SIZE}
                                                  if name == "table2_toy_sampled" else {})})
           for name, frame in toy_tables(config["toy_repeats"], seed, kernel).items()},
        "fig2_toy_expected": _with_keys(toy_expected_curves(kernel), {**toy_keys, "scheme": kernel}),
        "fig3_expected_vs_true_rank": _with_keys(expected_vs_true_rank(kernel), {**toy_keys, "scheme": kernel}),
        **{name: _with_keys(frame, {**toy_keys, "scheme": kernel, "sample_size": FIG4_SAMPLE_SIZE})
           for name, frame in corrected_ap(config["gammas"], kernel).items()},
        "rank_summary": _with_keys(rank_summary(ranks), real_keys),
        "fig5_rank_histogram": _with_keys(rank_histogram(ranks), real_keys),
        "table3_runs": runs[["recommender", *[c for c in runs.columns if c != "recommender"]]],
        "table3": _with_keys(table3, {**real_keys, **sampled}),
        "table3_orders": _with_keys(mean_orders(table3), {**real_keys, **sampled}),
        "table4": _with_keys(order_agreement(runs), {**real_keys, **sampled}),
        "fig6_expected_recall": _with_keys(curve, {**real_keys, "scheme": config["scheme"]}),
        "fig6_smallest_sample": _with_keys(smallest_correct_sample(curve), {**real_keys, "scheme": config["scheme"]}),
        **{name: _with_keys(frame, {**real_keys, **sampled}) for name, frame in sensitivity.items()},
        **{name: _with_keys(frame, {**real_keys, **(sampled if name.startswith("sensitivity") else
                                                   {"scheme": config["scheme"]})})
           for name, frame in reading_tables(config, seed, reading_runs, sensitivity["sensitivity_summary"],
                                             ranks).items()},
    }
    return tables


def _with_keys(frame: pd.DataFrame, keys: Mapping) -> pd.DataFrame:
    """``frame`` with the setting columns (dataset, protocol, scheme, sample_size) in front."""
    out = frame.copy()
    for i, (name, value) in enumerate(keys.items()):
        out.insert(i, name, value)
    return out


def _kernel_scheme(scheme: str) -> str:
    """The kernel that the estimators of a study scheme assume."""
    return STUDY_SCHEMES[check_choice("scheme", scheme, STUDY_SCHEMES)][1]
