"""Tests of the MES estimator (Jin et al. AAAI 2021, eq. 24–27) and its Newton dual solver."""

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

from itemsampling.banded_kernel import BandedKernel
from itemsampling.binomial_gram import BinomialGram
from itemsampling.distributions import mes, mes_objective
from itemsampling.kernels import kernel_columns
from itemsampling.mes import _HESSIAN_ROW_CUTOFF, _hessian, solve_mes, solve_mes_stacked


def _instance(seed, N, n, M, scheme="binomial"):
    """Sampled ranks from a random heavy-tailed P(R), the observed columns of P(r | R) and P̃(r)."""
    rng = np.random.default_rng(seed)
    R = np.arange(1, N + 1)
    P = rng.gamma(0.3, size=N) * (R + 2.0) ** -rng.uniform(0.5, 1.5)
    P /= P.sum()
    global_ranks = rng.choice(R, size=M, p=P)
    if scheme == "binomial":
        r = 1 + rng.binomial(n - 1, (global_ranks - 1) / (N - 1))
    else:
        r = 1 + rng.hypergeometric(global_ranks - 1, N - global_ranks, n - 1)
    distinct, counts = np.unique(r, return_counts=True)
    if scheme == "binomial":
        K = stats.binom.pmf(distinct[None, :] - 1, n - 1, (R[:, None] - 1) / (N - 1))
    else:
        K = stats.hypergeom.pmf(distinct[None, :] - 1, N - 1, R[:, None] - 1, n - 1)
    return r, K, counts / counts.sum()


def _cvxpy_mes(K, p, eta):
    """The MES problem written directly in cvxpy (entropy via cp.entr), solved by Clarabel."""
    x = cp.Variable(K.shape[0], nonneg=True)
    objective = p @ cp.square(K.T @ x - p) - eta * cp.sum(cp.entr(x))
    problem = cp.Problem(cp.Minimize(objective), [cp.sum(x) == 1])
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == cp.OPTIMAL
    return np.maximum(x.value, 0.0), problem.value


def _objective(pi, K, p, eta):
    """Σ_r P̃(r) (Σ_R P(r|R) π_R − P̃(r))² − η H(π), straight from AAAI'21 eq. 25–26."""
    entropy = -np.sum(pi[pi > 0] * np.log(pi[pi > 0]))
    return p @ (K.T @ pi - p) ** 2 - eta * entropy


CASES = [
    (0, 30, 5, 200, 1e-3, "binomial"),
    (1, 60, 10, 1_000, 1e-3, "binomial"),
    (2, 150, 20, 3_000, 1e-2, "binomial"),
    (3, 150, 20, 3_000, 1e-4, "binomial"),
    (4, 100, 15, 2_000, 1e-3 / 15, "binomial"),
    (5, 80, 12, 1_500, 1e-3, "hypergeometric"),
]


@pytest.mark.parametrize(("seed", "N", "n", "M", "eta", "scheme"), CASES)
def test_mes_agrees_with_cvxpy(seed, N, n, M, eta, scheme):
    r, K, p = _instance(seed, N, n, M, scheme)
    x_cvx, value_cvx = _cvxpy_mes(K, p, eta)
    pi = mes(r, N, n, eta=eta, scheme=scheme)
    ours = _objective(pi, K, p, eta)
    theirs = _objective(x_cvx, K, p, eta)
    assert theirs == pytest.approx(value_cvx, rel=1e-6)  # our formula is cvxpy's problem
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert ours <= theirs + 1e-9 * abs(theirs)  # and we are at least as good
    np.testing.assert_allclose(pi, x_cvx, atol=1e-4)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12) and np.all(pi > 0)


@pytest.mark.parametrize(("seed", "N", "n", "M", "eta", "scheme"), CASES)
def test_mes_solution_satisfies_kkt(seed, N, n, M, eta, scheme):
    """Interior optimum on the simplex: ∂f/∂π_R = 2 Σ_r P̃(r) e_r P(r|R) + η (log π_R + 1) is constant.

    Newton converges quadratically, so a tight gap tolerance costs at most one more step.
    """
    r, K, p = _instance(seed, N, n, M, scheme)
    pi = mes(r, N, n, eta=eta, scheme=scheme, tol=1e-14)
    grad = 2 * K @ (p * (K.T @ pi - p)) + eta * (np.log(pi) + 1)
    assert np.ptp(grad) < 1e-6 * np.abs(grad).mean()


def test_duality_gap_certifies_the_objective():
    _, K, p = _instance(7, 120, 15, 2_000)
    res = solve_mes(K, p, 1e-3, tol=1e-12)
    assert res.converged and 0 <= res.duality_gap <= 1e-12 * abs(res.objective)
    _, value_cvx = _cvxpy_mes(K, p, 1e-3)
    # the certified bound: f(π) − f* <= gap; cvxpy's value carries its own ~1e-8 error
    assert res.objective - value_cvx <= res.duality_gap + 1e-8 * abs(value_cvx)
    assert res.objective == pytest.approx(_objective(res.weights, K, p, 1e-3), rel=1e-12)


@pytest.mark.parametrize(("N", "n", "scheme"), [(2_000, 200, "binomial"), (300, 300, "binomial"), (500, 60, "hypergeometric")])
def test_banded_newton_hessian_matches_the_dense_one(N, n, scheme):
    """The Hessian skips kernel entries below 1e-16 of their row maximum; check it against
    2I + (1/η) S(Kᵀ diag(π) K − qqᵀ)S computed densely."""
    rng = np.random.default_rng(N)
    K = kernel_columns(N, n, np.unique(rng.integers(1, n + 1, size=n // 2)), scheme)
    p = rng.dirichlet(np.ones(K.shape[1]))
    pi = rng.dirichlet(np.full(N, 0.5))
    q = K.T @ pi
    banded = _hessian(BandedKernel(K).gram_upper(pi, skip_below=_HESSIAN_ROW_CUTOFF), q, 2 * np.sqrt(p), 1e-3)
    S = np.diag(2 * np.sqrt(p))
    dense = 2 * np.eye(p.size) + S @ (K.T @ (pi[:, None] * K) - np.outer(q, q)) @ S / 1e-3
    upper = np.triu_indices(p.size)
    np.testing.assert_allclose(banded[upper], dense[upper], rtol=1e-10, atol=1e-12 * np.abs(dense).max())


def test_mes_objective_is_the_papers_objective():
    r, K, p = _instance(8, 90, 10, 800)
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(90))
    assert mes_objective(pi, r, 90, 10, eta=0.01) == pytest.approx(_objective(pi, K, p, 0.01), rel=1e-12)
    assert mes_objective(pi, r, 90, 10, eta=0.01, eta_scale="code") == pytest.approx(
        _objective(pi, K, p, 0.01 / 10), rel=1e-12
    )
    # the estimator minimises it: random distributions and the uniform one are worse
    best = mes_objective(mes(r, 90, 10, eta=0.01), r, 90, 10, eta=0.01)
    assert best < mes_objective(pi, r, 90, 10, eta=0.01)
    assert best < mes_objective(np.full(90, 1 / 90), r, 90, 10, eta=0.01)


def test_code_scale_is_eta_over_n():
    r, _, _ = _instance(9, 100, 20, 1_000)
    np.testing.assert_allclose(
        mes(r, 100, 20, eta=0.01, eta_scale="code"), mes(r, 100, 20, eta=0.01 / 20), rtol=1e-12, atol=1e-15
    )


def test_larger_eta_gives_higher_entropy():
    r, _, _ = _instance(10, 100, 10, 1_000)
    entropies = []
    for eta in (1e-4, 1e-3, 1e-2, 1e-1, 10.0):
        pi = mes(r, 100, 10, eta=eta)
        entropies.append(-np.sum(pi * np.log(pi)))
    assert np.all(np.diff(entropies) > 0)
    assert entropies[-1] > 0.999 * np.log(100)  # large η tends to the uniform distribution


def test_realistic_size_converges_quickly():
    rng = np.random.default_rng(1)
    N, n, M = 3_706, 100, 6_040
    P = (np.arange(1, N + 1) + 5.0) ** -1.0
    R = rng.choice(np.arange(1, N + 1), size=M, p=P / P.sum())
    r = 1 + rng.binomial(n - 1, (R - 1) / (N - 1))
    distinct, counts = np.unique(r, return_counts=True)
    K = stats.binom.pmf(distinct[None, :] - 1, n - 1, (np.arange(N)[:, None]) / (N - 1))
    res = solve_mes(K, counts / M, 1e-3)
    assert res.converged and res.n_iter <= 15
    assert res.duality_gap <= 1e-10 * abs(res.objective)


def test_max_iter_exhausted_warns():
    _, K, p = _instance(11, 60, 10, 500)
    with pytest.warns(RuntimeWarning, match="duality gap"):
        res = solve_mes(K, p, 1e-4, max_iter=1)
    assert not res.converged


def test_single_observed_rank():
    pi = mes([1, 1, 1], 50, 10)
    assert pi.shape == (50,) and pi.sum() == pytest.approx(1.0)
    assert np.all(np.diff(pi) < 0)  # every user at r = 1 pushes mass to the top ranks


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eta": 0.0}, "eta"),
        ({"eta": -1e-3}, "eta"),
        ({"eta": float("nan")}, "eta"),
        ({"eta_scale": "authors"}, "eta_scale"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"scheme": "poisson"}, "sampling scheme"),
    ],
)
def test_bad_mes_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mes([1, 2, 3], 50, 10, **kwargs)


def test_mes_objective_rejects_non_distributions():
    with pytest.raises(ValueError, match="sum to 1"):
        mes_objective(np.full(50, 0.1), [1, 2], 50, 10)
    with pytest.raises(ValueError, match="shape"):
        mes_objective(np.full(49, 1 / 49), [1, 2], 50, 10)


def _draws_on_one_kernel(seed, N, n, M, draws, scheme="binomial"):
    """Several draws of sampled ranks of the same global ranks: the kernel at every rank that any
    draw observed (``(N, d)``, 1-based ranks ``union``) and the ``(d, B)`` P̃ of the draws."""
    rng = np.random.default_rng(seed)
    R = np.arange(1, N + 1)
    P = (R + 3.0) ** -1.2
    global_ranks = rng.choice(R, size=M, p=P / P.sum())
    sampled = [1 + rng.binomial(n - 1, (global_ranks - 1) / (N - 1)) if scheme == "binomial"
               else 1 + rng.hypergeometric(global_ranks - 1, N - global_ranks, n - 1) for _ in range(draws)]
    union = np.unique(np.concatenate(sampled))
    p = np.stack([np.bincount(np.searchsorted(union, r), minlength=union.size) / M for r in sampled], axis=1)
    if scheme == "binomial":
        K = stats.binom.pmf(union[None, :] - 1, n - 1, (R[:, None] - 1) / (N - 1))
    else:
        K = stats.hypergeom.pmf(union[None, :] - 1, N - 1, R[:, None] - 1, n - 1)
    return K, union, p


@pytest.mark.parametrize(("N", "n", "M", "eta", "scheme", "binomial_gram"), [
    (300, 40, 150, 1e-3, "binomial", False),
    (300, 40, 150, 1e-3, "binomial", True),
    (2_000, 600, 3_000, 1e-3, "binomial", True),  # 1.2 M entries: a banded kernel of several panels
    (400, 60, 200, 1e-4, "hypergeometric", False),
])
@pytest.mark.blas_kernels
def test_stacked_mes_equals_each_problem_solved_alone(N, n, M, eta, scheme, binomial_gram):
    K, union, p = _draws_on_one_kernel(5, N, n, M, draws=6, scheme=scheme)
    assert len({tuple(np.flatnonzero(col)) for col in p.T}) > 1  # the draws observe different ranks
    gram = None
    if binomial_gram:
        parent = BinomialGram(N, n)

        def gram(pis, which):
            wide = parent.doubled_products(pis)
            return (parent.at(union[p[:, b] > 0]).from_doubled(wide[:, i]) for i, b in enumerate(which))

    stacked = solve_mes_stacked(K, p, eta, gram=gram)
    assert len(stacked) == p.shape[1]
    for b, result in enumerate(stacked):
        seen = p[:, b] > 0
        alone = solve_mes(K[:, seen], p[seen, b], eta)
        assert result.converged and alone.converged
        np.testing.assert_allclose(result.weights, alone.weights, rtol=1e-8, atol=1e-15)
        assert result.objective == pytest.approx(alone.objective, rel=1e-10, abs=1e-16)
        assert abs(result.n_iter - alone.n_iter) <= 1
        assert result.duality_gap <= 1e-10 * abs(result.objective)


@pytest.mark.blas_kernels
def test_stacked_mes_of_one_problem_takes_the_same_newton_steps():
    _, K, p = _instance(2, 150, 20, 3_000)
    alone = solve_mes(K, p, 1e-3)
    (stacked,) = solve_mes_stacked(K, p[:, None], 1e-3)
    assert stacked.n_iter == alone.n_iter
    np.testing.assert_allclose(stacked.weights, alone.weights, rtol=1e-10, atol=1e-16)


def test_stacked_mes_warns_for_each_problem_out_of_steps():
    K, _, p = _draws_on_one_kernel(11, 60, 10, 500, draws=2)
    with pytest.warns(RuntimeWarning) as record:
        results = solve_mes_stacked(K, p, 1e-4, max_iter=1)
    assert [str(w.message).split("(")[-1].split(")")[0] for w in record] == ["problem 0", "problem 1"]
    assert not any(r.converged for r in results) and all(r.n_iter == 1 for r in results)


@pytest.mark.parametrize(("p", "match"), [
    (np.full(7, 1 / 7), r"\(d, B\) matrix"),
    (np.full((6, 2), 1 / 6), r"\(d, B\) matrix"),
    (np.zeros((7, 0)), r"\(d, B\) matrix"),
    (np.c_[np.full(7, 1 / 7), np.zeros(7)], "positive entry"),
    (np.c_[np.full(7, 1 / 7), np.r_[-0.1, np.full(6, 1.1 / 6)]], ">= 0"),
    (np.c_[np.full(7, 1 / 7), np.r_[np.nan, np.full(6, 1 / 6)]], "finite"),
])
def test_stacked_mes_rejects_bad_probabilities(p, match):
    K = stats.binom.pmf(np.arange(7)[None, :], 6, np.linspace(0, 1, 40)[:, None])
    with pytest.raises(ValueError, match=match):
        solve_mes_stacked(K, p, 1e-3)
