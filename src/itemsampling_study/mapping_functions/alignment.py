"""How the sampled hit ratio SHR@k lines up with the global HR@f(k) under each mapping: the
curves (Figs. 6–8, Tables 5–6), the winners and orders of the models (Table 3) and the mapping
errors (Table 7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from itemsampling.mappings import (
    MAPPING_ERRORS,
    mapped_hit_ratio,
    mapping,
    mapping_errors,
    scaled_hit_ratio,
)

from .data import StudyData
from .settings import focus_ks, focus_schemes

__all__ = ["ERROR_COLUMNS", "aligned_curves", "curve_tables", "error_rows", "error_tables", "growth_curves",
           "hit_ratio_curves", "sampling_effect", "winner_orders", "winner_tables"]

#: the grid of global cut-offs of the HR@K curves: every K up to this, then log-spaced points
_DENSE_CUTOFFS = 200
_LOG_CUTOFFS = 300
#: columns of the error tables (Table 7, long format)
ERROR_COLUMNS = ("dataset", "model", "protocol", "scheme", "sample_size", "mapping", "error", "value")


def _frame(rows: list[dict], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


def hit_ratio_curves(study: StudyData) -> pd.DataFrame:
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


def sampling_effect(study: StudyData) -> pd.DataFrame:
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


def aligned_curves(study: StudyData, key: tuple, ks, labels: Sequence[str]) -> pd.DataFrame:
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


def curve_tables(study: StudyData) -> dict[str, pd.DataFrame]:
    """``fig7_curves`` (the focus model, main setting, k = 1..n) and ``varying_k`` (Tables 5–6:
    every scheme of :func:`focus_schemes` and n of ``focus.sample_sizes``, at the scaled ``ks``)."""
    c = study.config
    labels = c["curve_mappings"]
    fig7 = [aligned_curves(study, _focus_key(c, p, c["scheme"], c["sample_size"]),
                           np.arange(1, c["sample_size"] + 1), labels) for p in c["protocols"]]
    varying = [aligned_curves(study, _focus_key(c, p, s, n), focus_ks(c["ks"], n, c["sample_size"]), labels)
               for n in c["focus"]["sample_sizes"] for p in c["protocols"] for s in focus_schemes(p)]
    return {"fig7_curves": pd.concat(fig7, ignore_index=True), "varying_k": pd.concat(varying, ignore_index=True)}


def winner_tables(study: StudyData) -> dict[str, pd.DataFrame]:
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
    # imported here: scipy.stats takes about 0.4 s to import, and the 49 chunk jobs of notebook 03
    # that load this package never compute τ
    from scipy.stats import kendalltau

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


def error_rows(study: StudyData, key: tuple, labels: Sequence[str], target: str) -> list[dict]:
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


def error_tables(study: StudyData) -> dict[str, pd.DataFrame]:
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


def growth_curves(study: StudyData) -> pd.DataFrame:
    """Fig. 8: SHR@k, E[SHR@k], the location f(k) of ``growth.mapping`` and HR@f(k) of the growth
    model for every n of ``growth.sample_sizes``, k = 1..n."""
    c = study.config
    g = c["growth"]
    return pd.concat([aligned_curves(study, (g["dataset"], g["model"], p, c["scheme"], n), np.arange(1, n + 1),
                                     [g["mapping"]])
                      for p in c["protocols"] for n in g["sample_sizes"]], ignore_index=True)
