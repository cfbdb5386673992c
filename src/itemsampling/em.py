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

The kernel is kept as its band (:class:`~itemsampling.banded_kernel.BandedKernel`): one EM
step reads each panel once from memory for both products
(:meth:`~itemsampling.banded_kernel.BandedKernel.em_steps`), and
:func:`em_mixture_weights_many` advances several EM runs on the same kernel (e.g. MLE and WMLE of
the same sampled ranks) panel by panel, each run with exactly the arithmetic of its own
:func:`em_mixture_weights` (kernels of at most 2^20 entries stay dense: one BLAS product is faster
there). :func:`em_mixture_weights_stacked` advances many runs (e.g. the repeats of a study, whose
draws share the kernel) as the columns of one matrix: each step is two matrix–matrix products
per panel, bound by the processor's arithmetic rather than by reading the kernel, and each run
equals its own :func:`em_mixture_weights` up to rounding.
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
    "em_mixture_weights_stacked",
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
    """

    weights: np.ndarray
    log_likelihood: np.ndarray
    n_iter: int
    converged: bool


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
    """One EM run of :func:`em_mixture_weights_many`: the arguments of :func:`em_mixture_weights`."""

    obs_weights: np.ndarray
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL
    init: np.ndarray | None = None


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

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        ``(N, d)`` non-negative matrix ``K[R-1, j] = P(obs_j | R)``; a dense array is
        banded with :class:`BandedKernel` first.
    obs_weights : array_like
        ``(d,)`` positive weight of each distinct observation (user counts, optionally times
        WMLE weights). Only their proportions matter.
    max_iter : int
        Maximum number of EM steps.
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
                            progress: bool = False) -> list[EMResult]:
    """Several EM runs (:func:`em_mixture_weights`) on the same kernel, advanced together.

    Each step reads every panel of the banded kernel once for all the runs still going
    (:meth:`BandedKernel.em_steps`), and each run does exactly the arithmetic of
    :func:`em_mixture_weights` with its own arguments, so its result is the same to the bit.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        As in :func:`em_mixture_weights`.
    problems : sequence of EMProblem
        Observation weights, iteration cap, tolerance and start of each run.
    progress : bool
        Show a progress bar.

    Returns
    -------
    list of EMResult
        One per problem, in order.
    """
    K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(kernel)
    runs = [_EMRun(K, problem) for problem in problems]
    longest = max(run.max_iter for run in runs)
    with tqdm(total=longest, desc="EM", disable=not progress, leave=False) as bar:
        for _ in range(longest):
            active = [run for run in runs if not run.done]
            if not active:
                break
            steps = K.em_steps([run.pi for run in active], [run.frac / run.q for run in active])
            for run, (new, q) in zip(active, steps, strict=True):
                run.advance(new, q)
            bar.update()
    return [run.result() for run in runs]


def em_mixture_weights_stacked(kernel: np.ndarray | BandedKernel, problems: Sequence[EMProblem]) -> list[EMResult]:
    """Many EM runs (:func:`em_mixture_weights`) on the same kernel, stacked as the columns of
    one matrix and advanced by matrix–matrix products.

    Run b maximises ℓ_b(π) = Σ_j C[j, b] log (Kᵀπ)_j (AAAI'21 eq. 19 and 22) by the step of
    AAAI'21 eq. 21/23: the B runs' π form an ``(N, B)`` matrix Π, and one step of all of them
    is Π ← Π ⊙ (K W) normalised per column, with W = (C / Σ C) / (Kᵀ Π) entrywise
    (:meth:`~itemsampling.banded_kernel.BandedKernel.em_steps_stacked`). Observations of weight
    0 in a run (e.g. sampled ranks seen only in other repeats of a study) do not enter its
    likelihood or its step. Runs with the same observation weights and start follow the same
    iterates and differ only in when they stop (e.g. 25, 100 and 1,000 steps, or to
    convergence): they share one column, and each takes its result when its own rule (that of
    :func:`em_mixture_weights`) stops it. A column leaves the matrix when all its runs stopped.

    Each run's iterates are those of :func:`em_mixture_weights` with the same arguments up to
    rounding: the products sum the same terms in another order (matrix–matrix rather than
    matrix–vector kernels), so the weights can differ in the last bits. For the same arguments
    (the same runs, in the same order) the result is the same to the bit.

    Parameters
    ----------
    kernel : numpy.ndarray or BandedKernel
        As in :func:`em_mixture_weights`.
    problems : sequence of EMProblem
        Observation weights (``(d,)``, non-negative, some positive), iteration cap, tolerance
        and start of each run, as in :func:`em_mixture_weights_many`.

    Returns
    -------
    list of EMResult
        One per problem, in order.
    """
    K = kernel if isinstance(kernel, BandedKernel) else BandedKernel(kernel)
    weights = [np.asarray(problem.obs_weights, dtype=np.float64) for problem in problems]
    if any(w.shape != (K.shape[1],) for w in weights) or not all(np.all(w >= 0) and w.sum() > 0 for w in weights):
        raise ValueError(f"each problem needs {K.shape[1]} non-negative observation weights, a positive weight in "
                         f"every column, got shapes {sorted({w.shape for w in weights})}")
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
    n_rows = K.shape[0]
    uniform = np.full(n_rows, 1.0 / n_rows)
    c = np.column_stack([weights[b] for b in firsts])
    pi = np.column_stack([uniform if starts[b] is None else starts[b] for b in firsts])
    q = K.rmatmat(pi)
    observed = c > 0
    if np.any(q[observed] <= 0):
        raise ValueError(
            "the starting distribution gives probability 0 to an observed sampled rank; "
            "use a starting distribution with more support (e.g. the uniform default)"
        )
    columns = np.arange(len(members))  # the columns still going, as columns of pi, q, c, observed
    traces = [[value] for value in _stacked_log_likelihood(c, q, observed)]
    results: list[EMResult | None] = [None] * len(problems)
    frac = c / c.sum(axis=0)
    for step in range(1, int(caps.max()) + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(observed, frac / q, 0.0)
        new, q = K.em_steps_stacked(pi, ratio)
        total = new.sum(axis=0)
        pi, q = new / total, q / total
        going = np.ones(columns.size, dtype=bool)
        for i, (col, value) in enumerate(zip(columns.tolist(), _stacked_log_likelihood(c, q, observed), strict=True)):
            trace = traces[col]
            trace.append(value)
            for b in list(members[col]):
                converged = bool(value - trace[-2] <= tols[b] * abs(value))
                if converged or step == caps[b]:
                    results[b] = EMResult(weights=pi[:, i].copy(), log_likelihood=np.asarray(trace), n_iter=step,
                                          converged=converged)
                    members[col].remove(b)
            going[i] = bool(members[col])
        if not going.all():
            columns, pi, q, c, frac, observed = (columns[going], pi[:, going], q[:, going], c[:, going],
                                                 frac[:, going], observed[:, going])
        if not columns.size:
            break
    return results


def _stacked_log_likelihood(c: np.ndarray, q: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """ℓ_b = Σ_j c_jb log q_jb of every run b, over its observations of positive weight."""
    with np.errstate(divide="ignore"):
        return np.where(observed, c * np.log(np.where(observed, q, 1.0)), 0.0).sum(axis=0)


class _EMRun:
    """State of one EM run: π, q = Kᵀπ, the log-likelihood trace and the stopping rule."""

    def __init__(self, K: BandedKernel, problem: EMProblem):
        self.c = np.asarray(problem.obs_weights, dtype=np.float64)
        self.frac = self.c / self.c.sum()
        self.max_iter, self.tol = problem.max_iter, problem.tol
        n_rows = K.shape[0]
        init = problem.init
        self.pi = np.full(n_rows, 1.0 / n_rows) if init is None else np.array(init, dtype=np.float64)
        self.q = K.rmatvec(self.pi)
        if np.any(self.q[self.c > 0] <= 0):
            raise ValueError(
                "the starting distribution gives probability 0 to an observed sampled rank; "
                "use a starting distribution with more support (e.g. the uniform default)"
            )
        self.trace = [float(self.c @ np.log(self.q))]
        self.converged = False

    @property
    def n_iter(self) -> int:
        return len(self.trace) - 1

    @property
    def done(self) -> bool:
        return self.converged or self.n_iter >= self.max_iter

    def advance(self, new: np.ndarray, q: np.ndarray) -> None:
        """Take the step π ← π' / Σπ' (the step preserves the total mass up to rounding)."""
        total = new.sum()
        self.pi, self.q = new / total, q / total
        self.trace.append(float(self.c @ np.log(self.q)))
        self.converged = self.trace[-1] - self.trace[-2] <= self.tol * abs(self.trace[-1])

    def result(self) -> EMResult:
        return EMResult(weights=self.pi, log_likelihood=np.asarray(self.trace), n_iter=self.n_iter,
                        converged=self.converged)
