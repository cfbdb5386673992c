"""Notebook 02: the sampling theorem (Li, Jin, Gao & Liu, KDD 2020 §2).

One module past 500 lines, because its chunks and its tables must draw the same user subsets and
read the same draws, which its private helpers define once for both.

Every table of the notebook, computed from the global ranks of each (dataset, model, protocol)
of the ``sampling_theorem`` section and from the Monte Carlo runs of the study engine. A chunk
is one (dataset, model, protocol): ``repeats`` draws of SHR@k, k = 1..n, for all test users, and
for random subsets of ``user_counts`` users at ``concentration_ks`` (:func:`chunk_table`).

* ``fig1_global_hit_ratio``: HR@K of every model on ``figure_dataset``, every K up to the
  largest zoom, then ``curve_points`` log-spaced K (Fig. 1a);
* ``fig1_sampled_hit_ratio``: for every protocol and model on ``figure_dataset`` and k = 1..n,
  E[SHR@k] (eq. 4) and its standard deviation (eq. 5), the Monte Carlo mean and std over the
  repeats, the first draw, the mapped location f(k) and HR@⌊f(k)⌋ (Fig. 1b;
  :func:`sampled_curves`);
* ``theorem_pairs``: every pair of models on every dataset and protocol — do their HR curves
  dominate one another or cross, does E[SHR@k] keep the order for every k, where does the
  sampled order flip, does the sampled winner match the global winner at K = f(k), and does
  the Monte Carlo agree (Theorem 2.1; :func:`pair_table`);
* ``concentration``: the spread of SHR@k over the repeats against its analytic standard
  deviation (eq. 5) and Hoeffding's bound, for several numbers of users M (§2.4);
* ``fig2_rank_distribution`` and ``fig2_hit_probability``: W_R (eq. 2) and HR@K of
  ``figure_model``, and p^R(k) = P(r <= k | R) next to the step 1{R <= f(k)} (Fig. 2).

**Mapping.** f(k) is :func:`itemsampling.mapping` of the configured kind. Under the ``unseen``
protocol every user has its own N_u; f(k) and p^R(k) then use N̄, the rounded mean N_u (the
expectations and the Monte Carlo always use each user's own N_u).

Configuration: the ``sampling_theorem`` section of ``config/config.yaml`` (see the schema).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtri

from itemsampling.estimators import Estimator
from itemsampling.hit_ratio import (
    dominance,
    hit_probabilities,
    hit_ratio_curve,
    hoeffding_bound,
    hoeffding_radius,
    sampled_hit_ratio_moments,
    sign_changes,
)
from itemsampling.mappings import mapping

from .engine import derive_seed, repeat_estimates
from .tables import ranks_path, read_model_ranks

__all__ = [
    "chunk_table",
    "chunks",
    "concentration_summary",
    "concentration_table",
    "global_curve_table",
    "inputs",
    "k_ranges",
    "mapped_locations",
    "pair_table",
    "rank_distribution_tables",
    "sample_sizes",
    "sampled_curves",
    "study_config",
    "study_tables",
    "theorem_summary",
    "user_subset",
]

#: Ranks at which Fig. 2 tabulates the (smooth) hit probabilities p^R(k).
FIG2_POINTS = 200
#: Differences of expectations within this tolerance count as ties (rounding of sums of ~1e4 terms).
TIE = 1e-12


# ----------------------------------------------------------------------------- chunks


def study_config(config: Mapping) -> dict:
    """The parameters of this study: the ``sampling_theorem`` section, checked across its keys."""
    section = dict(config["sampling_theorem"])
    models, n = section["models"], section["sample_size"]
    named = {"figure_model": [section["figure_model"]], "example_pair": section["example_pair"]}
    for key, values in named.items():
        if not set(values) <= set(models):
            raise ValueError(f"sampling_theorem.{key} {values} must name models of sampling_theorem.models {models}")
    if section["figure_dataset"] not in section["datasets"]:
        raise ValueError(f"sampling_theorem.figure_dataset {section['figure_dataset']!r} is not among its "
                         f"datasets {section['datasets']}")
    for key in ("fig2_ks", "concentration_ks"):
        if max(section[key]) > n:
            raise ValueError(f"sampling_theorem.{key} {section[key]} must not exceed sample_size n = {n}")
    spec = section["mapping"]
    if (spec["kind"] == "beta") != (spec.get("a") is not None):
        raise ValueError(f"sampling_theorem.mapping {spec}: the parameter a is needed by kind beta, and only by it")
    return section


def chunks(config: Mapping) -> list[dict]:
    """One chunk per (dataset, model, protocol)."""
    return [{"dataset": d, "model": m, "protocol": p}
            for d in config["datasets"] for m in config["models"] for p in config["protocols"]]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The sample set size drawn from the ranks of each (dataset, protocol) (the workflow checks
    it against the smallest N_u before planning a run)."""
    return {(c["dataset"], c["protocol"]): int(config["sample_size"]) for c in chunks(config)}


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from (besides the chunks): the ranks of every chunk."""
    return [str(ranks_path(c["dataset"], c["model"], c["protocol"])) for c in chunks(config)]


def user_subset(users: np.ndarray, count: int, seed: int, dataset: str) -> np.ndarray:
    """Sorted ids of ``count`` test users drawn without replacement from ``users``.

    The draw depends on (seed, dataset, count) only, so every model and protocol of a dataset
    is evaluated on the same users.
    """
    rng = np.random.default_rng(derive_seed(seed, dataset, "users", count))
    return np.sort(rng.choice(np.unique(users), size=count, replace=False))


def _user_seed(seed: int, count: int) -> int:
    """The study seed of the draws on ``count`` users (the draws of all users use ``seed``)."""
    return int(derive_seed(seed, "users", count).generate_state(1)[0])


def _user_counts(config: Mapping, n_users: int) -> list[int]:
    """The configured user counts below the number of test users, then all of them."""
    return sorted({int(m) for m in config["user_counts"] if int(m) < n_users} | {n_users})


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Monte Carlo runs of one (dataset, model, protocol): SHR@k of ``repeats`` draws.

    The sampled hit ratio SHR@k is the ``sampled`` estimate of Recall@k (eq. 3). All test users
    give k = 1..n; each user count M of ``user_counts`` (smaller than the number of test users)
    gives ``concentration_ks`` on the users of :func:`user_subset`, with its own seed.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`itemsampling_study.engine.RUN_COLUMNS` and ``users`` (M).
    """
    ranks = ranks.sort_values("user", kind="stable")
    n_users = len(ranks)
    blocks = []
    for count in _user_counts(config, n_users):
        if count == n_users:
            ks, draw_seed = range(1, config["sample_size"] + 1), seed
        else:
            ks, draw_seed = config["concentration_ks"], _user_seed(seed, count)
        R, N = _users_of(ranks, count, seed, labels["dataset"])
        runs = repeat_estimates(
            R, N, estimators=[Estimator("sampled")],
            targets=[("recall", int(k)) for k in ks], sample_sizes=[config["sample_size"]], seed=draw_seed,
            labels=labels, schemes=[config["scheme"]], repeats=config["repeats"], progress=False,
        )
        blocks.append(runs.assign(users=count))
    return pd.concat(blocks, ignore_index=True)


# ----------------------------------------------------------------------------- helpers


def mapped_locations(config: Mapping, n_items: int) -> np.ndarray:
    """f(k) for k = 1..n: :func:`itemsampling.mapping` of the configured kind, within [1, N]."""
    n, spec = config["sample_size"], config["mapping"]
    f = mapping(np.arange(1, n + 1), n_items, n, spec["kind"], spec.get("a"))
    return np.clip(f, 1.0, n_items)


def _hr_at(hr: np.ndarray, locations: np.ndarray) -> np.ndarray:
    """HR@⌊f⌋ for real-valued locations f >= 1 (Li et al. KDD 2020, Appendix B.2)."""
    return hr[np.floor(locations).astype(np.int64) - 1]


def _mean_items(N: np.ndarray) -> int:
    """N̄: the rounded mean number of candidates (N itself when all users have the same)."""
    return int(np.rint(np.mean(N)))


def k_ranges(ks: Sequence[int]) -> str:
    """Sorted integers as compact ranges: ``[1, 2, 3, 7, 9, 10]`` -> ``"1-3, 7, 9-10"``."""
    ks = sorted(int(k) for k in ks)
    runs = []
    for k in ks:
        if runs and k == runs[-1][1] + 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _draws(runs: pd.DataFrame) -> dict[tuple[str, str, str, int], pd.DataFrame]:
    """(dataset, protocol, model, users M) -> SHR@k of the draws: one row per repeat, one column per k."""
    return {key: part.pivot(index="repeat", columns="k", values="estimate")
            for key, part in runs.groupby(["dataset", "protocol", "model", "users"], sort=True)}


# ----------------------------------------------------------------------------- tables


def global_curve_table(hr: Mapping[str, np.ndarray], max_rank: int, points: int) -> pd.DataFrame:
    """HR@K of each model at every K <= ``max_rank`` and ``points`` log-spaced K up to N.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``rank`` (K) and ``hr``.
    """
    frames = []
    for model, curve in hr.items():
        n = curve.size
        grid = np.unique(np.concatenate([np.arange(1, min(max_rank, n) + 1),
                                         np.rint(np.geomspace(1, n, points)).astype(np.int64)]))
        frames.append(pd.DataFrame({"model": model, "rank": grid, "hr": curve[grid - 1]}))
    return pd.concat(frames, ignore_index=True)


def sampled_curves(config: Mapping, R: np.ndarray, N: np.ndarray, hr: np.ndarray,
                   draws: np.ndarray) -> pd.DataFrame:
    """SHR@k of one (dataset, protocol, model), k = 1..n: exact moments, Monte Carlo, mapping.

    Returns
    -------
    pandas.DataFrame
        Columns ``n_items`` (N̄), ``k``, ``f_k``, ``hr_at_f_k``, ``expected`` (eq. 4), ``std``
        (the square root of eq. 5), ``mc_mean``, ``mc_std`` (over the repeats, ddof = 1) and
        ``draw`` (the first repeat).
    """
    n = config["sample_size"]
    mean, var = sampled_hit_ratio_moments(R, N, n, config["scheme"])
    n_bar = _mean_items(N)
    f = mapped_locations(config, n_bar)
    return pd.DataFrame({
        "n_items": n_bar, "k": np.arange(1, n + 1), "f_k": f, "hr_at_f_k": _hr_at(hr, f),
        "expected": mean, "std": np.sqrt(var), "mc_mean": draws.mean(axis=0),
        "mc_std": draws.std(axis=0, ddof=1), "draw": draws[0],
    })


def pair_table(hr: Mapping[str, np.ndarray], curves: pd.DataFrame,
               draws: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Theorem 2.1 for every pair of models of one (dataset, protocol).

    Model ``a`` is the one whose HR curve has the larger area (the smaller mean global rank),
    so it is the dominating one whenever one curve dominates.

    Parameters
    ----------
    hr : mapping of str to numpy.ndarray
        Model -> HR@K for K = 1..max N_u.
    curves : pandas.DataFrame
        :func:`sampled_curves` of every model, with a ``model`` column.
    draws : mapping of str to numpy.ndarray
        Model -> SHR@k draws of shape (repeats, n), all users.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``model_a``, ``model_b``; ``hr_relation`` (``a dominates``,
        ``cross`` or ``equal``), ``hr_crossings`` (sign changes of HR_a@K - HR_b@K),
        ``first_crossing``/``last_crossing`` (the K where they occur), ``max_reverse_gap``
        (max_K HR_b@K - HR_a@K, 0 under dominance); ``expected_order_kept`` (E[SHR_a@k] >=
        E[SHR_b@k] for every k), ``min_expected_gap`` (min over k < n; SHR@n = 1 for every
        model), ``sampled_flips`` and ``flip_ks`` (the k at which the sign of the expected
        difference changes); ``winner_agreement`` (share of k at which the expected sampled
        winner is the winner of HR@⌊f(k)⌋) and ``disagree_ks``; ``mc_max_abs_z`` (largest
        |Monte Carlo mean difference - expected difference| over k, in standard errors
        sqrt((Var_a + Var_b)/repeats) from eq. 5, the draws of a and b being independent),
        ``mc_mean_order_kept`` (share of k at which the Monte Carlo mean difference has the
        sign of the expected one) and ``draw_order_kept`` (share of draws and k at which one
        draw does).
    """
    by_model = {m: part.sort_values("k") for m, part in curves.groupby("model", sort=False)}
    rows = []
    for a, b in itertools.combinations(hr, 2):
        if hr[a].sum() < hr[b].sum():
            a, b = b, a
        rows.append({"model_a": a, "model_b": b, **_pair_row(hr[a], hr[b], by_model[a], by_model[b],
                                                              draws[a] - draws[b])})
    return pd.DataFrame(rows)


def _pair_row(hr_a, hr_b, curve_a, curve_b, diff_draws) -> dict:
    """The columns of :func:`pair_table` for one pair (a above b on average)."""
    gap = hr_a - hr_b
    crossings = sign_changes(gap) + 1
    relation = {"a": "a dominates", "b": "b dominates", "cross": "cross", "equal": "equal"}[dominance(hr_a, hr_b)]
    k = curve_a["k"].to_numpy()
    expected = curve_a["expected"].to_numpy() - curve_b["expected"].to_numpy()
    at_f = curve_a["hr_at_f_k"].to_numpy() - curve_b["hr_at_f_k"].to_numpy()
    sign = np.where(np.abs(expected) > TIE, np.sign(expected), 0.0)
    both = (sign != 0) & (at_f != 0)
    agree = sign[both] == np.sign(at_f[both])
    mc_mean = diff_draws.mean(axis=0)
    se = np.hypot(curve_a["std"].to_numpy(), curve_b["std"].to_numpy()) / np.sqrt(diff_draws.shape[0])
    has_se = se > 0
    kept = sign != 0
    return {
        "hr_relation": relation,
        "hr_crossings": crossings.size,
        "first_crossing": int(crossings[0]) if crossings.size else None,
        "last_crossing": int(crossings[-1]) if crossings.size else None,
        "max_reverse_gap": float(max(0.0, -gap.min())),
        "expected_order_kept": bool((expected >= -TIE).all()),
        "min_expected_gap": float(expected[:-1].min()),
        "sampled_flips": int(sign_changes(expected, atol=TIE).size),
        "flip_ks": k_ranges(k[sign_changes(expected, atol=TIE)]),
        "winner_agreement": float(agree.mean()) if agree.size else np.nan,
        "disagree_ks": k_ranges(k[both][~agree]),
        "mc_max_abs_z": float(np.max(np.abs(mc_mean - expected)[has_se] / se[has_se])) if has_se.any() else np.nan,
        "mc_mean_order_kept": float((np.sign(mc_mean[kept]) == sign[kept]).mean()) if kept.any() else np.nan,
        "draw_order_kept": float((np.sign(diff_draws[:, kept]) == sign[kept]).mean()) if kept.any() else np.nan,
    }


def concentration_table(config: Mapping, R: np.ndarray, N: np.ndarray, draws: np.ndarray,
                        users: int) -> pd.DataFrame:
    """Spread of SHR@k over the repeats on ``users`` users against eq. 5 and Hoeffding's bound.

    Parameters
    ----------
    config : mapping
        The study configuration (``concentration_ks``, ``hoeffding_delta``, ``hoeffding_t``...).
    R, N : numpy.ndarray
        Global ranks and N_u of the M users.
    draws : numpy.ndarray
        SHR@k of the repeats on these users, shape (repeats, len(concentration_ks)).
    users : int
        M.

    Returns
    -------
    pandas.DataFrame
        One row per k: ``users``, ``k``, ``expected`` (eq. 4), ``std`` (√eq. 5), ``mc_mean``,
        ``mc_std``, ``max_abs_deviation`` (max over repeats of |SHR@k - E[SHR@k]|),
        ``hoeffding_radius`` (t with 2 exp(-2Mt²) = δ), ``normal_radius`` (z_{1-δ/2}·std),
        ``share_beyond_hoeffding`` and ``share_beyond_normal`` (share of repeats whose
        deviation reaches the radius), ``t``, ``hoeffding_bound_t`` (2 exp(-2Mt²)) and
        ``share_beyond_t``.
    """
    ks = np.asarray(config["concentration_ks"], dtype=np.int64)
    delta, t = config["hoeffding_delta"], config["hoeffding_t"]
    mean, var = sampled_hit_ratio_moments(R, N, config["sample_size"], config["scheme"])
    expected, std = mean[ks - 1], np.sqrt(var[ks - 1])
    deviation = np.abs(draws - expected)
    radius = float(hoeffding_radius(users, delta))
    normal = ndtri(1 - delta / 2) * std  # the normal quantile z_{1-δ/2}
    return pd.DataFrame({
        "users": users, "k": ks, "expected": expected, "std": std, "mc_mean": draws.mean(axis=0),
        "mc_std": draws.std(axis=0, ddof=1), "max_abs_deviation": deviation.max(axis=0),
        "hoeffding_radius": radius, "normal_radius": normal,
        "share_beyond_hoeffding": (deviation >= radius).mean(axis=0),
        "share_beyond_normal": (deviation >= normal).mean(axis=0),
        "t": t, "hoeffding_bound_t": float(hoeffding_bound(users, t)), "share_beyond_t": (deviation >= t).mean(axis=0),
    })


def rank_distribution_tables(config: Mapping, R: np.ndarray, N: np.ndarray,
                             hr: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The curves of Fig. 2 for one (dataset, protocol, model).

    Ranks run from 1 to R_max = min(N, ⌈2 f(max fig2_ks)⌉): all of them for W_R and HR,
    :data:`FIG2_POINTS` evenly spaced ones for the hit probabilities.

    Returns
    -------
    rank_distribution : pandas.DataFrame
        ``rank``, ``w_r`` (W_R, eq. 2), ``w_r_binned`` (W_R averaged over consecutive bins of
        ⌊(N̄ - 1)/(n - 1)⌋ ranks, the width of one sampled rank) and ``hr`` (HR@K).
    hit_probability : pandas.DataFrame
        ``n_items`` (N̄), ``k``, ``f_k``, ``rank`` and ``hit_probability`` p^R(k) = P(r <= k | R)
        for every k of ``fig2_ks``.
    """
    n = config["sample_size"]
    n_bar = _mean_items(N)
    f = mapped_locations(config, n_bar)
    ks = np.asarray(config["fig2_ks"], dtype=np.int64)
    top = int(min(hr.size, np.ceil(2 * f[ks.max() - 1])))
    rank = np.arange(1, top + 1)
    w = np.bincount(R, minlength=top + 1)[1 : top + 1] / R.size
    width = max(1, (n_bar - 1) // (n - 1))
    binned = np.repeat(np.add.reduceat(w, np.arange(0, top, width)) / width, width)[:top]
    distribution = pd.DataFrame({"rank": rank, "w_r": w, "w_r_binned": binned, "hr": hr[:top]})
    grid = np.unique(np.rint(np.linspace(1, top, FIG2_POINTS)).astype(np.int64))
    p = hit_probabilities(grid, n_bar, n, config["scheme"])[:, ks - 1]
    probability = pd.DataFrame({"n_items": n_bar, "k": np.repeat(ks, grid.size),
                                "f_k": np.repeat(f[ks - 1], grid.size), "rank": np.tile(grid, ks.size),
                                "hit_probability": p.T.ravel()})
    return distribution, probability


def theorem_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """:func:`pair_table` of every (dataset, protocol) in one row each.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``protocol``, ``pairs``; ``dominating`` (pairs whose HR curves dominate
        one another, or are equal) and ``dominating_kept`` (of those, the pairs whose
        E[SHR@k] keeps the order for every k: Theorem 2.1 says all); ``crossing`` and
        ``crossing_kept`` (crossing pairs whose expected order is kept anyway);
        ``crossing_winner_agreement`` (mean over crossing pairs of the share of k at which the
        sampled winner is the winner at HR@⌊f(k)⌋), ``lowest_winner_agreement`` (over all pairs),
        ``mc_max_abs_z`` (largest over all pairs) and ``lowest_draw_order_kept``.
    """
    frame = pairs.assign(dominating=pairs["hr_relation"] != "cross")
    frame = frame.assign(crossing=~frame["dominating"],
                         dominating_kept=frame["dominating"] & frame["expected_order_kept"],
                         crossing_kept=~frame["dominating"] & frame["expected_order_kept"],
                         crossing_agreement=frame["winner_agreement"].where(~frame["dominating"]))
    out = frame.groupby(["dataset", "protocol"], sort=False).agg(
        pairs=("model_a", "size"), dominating=("dominating", "sum"), dominating_kept=("dominating_kept", "sum"),
        crossing=("crossing", "sum"), crossing_kept=("crossing_kept", "sum"),
        crossing_winner_agreement=("crossing_agreement", "mean"),
        lowest_winner_agreement=("winner_agreement", "min"), mc_max_abs_z=("mc_max_abs_z", "max"),
        lowest_draw_order_kept=("draw_order_kept", "min"))
    return out.reset_index()


def concentration_summary(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`concentration_table` of all datasets, protocols and models, by number of users M.

    Returns
    -------
    pandas.DataFrame
        ``users``, ``rows``; quantiles 5 %, 50 % and 95 % of the ratio of the Monte Carlo to
        the analytic standard deviation (``std_ratio_q05``, ``std_ratio_median``,
        ``std_ratio_q95``; rows whose analytic variance is at least that of one fair coin
        among the M users, std >= 1/(2M), so that 100 repeats can estimate it); ``largest_deviation`` (max over
        rows of max_abs_deviation), ``hoeffding_radius``, ``share_beyond_hoeffding`` (max over
        rows), ``share_beyond_normal`` (mean over rows: about δ when eq. 5 and the normal
        approximation hold), ``hoeffding_bound_t`` and ``share_beyond_t`` (mean over rows).
    """
    frame = table.assign(std_ratio=(table["mc_std"] / table["std"]).where(2 * table["users"] * table["std"] >= 1))
    out = frame.groupby("users", sort=True).agg(
        rows=("k", "size"), std_ratio_q05=("std_ratio", lambda x: x.quantile(0.05)),
        std_ratio_median=("std_ratio", "median"), std_ratio_q95=("std_ratio", lambda x: x.quantile(0.95)),
        largest_deviation=("max_abs_deviation", "max"), hoeffding_radius=("hoeffding_radius", "first"),
        share_beyond_hoeffding=("share_beyond_hoeffding", "max"), share_beyond_normal=("share_beyond_normal", "mean"),
        hoeffding_bound_t=("hoeffding_bound_t", "first"), share_beyond_t=("share_beyond_t", "mean"))
    return out.reset_index()


# ----------------------------------------------------------------------------- all tables


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 02 from the runs of all chunks and the global ranks.

    Parameters
    ----------
    config : mapping
        The ``sampling_theorem`` section of the configuration.
    seed : int
        Study seed (it chooses the user subsets, as in :func:`chunk_table`).
    runs : pandas.DataFrame
        The chunks of :func:`chunk_table`, concatenated (any order).
    root : str or Path
        Repository root (where ``results/ranks`` is).
    """
    keys = {"scheme": config["scheme"], "sample_size": config["sample_size"]}
    draws = _draws(runs)
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in (
        "fig1_global_hit_ratio", "fig1_sampled_hit_ratio", "theorem_pairs", "concentration",
        "fig2_rank_distribution", "fig2_hit_probability")}
    for dataset, protocol in itertools.product(config["datasets"], config["protocols"]):
        setting = {"dataset": dataset, "protocol": protocol}
        ranks = {m: read_model_ranks(dataset, m, protocol, root) for m in config["models"]}
        users = {m: (f["rank"].to_numpy(), f["n_candidates"].to_numpy()) for m, f in ranks.items()}
        hr = {m: hit_ratio_curve(R, N) for m, (R, N) in users.items()}
        full = {m: draws[dataset, protocol, m, len(f)].to_numpy() for m, f in ranks.items()}
        curves = pd.concat([sampled_curves(config, *users[m], hr[m], full[m]).assign(model=m)
                            for m in config["models"]], ignore_index=True)
        frames["theorem_pairs"].append(_front(pair_table(hr, curves, full), {**setting, **keys}))
        for model, frame in ranks.items():
            spread = pd.concat([concentration_table(config, *_users_of(frame, count, seed, dataset),
                                                    draws[dataset, protocol, model, count][config["concentration_ks"]]
                                                    .to_numpy(), count)
                                for count in _user_counts(config, len(frame))], ignore_index=True)
            frames["concentration"].append(_front(spread, {**setting, "model": model, **keys}))
        if dataset == config["figure_dataset"]:
            zoom = max(hi for _, hi in config["zoom_ranks"])
            frames["fig1_sampled_hit_ratio"].append(_front(curves, {**setting, **keys}, "model"))
            frames["fig1_global_hit_ratio"].append(_front(global_curve_table(hr, zoom, config["curve_points"]), setting))
            distribution, probability = rank_distribution_tables(config, *users[config["figure_model"]],
                                                                 hr[config["figure_model"]])
            model = {"model": config["figure_model"]}
            frames["fig2_rank_distribution"].append(_front(distribution, {**setting, **model, **keys}))
            frames["fig2_hit_probability"].append(_front(probability, {**setting, **model, **keys}))
    return {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items()}


def _users_of(ranks: pd.DataFrame, count: int, seed: int, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """Global ranks and N_u of the ``count`` users that :func:`chunk_table` drew for M = count."""
    if count == len(ranks):
        return ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    part = ranks[np.isin(ranks["user"].to_numpy(), user_subset(ranks["user"].to_numpy(), count, seed, dataset))]
    return part["rank"].to_numpy(), part["n_candidates"].to_numpy()


def _front(frame: pd.DataFrame, keys: Mapping, *first: str) -> pd.DataFrame:
    """``frame`` with the setting columns ``keys`` in front, then the columns ``first``."""
    out = frame.assign(**keys)
    lead = [*keys, *first]
    return out[lead + [c for c in out.columns if c not in lead]]
