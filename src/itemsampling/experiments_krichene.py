"""The real-data study of Krichene & Rendle, KDD 2020 (§6): Tables 3–4 and Figure 6.

Given the global ranks R_u of the held-out item of every test user for a few recommenders
(K&R: X, Y, Z on MovieLens 1M), this module computes

* :func:`exact_metrics` — the exact Recall and NDCG at K, AP and AUC (K&R Table 3, "Exact");
* :func:`sampled_metric_runs` — for each of many independent repetitions, the sampled metric
  and its corrections (rank estimate eq. 20, CLS eq. 21 with the monotone constraint, BV eq. 25
  for several γ, all with a uniform prior as in §6.3) on a sample set of n items;
* :func:`summarize_runs` — mean ± standard deviation over the repetitions (Table 3);
* :func:`order_agreement` — how often each metric orders each pair of recommenders as the
  exact metric does (Table 4);
* :func:`expected_metric_curve` — the expected (not simulated) metric as a function of the
  sample set size, uncorrected and corrected (Figure 6; K&R eq. 16).

**Candidates per user.** Under the ``unseen`` protocol user u is ranked among its N_u unseen
items, so both the sampling and the corrections depend on N_u. Sampled ranks are always drawn
with the user's exact N_u (:func:`itemsampling.simulation.sample_ranks`). A correction M̂ is a
function of (N, n); it is computed once for each of ``n_groups`` groups of users with similar
N_u (contiguous quantile groups, each using the rounded mean N_u of its users) and applied to
the users of that group. Every estimator used here is an average of M̂(r_u) over users, so the
estimate is ``(1/M) Σ_g Σ_{u in g} M̂_g(r_u)``. With ``n_groups = 1`` everybody shares one N;
under the ``all`` protocol N_u = N and the grouping is exact.

**Runs.** Each recommender gets its own random stream (a child of ``SeedSequence(seed)`` in the
order of the labels), so adding a recommender does not change the others' numbers. Sampled
ranks are simulated from the global ranks, which has the same distribution as sampling item ids
and scoring them when scores have no ties.

:func:`main` is the command line used by the workflow
(``python -m itemsampling.experiments_krichene --help``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from . import corrections
from ._validation import check_choice, check_positive_integer, check_ranks
from .experiments import pairwise_order_agreement
from .kernels import SCHEMES, log_kernel_block
from .metrics import global_metrics, rank_weight
from .simulation import sample_ranks

__all__ = [
    "DEFAULT_GAMMAS",
    "PAPER_TABLE_3",
    "PAPER_TABLE_4",
    "exact_metrics",
    "expected_metric_curve",
    "item_groups",
    "load_ranks",
    "main",
    "method_label",
    "order_agreement",
    "sampled_metric_runs",
    "sampled_metrics_tables",
    "summarize_runs",
    "table3_layout",
    "table4_layout",
    "write_table",
]

#: BV trade-offs γ of K&R Table 3.
DEFAULT_GAMMAS = (1.0, 0.1, 0.01, 0.001)
#: Column order of K&R Tables 3–4 (after "Exact").
PAPER_METHODS = ("sampled", "rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001")
_T3 = {
    ("recall", "X"): (7.60, 66.19, 17.46, 8.52, 4.71, 6.49, 7.18, 7.32),
    ("recall", "Y"): (8.84, 56.51, 17.26, 8.42, 4.60, 6.95, 8.18, 8.54),
    ("recall", "Z"): (9.42, 54.20, 18.67, 9.10, 4.97, 7.44, 8.63, 9.08),
    ("ndcg", "X"): (3.76, 39.21, 17.46, 3.99, 2.16, 3.00, 3.34, 3.41),
    ("ndcg", "Y"): (4.59, 34.82, 17.26, 3.94, 2.12, 3.24, 3.85, 4.03),
    ("ndcg", "Z"): (4.79, 35.34, 18.67, 4.27, 2.29, 3.46, 4.05, 4.31),
    ("ap", "X"): (3.75, 32.55, 18.12, 3.58, 2.44, 3.13, 3.37, 3.42),
    ("ap", "Y"): (4.32, 30.01, 17.81, 3.54, 2.32, 3.19, 3.62, 3.73),
    ("ap", "Z"): (4.44, 30.71, 19.20, 3.82, 2.45, 3.38, 3.79, 3.97),
    ("auc", "X"): (89.13, 89.12, 89.24, 89.12, 88.36, 89.04, 89.11, 89.12),
    ("auc", "Y"): (85.33, 85.33, 85.48, 85.32, 84.63, 85.26, 85.32, 85.32),
    ("auc", "Z"): (74.73, 75.04, 75.24, 75.04, 74.51, 75.02, 75.02, 75.02),
}
#: K&R Table 3 as printed (percent): exact value and mean of each method over 100 runs on
#: ml-1m with 100 sampled items; Recall and NDCG at 10, AP and AUC without cut-off.
PAPER_TABLE_3 = pd.DataFrame(
    [(m, r, meth, v) for (m, r), vals in _T3.items() for meth, v in zip(("exact", *PAPER_METHODS), vals, strict=True)],
    columns=["metric", "recommender", "method", "paper_percent"],
)
_T4 = {
    ("X", "Y"): {"recall": (0, 31, 31, 11, 93, 91, 78), "ndcg": (0, 31, 31, 15, 93, 88, 76),
                 "ap": (0, 24, 31, 0, 68, 79, 66), "auc": (100,) * 7},
    ("X", "Z"): {"recall": (0, 100, 100, 100, 100, 95, 86), "ndcg": (0, 100, 100, 100, 100, 95, 82),
                 "ap": (0, 100, 100, 61, 99, 92, 81), "auc": (100,) * 7},
    ("Y", "Z"): {"recall": (0, 100, 100, 100, 95, 72, 68), "ndcg": (100, 100, 100, 100, 94, 70, 67),
                 "ap": (100, 100, 100, 100, 98, 75, 68), "auc": (100,) * 7},
}
#: K&R Table 4 as printed: out of 100 runs, how often each method ordered the pair correctly.
PAPER_TABLE_4 = pd.DataFrame(
    [(a, b, m, meth, v) for (a, b), per in _T4.items() for m, vals in per.items()
     for meth, v in zip(PAPER_METHODS, vals, strict=True)],
    columns=["recommender_a", "recommender_b", "metric", "method", "paper_agree"],
)
#: Entries of P(r | R) evaluated at once by :func:`expected_metric_curve` (~100 MB).
_BLOCK_ENTRIES = 2**23


def write_table(frame: pd.DataFrame, path: str | Path, float_format: str = "%.10g") -> Path:
    """Write a CSV table whose bytes depend only on its content.

    Floats are printed with ``float_format`` (10 significant digits), lines end with ``\\n``
    and the index is not written, so the same numbers always give the same file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format=float_format, lineterminator="\n")
    return path


def load_ranks(path: str | Path) -> pd.DataFrame:
    """Read a ranks file (``user``, ``item``, ``rank``, ``n_candidates``; parquet or CSV)."""
    path = Path(path)
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    missing = {"user", "rank", "n_candidates"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}; a ranks file has user, item, rank, n_candidates")
    return frame.sort_values("user", kind="stable").reset_index(drop=True)


def method_label(method: str, gamma: float | None = None) -> str:
    """Column label of a correction: ``sampled``, ``rank_estimate``, ``cls`` or ``bv_<γ>``."""
    return f"bv_{gamma:g}" if method == "bv" else method


def _targets(k: int) -> list[tuple[str, int | None]]:
    """The (metric, K) pairs of K&R Tables 3–4: Recall@K and NDCG@K; AP and AUC without cut-off.

    K&R §6 report "Recall@10 = HR@10 and NDCG@10. In addition, we report AP and AUC" — both
    untruncated (their exact AP of X, 3.75, is the untruncated mean reciprocal rank; AP@10 is
    about 1.2 points lower).
    """
    return [("recall", k), ("ndcg", k), ("ap", None), ("auc", None)]


def _check_study(ranks: Mapping[str, pd.DataFrame]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Global ranks R_u and candidates N_u of each recommender, checked."""
    if len(ranks) < 1:
        raise ValueError("ranks must hold at least one recommender")
    out = {}
    for label, frame in ranks.items():
        n_items = frame["n_candidates"].to_numpy(np.int64)
        if n_items.min() < 2:
            raise ValueError(f"{label}: every user needs at least 2 candidate items")
        out[label] = (check_ranks(frame["rank"].to_numpy(), n_items, name=f"{label} ranks"), n_items)
    return out


def item_groups(n_items, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous quantile groups of users by their number of candidates N_u.

    Parameters
    ----------
    n_items : array_like of int
        N_u per user.
    n_groups : int
        Largest number of groups (fewer when N_u takes fewer distinct values).

    Returns
    -------
    group : numpy.ndarray
        int64 group index of each user; users with equal N_u share a group.
    group_n_items : numpy.ndarray
        int64 rounded mean N_u of each group.
    """
    N = np.asarray(n_items, dtype=np.int64)
    check_positive_integer("n_groups", n_groups)
    edges = np.unique(np.quantile(N, np.linspace(0, 1, n_groups + 1)[1:-1], method="lower"))
    group = np.searchsorted(edges, N, side="left")
    _, group = np.unique(group, return_inverse=True)  # drop empty groups
    sums = np.bincount(group, weights=N)
    counts = np.bincount(group)
    return group.astype(np.int64), np.rint(sums / counts).astype(np.int64)


def _correction_matrix(method: str, n_items: int, sample_size: int, k: int, scheme: str,
                       gamma: float | None) -> np.ndarray:
    """M̂ for the targets of :func:`_targets`, shape (n, 4), for one (N, n)."""
    pairs = _targets(k)
    if method == "sampled":
        return corrections.sampled(pairs, sample_size)
    ranks = np.arange(1, n_items + 1)
    weights = np.column_stack([rank_weight(m, ranks, n_items, kk) for m, kk in pairs])
    if method == "rank_estimate":
        return corrections.rank_estimate(weights, n_items, sample_size)
    if method == "cls":
        return corrections.cls(weights, n_items, sample_size, scheme=scheme)
    return corrections.bv_operator(n_items, sample_size, gamma=gamma, scheme=scheme).apply(weights)


def _method_list(gammas: Sequence[float]) -> list[tuple[str, float | None]]:
    return [("sampled", None), ("rank_estimate", None), ("cls", None)] + [("bv", float(g)) for g in gammas]


def exact_metrics(ranks: Mapping[str, pd.DataFrame], k: int = 10) -> pd.DataFrame:
    """Exact Recall and NDCG at ``k``, AP and AUC of each recommender (K&R Table 3, "Exact").

    Each user's AUC uses its own number of candidates N_u.

    Returns
    -------
    pandas.DataFrame
        Columns ``recommender``, ``metric``, ``k`` (empty for AUC) and ``value``.
    """
    rows = []
    for label, (R, N) in _check_study(ranks).items():
        for metric, kk in _targets(k):
            frame = global_metrics(R, N, metric, kk)
            frame.insert(0, "recommender", label)
            rows.append(frame)
    return pd.concat(rows, ignore_index=True)


def sampled_metric_runs(ranks: Mapping[str, pd.DataFrame], sample_size: int = 101,
                        repeats: int = 100, seed: int = 0, k: int = 10,
                        gammas: Sequence[float] = DEFAULT_GAMMAS, scheme: str = "binomial",
                        n_groups: int = 20, progress: bool | None = None) -> pd.DataFrame:
    """Sampled and corrected metrics of each recommender in each of ``repeats`` runs.

    In every run each user's sampled rank r_u is drawn from its global rank R_u and N_u, and
    every method turns the ranks into estimates of Recall@K, NDCG@K, AP and AUC: the sampled
    metric, the rank estimate (K&R eq. 20), CLS (eq. 21, monotone) and BV γ (eq. 25) with a
    uniform prior (§6.3).

    Parameters
    ----------
    ranks : mapping of str to pandas.DataFrame
        Label -> ranks table (``rank``, ``n_candidates``); see :func:`load_ranks`.
    sample_size : int
        Sample set size n (the held-out item and n - 1 sampled items; K&R: 101).
    repeats : int
        Number of runs (K&R: 100).
    seed : int
        Seed of the random streams (one child stream per recommender).
    k : int
        Cut-off of Recall, NDCG and AP.
    gammas : sequence of float
        BV trade-offs γ.
    scheme : {"binomial", "hypergeometric"}
        Sampling with or without replacement; the corrections assume the same scheme.
    n_groups : int
        Groups of users by N_u for the corrections (see the module docstring).
    progress : bool or None
        Show a progress bar (None: only when interactive).

    Returns
    -------
    pandas.DataFrame
        Columns ``recommender``, ``run`` (0-based), ``method``, ``metric``, ``k`` and
        ``estimate``.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    check_positive_integer("repeats", repeats)
    study = _check_study(ranks)
    methods = _method_list(gammas)
    pairs = _targets(k)
    children = np.random.SeedSequence(seed).spawn(len(study))
    cache: dict[tuple, np.ndarray] = {}
    frames = []
    for (label, (R, N)), child in zip(study.items(), children, strict=True):
        if sample_size > N.min():
            raise ValueError(
                f"{label}: sample_size n={sample_size} exceeds the smallest number of candidates "
                f"N_u={int(N.min())}; choose n <= {int(N.min())}"
            )
        group, group_n = item_groups(N, n_groups)
        # M̂ for every group and method, stacked: (groups, n, methods * targets)
        mats = []
        for n_g in group_n.tolist():
            cols = []
            for method, gamma in methods:
                key = (method, gamma, n_g, sample_size, k, scheme)
                if key not in cache:
                    cache[key] = _correction_matrix(method, n_g, sample_size, k, scheme, gamma)
                cols.append(cache[key])
            mats.append(np.hstack(cols))
        mats = np.stack(mats)
        gen = np.random.default_rng(child)
        values = np.empty((repeats, mats.shape[2]))
        for run in tqdm(range(repeats), desc=f"runs {label}", disable=None if progress is None else not progress):
            r = sample_ranks(R, N, sample_size, gen, scheme)
            counts = np.zeros((group_n.size, sample_size))
            np.add.at(counts, (group, r - 1), 1.0)
            values[run] = np.einsum("gr,grc->c", counts, mats) / R.size
        labels = [(method_label(m, g), metric, kk) for m, g in methods for metric, kk in pairs]
        frame = pd.DataFrame(
            {
                "recommender": label,
                "run": np.repeat(np.arange(repeats), len(labels)),
                "method": [lab[0] for lab in labels] * repeats,
                "metric": [lab[1] for lab in labels] * repeats,
                "k": [lab[2] for lab in labels] * repeats,
                "estimate": values.ravel(),
            }
        )
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["k"] = out["k"].astype("Int64")
    return out


def summarize_runs(runs: pd.DataFrame, exact: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1) over runs next to the exact value (Table 3).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``recommender``, ``exact``, ``method``, ``mean``, ``std``;
        methods in the order of the runs table.
    """
    order = {m: i for i, m in enumerate(runs["method"].unique())}
    stats = runs.groupby(["metric", "k", "recommender", "method"], dropna=False, sort=False)["estimate"]
    out = stats.agg(mean="mean", std="std").reset_index()
    out = out.merge(exact.rename(columns={"value": "exact"}), on=["recommender", "metric", "k"], how="left")
    out["_order"] = out["method"].map(order)
    metric_order = {m: i for i, m in enumerate(runs["metric"].unique())}
    out["_metric"] = out["metric"].map(metric_order)
    out = out.sort_values(["_metric", "recommender", "_order"], kind="stable")
    return out[["metric", "k", "recommender", "exact", "method", "mean", "std"]].reset_index(drop=True)


def order_agreement(runs: pd.DataFrame, exact: pd.DataFrame) -> pd.DataFrame:
    """Out of the runs, how often each method orders each pair as the exact metric (Table 4).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``k``, ``method``, ``recommender_a``, ``recommender_b``, ``agree``
        (number of runs), ``repeats`` and ``fraction``.
    """
    table = pairwise_order_agreement(runs, exact, model="recommender", repeat="run")
    return table[["metric", "k", "method", "recommender_a", "recommender_b", "agree", "repeats", "fraction"]]


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
                          scheme: str = "binomial", n_groups: int = 20,
                          progress: bool | None = None) -> pd.DataFrame:
    """Expected sampled (and corrected) metric as the sample set size grows (K&R Figure 6).

    For each n, E[(1/M) Σ_u M̂(r_u)] = (1/M) Σ_u Σ_r P(r | R_u; N_u, n) M̂(r) exactly, with M̂
    the uncorrected metric (``sampled``) or a correction (``rank_estimate``, ``cls``, ``bv``
    with its γ) computed per group of N_u (module docstring). Sample sizes larger than the
    smallest N_u of the study are dropped.

    Returns
    -------
    pandas.DataFrame
        Columns ``recommender``, ``sample_size``, ``method``, ``metric``, ``k``, ``expected``
        and ``exact``.
    """
    scheme = check_choice("sampling scheme", scheme, SCHEMES)
    study = _check_study(ranks)
    smallest = min(int(N.min()) for _, N in study.values())
    sizes = sorted({int(n) for n in sample_sizes if 2 <= int(n) <= smallest})
    if not sizes:
        raise ValueError(f"no sample size in {list(sample_sizes)} lies in 2..{smallest} (the smallest N_u)")
    for method, _ in methods:
        check_choice("curve method", method, ("sampled", "rank_estimate", "cls", "bv"))
    rows = []
    cache: dict[tuple, np.ndarray] = {}
    for label, (R, N) in study.items():
        exact = float(global_metrics(R, N, metric, k)["value"].iloc[0])
        group, group_n = item_groups(N, n_groups)
        for n in tqdm(sizes, desc=f"curve {label}", disable=None if progress is None else not progress):
            mats = np.empty((group_n.size, n, len(methods)))
            for g, n_g in enumerate(group_n.tolist()):
                for j, (method, gamma) in enumerate(methods):
                    key = (method, gamma, n_g, n)
                    if key not in cache:
                        cache[key] = _curve_correction(method, gamma, metric, k, n_g, n, scheme)
                    mats[g, :, j] = cache[key]
            values = _expected_values(R, N, group, mats, n, scheme)
            rows.extend((label, n, method_label(m, gm), metric, k, v, exact)
                        for (m, gm), v in zip(methods, values, strict=True))
    out = pd.DataFrame(rows, columns=["recommender", "sample_size", "method", "metric", "k", "expected", "exact"])
    out["k"] = out["k"].astype("Int64")
    return out


def _parse_ranks(items: Sequence[str]) -> dict[str, pd.DataFrame]:
    out = {}
    for item in items:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            raise ValueError(f"--ranks expects LABEL=PATH, got {item!r}")
        out[label] = load_ranks(path)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: compute the tables of K&R Tables 3–4 and Figure 6 from ranks files."""
    parser = argparse.ArgumentParser(
        prog="python -m itemsampling.experiments_krichene",
        description="Sampled and corrected metrics on real ranks (Krichene & Rendle, KDD 2020, §6).",
    )
    parser.add_argument("--ranks", nargs="+", required=True, metavar="LABEL=PATH",
                        help="ranks file of each recommender (columns rank, n_candidates)")
    parser.add_argument("--sample-size", type=int, default=101, help="sample set size n (default 101)")
    parser.add_argument("--repeats", type=int, default=100, help="number of runs (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=10, help="cut-off of Recall, NDCG, AP (default 10)")
    parser.add_argument("--gammas", type=float, nargs="+", default=list(DEFAULT_GAMMAS))
    parser.add_argument("--scheme", choices=SCHEMES, default="binomial")
    parser.add_argument("--n-groups", type=int, default=20)
    parser.add_argument("--curve-sample-sizes", type=int, nargs="+", default=[11, 21, 51, 101, 201, 501, 1001])
    parser.add_argument("--curve-gamma", type=float, default=0.1)
    parser.add_argument("--out-dir", type=Path, required=True, help="folder of the four CSV tables")
    args = parser.parse_args(argv)
    try:
        tables = sampled_metrics_tables(
            _parse_ranks(args.ranks), sample_size=args.sample_size, repeats=args.repeats,
            seed=args.seed, k=args.k, gammas=args.gammas, scheme=args.scheme,
            n_groups=args.n_groups, curve_sample_sizes=args.curve_sample_sizes,
            curve_gamma=args.curve_gamma,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    for name, frame in tables.items():
        write_table(frame, args.out_dir / f"{name}.csv")
    return 0


def sampled_metrics_tables(ranks: Mapping[str, pd.DataFrame], *, sample_size: int, repeats: int,
                           seed: int, k: int, gammas: Sequence[float], scheme: str, n_groups: int,
                           curve_sample_sizes: Sequence[int], curve_gamma: float,
                           progress: bool | None = None) -> dict[str, pd.DataFrame]:
    """All tables of the study: ``table3_runs``, ``table3``, ``table4``, ``fig6_expected_recall``.

    See :func:`sampled_metric_runs`, :func:`summarize_runs`, :func:`order_agreement` and
    :func:`expected_metric_curve` for the meaning of each parameter and column.
    """
    exact = exact_metrics(ranks, k)
    runs = sampled_metric_runs(ranks, sample_size, repeats, seed, k, gammas, scheme, n_groups, progress)
    curve = expected_metric_curve(ranks, curve_sample_sizes, "recall", k,
                                  (("sampled", None), ("bv", float(curve_gamma))), scheme, n_groups,
                                  progress)
    return {
        "table3_runs": runs,
        "table3": summarize_runs(runs, exact),
        "table4": order_agreement(runs, exact),
        "fig6_expected_recall": curve,
    }


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
