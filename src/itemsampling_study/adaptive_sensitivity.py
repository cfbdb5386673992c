"""Notebook 06, sensitivity: what the adaptive MLE's accuracy at small K depends on.

Li et al. (AAAI 2023, §4) propose adaptive sampling to repair the blind spot of fixed-size
sampling at small K. Notebook 06 finds the adaptive MLE less accurate than the fixed-size MLE at
K = 1 for about half of our (dataset, model) pairs. This step measures the candidate causes on a
few pairs and repeats (rule ``adaptive_sensitivity``; its tables are inputs of notebook 06):

* ``sensitivity_em_steps``: the number of EM steps of the MLE (fixed n) and of the adaptive MLE
  (eq. 12, App. G; EM of Jin et al. AAAI 2021 eq. 21), from the uniform start: each of ``em_steps``
  and EM run to convergence (``converged``: relative increase of the log-likelihood below its
  ``tol``, at most ``max_iter`` steps). The fixed sizes are the blind-spot n and the dataset's
  fixed n; every estimator of a draw sees the same sampled ranks.
* ``sensitivity_sizes``: the adaptive MLE for every initial size n_0 of ``n0_grid`` and terminal
  size of ``n_max_grid`` (100 EM steps, the default of the package), with the items per user.
* ``sensitivity_convention``: the convention for n. Ours: n is the size of the sample set (the
  held-out item and n - 1 sampled items, eq. 12's P(r | R; n)). The authors' sampler stores the
  number of sampled items (100, 200, ..., 3200) and their estimator reads it as the set size, so
  its kernel has one draw fewer than the sampling had (``negatives_as_size``; the rare target
  that every drawn item outranks is read at the last rank of that kernel); ``negatives`` draws
  the same way and reads it correctly. Estimated with each of ``convention_em_steps``.
* ``rank_shape`` (deterministic): per (dataset, model) of the section, the features of the global
  rank distribution that decide how hard K = 1 is: the exact Recall@1 (share of users with
  R = 1), the expected share of users at r = 1 with the blind-spot n, with the fixed n and at the
  terminal size n_max (P(r = 1 | R; n) = (1 - θ)^(n-1), θ = (R - 1)/(N - 1)), the share of the
  r = 1 users of the blind-spot n whose global rank is 1, and n / N for the fixed n and n_max.

Errors: |estimate - exact| / exact at K = 1 (``k1_*``; Recall@1 = NDCG@1 with one held-out item)
and averaged over K = 1..``max_k`` (``average_*``), mean and std (ddof = 1) over the repeats.
Each draw is seeded by :func:`~itemsampling_study.engine.derive_seed` of the study seed, the
pair, the protocol, the scheme, the kind of draw, its sizes and the repeat.

Configuration: ``adaptive_sampling.sensitivity`` of ``config/config.yaml``, with the section's
protocol, scheme, metrics, max_k, n0, n_max, fixed_sample_size, blind_spot_sample_size and
n_item_groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling._validation import check_positive_integer
from itemsampling.estimators import Estimator, estimate_draws
from itemsampling.kernels import KernelCache
from itemsampling.simulation import adaptive_sample_ranks, sample_ranks

from .engine import STUDY_SCHEMES, derive_seed, exact_values
from .experiments import relative_error
from .tables import ranks_path, read_model_ranks

__all__ = [
    "CONVERGED",
    "SENSITIVITY_TABLES",
    "chunks",
    "convention_runs",
    "draw_errors",
    "em_step_runs",
    "em_steps_estimators",
    "inputs",
    "negatives_sample_ranks",
    "rank_shape",
    "sample_sizes",
    "size_runs",
    "study_config",
    "study_tables",
    "summarize",
]

#: label of EM run to convergence in the column ``em_steps``
CONVERGED = "converged"
#: tables of the step, in the order the workflow lists them
SENSITIVITY_TABLES = ("sensitivity_em_steps", "sensitivity_sizes", "sensitivity_convention", "rank_shape")
_KEYS = ["dataset", "model", "protocol", "scheme"]


def study_config(config: Mapping) -> dict:
    """The parameters of the step: ``adaptive_sampling.sensitivity`` with the section's settings."""
    section = config["adaptive_sampling"]
    shared = ("datasets", "protocol", "scheme", "metrics", "max_k", "n0", "n_max", "fixed_sample_size",
              "blind_spot_sample_size", "n_item_groups")
    return {**section["sensitivity"], **{key: section[key] for key in shared}}


def _checked(config: Mapping) -> Mapping:
    if config["scheme"] != "binomial":
        raise ValueError("the sensitivity step samples with replacement (the AAAI'23 code): scheme must be binomial")
    check_positive_integer("repeats", config["repeats"])
    unknown = {d: sorted(set(ms) - set(config["datasets"].get(d, []))) for d, ms in config["pairs"].items()}
    unknown = {d: ms for d, ms in unknown.items() if ms or d not in config["datasets"]}
    if unknown:
        raise ValueError(f"adaptive_sampling.sensitivity.pairs names pairs that are not studied: {unknown}")
    for name in ("em_steps", "convention_em_steps", "n0_grid", "n_max_grid"):
        for value in config[name]:
            check_positive_integer(f"sensitivity.{name}", value)
    if min(config["n0_grid"]) < 2 or min(config["n_max_grid"]) < max(config["n0_grid"]):
        raise ValueError("sensitivity needs 2 <= n0_grid and every n_max_grid >= every n0_grid")
    if not 1 <= config["n0_convention"] <= config["n_max_convention"]:
        raise ValueError("sensitivity needs 1 <= n0_convention <= n_max_convention")
    return config


def chunks(config: Mapping) -> list[dict]:
    """None: the step runs at once (rule ``adaptive_sensitivity``)."""
    _checked(config)
    return []


def inputs(config: Mapping) -> list[str]:
    """The global ranks of every (dataset, model) of the section."""
    return [str(ranks_path(d, m, config["protocol"])) for d, models in config["datasets"].items() for m in models]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set of each dataset: n_max (+ 1 for the authors' convention) or the fixed n."""
    config = _checked(config)

    def largest(d):
        return max(max(config["n_max_grid"]), config["n_max_convention"] + 1, config["n_max"][d])

    return {(d, config["protocol"]): int(max(largest(d), config["fixed_sample_size"][d],
                                             config["blind_spot_sample_size"]))
            for d in config["pairs"]}


# ----------------------------------------------------------------------------- draws


def negatives_sample_ranks(global_ranks, n_items, n0: int, n_max: int,
                           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive sampling as the AAAI'23 code draws it: sizes counted in sampled items.

    n_0 items are drawn with replacement; while none outranks the target and fewer than n_max
    were drawn, as many again are drawn (100, 200, 400, ... up to n_max). The sample set holds the
    target and the drawn items, one more than the count the code stores.

    Returns
    -------
    ranks, negatives : numpy.ndarray
        int64 rank r_u of the target in its final set (1 + drawn items that outrank it) and the
        number of drawn items (the set size is ``negatives + 1``).
    """
    R = np.asarray(global_ranks, dtype=np.int64)
    N = np.broadcast_to(np.asarray(n_items, dtype=np.int64), R.shape)
    theta = (R - 1) / (N - 1)
    hits = rng.binomial(n0, theta)
    drawn = np.full(R.size, n0, dtype=np.int64)
    active = np.flatnonzero((hits == 0) & (drawn < n_max))
    while active.size:
        extra = np.minimum(drawn[active], n_max - drawn[active])
        new = rng.binomial(extra, theta[active])
        hits[active] = new
        drawn[active] += extra
        active = active[(new == 0) & (drawn[active] < n_max)]
    return (1 + hits).astype(np.int64), drawn


def em_steps_estimators(method: str, steps, converged: Mapping) -> list[Estimator]:
    """One estimator of ``method`` per number of EM steps (exactly that many: ``tol`` = 0) and one
    run to convergence, labelled by the steps (``"25"``, ..., ``"converged"``)."""
    fixed = [Estimator(method, {"max_iter": int(s), "tol": 0.0}, name=str(int(s))) for s in steps]
    options = {"max_iter": int(converged["max_iter"]), "tol": float(converged["tol"])}
    return [*fixed, Estimator(method, options, name=CONVERGED)]


def draw_errors(table: pd.DataFrame, exact: np.ndarray, targets, max_k: int) -> pd.DataFrame:
    """Per estimator and metric of one draw: the relative error at K = 1 and averaged over
    K = 1..``max_k`` (cut-offs whose exact value is 0 are left out).

    ``table`` holds the rows of :func:`~itemsampling.estimators.estimate_draws` for ``targets``,
    estimator by estimator, in the order of ``targets``.
    """
    n = len(targets)
    out = table.assign(exact=np.tile(exact, len(table) // n))
    out = out[(out["k"] >= 1) & (out["k"] <= max_k) & (out["exact"] != 0)]
    out = out.assign(error=relative_error(out["estimate"], out["exact"]))
    grouped = out.groupby(["estimator", "metric"], sort=False)
    average = grouped["error"].mean()
    first = out[out["k"] == 1].set_index(["estimator", "metric"])["error"]
    return pd.DataFrame({"k1": first.reindex(average.index), "average": average}).reset_index()


def _targets(config: Mapping) -> list[tuple[str, int]]:
    return [(m, k) for m in config["metrics"] for k in range(1, config["max_k"] + 1)]


def _rng(seed: int, labels: Mapping, *keys) -> np.random.Generator:
    return np.random.default_rng(derive_seed(seed, *(labels[k] for k in _KEYS), "sensitivity", *keys))


def em_step_runs(R, N, config: Mapping, seed: int, labels: Mapping, cache: KernelCache) -> pd.DataFrame:
    """Per repeat: errors of MLE at the blind-spot and fixed n and of the adaptive MLE (n_0, the
    dataset's n_max) with every number of EM steps (:func:`em_steps_estimators`)."""
    targets, frames = _targets(config), []
    exact = exact_values(R, N, targets)
    sizes = sorted({config["blind_spot_sample_size"], config["fixed_sample_size"][labels["dataset"]]})
    n0, n_max = config["n0"], config["n_max"][labels["dataset"]]
    common = {"targets": targets, "scheme": "binomial", "n_groups": config["n_item_groups"], "warn": False}
    repeats = range(config["repeats"])
    for n in sizes:
        draws = [sample_ranks(R, N, n, rng=_rng(seed, labels, "fixed", n, repeat)) for repeat in repeats]
        tables = estimate_draws(draws, N, n, em_steps_estimators("mle", config["em_steps"], config["converged"]),
                                cache=cache, **common)
        frames.extend(draw_errors(table, exact, targets, config["max_k"]).assign(
            sampling="fixed", sample_size=n, items_per_user=float(n), repeat=repeat)
            for repeat, table in zip(repeats, tables, strict=True))
    draws = [adaptive_sample_ranks(R, N, n0, n_max, rng=_rng(seed, labels, "adaptive", n0, repeat)) for repeat in repeats]
    tables = estimate_draws([sampled for sampled, _ in draws], N, [n_u for _, n_u in draws],
                            em_steps_estimators("adaptive_mle", config["em_steps"], config["converged"]),
                            **common)  # its own cache: the kernel columns observed in its draws only
    frames.extend(draw_errors(table, exact, targets, config["max_k"]).assign(
        sampling="adaptive", sample_size=n_max, items_per_user=float(n_u.mean()), repeat=repeat)
        for repeat, table, (_, n_u) in zip(repeats, tables, draws, strict=True))
    order = {"fixed": 0, "adaptive": 1}  # rows repeat by repeat, as the draws were made
    frames.sort(key=lambda f: (int(f["repeat"].iloc[0]), order[f["sampling"].iloc[0]], int(f["sample_size"].iloc[0])))
    out = pd.concat(frames, ignore_index=True).rename(columns={"estimator": "em_steps"})
    return out.assign(**{k: labels[k] for k in _KEYS})


def size_runs(R, N, config: Mapping, seed: int, labels: Mapping) -> pd.DataFrame:
    """Per repeat: errors of the adaptive MLE (100 EM steps) for every n_0 and n_max of the grid
    (draws of the same n_0 and repeat share their items: common random numbers across n_max)."""
    targets, frames = _targets(config), []
    exact = exact_values(R, N, targets)
    estimator = [Estimator("adaptive_mle", {"max_iter": 100, "tol": 0.0}, name="100")]
    repeats = range(config["repeats"])
    for n0 in config["n0_grid"]:
        for n_max in config["n_max_grid"]:
            draws = [adaptive_sample_ranks(R, N, n0, n_max, rng=_rng(seed, labels, "adaptive", n0, repeat))
                     for repeat in repeats]
            tables = estimate_draws([sampled for sampled, _ in draws], N, [n_u for _, n_u in draws], estimator,
                                    targets=targets, scheme="binomial", n_groups=config["n_item_groups"], warn=False)
            frames.extend(draw_errors(table, exact, targets, config["max_k"]).assign(
                n0=n0, n_max=n_max, items_per_user=float(n_u.mean()), repeat=repeat)
                for repeat, table, (_, n_u) in zip(repeats, tables, draws, strict=True))
    out = pd.concat(frames, ignore_index=True).rename(columns={"estimator": "em_steps"})
    return out.assign(**{k: labels[k] for k in _KEYS})


def convention_runs(R, N, config: Mapping, seed: int, labels: Mapping) -> pd.DataFrame:
    """Per repeat: the adaptive MLE of draws counted in sampled items (the AAAI'23 sampler,
    :func:`negatives_sample_ranks`, from ``n0_convention`` up to ``n_max_convention`` drawn
    items), with the set size read correctly (``negatives``: drawn + 1) and as the authors'
    estimator reads it (``negatives_as_size``: drawn; a target that every drawn item outranks,
    r = drawn + 1, has no row in that kernel and is read as r = drawn), for each of
    ``convention_em_steps``."""
    targets, frames = _targets(config), []
    exact = exact_values(R, N, targets)
    steps = config["convention_em_steps"]
    estimators = [Estimator("adaptive_mle", {"max_iter": int(s), "tol": 0.0}, name=str(int(s))) for s in steps]
    draws = [negatives_sample_ranks(R, N, config["n0_convention"], config["n_max_convention"],
                                    _rng(seed, labels, "negatives", config["n0_convention"],
                                         config["n_max_convention"], repeat))
             for repeat in range(config["repeats"])]
    readings = {"negatives": [(sampled, drawn + 1) for sampled, drawn in draws],
                "negatives_as_size": [(np.minimum(sampled, drawn), drawn) for sampled, drawn in draws]}
    tables = {convention: estimate_draws([ranks for ranks, _ in pairs], N, [size for _, size in pairs], estimators,
                                         targets=targets, scheme="binomial", n_groups=config["n_item_groups"],
                                         warn=False)
              for convention, pairs in readings.items()}
    for repeat, (_, drawn) in enumerate(draws):  # rows repeat by repeat, as the draws were made
        frames.extend(draw_errors(tables[convention][repeat], exact, targets, config["max_k"]).assign(
            convention=convention, items_per_user=float(drawn.mean() + 1), repeat=repeat) for convention in readings)
    out = pd.concat(frames, ignore_index=True).rename(columns={"estimator": "em_steps"})
    return out.assign(**{k: labels[k] for k in _KEYS})


def summarize(per_repeat: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean and std (ddof = 1) over the repeats of the errors at K = 1 and over K, and the mean
    items per user, for each setting ``keys``."""
    grouped = per_repeat.groupby(keys, sort=False)
    return grouped.agg(items_per_user=("items_per_user", "mean"), k1_mean=("k1", "mean"), k1_std=("k1", "std"),
                       average_mean=("average", "mean"), average_std=("average", "std"),
                       repeats=("repeat", "nunique")).reset_index()


# ----------------------------------------------------------------------------- rank shape


def _first_share(R: np.ndarray, N: np.ndarray, n: int) -> float:
    """Expected share of users at r = 1 with n items, (1/M) Σ_u (1 - θ_u)^(n-1)."""
    return float(np.mean((1 - (R - 1) / (N - 1)) ** (n - 1)))


def rank_shape(R, N, n_blind: int, n_fixed: int, n_max: int) -> dict:
    """Features of one global rank distribution that set how hard K = 1 is (see the module docstring)."""
    R, N = np.asarray(R, dtype=np.float64), np.asarray(N, dtype=np.float64)
    first = _first_share(R, N, n_blind)
    return {"n_users": int(R.size), "n_items": float(N.mean()), "recall_at_1": float(np.mean(R == 1)),
            "first_at_blind": first, "first_at_fixed": _first_share(R, N, n_fixed),
            "first_at_n_max": _first_share(R, N, n_max),
            "rank1_of_first": float(np.mean(R == 1)) / first if first > 0 else float("nan"),
            "fixed_fraction": n_fixed / float(N.mean()), "n_max_fraction": n_max / float(N.mean())}


# ----------------------------------------------------------------------------- all tables


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame | None = None,
                 root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """The four tables of the step (see the module docstring); ``runs`` is unused."""
    config = _checked(config)
    if STUDY_SCHEMES[config["scheme"]] != ("binomial", "binomial"):
        raise ValueError("the sensitivity step needs the binomial scheme")
    em, sizes, conventions, shapes = [], [], [], []
    for dataset, models in config["datasets"].items():
        for model in models:
            frame = read_model_ranks(dataset, model, config["protocol"], root)
            R, N = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
            shapes.append({"dataset": dataset, "model": model, "protocol": config["protocol"],
                           **rank_shape(R, N, config["blind_spot_sample_size"], config["fixed_sample_size"][dataset],
                                        config["n_max"][dataset])})
            if model not in config["pairs"].get(dataset, []):
                continue
            labels = {"dataset": dataset, "model": model, "protocol": config["protocol"], "scheme": config["scheme"]}
            cache = KernelCache()
            em.append(em_step_runs(R, N, config, seed, labels, cache))
            sizes.append(size_runs(R, N, config, seed, labels))
            conventions.append(convention_runs(R, N, config, seed, labels))
    return {
        "sensitivity_em_steps": summarize(pd.concat(em, ignore_index=True),
                                          [*_KEYS, "sampling", "sample_size", "em_steps", "metric"]),
        "sensitivity_sizes": summarize(pd.concat(sizes, ignore_index=True),
                                       [*_KEYS, "n0", "n_max", "em_steps", "metric"]),
        "sensitivity_convention": summarize(pd.concat(conventions, ignore_index=True),
                                            [*_KEYS, "convention", "em_steps", "metric"]),
        "rank_shape": pd.DataFrame(shapes),
    }
