"""Notebook 03: mapping functions SHR@k ≈ HR@f(k) (Li, Jin, Gao & Liu, KDD 2020).

Every table of the notebook, computed from the global ranks of every (dataset, model, protocol)
of the configuration and from one draw of sampled ranks per sampling setting:

* chunks (one per ranks file): the sampled hit ratio SHR@k of one draw and its exact
  expectation E[SHR@k] for k = 1..n, for each (scheme, n) the file needs (:func:`chunk_draws`);
* ``beta_parameters`` (Table 2, eq. 19 on the main draw, with its mean, standard deviation and
  range over ``beta_draws`` draws: the paper prints one value from one draw), ``beta_global_fit`` (the same Beta(a, 1) model fitted
  to the global ranks by maximum likelihood) and ``fig3_rank_cdf`` (Fig. 3: the empirical
  HR@K next to both fitted models);
* ``fig4_relative_difference`` and ``fig5_difference`` (Figs. 4–5: f(k; a) against f(k; 1)
  and against f(k; a_ref));
* ``hit_ratio_curves`` (HR@K of the models the figures draw), ``fig6_sampling_effect``
  (each model's SHR@k placed at its own Beta@P location f(k; a_P));
* ``table3_hit_ratios`` and ``table3_orders`` (Table 3: do SHR@k and HR@f(k) name the same
  winner, and order the models alike?);
* ``fig7_curves`` (Fig. 7: both views of the alignment) and ``varying_k`` (Tables 5–6);
* ``mapping_errors`` (Table 7, against the drawn SHR@k as in the paper) and
  ``mapping_errors_expected`` (the same against E[SHR@k], free of sampling noise);
* ``fig8_sample_sizes`` and ``fig8_errors`` (Fig. 8: the alignment as n grows).

**Settings.** Unless a table says otherwise, the sample set has ``sample_size`` items drawn by
``scheme`` (the paper's default is with replacement, ``binomial``) under every protocol of
``protocols``. Tables 5–6 add sampling without replacement: ``hypergeometric`` among all
items under ``all`` and ``actual`` (the study engine's scheme: without replacement among the
user's unseen items) under ``unseen`` — the paper's three columns "binom", "hyper" and
"actual" (:func:`focus_schemes`). Under ``unseen`` each user has N_u candidates and a global
cut-off K of N items is read as the same fraction of the user's candidates
(:mod:`itemsampling.mappings`); N is the number of items of the dataset (the candidates under
``all``).

**Seeds.** The draw of a (dataset, model, protocol, scheme, n) uses the generator of the study
engine's repeat 0 (:func:`~itemsampling.studies.engine.derive_seed`), so it is the same draw in
every notebook that uses the engine, and adding a setting changes no other draw.

Configuration: the ``mapping_functions`` section of ``config/config.yaml`` (see the schema).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from ..mappings import (
    MAPPING_ERRORS,
    beta_hit_ratio,
    fit_beta,
    fit_beta_global,
    mapped_hit_ratio,
    mapping,
    mapping_errors,
    scaled_hit_ratio,
)
from ..simulation import expected_sampled_rank_pmf, sample_ranks
from .engine import LABELS, SCHEMES, derive_seed
from .paper import PAPER_DATASETS, paper_merge
from .tables import ranks_path, read_model_ranks

__all__ = [
    "ERROR_COLUMNS",
    "best_mappings",
    "chunk_draws",
    "chunk_table",
    "chunks",
    "error_summary",
    "focus_ks",
    "focus_schemes",
    "hit_ratio_long",
    "inputs",
    "parse_mapping",
    "sample_sizes",
    "study_config",
    "study_tables",
    "varying_k_summary",
    "winner_orders",
    "with_paper",
]

#: the grid of global cut-offs of the HR@K curves: every K up to this, then log-spaced points
_DENSE_CUTOFFS = 200
_LOG_CUTOFFS = 300
#: points of the HR@K grid of Fig. 3
_FIG3_CUTOFFS = 40
#: the fitted Beta@P parameter, in mapping labels
FITTED = "P"
#: columns of the error tables (Table 7, long format)
ERROR_COLUMNS = ("dataset", "model", "protocol", "scheme", "sample_size", "mapping", "error", "value")


# ----------------------------------------------------------------------------- configuration


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


def _pairs(config: Mapping) -> list[tuple[str, str]]:
    pairs = [(d, m) for d in config["datasets"] for m in config["models"]]
    for extra in (config["focus"], config["growth"]):
        pairs.append((extra["dataset"], extra["model"]))
    return list(dict.fromkeys(pairs))


def chunks(config: Mapping) -> list[dict]:
    """One chunk per ranks file: every (dataset, model) of the study, under every protocol."""
    return [{"dataset": d, "model": m, "protocol": p} for d, m in _pairs(config) for p in config["protocols"]]


def inputs(config: Mapping) -> list[str]:
    """Files the tables are computed from (besides the chunks): the ranks of every chunk, and
    the ``all`` ranks of every model (whose candidates are all N items)."""
    paths = [ranks_path(c["dataset"], c["model"], c["protocol"]) for c in chunks(config)]
    paths += [ranks_path(d, m, "all") for d, m in _pairs(config)]
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


# ----------------------------------------------------------------------------- chunks


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """SHR@k of one draw and E[SHR@k] (Li et al. eq. 3–4) for k = 1..n, per setting of
    :func:`chunk_draws`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, scheme, sample_size, users, k, hits, expected_shr``:
        ``hits`` users with sampled rank r_u <= k in the draw (SHR@k = hits / users), and
        ``expected_shr`` = (1/M) Σ_u Pr(r_u <= k | R_u, N_u) under the draw's law.
    """
    R, N = ranks["rank"].to_numpy(np.int64), ranks["n_candidates"].to_numpy(np.int64)
    key = [str(labels[k]) for k in LABELS]
    frames = []
    for scheme, n in chunk_draws(config, labels):
        law = SCHEMES[scheme][0]
        rng = np.random.default_rng(derive_seed(seed, *key, scheme, n, 0))
        sampled = sample_ranks(R, N, n, rng=rng, scheme=law)
        frames.append(pd.DataFrame({
            **{k: labels[k] for k in LABELS}, "scheme": scheme, "sample_size": n, "users": R.size,
            "k": np.arange(1, n + 1), "hits": np.cumsum(np.bincount(sampled, minlength=n + 1)[1:]),
            "expected_shr": np.minimum(np.cumsum(expected_sampled_rank_pmf(R, N, n, law)), 1.0),
        }))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- the study's data


class _Study:
    """The ranks and the runs of the study, looked up by their labels."""

    def __init__(self, config: Mapping, runs: pd.DataFrame, root: str | Path):
        self.config = config
        self.ranks = {(c["dataset"], c["model"], c["protocol"]): read_model_ranks(c["dataset"], c["model"], c["protocol"], root)
                      for c in chunks(config)}
        self.n_items = {}
        for d, m in _pairs(config):
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


def _frame(rows: list[dict], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


# ----------------------------------------------------------------------------- Table 2, Fig. 3


def beta_draws(R: np.ndarray, N: np.ndarray, key: tuple, seed: int, draws: int) -> np.ndarray:
    """Beta@P (eq. 19) fitted to ``draws`` independent draws of sampled ranks of one (dataset,
    model, protocol, scheme, n); draw ``j`` is the engine's repeat ``j``, so draw 0 is the one of
    the study's chunk (the ``a`` of every other table)."""
    dataset, model, protocol, scheme, n = key
    law = SCHEMES[scheme][0]
    out = np.empty(draws)
    for j in range(draws):
        rng = np.random.default_rng(derive_seed(seed, dataset, model, protocol, scheme, n, j))
        out[j] = fit_beta(sample_ranks(R, N, n, rng=rng, scheme=law), int(N.min()), n)
    return out


def beta_tables(study: _Study, seed: int) -> dict[str, pd.DataFrame]:
    """``beta_parameters`` (eq. 19 on the main draw, and its spread over ``beta_draws`` draws),
    ``beta_global_fit`` (maximum likelihood on the global ranks) and ``fig3_rank_cdf`` (empirical
    HR@K next to both Beta(a, 1) models)."""
    params, global_fit, cdf = [], [], []
    for key in study.main_keys():
        dataset, model, protocol, scheme, n = key
        R, N = study.users(dataset, model, protocol)
        a_p, a_g = study.beta_p(*key), fit_beta_global(R, N)
        spread = beta_draws(R, N, key, seed, study.config["beta_draws"])
        params.append({"dataset": dataset, "model": model, "protocol": protocol, "scheme": scheme,
                       "sample_size": n, "a": a_p, "draws": spread.size, "a_mean": spread.mean(),
                       "a_sd": spread.std(ddof=1) if spread.size > 1 else np.nan, "a_min": spread.min(),
                       "a_max": spread.max()})
        global_fit.append({"dataset": dataset, "model": model, "protocol": protocol, "a": a_g})
        N_d = study.n_items[dataset]
        K = np.unique(np.round(np.geomspace(1, N_d, _FIG3_CUTOFFS))).astype(np.int64)
        cdf.append(pd.DataFrame({"dataset": dataset, "model": model, "protocol": protocol, "scheme": scheme,
                                 "sample_size": n, "K": K, "empirical": scaled_hit_ratio(R, N, K, N_d),
                                 "beta_sampled": beta_hit_ratio(N, K, a_p, N_d),
                                 "beta_global": beta_hit_ratio(N, K, a_g, N_d)}))
    return {"beta_parameters": pd.DataFrame(params), "beta_global_fit": pd.DataFrame(global_fit),
            "fig3_rank_cdf": pd.concat(cdf, ignore_index=True)}


# ----------------------------------------------------------------------------- Figs. 4–5


def parameter_tables(config: Mapping, n_items: int) -> dict[str, pd.DataFrame]:
    """f(k; a) for k = 1..n on the focus dataset's N: its relative difference from f(k; 1) for
    ``relative_parameters`` (Fig. 4) and its difference from f(k; ``reference_parameter``) for
    ``nearby_parameters`` (Fig. 5)."""
    n, dataset = config["sample_size"], config["focus"]["dataset"]
    k = np.arange(1, n + 1)
    uniform = mapping(k, n_items, n, "beta", a=1.0)
    reference = mapping(k, n_items, n, "beta", a=float(config["reference_parameter"]))
    relative = [pd.DataFrame({"dataset": dataset, "n_items": n_items, "sample_size": n, "a": float(a), "k": k,
                              "relative_difference": (mapping(k, n_items, n, "beta", a=float(a)) - uniform) / uniform})
                for a in config["relative_parameters"]]
    nearby = [pd.DataFrame({"dataset": dataset, "n_items": n_items, "sample_size": n, "a": float(a),
                            "reference_a": float(config["reference_parameter"]), "k": k,
                            "difference": mapping(k, n_items, n, "beta", a=float(a)) - reference})
              for a in config["nearby_parameters"]]
    return {"fig4_relative_difference": pd.concat(relative, ignore_index=True),
            "fig5_difference": pd.concat(nearby, ignore_index=True)}


# ----------------------------------------------------------------------------- curves, Fig. 6


def hit_ratio_curves(study: _Study) -> pd.DataFrame:
    """HR@K (cut-offs scaled to each user's N_u) of every model of the focus dataset and of the
    growth model: every K up to 200, then 300 log-spaced cut-offs up to N."""
    c = study.config
    pairs = [(c["focus"]["dataset"], m) for m in c["models"]] + [(c["growth"]["dataset"], c["growth"]["model"])]
    frames = []
    for dataset, model in dict.fromkeys(pairs):
        N_d = study.n_items[dataset]
        K = np.unique(np.concatenate([np.arange(1, min(N_d, _DENSE_CUTOFFS) + 1),
                                      np.round(np.geomspace(min(N_d, _DENSE_CUTOFFS), N_d, _LOG_CUTOFFS))]))
        for protocol in c["protocols"]:
            R, N = study.users(dataset, model, protocol)
            frames.append(pd.DataFrame({"dataset": dataset, "model": model, "protocol": protocol, "n_items": N_d,
                                        "K": K.astype(np.int64), "hr": scaled_hit_ratio(R, N, K, N_d)}))
    return pd.concat(frames, ignore_index=True)


def sampling_effect(study: _Study) -> pd.DataFrame:
    """Each focus-dataset model's SHR@k at its own Beta@P location f(k; a_P), with HR@f(k; a_P)
    (Li et al. §4.2, Fig. 6), for k in ``ks``."""
    c = study.config
    rows = []
    for protocol in c["protocols"]:
        for model in c["models"]:
            key = (c["focus"]["dataset"], model, protocol, c["scheme"], c["sample_size"])
            R, N = study.users(*key[:3])
            a = study.beta_p(*key)
            ks = np.asarray(c["ks"])
            location = mapping(ks, study.n_items[key[0]], c["sample_size"], "beta", a=a)
            hr = mapped_hit_ratio(R, N, c["sample_size"], ks, "beta", a=a)
            shr = study.shr(*key)[ks - 1]
            rows.extend({"dataset": key[0], "model": model, "protocol": protocol, "scheme": key[3],
                         "sample_size": key[4], "a": a, "k": int(k), "location": f, "shr": s, "hr": h}
                        for k, f, s, h in zip(ks, location, shr, hr, strict=True))
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- aligned curves


def aligned_curves(study: _Study, key: tuple, ks, labels: Sequence[str]) -> pd.DataFrame:
    """For one draw: SHR@k, E[SHR@k], and for each mapping the location f(k; N) and HR@f(k).

    Columns ``dataset, model, protocol, scheme, sample_size, k, shr, expected_shr, mapping,
    location, hr``.
    """
    dataset, model, protocol, scheme, n = key
    R, N = study.users(dataset, model, protocol)
    run = study.run(*key)
    ks = np.asarray(ks, dtype=np.int64)
    shr, expected = study.shr(*key)[ks - 1], run["expected_shr"].to_numpy()[ks - 1]
    frames = []
    for label in labels:
        kind, a = study.mapping_args(label, *key)
        frames.append(pd.DataFrame({
            "dataset": dataset, "model": model, "protocol": protocol, "scheme": scheme, "sample_size": n, "k": ks,
            "shr": shr, "expected_shr": expected, "mapping": label,
            "location": mapping(ks, study.n_items[dataset], n, kind, a),
            "hr": mapped_hit_ratio(R, N, n, ks, kind, a)}))
    return pd.concat(frames, ignore_index=True)


def _focus_key(c: Mapping, protocol: str, scheme: str, n: int) -> tuple:
    return (c["focus"]["dataset"], c["focus"]["model"], protocol, scheme, n)


def curve_tables(study: _Study) -> dict[str, pd.DataFrame]:
    """``fig7_curves`` (the focus model, main setting, k = 1..n) and ``varying_k`` (Tables 5–6:
    every scheme of :func:`focus_schemes` and n of ``focus.sample_sizes``, at the scaled ``ks``)."""
    c = study.config
    labels = c["curve_mappings"]
    fig7 = [aligned_curves(study, _focus_key(c, p, c["scheme"], c["sample_size"]),
                           np.arange(1, c["sample_size"] + 1), labels) for p in c["protocols"]]
    varying = [aligned_curves(study, _focus_key(c, p, s, n), focus_ks(c["ks"], n, c["sample_size"]), labels)
               for n in c["focus"]["sample_sizes"] for p in c["protocols"] for s in focus_schemes(p)]
    return {"fig7_curves": pd.concat(fig7, ignore_index=True), "varying_k": pd.concat(varying, ignore_index=True)}


# ----------------------------------------------------------------------------- Table 3


def winner_tables(study: _Study) -> dict[str, pd.DataFrame]:
    """``table3_hit_ratios`` (SHR@k, E[SHR@k] and HR@f(k) of every model at ``ks`` for
    ``winner_mappings``) and ``table3_orders`` (:func:`winner_orders`)."""
    c = study.config
    frames = [aligned_curves(study, key, c["ks"], c["winner_mappings"]) for key in study.main_keys()]
    hits = pd.concat(frames, ignore_index=True).drop(columns=["location"])
    return {"table3_hit_ratios": hits, "table3_orders": winner_orders(hits)}


def winner_orders(hits: pd.DataFrame) -> pd.DataFrame:
    """Do the sampled and the global hit ratio rank the models alike (Li et al. §5, Table 3)?

    Per (dataset, protocol, scheme, n, k, mapping) and for the drawn SHR@k (``sampled`` =
    ``draw``) and its expectation E[SHR@k] (``expected``): the model with the highest sampled
    value and the one with the highest HR@f(k), whether they agree, Kendall's τ between the
    two orders of all models, and the two orders (best first; ties keep the order of the rows).
    ``hr_shortfall`` is how far the model named by the sampled value is behind the best model in
    HR@f(k) (0 when they are the same).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, protocol, scheme, sample_size, k, mapping, sampled, winner_sampled,
        winner_hr, same_winner, hr_shortfall, kendall_tau, same_order, order_sampled, order_hr``.
    """
    keys = ["dataset", "protocol", "scheme", "sample_size", "k", "mapping"]
    rows = []
    for key, part in hits.groupby(keys, sort=False):
        by_hr = part.sort_values("hr", ascending=False, kind="stable")["model"].tolist()
        for sampled, column in (("draw", "shr"), ("expected", "expected_shr")):
            by_sampled = part.sort_values(column, ascending=False, kind="stable")["model"].tolist()
            tau = kendalltau(part[column], part["hr"]).statistic if len(part) > 1 else np.nan
            hr = part.set_index("model")["hr"]
            rows.append({**dict(zip(keys, key, strict=True)), "sampled": sampled, "winner_sampled": by_sampled[0],
                         "winner_hr": by_hr[0], "same_winner": by_sampled[0] == by_hr[0],
                         "hr_shortfall": float(hr[by_hr[0]] - hr[by_sampled[0]]), "kendall_tau": float(tau),
                         "same_order": by_sampled == by_hr, "order_sampled": " > ".join(by_sampled),
                         "order_hr": " > ".join(by_hr)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Table 7, Fig. 8


def error_rows(study: _Study, key: tuple, labels: Sequence[str], target: str) -> list[dict]:
    """Table 7 errors of each mapping for one draw, against its SHR@k (``target`` = ``"draw"``)
    or E[SHR@k] (``"expected"``), k = 1..n."""
    dataset, model, protocol, scheme, n = key
    R, N = study.users(dataset, model, protocol)
    k = np.arange(1, n + 1)
    shr = study.shr(*key) if target == "draw" else study.run(*key)["expected_shr"].to_numpy()
    rows = []
    for label in labels:
        kind, a = study.mapping_args(label, *key)
        errors = mapping_errors(shr, mapped_hit_ratio(R, N, n, k, kind, a))
        rows.extend({"dataset": dataset, "model": model, "protocol": protocol, "scheme": scheme, "sample_size": n,
                     "mapping": label, "error": name, "value": errors[name]} for name in MAPPING_ERRORS)
    return rows



def error_tables(study: _Study) -> dict[str, pd.DataFrame]:
    """``mapping_errors`` and ``mapping_errors_expected`` (Table 7 for every main draw), and
    ``fig8_errors`` (the growth model at every n of ``growth.sample_sizes``)."""
    c = study.config
    labels = c["mappings"]
    growth = [(c["growth"]["dataset"], c["growth"]["model"], p, c["scheme"], n)
              for p in c["protocols"] for n in c["growth"]["sample_sizes"]]
    return {
        "mapping_errors": _frame([r for key in study.main_keys() for r in error_rows(study, key, labels, "draw")],
                                 ERROR_COLUMNS),
        "mapping_errors_expected": _frame([r for key in study.main_keys()
                                           for r in error_rows(study, key, labels, "expected")], ERROR_COLUMNS),
        "fig8_errors": _frame([r for key in growth for r in error_rows(study, key, labels, "draw")], ERROR_COLUMNS),
    }


def growth_curves(study: _Study) -> pd.DataFrame:
    """Fig. 8: SHR@k, E[SHR@k], the location f(k) of ``growth.mapping`` and HR@f(k) of the growth
    model for every n of ``growth.sample_sizes``, k = 1..n."""
    c = study.config
    g = c["growth"]
    return pd.concat([aligned_curves(study, (g["dataset"], g["model"], p, c["scheme"], n), np.arange(1, n + 1),
                                     [g["mapping"]])
                      for p in c["protocols"] for n in g["sample_sizes"]], ignore_index=True)


# ----------------------------------------------------------------------------- all tables


def study_tables(config: Mapping, seed: int, runs: pd.DataFrame, root: str | Path = ".") -> dict[str, pd.DataFrame]:
    """Every table of notebook 03 (see the module docstring) from the chunks and the ranks.

    Parameters
    ----------
    config : mapping
        The ``mapping_functions`` section of the configuration.
    seed : int
        Study seed (the chunks hold the main draws; the spread of Beta@P draws more).
    runs : pandas.DataFrame
        The chunks of :func:`chunk_table`, concatenated (any order).
    root : str or Path
        Repository root (where ``results/ranks`` is).
    """
    for label in (*config["mappings"], *config["curve_mappings"], *config["winner_mappings"],
                  config["growth"]["mapping"]):
        parse_mapping(label)
    study = _Study(config, runs, root)
    return {
        **beta_tables(study, seed),
        **parameter_tables(config, study.n_items[config["focus"]["dataset"]]),
        "hit_ratio_curves": hit_ratio_curves(study),
        "fig6_sampling_effect": sampling_effect(study),
        **winner_tables(study),
        **curve_tables(study),
        **error_tables(study),
        "fig8_sample_sizes": growth_curves(study),
    }


# ----------------------------------------------------------------------------- summaries for the notebook


def hit_ratio_long(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of :func:`aligned_curves` in the long form of the paper's tables: one ``value``
    per ``mapping``, where mapping ``sampled`` holds SHR@k and every other mapping HR@f(k)."""
    keys = [c for c in frame.columns if c not in ("shr", "expected_shr", "mapping", "location", "hr")]
    sampled = frame.drop_duplicates(keys).assign(mapping="sampled", value=lambda t: t["shr"])[[*keys, "mapping", "value"]]
    mapped = frame.rename(columns={"hr": "value"})[[*keys, "mapping", "value"]]
    return pd.concat([sampled, mapped], ignore_index=True)


def with_paper(frame: pd.DataFrame, paper_name: str, on: Sequence[str]) -> pd.DataFrame:
    """``frame`` joined to a table of :mod:`itemsampling.studies.paper` on ``on``, with
    ``paper_dataset`` added from :data:`~itemsampling.studies.paper.PAPER_DATASETS` when
    ``frame`` has a ``dataset`` column.

    The paper's rows of the datasets and models ``frame`` has must all find a partner
    (:func:`~itemsampling.studies.paper.paper_merge` raises otherwise); rows of datasets or
    models the run did not include are left out.
    """
    if "dataset" in frame.columns:
        frame = frame.assign(paper_dataset=frame["dataset"].map(PAPER_DATASETS))
    scope = {column: frame[column].dropna().unique() for column in ("paper_dataset", "model")
             if column in on and column in frame.columns}
    return paper_merge(frame, paper_name, on, scope=scope)


def varying_k_summary(varying: pd.DataFrame) -> pd.DataFrame:
    """Mean |HR@f(k) - SHR@k| over the cut-offs of Tables 5–6, per (n, protocol, scheme, mapping),
    against the drawn SHR@k (``abs_draw``) and against E[SHR@k] (``abs_expected``)."""
    t = varying.assign(abs_draw=(varying["hr"] - varying["shr"]).abs(),
                       abs_expected=(varying["hr"] - varying["expected_shr"]).abs())
    keys = ["sample_size", "protocol", "scheme", "mapping"]
    return t.groupby(keys, sort=False)[["abs_draw", "abs_expected"]].mean().reset_index()


def error_summary(errors: pd.DataFrame, exclude_models: Sequence[str] = ()) -> pd.DataFrame:
    """Each Table 7 error averaged over datasets and models, per (protocol, mapping, error), in
    wide form (one column per error, in the order of :data:`MAPPING_ERRORS`)."""
    t = errors[~errors["model"].isin(list(exclude_models))]
    mean = t.groupby(["protocol", "mapping", "error"], sort=False)["value"].mean().reset_index()
    wide = mean.pivot(index=["protocol", "mapping"], columns="error", values="value")
    order = {m: i for i, m in enumerate(dict.fromkeys(t["mapping"]))}
    wide = wide.sort_index(key=lambda s: s.map(order) if s.name == "mapping" else s)
    return wide[[e for e in MAPPING_ERRORS if e in wide.columns]]


def best_mappings(errors: pd.DataFrame, exclude_models: Sequence[str] = ()) -> pd.DataFrame:
    """For each (protocol, error): in how many (dataset, model) cases each mapping has the
    smallest error (ties count for every tied mapping)."""
    t = errors[~errors["model"].isin(list(exclude_models))]
    keys = ["dataset", "model", "protocol", "error"]
    best = t[t["value"] == t.groupby(keys)["value"].transform("min")]
    counts = best.groupby(["protocol", "error", "mapping"]).size().rename("cases").reset_index()
    wide = counts.pivot(index=["protocol", "mapping"], columns="error", values="cases").fillna(0).astype(int)
    return wide[[e for e in MAPPING_ERRORS if e in wide.columns]]
