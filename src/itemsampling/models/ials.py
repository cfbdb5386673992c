"""Implicit alternating least squares (iALS) through the ``implicit`` package, on the CPU.

``implicit`` (0.7) minimises the weighted matrix factorisation loss of Hu, Koren & Volinsky
(ICDM 2008) over user factors x_u and item factors y_i:

    L_impl = Σ_{u,i} c_ui (p_ui - x_u·y_i)^2 + λ_impl (Σ_u ||x_u||^2 + Σ_i ||y_i||^2),

with p_ui = 1, c_ui = α_impl for observed pairs (binary data) and p_ui = 0, c_ui = 1 for all
others; the regularisation is the same for every user and item (no frequency scaling).

Krichene & Rendle (KDD 2020, §9, recommender X) use the parameterisation of Hu et al. as
written by Rendle's "weight of unobserved" form:

    L_KR = Σ_{(u,i)∈H} (ŷ_ui - 1)^2 + α Σ_{u,i} ŷ_ui^2 + λ ||V||_F^2,   d = 16, λ = 10, α = 0.2.

An observed pair contributes (1 + α) ŷ^2 - 2ŷ + 1 = (1 + α)(ŷ - 1/(1+α))^2 + const and an
unobserved one α ŷ^2. Dividing L_KR by α and writing ŷ = ŷ' / (1 + α) (i.e. scaling every
factor by sqrt(1 + α)) gives, up to a positive factor and a constant,

    Σ_{(u,i)∈H} ((1+α)/α) (ŷ' - 1)^2 + Σ_{(u,i)∉H} ŷ'^2 + (λ (1+α)/α) ||V'||_F^2,

which is L_impl with α_impl = (1 + α)/α and λ_impl = λ (1 + α)/α. So the two losses have the
same minimisers up to the factor sqrt(1 + α) on every factor, i.e. the same rankings: for
X, α_impl = 6 and λ_impl = 60. What remains different is only what the paper does not state:
the initialisation (``implicit``: uniform [0, 0.01)), the number of sweeps, and the solver —
:class:`KricheneRendleMF` solves each least-squares step exactly (``use_cg=False``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from .base import Recommender

__all__ = ["IALS", "KricheneRendleMF"]


def _positive(name: str, value, integer: bool = False):
    kind = (int, np.integer) if integer else (int, float, np.number)
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0 or not np.isfinite(value):
        what = "a positive integer" if integer else "a positive number"
        raise ValueError(f"iALS {name} must be {what}, got {value!r}")
    return int(value) if integer else float(value)


def _non_negative_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer (0 = all cores), got {value!r}")
    return int(value)


class IALS(Recommender):
    """iALS (Hu, Koren & Volinsky 2008) with ``implicit``'s CPU solver.

    Parameters
    ----------
    factors : int
        Latent dimension d.
    regularization : float
        λ_impl, the L2 penalty on every user and item factor.
    alpha : float
        Confidence α_impl of an observed pair (unobserved pairs have confidence 1).
    iterations : int
        ALS sweeps (each solves all users, then all items).
    use_cg : bool
        Conjugate-gradient steps (``implicit``'s default, 3 per sweep) instead of exact solves.
    num_threads : int
        Threads of ``implicit`` (0 = all cores). Results do not depend on it: each user's (item's)
        least-squares problem is solved independently.

    Notes
    -----
    ``seed`` seeds the factor initialisation (``random_state`` of ``implicit``). BLAS is
    limited to one thread while fitting, as ``implicit`` recommends.
    """

    name = "ials"
    state_attributes = ("user_factors_", "item_factors_")

    def __init__(
        self,
        *,
        factors: int = 64,
        regularization: float = 1.0,
        alpha: float = 1.0,
        iterations: int = 15,
        use_cg: bool = True,
        num_threads: int = 0,
    ) -> None:
        if not isinstance(use_cg, (bool, np.bool_)):
            raise ValueError(f"iALS use_cg must be true or false, got {use_cg!r}")
        super().__init__(
            factors=_positive("factors", factors, integer=True),
            regularization=_positive("regularization", regularization),
            alpha=_positive("alpha", alpha),
            iterations=_positive("iterations", iterations, integer=True),
            use_cg=bool(use_cg),
            num_threads=_non_negative_int("num_threads", num_threads),
        )
        self.user_factors_: np.ndarray | None = None
        self.item_factors_: np.ndarray | None = None

    def _implicit_parameters(self) -> dict:
        """Arguments of ``implicit``'s ALS (its regularisation and confidence α)."""
        h = self._hyperparameters
        return {"factors": h["factors"], "regularization": h["regularization"], "alpha": h["alpha"]}

    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        from implicit.als import AlternatingLeastSquares
        from implicit.cpu.als import AlternatingLeastSquares as CpuALS

        h = self._hyperparameters
        with threadpool_limits(1, "blas"):
            model = AlternatingLeastSquares(
                **self._implicit_parameters(),
                dtype=np.float32,
                use_cg=h["use_cg"],
                use_gpu=False,
                iterations=h["iterations"],
                num_threads=h["num_threads"],
                random_state=seed,
            )
            if not isinstance(model, CpuALS):  # pragma: no cover - guards against a GPU build
                raise RuntimeError("implicit did not return its CPU ALS model")
            model.fit(train, show_progress=bool(progress))
        self.user_factors_ = np.ascontiguousarray(model.user_factors, dtype=np.float32)
        self.item_factors_ = np.ascontiguousarray(model.item_factors, dtype=np.float32)

    def _score(self, users: np.ndarray) -> np.ndarray:
        return self.user_factors_[users] @ self.item_factors_.T


class KricheneRendleMF(IALS):
    """Recommender X of Krichene & Rendle (KDD 2020, §9): iALS in their parameterisation.

    Minimises Σ_{(u,i)∈H} (ŷ - 1)^2 + α Σ_{u,i} ŷ^2 + λ ||V||_F^2 by mapping it onto
    ``implicit``'s loss with α_impl = (1 + α)/α and λ_impl = λ (1 + α)/α (module docstring);
    the learned factors are those of the paper's loss times sqrt(1 + α).

    Parameters
    ----------
    dim : int
        Latent dimension d (paper: 16).
    regularization : float
        λ of the paper (10).
    unobserved_weight : float
        α of the paper, the weight of every (also unobserved) pair's squared score (0.2).
    iterations : int
        ALS sweeps (not stated in the paper).
    num_threads : int
        Threads of ``implicit`` (0 = all cores).
    """

    name = "krX"

    def __init__(
        self,
        *,
        dim: int = 16,
        regularization: float = 10.0,
        unobserved_weight: float = 0.2,
        iterations: int = 15,
        num_threads: int = 0,
    ) -> None:
        Recommender.__init__(
            self,
            dim=_positive("dim", dim, integer=True),
            regularization=_positive("regularization", regularization),
            unobserved_weight=_positive("unobserved_weight", unobserved_weight),
            iterations=_positive("iterations", iterations, integer=True),
            use_cg=False,
            num_threads=_non_negative_int("num_threads", num_threads),
        )
        self.user_factors_ = self.item_factors_ = None

    def _implicit_parameters(self) -> dict:
        h = self._hyperparameters
        scale = (1.0 + h["unobserved_weight"]) / h["unobserved_weight"]
        return {"factors": h["dim"], "regularization": h["regularization"] * scale, "alpha": scale}
