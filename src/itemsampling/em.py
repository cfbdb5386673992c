"""EM for the weights of a finite mixture with known components (Jin et al. AAAI 2021, App. B).

The sampled ranks are a mixture over the global rank R of the kernel P(r | R) with mixing
weights π_R = P(R) (AAAI'21 eq. 18). Users with the same observation (the same sampled rank r
and, for adaptive sampling, the same sample size n) contribute identical terms, so the data are
summarised by the ``d`` distinct observations: a kernel matrix ``K`` of shape ``(N, d)`` with
``K[R-1, j] = P(obs_j | R)`` and a weight ``c_j`` per observation (a user count, or a count times
the WMLE weight w(r)). With ``q = Kᵀπ`` the (weighted) log-likelihood is

    ℓ(π) = Σ_j c_j log q_j                                     (AAAI'21 eq. 19 and 22)

and one EM step is (AAAI'21 eq. 21 and 23; AAAI'23 eq. 21–22 in App. G)

    π_R ← π_R · Σ_j (c_j / Σ_i c_i) · K[R, j] / q_j,

two matrix–vector products of size N x d. EM never decreases ℓ, and its fixed points with
π > 0 satisfy the Karush–Kuhn–Tucker conditions of max ℓ over the simplex.

The kernel is kept as its band (:class:`~itemsampling.banded_kernel.BandedKernel`).
:func:`em_mixture_weights_many` is the one EM loop of the package: it advances any number of runs
on the same kernel (MLE and WMLE of the same sampled ranks, the repeats of a study whose draws
share the kernel), each with its own stopping rule, and takes the products of a step in one of two
ways (``products``): ``"vector"``, one matrix–vector product per run and panel, reading each panel
once for all the runs (:meth:`~itemsampling.banded_kernel.BandedKernel.em_steps`; a run does the
arithmetic of a run alone, to the bit), or ``"matrix"``, the runs as the columns of one matrix and
two matrix–matrix products per panel
(:meth:`~itemsampling.banded_kernel.BandedKernel.em_steps_stacked`; bound by the processor's
arithmetic rather than by reading the kernel, and equal to the vector products up to rounding).
:func:`em_mixture_weights` is a batch of one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from .banded_kernel import BandedKernel

__all__ = [
    "DEFAULT_MAX_ITER",
    "DEFAULT_TOL",
    "EMProblem",
    "EMResult",
    "em_mixture_weights",
    "em_mixture_weights_many",
    "mixture_log_likelihood",
]

#: default number of EM steps: the AAAI'23 authors' code runs exactly 100 from the uniform start
DEFAULT_MAX_ITER = 100
#: default stopping threshold on the relative increase of the log-likelihood per step
DEFAULT_TOL = 1e-9


@dataclass(frozen=True)
class EMResult:
    """Outcome of :func:`em_mixture_weights`.

    Attributes
    ----------
    weights : numpy.ndarray
        ``(N,)`` estimated mixing weights π (a probability vector).
    log_likelihood : numpy.ndarray
        Trace of ℓ(π_t) for t = 0 (the start) .. ``n_iter``.
    n_iter : int
        Number of EM steps taken.
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    steps : tuple of (numpy.ndarray, numpy.ndarray)
        With :attr:`EMProblem.record`, (π_t, q_t = Kᵀπ_t) before each step t = 0 .. ``n_iter`` − 1:
        what differentiating the steps needs (:mod:`itemsampling.intervals`); else empty.
    """

    weights: np.ndarray
    log_likelihood: np.ndarray
    n_iter: int
    converged: bool
    steps: tuple = ()


def mixture_log_likelihood(weights, kernel, obs_weights) -> float:
    """ℓ(π) = Σ_j c_j log (Kᵀπ)_j (AAAI'21 eq. 19; eq. 22 when c carries the WMLE weights).

    Parameters
    ----------
    weights : array_like
        ``(N,)`` mixing weights π.
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` matrix ``K[R-1, j] = P(obs_j | R)``.
    obs_weights : array_like
        ``(d,)`` non-negative weight c_j of each distinct observation.

    Returns
    -------
    float
        The log-likelihood; ``-inf`` if an observation with positive weight has probability 0.
    """
    pi = np.asarray(weights, dtype=np.float64)
    q = kernel.rmatvec(pi) if isinstance(kernel, BandedKernel) else np.asarray(kernel).T @ pi
    c = np.asarray(obs_weights, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(c > 0, c * np.log(q), 0.0)))


@dataclass(frozen=True)
class EMProblem:
    """One EM run of :func:`em_mixture_weights_many`: the arguments of :func:`em_mixture_weights`.

    ``obs_weights`` may be 0 at observations the run did not see (e.g. sampled ranks seen only in
    other repeats of a study): those do not enter its likelihood or its step. ``record`` keeps the
    iterates of every step in :attr:`EMResult.steps` (N floats twice per step)."""

    obs_weights: np.ndarray
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL
    init: np.ndarray | None = None
    record: bool = False


def em_mixture_weights(
    kernel: np.ndarray | BandedKernel,
    obs_weights,
    *,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    init=None,
    progress: bool = False,
) -> EMResult:
    """Maximise ℓ(π) over the simplex by EM (AAAI'21 eq. 21/23; AAAI'23 App. G eq. 21–22).

    A batch of one run of :func:`em_mixture_weights_many`.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` non-negative matrix ``K[R-1, j] = P(obs_j | R)``; a dense array is
        banded with :class:`BandedKernel` first.
    obs_weights : array_like
        ``(d,)`` non-negative weight of each distinct observation (user counts, optionally times
        WMLE weights), some positive. Only their proportions matter.
    max_iter : int
        Maximum number of EM steps (at least 1).
    tol : float
        Stop after the first step whose log-likelihood increase is at most
        ``tol * |ℓ|`` (a relative change; ``ℓ`` grows with the number of users, so this is
        the same as an absolute threshold on the mean log-likelihood per unit weight).
        ``tol=0`` runs all ``max_iter`` steps unless ℓ stops changing exactly.
    init : array_like, optional
        Starting π (a probability vector); uniform by default (as in the papers). Entries
        that start at zero stay zero.
    progress : bool
        Show a progress bar.

    Returns
    -------
    EMResult
    """
    problem = EMProblem(obs_weights, max_iter=max_iter, tol=tol, init=init)
    return em_mixture_weights_many(kernel, [problem], progress=progress)[0]


def em_mixture_weights_many(kernel: np.ndarray | BandedKernel, problems: Sequence[EMProblem], *,
                            products: str = "vector", progress: bool = False) -> list[EMResult]:
    """Several EM runs (:func:`em_mixture_weights`) on the same kernel, advanced together.

    Run b maximises ℓ_b(π) = Σ_j c_jb log (Kᵀπ)_j (AAAI'21 eq. 19 and 22) by the step of AAAI'21
    eq. 21/23, π ← π ⊙ K (f_b / Kᵀπ) normalised, f_b = c_b / Σ c_b, and stops after the first step
    with ℓ_t − ℓ_{t−1} ≤ tol_b |ℓ_t| or after max_iter_b steps. Runs with the same observation
    weights and start follow the same iterates and differ only in when they stop (e.g. 25, 100
    and 1,000 steps, or to convergence): they share one column of the iterates, and each takes
    its result when its own rule stops it. A column leaves when all its runs stopped.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        As in :func:`em_mixture_weights`.
    problems : sequence of EMProblem
        Observation weights (``(d,)``, non-negative, some positive), iteration cap, tolerance
        and start of each run.
    products : {"vector", "matrix"}
        How a step's products are taken (module docstring): ``"vector"`` gives each run the
        arithmetic of a run alone, to the bit (few runs); ``"matrix"`` is faster for many runs
        (e.g. the repeats of a study) and equal to it up to rounding, the same to the bit for
        the same runs in the same order.
    progress : bool
        Show a progress bar.

    Returns
    -------
    list of EMResult
        One per problem, in order.
    """
    K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(kernel)
    if products not in _ITERATES:
        raise ValueError(f"products must be one of {', '.join(map(repr, _ITERATES))}, got {products!r}")
    weights = [np.asarray(problem.obs_weights, dtype=np.float64) for problem in problems]
    if not weights or any(w.shape != (K.shape[1],) for w in weights) or not all(
            np.all(w >= 0) and w.sum() > 0 for w in weights):
        raise ValueError(f"each problem needs {K.shape[1]} non-negative observation weights, some positive, got "
                         f"shapes {sorted({w.shape for w in weights})}")
    caps = np.array([problem.max_iter for problem in problems])
    if caps.dtype.kind not in "iu" or np.any(caps < 1):
        raise ValueError(f"max_iter must be positive integers, got {caps.tolist()}")
    tols = np.array([problem.tol for problem in problems], dtype=np.float64)
    starts = [None if problem.init is None else np.asarray(problem.init, dtype=np.float64) for problem in problems]
    column_of: dict[tuple, int] = {}  # (weights, start) -> column: runs that share their iterates
    members: list[list[int]] = []  # the runs of each column still going
    for b, (w, start) in enumerate(zip(weights, starts, strict=True)):
        key = (w.tobytes(), None if start is None else start.tobytes())
        if key not in column_of:
            column_of[key] = len(members)
            members.append([])
        members[column_of[key]].append(b)
    firsts = [runs[0] for runs in members]
    uniform = np.full(K.shape[0], 1.0 / K.shape[0])
    iterates = _ITERATES[products](K, [weights[b] for b in firsts],
                                   [uniform if starts[b] is None else starts[b] for b in firsts])
    columns = list(range(len(members)))  # the columns still going
    traces = [[value] for value in iterates.log_likelihoods()]
    recorded = [[] if any(problems[b].record for b in runs) else None for runs in members]
    results: list[EMResult | None] = [None] * len(problems)
    with tqdm(total=int(caps.max()), desc="EM", disable=not progress, leave=False) as bar:
        for step in range(1, int(caps.max()) + 1):
            for i, col in enumerate(columns):
                if recorded[col] is not None:
                    recorded[col].append(iterates.state(i))
            iterates.step()
            going = []
            for i, (col, value) in enumerate(zip(columns, iterates.log_likelihoods(), strict=True)):
                trace = traces[col]
                trace.append(value)
                for b in list(members[col]):
                    converged = bool(value - trace[-2] <= tols[b] * abs(value))
                    if converged or step == caps[b]:
                        results[b] = EMResult(weights=iterates.state(i)[0], log_likelihood=np.asarray(trace),
                                              n_iter=step, converged=converged,
                                              steps=tuple(recorded[col]) if problems[b].record else ())
                        members[col].remove(b)
                if members[col]:
                    going.append(i)
            bar.update()
            if len(going) < len(columns):
                columns = [columns[i] for i in going]
                iterates.keep(going)
            if not columns:
                break
    return results


class _VectorIterates:
    """The iterates of several EM runs, each advanced by its own matrix–vector products: π, q =
    Kᵀπ and f = c / Σc per run, with the arithmetic of a run alone."""

    def __init__(self, K: BandedKernel, weights: list[np.ndarray], starts: list[np.ndarray]):
        self.K, self.c = K, weights
        self.frac = [c / c.sum() for c in weights]
        self.pi = [np.array(start, dtype=np.float64) for start in starts]
        self.q = [K.rmatvec(pi) for pi in self.pi]
        _check_start(self.q, self.c)

    def log_likelihoods(self) -> list[float]:
        return [float(c @ np.log(q)) for c, q in zip(self.c, self.q, strict=True)]

    def step(self) -> None:
        """π ← π' / Σπ' and q ← Kᵀπ' / Σπ' (the step keeps the total mass up to rounding)."""
        steps = self.K.em_steps(self.pi, [f / q for f, q in zip(self.frac, self.q, strict=True)])
        totals = [new.sum() for new, _ in steps]
        self.pi = [new / total for (new, _), total in zip(steps, totals, strict=True)]
        self.q = [q / total for (_, q), total in zip(steps, totals, strict=True)]

    def state(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(π, q) of run ``i`` (a step replaces them, so they stay as they are)."""
        return self.pi[i], self.q[i]

    def keep(self, going: list[int]) -> None:
        self.c, self.frac, self.pi, self.q = ([values[i] for i in going]
                                              for values in (self.c, self.frac, self.pi, self.q))


class _MatrixIterates:
    """The iterates of several EM runs as the columns of one matrix, advanced by matrix–matrix
    products: one step is Π ← Π ⊙ (K W) normalised per column, W = F / (Kᵀ Π) entrywise
    (:meth:`~itemsampling.banded_kernel.BandedKernel.em_steps_stacked`)."""

    def __init__(self, K: BandedKernel, weights: list[np.ndarray], starts: list[np.ndarray]):
        self.K = K
        self.c = np.column_stack(weights)
        self.frac = self.c / self.c.sum(axis=0)
        self.observed = self.c > 0
        self.pi = np.column_stack(starts)
        self.q = K.rmatmat(self.pi)
        _check_start(self.q.T, self.c.T)

    def log_likelihoods(self) -> np.ndarray:
        """ℓ_b = Σ_j c_jb log q_jb of every run b, over its observations of positive weight."""
        with np.errstate(divide="ignore"):
            return np.where(self.observed, self.c * np.log(np.where(self.observed, self.q, 1.0)), 0.0).sum(axis=0)

    def step(self) -> None:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(self.observed, self.frac / self.q, 0.0)
        new, q = self.K.em_steps_stacked(self.pi, ratio)
        total = new.sum(axis=0)
        self.pi, self.q = new / total, q / total

    def state(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Copies of (π, q) of column ``i``."""
        return self.pi[:, i].copy(), self.q[:, i].copy()

    def keep(self, going: list[int]) -> None:
        self.pi, self.q, self.c, self.frac, self.observed = (values[:, going] for values in (
            self.pi, self.q, self.c, self.frac, self.observed))


def _check_start(qs, weights) -> None:
    if any(np.any(q[c > 0] <= 0) for q, c in zip(qs, weights, strict=True)):
        raise ValueError(
            "the starting distribution gives probability 0 to an observed sampled rank; "
            "use a starting distribution with more support (e.g. the uniform default)"
        )


#: the two ways of taking a step's products (:func:`em_mixture_weights_many`)
_ITERATES = {"vector": _VectorIterates, "matrix": _MatrixIterates}
