"""The Beta(a, 1) model of the global ranks: its parameter a fitted to the sampled ranks (eq. 19,
Table 2) and to the global ranks, the rank CDF next to both models (Fig. 3), and the mapping
f(k; a) as a varies (Figs. 4–5)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itemsampling.mappings import (
    beta_hit_ratio,
    fit_beta,
    fit_beta_global,
    mapping,
    scaled_hit_ratio,
)
from itemsampling.simulation import sample_ranks

from ..engine import STUDY_SCHEMES, derive_seed
from .data import StudyData

__all__ = ["beta_draws", "beta_tables", "parameter_tables"]

#: points of the HR@K grid of Fig. 3
_FIG3_CUTOFFS = 40


def beta_draws(R: np.ndarray, N: np.ndarray, key: tuple, seed: int, draws: int) -> np.ndarray:
    """Beta@P (eq. 19) fitted to ``draws`` independent draws of sampled ranks of one (dataset,
    model, protocol, scheme, n); draw ``j`` is the engine's repeat ``j``, so draw 0 is the one of
    the study's chunk (the ``a`` of every other table)."""
    dataset, model, protocol, scheme, n = key
    law = STUDY_SCHEMES[scheme][0]
    out = np.empty(draws)
    for j in range(draws):
        rng = np.random.default_rng(derive_seed(seed, dataset, model, protocol, scheme, n, j))
        out[j] = fit_beta(sample_ranks(R, N, n, rng=rng, scheme=law), int(N.min()), n)
    return out


def beta_tables(study: StudyData, seed: int) -> dict[str, pd.DataFrame]:
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
