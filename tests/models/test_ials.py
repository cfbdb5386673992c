"""iALS through implicit, and recommender X's loss mapping (Krichene & Rendle KDD 2020 §9)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from itemsampling.models.ials import IALS, KricheneRendleMF


def kr_item_gradient(x, users, items, alpha, lam):
    """∂/∂V of Σ_H (ŷ - 1)^2 + α Σ_{u,i} ŷ^2 + λ(||U||^2 + ||V||^2) (K&R §9), ŷ = U V^T."""
    y = users @ items.T
    residual = x * (y - 1.0) + alpha * y
    return 2.0 * (residual.T @ users + lam * items)


def kr_user_gradient(x, users, items, alpha, lam):
    y = users @ items.T
    residual = x * (y - 1.0) + alpha * y
    return 2.0 * (residual @ items + lam * users)


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(0)
    return (rng.random((60, 30)) < 0.2).astype(np.float64)


def test_recommender_x_reaches_a_stationary_point_of_the_papers_loss(binary):
    alpha, lam = 0.2, 1.0
    model = KricheneRendleMF(dim=4, regularization=lam, unobserved_weight=alpha, iterations=200, num_threads=1)
    model.fit(sp.csr_matrix(binary), seed=0)
    # implicit's factors are the paper's times sqrt(1 + α)
    users = model.user_factors_.astype(np.float64) / np.sqrt(1 + alpha)
    items = model.item_factors_.astype(np.float64) / np.sqrt(1 + alpha)
    scale = 2 * lam * np.abs(items).max()
    assert np.abs(kr_item_gradient(binary, users, items, alpha, lam)).max() < 1e-4 * scale
    assert np.abs(kr_user_gradient(binary, users, items, alpha, lam)).max() < 1e-4 * scale
    # the test can fail: iALS with the paper's numbers plugged in unconverted is not stationary
    naive = IALS(factors=4, regularization=lam, alpha=1 / alpha, iterations=200, use_cg=False, num_threads=1)
    naive.fit(sp.csr_matrix(binary), seed=0)
    grad = kr_item_gradient(binary, naive.user_factors_.astype(float), naive.item_factors_.astype(float), alpha, lam)
    assert np.abs(grad).max() > 0.1 * scale


def test_recommender_x_hyperparameters_and_mapping():
    model = KricheneRendleMF()
    assert model.hyperparameters["dim"] == 16
    assert model._implicit_parameters() == pytest.approx({"factors": 16, "regularization": 60.0, "alpha": 6.0})


@pytest.mark.blas_kernels
@pytest.mark.parametrize("model_cls", [IALS, KricheneRendleMF])
def test_seeded_and_independent_of_threads(model_cls, binary):
    x = sp.csr_matrix(binary)
    kwargs = {"iterations": 5}
    a = model_cls(**kwargs, num_threads=1).fit(x, seed=3).score(np.arange(60))
    b = model_cls(**kwargs, num_threads=2).fit(x, seed=3).score(np.arange(60))
    c = model_cls(**kwargs, num_threads=1).fit(x, seed=4).score(np.arange(60))
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(("name", "value"), [("factors", 0), ("regularization", -1.0), ("alpha", np.nan),
                                             ("iterations", 1.5), ("use_cg", "yes"), ("num_threads", -1)])
def test_hyperparameters_are_validated(name, value):
    with pytest.raises(ValueError, match=name):
        IALS(**{name: value})
