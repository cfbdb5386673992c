"""Tiny inputs of the further studies of notebook 05: popularity profiles and ratio-split ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itemsampling.popularity_profiles import PopularityProfile

REPRESENTATIVE = np.array([0.0, 1.0, 2.0, 5.0, 20.0])
CLASS_SIZES = np.array([10, 60, 40, 30, 10])


def tiny_profile(scale: float, seed: int, n_users: int = 200) -> PopularityProfile:
    """Users whose candidates are the catalogue of 150 items (five popularity classes) less a few of
    each class; the items above the target are drawn class by class, popular classes more often,
    more of them for larger ``scale``."""
    rng = np.random.default_rng(seed)
    seen = rng.integers(0, 3, (n_users, CLASS_SIZES.size))
    pool = CLASS_SIZES - seen
    pool[:, 1] -= 1  # the target is of class 1
    share = np.minimum(1.0, scale / 100 * (1 + np.arange(CLASS_SIZES.size)) / CLASS_SIZES.size)
    above = rng.binomial(pool, share[None, :] * rng.random((n_users, 1)))
    return PopularityProfile(users=np.arange(n_users), items=np.zeros(n_users, np.int64), ranks=1 + above.sum(axis=1),
                             n_candidates=pool.sum(axis=1) + 1, above=above, pool=pool,
                             representative=REPRESENTATIVE, upper=REPRESENTATIVE.astype(np.int64), protocol="unseen")


def tiny_ratio_ranks(scale: float, seed: int, n_users: int = 120, n_items: int = 300) -> pd.DataFrame:
    """Each user 2..6 positives with ranks among her negatives, in the columns of a ratio ranks file
    (`itemsampling train --split ratio`): rank = negative_rank + the positives placed before it."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        p = int(rng.integers(2, 7))
        n_candidates = n_items - int(rng.integers(0, 50))
        negative = np.minimum(rng.geometric(1.0 / scale, p), n_candidates - p + 1)
        rows += [{"user": u, "item": i, "negative_rank": int(r), "n_candidates": n_candidates, "n_positives": p}
                 for i, r in enumerate(negative)]
    frame = pd.DataFrame(rows)
    order = frame.sort_values(["user", "negative_rank"], kind="stable")
    frame.loc[order.index, "rank"] = order["negative_rank"] + order.groupby("user").cumcount()
    return frame.astype({"rank": np.int64})
