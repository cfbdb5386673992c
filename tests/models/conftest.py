"""Fixtures of the model tests: small synthetic data with planted latent structure."""

from __future__ import annotations

import pytest

from itemsampling.data import Dataset, make_synthetic


@pytest.fixture(scope="session")
def planted() -> Dataset:
    """400 users x 120 items, 8 planted factors (strong) and mild popularity skew."""
    return make_synthetic(400, 120, n_factors=8, avg_items=15, strength=3.0, popularity_skew=0.5, seed=1)
