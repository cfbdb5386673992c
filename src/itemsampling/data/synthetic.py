"""Synthetic implicit feedback with latent-factor structure and popularity skew.

User ``u`` interacts with item ``i`` with a preference logit

    s_ui = strength · <p_u, q_i> / sqrt(d) − popularity_skew · log(1 + π_i),

where ``p_u, q_i ~ N(0, I_d)`` and ``π`` is a random permutation of ``0..N-1`` (the planted
popularity rank of each item, a Zipf-like log-popularity). Each user draws ``n_u`` distinct
items with probability proportional to ``exp(s_ui)`` (sampling without replacement by the
Gumbel top-k trick), ``n_u = min(N − 1, 2 + Poisson(avg_items − 2))``; one of them, uniformly
at random, is held out (leave-one-out). Everything is a function of the sizes and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dataset import Dataset
from .splits import dataset_from_indices

__all__ = ["PlantedModel", "make_synthetic", "planted_model"]

#: bound on the number of logits generated at once (memory of one block of users)
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True)
class PlantedModel:
    """The latent structure behind :func:`make_synthetic`: ``logits(u) = user_factors[u] @ item_factors.T + item_bias``."""

    user_factors: np.ndarray  # (n_users, d), already scaled by strength / sqrt(d)
    item_factors: np.ndarray  # (n_items, d)
    item_bias: np.ndarray  # (n_items,), −popularity_skew · log(1 + popularity rank)

    def logits(self, users: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Preference logits of the given users for all items."""
        return self.user_factors[users] @ self.item_factors.T + self.item_bias


def _check_sizes(n_users, n_items, n_factors, avg_items, popularity_skew, strength) -> None:
    for label, value, low in (("n_users", n_users, 1), ("n_items", n_items, 3), ("n_factors", n_factors, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
    if not 2 <= avg_items <= n_items - 1:
        raise ValueError(
            f"avg_items must lie in [2, n_items - 1] = [2, {n_items - 1}] (one training and one held-out "
            f"item at least), got {avg_items!r}"
        )
    for label, value in (("popularity_skew", popularity_skew), ("strength", strength)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{label} must be a finite number >= 0, got {value!r}")


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    model_seq, sample_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(model_seq), np.random.default_rng(sample_seq)


def planted_model(
    n_users: int,
    n_items: int,
    *,
    n_factors: int = 8,
    popularity_skew: float = 1.0,
    strength: float = 2.0,
    seed: int = 0,
) -> PlantedModel:
    """The planted factors and popularity of :func:`make_synthetic` with the same arguments."""
    rng, _ = _generators(seed)
    user_factors = rng.standard_normal((n_users, n_factors)) * (strength / np.sqrt(n_factors))
    item_factors = rng.standard_normal((n_items, n_factors))
    popularity_rank = rng.permutation(n_items)
    item_bias = -popularity_skew * np.log1p(popularity_rank)
    return PlantedModel(user_factors, item_factors, item_bias)


def make_synthetic(
    n_users: int,
    n_items: int,
    *,
    n_factors: int = 8,
    avg_items: float = 20.0,
    popularity_skew: float = 1.0,
    strength: float = 2.0,
    seed: int = 0,
    name: str = "synthetic",
) -> Dataset:
    """Synthetic implicit-feedback data with a leave-one-out split (see the module docstring).

    Parameters
    ----------
    n_users, n_items : int
        Matrix size (``n_items >= 3``).
    n_factors : int
        Dimension d of the planted user and item factors.
    avg_items : float
        Expected number of items per user (in ``[2, n_items - 1]``), held-out item included.
    popularity_skew : float
        Weight of the log-popularity term; 0 gives no popularity effect.
    strength : float
        Scale of the factor term; 0 makes the items of a user depend on popularity only.
    seed : int
        Seed; the output is identical for identical arguments.
    """
    _check_sizes(n_users, n_items, n_factors, avg_items, popularity_skew, strength)
    model = planted_model(
        n_users, n_items, n_factors=n_factors, popularity_skew=popularity_skew, strength=strength, seed=seed
    )
    _, rng = _generators(seed)
    counts = np.minimum(n_items - 1, 2 + rng.poisson(avg_items - 2, size=n_users))
    block = max(1, _BLOCK_CELLS // n_items)
    rows, cols = [], []
    for start in range(0, n_users, block):
        stop = min(n_users, start + block)
        keys = model.logits(slice(start, stop)) + rng.gumbel(size=(stop - start, n_items))
        width = int(counts[start:stop].max())
        top = np.argpartition(-keys, width - 1, axis=1)[:, :width]
        top_keys = np.take_along_axis(keys, top, axis=1)
        top = np.take_along_axis(top, np.argsort(-top_keys, axis=1, kind="stable"), axis=1)
        keep = np.arange(width) < counts[start:stop, None]
        rows.append(np.broadcast_to(np.arange(start, stop)[:, None], top.shape)[keep])
        cols.append(top[keep])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    held = cols[offsets + rng.integers(0, counts)]
    return dataset_from_indices(
        name,
        rows,
        cols,
        np.arange(n_users),
        held,
        n_users=n_users,
        n_items=n_items,
        description=(
            f"synthetic implicit feedback ({n_users} users, {n_items} items, {n_factors} latent factors, "
            f"strength {strength:g}, popularity skew {popularity_skew:g}, about {avg_items:g} items per user, "
            f"seed {seed}); held-out item = one of each user's items at random"
        ),
        user_ids=np.arange(n_users),
        item_ids=np.arange(n_items),
    )
