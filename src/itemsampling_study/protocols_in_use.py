"""Notebook 05: sampled evaluation as it is practised — tiny candidate sets, samples drawn with
replacement, and sampling designs at an equal scoring budget, from the committed global ranks.

Protocol ``unseen`` throughout: the negatives of user u are drawn from the N_u - 1 items u has not
interacted with, as RecBole and the BERT4Rec code draw them (the estimators group the users by
N_u, :mod:`itemsampling.candidates`). Every draw comes from the study engine
(:mod:`~itemsampling_study.engine`), seeded by the labels, the scheme, n and the repeat.

Chunks: one per (dataset, model). Each chunk's runs (:data:`RUN_COLUMNS`, ``part`` naming the part):

* ``tiny_n``: the ``estimators`` at every n of ``sample_sizes`` (5 ... 100), sampling with
  replacement (``binomial``: binomial draws, binomial kernel) and without (``hypergeometric``),
  with analytic intervals at ``level``; the ``estimators_without_intervals`` (MLE: its analytic
  interval costs five times its fit) without;
* ``kernels``: the binomial draws of ``tiny_n`` (the same sampled ranks, as a file such as NCF's
  ``ml-1m.test.negative`` holds: drawn with replacement) estimated under the hypergeometric kernel,
  as if drawn without replacement;
* ``designs``: Algorithm 1 of Li et al. (AAAI 2023) and its adaptive MLE
  (:func:`~itemsampling_study.engine.repeat_adaptive_estimates`, the code of notebook 06) from
  ``n0`` up to each ``n_max``; its average number of items scored per user, rounded, is the
  budget b of every design of ``designs`` (:data:`DESIGNS`: uniform sampling of b items with
  MN_MES or MLE), so that all designs score the same number of items per user on average.
  Popularity sampling with a Hansen-Hurwitz correction and a proxy-guided importance sampler need
  a popularity profile of each model's ranking, which the global ranks do not hold: the further
  study :mod:`.popularity_protocols` runs them from the committed profiles at the budgets b of
  this study's ``designs`` table (its table ``popularity_designs``).

Tables (``results/tables/05_protocols_in_use/``):

* ``tiny_n``: per (dataset, model, scheme, n, estimator, metric, K): exact value, mean, bias,
  standard deviation, RMSE, relative bias and RMSE (over the exact value), interval coverage;
* ``breakdown``: per (scheme, estimator, metric, K, n), pooled over the (dataset, model) pairs:
  the median relative RMSE, the coverage, and whether the estimator breaks down there by the
  rule of ``breakdown`` (stated before any run; see :func:`breakdown`);
  ``breakdown_sizes``: the smallest n from which on it no longer breaks down;
* ``pair_orders``: per (scheme, n, estimator, metric, K): the share of model pairs x repeats
  that the estimate orders as the exact metric does (:func:`itemsampling_study.experiments.pairwise_order_agreement`);
* ``replacement_kernels``: per (dataset, model, n, estimator, metric, K): the estimates of the
  same with-replacement draws under both kernels, their RMSE and mean absolute difference;
* ``ncf_duplicates``: the duplicates of NCF's ``ml-1m.test.negative``
  (:func:`itemsampling.small_samples.candidate_duplicates`) against the count expected from uniform
  draws with replacement;
* ``designs``: per (dataset, model, n_max, design, metric, K): items per user, relative error
  (mean, standard deviation) and bias;
* ``findings``: the notebook's findings, each with the table that shows it (:func:`findings`).

The model pairs (compare.py's paired interval, A-vs-A false alarms) are the further study
:mod:`.model_pairs`; popularity-sampled negatives :mod:`.popularity_protocols`; several held-out
items per user :mod:`.ratio_protocols`. Configuration: section ``protocols_in_use`` of ``config/config.yaml``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itemsampling._validation import check_choice
from itemsampling.data.registry import default_registry
from itemsampling.estimators import Estimator, estimate_draws
from itemsampling.kernels import KernelCache
from itemsampling.small_samples import candidate_duplicates, read_ncf_negatives

from .engine import (
    LABELS,
    STUDY_SCHEMES,
    draw_sampled_ranks,
    exact_values,
    repeat_adaptive_estimates,
    repeat_estimates,
)
from .experiments import estimate_errors, pooled_order_agreement, relative_error
from .tables import ranks_path

__all__ = ["DESIGNS", "RUN_COLUMNS", "accuracy", "breakdown", "breakdown_sizes", "chunk_table", "chunks",
           "design_errors", "findings", "inputs", "ncf_duplicates", "pair_orders", "replacement_kernels",
           "sample_sizes", "study_config", "study_tables", "targets"]

#: columns of a chunk's runs
RUN_COLUMNS = (*LABELS, "part", "scheme", "kernel", "design", "n_max", "sample_size", "repeat", "estimator",
               "metric", "k", "estimate", "exact", "level", "se", "lower", "upper", "mean_sample_size")


def _uniform(method: str) -> Callable[..., pd.DataFrame]:
    """A design: b items per user drawn uniformly with replacement, estimated by ``method``."""
    def design(R, N, budget: int, *, ranks: pd.DataFrame, targets, seed: int, labels, repeats: int,
               n_groups: int, cache: KernelCache) -> pd.DataFrame:
        return repeat_estimates(R, N, estimators=[Estimator(method)], targets=targets, sample_sizes=[budget],
                                seed=seed, labels=labels, schemes=["binomial"], repeats=repeats, n_groups=n_groups,
                                cache=cache, progress=False)
    return design


#: the fixed-budget designs by name: each takes the global ranks (and the ranks table, for designs
#: that need item ids), the budget b and the engine's arguments, and returns the engine's runs
DESIGNS: dict[str, Callable[..., pd.DataFrame]] = {"uniform_mn_mes": _uniform("mn_mes"), "uniform_mle": _uniform("mle")}
#: designs that need inputs the committed global ranks do not hold: the further study
#: :mod:`.popularity_protocols` runs them at the same budgets (table ``popularity_designs``)
_LATER = {"popularity_corrected": "a popularity profile of each model's ranking",
          "proxy_importance": "a popularity profile of each model's ranking (popularity is the proxy)"}


# ----------------------------------------------------------------------------- configuration


def study_config(config: Mapping) -> dict:
    """The parameters of this study and its notebook: section ``protocols_in_use`` (its ``pairs``
    are the parameters of :mod:`.model_pairs`, which the notebook shows)."""
    return dict(config["protocols_in_use"])


def _checked(config: Mapping) -> Mapping:
    """``config`` after the checks the schema cannot express."""
    for scheme in config["tiny_n"]["schemes"]:
        check_choice("scheme", scheme, ("binomial", "hypergeometric"))
    for name in config["designs"]["names"]:
        if name in _LATER:
            raise ValueError(f"design {name!r} needs {_LATER[name]}, which the committed global ranks do not hold: "
                             f"the study popularity_protocols runs it; designs available here: {', '.join(DESIGNS)}")
        check_choice("design", name, DESIGNS)
    if min(config["designs"]["n_max"]) < config["designs"]["n0"]:
        raise ValueError(f"protocols_in_use.designs.n_max must all be >= n0 = {config['designs']['n0']}")
    return config


def chunks(config: Mapping) -> list[dict]:
    """One chunk per (dataset, model)."""
    config = _checked(config)
    return [{"dataset": d, "model": m, "protocol": config["protocol"]} for d in config["datasets"]
            for m in config["models"]]


def inputs(config: Mapping) -> list[str]:
    """The global ranks (the tables step reads the exact values from them)."""
    return [str(ranks_path(c["dataset"], c["model"], c["protocol"])) for c in chunks(config)]


def sample_sizes(config: Mapping) -> dict[tuple[str, str], int]:
    """The largest sample set size drawn from each dataset's ranks."""
    largest = max([*config["tiny_n"]["sample_sizes"], *config["designs"]["n_max"]])
    return {(d, config["protocol"]): int(largest) for d in config["datasets"]}


def targets(config: Mapping) -> list[tuple[str, int]]:
    """Every (metric, K): ``metrics`` x ``ks``."""
    return [(m, int(k)) for m in config["metrics"] for k in config["ks"]]


# ----------------------------------------------------------------------------- runs


def _runs(frame: pd.DataFrame, **columns) -> pd.DataFrame:
    """``frame`` (engine runs) with the columns of :data:`RUN_COLUMNS`, ``columns`` set."""
    out = frame.assign(**columns)
    for name in ("level", "se", "lower", "upper"):
        if name not in out:
            out[name] = np.nan
    if "mean_sample_size" not in out:
        out["mean_sample_size"] = out["sample_size"].astype(np.float64)
    if "n_max" not in out:
        out["n_max"] = pd.array([pd.NA] * len(out), dtype="Int64")
    out["k"] = out["k"].astype("Int64")
    out["n_max"] = out["n_max"].astype("Int64")
    return out[list(RUN_COLUMNS)]


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """Every run of one (dataset, model): the parts ``tiny_n``, ``kernels`` and ``designs`` of
    the module docstring, in the columns of :data:`RUN_COLUMNS`."""
    config = _checked(config)
    R, N = ranks["rank"].to_numpy(), ranks["n_candidates"].to_numpy()
    tiny, want = config["tiny_n"], targets(config)
    common = {"targets": want, "seed": seed, "labels": labels, "n_groups": config["n_item_groups"], "progress": False}
    cache = KernelCache()
    frames = []
    for scheme in tiny["schemes"]:
        for estimators, level in ((tiny["estimators"], config["level"]), (tiny["estimators_without_intervals"], None)):
            if estimators:
                frame = repeat_estimates(R, N, estimators=[Estimator(e) for e in estimators],
                                         sample_sizes=tiny["sample_sizes"], schemes=[scheme], repeats=tiny["repeats"],
                                         interval=level, cache=cache, **common)
                frames.append(_runs(frame, part="tiny_n", kernel=STUDY_SCHEMES[scheme][1], design=""))
    kernels, exact = config["kernels"], exact_values(R, N, want)
    for n in kernels["sample_sizes"]:
        draws = [draw_sampled_ranks(R, N, n, seed=seed, labels=labels, scheme="binomial", repeat=r)
                 for r in range(tiny["repeats"])]
        tables = estimate_draws(draws, N, n, [Estimator(e) for e in kernels["estimators"]], targets=want,
                                scheme="hypergeometric", n_groups=config["n_item_groups"], cache=cache, warn=False)
        for r, table in enumerate(tables):
            frames.append(_runs(table.assign(**{k: labels[k] for k in LABELS}, sample_size=n, repeat=r,
                                             exact=np.tile(exact, len(kernels["estimators"]))),
                                part="kernels", scheme="binomial", kernel="hypergeometric", design=""))
    designs = config["designs"]
    adaptive = repeat_adaptive_estimates(R, N, n0=designs["n0"], n_max_values=designs["n_max"], scheme="binomial",
                                         repeats=designs["repeats"], **common)
    frames.append(_runs(adaptive.assign(n_max=adaptive["sample_size"]), part="designs", kernel="binomial",
                        design="adaptive_mle"))
    for n_max, group in adaptive.groupby("sample_size", sort=True):
        budget = round(float(group.drop_duplicates("repeat")["mean_sample_size"].mean()))
        for name in designs["names"]:
            frame = DESIGNS[name](R, N, budget, ranks=ranks, targets=want, seed=seed, labels=labels,
                                  repeats=designs["repeats"], n_groups=config["n_item_groups"], cache=cache)
            frames.append(_runs(frame, part="designs", kernel="binomial", design=name, n_max=int(n_max)))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- tables


def accuracy(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, scheme, n, estimator, metric, K) of part ``tiny_n``: exact, mean,
    bias, sd (ddof = 1), RMSE, relative bias and RMSE (over the exact value; NaN where it is 0)
    and the coverage of the intervals (NaN without intervals)."""
    keys = ["dataset", "model", "scheme", "sample_size", "estimator", "metric", "k"]
    return estimate_errors(runs[runs["part"] == "tiny_n"], keys)


def breakdown(table: pd.DataFrame, rule: Mapping[str, float]) -> pd.DataFrame:
    """Where an estimator breaks down, by a rule fixed before the runs.

    Pooled over the (dataset, model) pairs of ``table`` (:func:`accuracy`), at each (scheme,
    estimator, metric, K, n): the median relative RMSE and the coverage (the mean of the pairs'
    coverages, each over the same number of repeats). The estimator *breaks down* there when the
    median relative RMSE exceeds ``rule["relative_rmse"]`` (``error_breaks``) or, where it has
    intervals, the coverage is below ``rule["coverage"]`` (``coverage_breaks``); ``breaks_down``
    is either.
    """
    keys = ["scheme", "estimator", "metric", "k", "sample_size"]
    out = table.groupby(keys, sort=False).agg(median_relative_rmse=("relative_rmse", "median"),
                                              coverage=("coverage", "mean"), pairs=("dataset", "size")).reset_index()
    out["error_breaks"] = out["median_relative_rmse"] > rule["relative_rmse"]
    out["coverage_breaks"] = out["coverage"] < rule["coverage"]
    out["breaks_down"] = out["error_breaks"] | out["coverage_breaks"]
    return out


def _reliable_from(sizes: pd.Series, broken: pd.Series) -> tuple[int | None, int | None]:
    """The smallest n from which on (every larger n too) nothing is ``broken``, and the largest
    broken n (None where there is none)."""
    bad = sizes[broken.to_numpy()]
    last = int(bad.max()) if len(bad) else None
    fine = sizes[sizes > (last or 0)]
    return (int(fine.min()) if len(fine) else None), last


def breakdown_sizes(table: pd.DataFrame) -> pd.DataFrame:
    """Per (scheme, estimator, metric, K) of :func:`breakdown`: ``reliable_from``, the smallest n
    from which on (every larger n studied too) the estimator does not break down (NA: it breaks
    down at the largest n), ``breaks_down_at``, the largest n where it does (NA: nowhere), and
    the same smallest n by each half of the rule alone: ``reliable_from_error`` (relative RMSE)
    and ``reliable_from_coverage`` (NA also for estimators without intervals)."""
    rows = []
    for key, group in table.groupby(["scheme", "estimator", "metric", "k"], sort=False):
        group = group.sort_values("sample_size")
        n = group["sample_size"]
        reliable, last = _reliable_from(n, group["breaks_down"])
        by_error, _ = _reliable_from(n, group["error_breaks"])
        by_coverage, _ = (_reliable_from(n, group["coverage_breaks"]) if group["coverage"].notna().all()
                          else (None, None))
        rows.append(dict(zip(("scheme", "estimator", "metric", "k"), key, strict=True))
                    | {"reliable_from": reliable, "breaks_down_at": last, "reliable_from_error": by_error,
                       "reliable_from_coverage": by_coverage})
    return pd.DataFrame(rows).astype({c: "Int64" for c in ("reliable_from", "breaks_down_at", "reliable_from_error",
                                                            "reliable_from_coverage")})


def pair_orders(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (scheme, n, estimator, metric, K) of part ``tiny_n``: how many model pairs (of every
    dataset) x repeats the estimate orders as the exact metric does, and the share."""
    frame = runs[runs["part"] == "tiny_n"]
    return pooled_order_agreement(frame, ["dataset", "scheme", "sample_size", "estimator", "metric", "k"])


def replacement_kernels(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, n, estimator, metric, K): the with-replacement draws estimated under
    the binomial kernel (as drawn) and the hypergeometric kernel (as if drawn without replacement),
    on the same sampled ranks: their means, RMSEs, and the mean absolute difference between the two."""
    keys = ["dataset", "model", "sample_size", "estimator", "metric", "k", "repeat"]
    hyper = runs[runs["part"] == "kernels"]
    binom = runs[(runs["part"] == "tiny_n") & (runs["scheme"] == "binomial")]
    both = hyper[[*keys, "estimate", "exact"]].merge(binom[[*keys, "estimate"]], on=keys, how="left",
                                                     suffixes=("_hypergeometric", "_binomial"), validate="one_to_one")
    if both["estimate_binomial"].isna().any():
        raise ValueError("every kernels run needs the tiny_n binomial run of the same draw: kernels.sample_sizes and "
                         "kernels.estimators must be among tiny_n's")
    both["difference"] = (both["estimate_hypergeometric"] - both["estimate_binomial"]).abs()
    for kernel in ("binomial", "hypergeometric"):
        both[f"se_{kernel}"] = np.square(both[f"estimate_{kernel}"] - both["exact"])
    out = both.groupby(keys[:-1], sort=False).agg(
        exact=("exact", "first"), mean_binomial=("estimate_binomial", "mean"),
        mean_hypergeometric=("estimate_hypergeometric", "mean"), rmse_binomial=("se_binomial", "mean"),
        rmse_hypergeometric=("se_hypergeometric", "mean"), mean_abs_difference=("difference", "mean"),
        repeats=("repeat", "size")).reset_index()
    for kernel in ("binomial", "hypergeometric"):
        out[f"rmse_{kernel}"] = np.sqrt(out[f"rmse_{kernel}"])
    out["relative_difference"] = out["mean_abs_difference"] / out["exact"].where(out["exact"] > 0)
    return out


def ncf_duplicates(source: Mapping[str, str] | None, n_items: int) -> pd.DataFrame:
    """The duplicates of a candidate file of the data registry (:func:`candidate_duplicates`),
    beside the number of rows expected to hold a duplicate if each row's m negatives had been
    drawn uniformly with replacement from ``n_items`` items: M (1 - Π_{i<m} (1 - i/N)).
    ``source`` names ``dataset`` and ``role`` in the registry; None gives an empty table."""
    columns = ["dataset", "file", "rows", "negatives_per_row", "rows_with_duplicates", "duplicate_draws",
               "rows_with_positive_as_negative", "expected_rows_with_duplicates", "catalogue_items"]
    if source is None:
        return pd.DataFrame(columns=columns)
    path = default_registry().resolve(source["dataset"], [source["role"]])[source["role"]]
    counts = candidate_duplicates(*read_ncf_negatives(path))
    m = counts["negatives_per_row"]
    no_repeat = float(np.prod(1.0 - np.arange(m) / n_items))
    return pd.DataFrame([{"dataset": source["dataset"], "file": path.name, **counts,
                          "expected_rows_with_duplicates": counts["rows"] * (1.0 - no_repeat),
                          "catalogue_items": n_items}], columns=columns)


def design_errors(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, n_max, design, metric, K) of part ``designs``: items scored per user
    (mean over repeats), exact value, relative error |θ̂ - θ|/θ (mean and sd over repeats; NaN
    where θ = 0) and bias."""
    frame = runs[runs["part"] == "designs"].copy()
    frame["relative_error"] = np.where(frame["exact"] > 0, relative_error(frame["estimate"], frame["exact"]), np.nan)
    frame["error"] = frame["estimate"] - frame["exact"]
    keys = ["dataset", "model", "n_max", "design", "metric", "k"]
    return frame.groupby(keys, sort=False).agg(
        items_per_user=("mean_sample_size", "mean"), exact=("exact", "first"),
        relative_error=("relative_error", "mean"), relative_error_sd=("relative_error", "std"),
        bias=("error", "mean"), repeats=("repeat", "size")).reset_index()


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 05 (module docstring) from the runs of all chunks and, for
    ``ncf_duplicates``, the registry's candidate file. Nothing here is random."""
    config = _checked(config)
    runs = runs.astype({"k": "Int64", "n_max": "Int64"})
    table = accuracy(runs)
    rule = config["tiny_n"]["breakdown"]
    pooled = breakdown(table, rule)
    out = {
        "tiny_n": table,
        "breakdown": pooled,
        "breakdown_sizes": breakdown_sizes(pooled),
        "pair_orders": pair_orders(runs),
        "replacement_kernels": replacement_kernels(runs),
        "ncf_duplicates": ncf_duplicates(config["ncf_negatives"], config["ncf_catalogue_items"]),
        "designs": design_errors(runs),
    }
    out["findings"] = findings(out, rule, config)
    return out


# ----------------------------------------------------------------------------- findings


def _share(value: float) -> str:
    return f"{100 * value:.0f}%"


def findings(tables: Mapping[str, pd.DataFrame], rule: Mapping[str, float], config: Mapping) -> pd.DataFrame:
    """The notebook's findings: each a sentence whose numbers are read from ``tables``, and the
    table that shows it. Our own findings, no paper's claims (they are not in ``verdicts.csv``)."""
    rows = []
    sizes = tables["breakdown_sizes"]
    k_small, k_large = min(config["ks"]), max(config["ks"])

    def reliable(values) -> str:
        return ", ".join(f"K = {k}: {'n >= ' + str(n) if pd.notna(n) else 'no n studied'}" for k, n in values)

    for estimator in sizes["estimator"].drop_duplicates():
        sel = sizes[(sizes["scheme"] == "binomial") & (sizes["estimator"] == estimator) & (sizes["metric"] == "recall")]
        text = (f"Recall@K by {estimator}, with replacement: median relative RMSE <= {rule['relative_rmse']} from "
                + reliable(zip(sel["k"], sel["reliable_from_error"], strict=True)))
        if sel["reliable_from_coverage"].notna().any() or estimator in config["tiny_n"]["estimators"]:
            text += (f"; interval coverage >= {rule['coverage']} from "
                     + reliable(zip(sel["k"], sel["reliable_from_coverage"], strict=True)))
        rows.append((text + ".", "breakdown_sizes"))
    orders = tables["pair_orders"]
    small = min(config["tiny_n"]["sample_sizes"])
    k_mid = 10 if 10 in config["ks"] else k_small
    sel = orders[(orders["scheme"] == "binomial") & (orders["sample_size"] == small) & (orders["k"] == k_mid)
                 & (orders["metric"] == "recall")]
    if len(sel):
        best = sel.loc[sel["fraction"].idxmax()]
        worst = sel.loc[sel["fraction"].idxmin()]
        rows.append((f"At n = {small}, Recall@{k_mid} orders {_share(best['fraction'])} of model pairs as the exact metric "
                     f"does with {best['estimator']} and {_share(worst['fraction'])} with {worst['estimator']}.",
                     "pair_orders"))
    kernels = tables["replacement_kernels"]
    if len(kernels):
        worst = kernels.loc[kernels["relative_difference"].idxmax()]
        rows.append((f"Reading with-replacement draws as drawn without replacement moves the estimates by at most "
                     f"{_share(worst['relative_difference'])} of the exact value on average "
                     f"({worst['estimator']}, {worst['metric']}@{worst['k']}, n = {worst['sample_size']}, "
                     f"{worst['dataset']} {worst['model']}).", "replacement_kernels"))
    dup = tables["ncf_duplicates"]
    if len(dup):
        row = dup.iloc[0]
        rows.append((f"{row['file']}: {row['rows_with_duplicates']:,} of {row['rows']:,} rows repeat a negative "
                     f"(uniform draws with replacement would give {row['expected_rows_with_duplicates']:,.0f}); "
                     f"{row['rows_with_positive_as_negative']} rows hold their positive as a negative.",
                     "ncf_duplicates"))
    designs = tables["designs"]
    for k in (k_small, k_large):
        sel = designs[(designs["k"] == k) & (designs["metric"] == "ndcg")]
        if len(sel):
            mean = sel.groupby("design", sort=False)["relative_error"].mean()
            text = ", ".join(f"{d} {_share(v)}" for d, v in mean.items())
            rows.append((f"At an equal budget, NDCG@{k}'s relative error averaged over datasets, models and budgets: "
                         f"{text}.", "designs"))
    return pd.DataFrame(rows, columns=["finding", "table"])
