"""Notebook 03's runs: one draw of sampled ranks per setting of a ranks file, and the exact
expectation of SHR@k under the same law (:func:`chunk_table`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itemsampling.hit_ratio import sampled_hit_ratio_moments
from itemsampling.simulation import sample_ranks

from ..engine import LABELS, STUDY_SCHEMES, derive_seed
from .settings import chunk_draws

__all__ = ["chunk_table"]


def chunk_table(config: Mapping, seed: int, labels: Mapping[str, str], ranks: pd.DataFrame) -> pd.DataFrame:
    """SHR@k of one draw and E[SHR@k] (Li et al. eq. 3–4) for k = 1..n, per setting of
    :func:`chunk_draws`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, scheme, sample_size, users, k, hits, expected_shr``:
        ``hits`` users with sampled rank r_u <= k in the draw (SHR@k = hits / users), and
        ``expected_shr`` = (1/M) Σ_u Pr(r_u <= k | R_u, N_u) under the draw's law
        (:func:`~itemsampling.hit_ratio.sampled_hit_ratio_moments`, as in notebook 02).
    """
    R, N = ranks["rank"].to_numpy(np.int64), ranks["n_candidates"].to_numpy(np.int64)
    key = [str(labels[k]) for k in LABELS]
    frames = []
    for scheme, n in chunk_draws(config, labels):
        law = STUDY_SCHEMES[scheme][0]
        rng = np.random.default_rng(derive_seed(seed, *key, scheme, n, 0))
        sampled = sample_ranks(R, N, n, rng=rng, scheme=law)
        frames.append(pd.DataFrame({
            **{k: labels[k] for k in LABELS}, "scheme": scheme, "sample_size": n, "users": R.size,
            "k": np.arange(1, n + 1), "hits": np.cumsum(np.bincount(sampled, minlength=n + 1)[1:]),
            "expected_shr": np.minimum(sampled_hit_ratio_moments(R, N, n, law)[0], 1.0),
        }))
    return pd.concat(frames, ignore_index=True)
