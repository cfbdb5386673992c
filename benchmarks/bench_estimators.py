"""Speed and memory of the itemsampling estimators against straightforward baselines.

One script past 500 lines, because its four comparisons share the problems, the timing and the
table they print; each baseline is written out in full so that it can be read.

Run from the repository root::

    .venv/bin/python benchmarks/bench_estimators.py            # full (several minutes)
    .venv/bin/python benchmarks/bench_estimators.py --quick    # reduced sizes, seconds
    .venv/bin/python benchmarks/bench_estimators.py --output results.csv

Two problem sizes (full run): (a) N = 3,706 items, n = 100, M = 6,040 users (ml-1m-like) and
(b) N = 20,720, n = 1,000, M = 136,677 (pinterest-20-like). Global ranks are drawn (seeded) from
the heavy-tailed P(R) ∝ (R + 10)^-1.1 and sampled ranks simulated with
:func:`itemsampling.sample_ranks` / :func:`itemsampling.adaptive_sample_ranks`. For each size:

1. ``mes``: the MES dual Newton solver (:func:`itemsampling.mes.solve_mes`) against the same
   objective (Jin et al. AAAI 2021, eq. 25-27) solved by cvxpy (CLARABEL, else SCS) in a child
   process with a timeout; both objective values and their relative gap are printed.
2. ``adaptive_mle``: :func:`itemsampling.rank_distribution` with ``adaptive_mle`` (EM on one
   kernel column per distinct (n_u, r_u)) against a per-user EM that keeps one kernel column per
   user (Li et al. AAAI 2023, eq. 12 / App. G); the P(R) estimates are compared (max abs diff).
3. ``bv`` / ``mn``: one factorized operator applied to all 150 targets (recall, ndcg, ap x
   K = 1..50) against 150 separate solves, each forming and solving its own normal equations
   (Krichene & Rendle KDD 2020, eq. 25; Li et al. AAAI 2023, eq. 11); the estimates are compared.
4. ``estimate``: end-to-end :func:`itemsampling.estimate` for mle, wmle, mes, bv_mle and mn_mes
   with all 150 (metric, K) pairs.

Times are the best (minimum) wall time over repeats (``time.perf_counter``), measured without
tracing. Memory (``peak_MiB``) is the ``tracemalloc`` peak of one further, traced call (all
Python and numpy allocations; numpy reports its buffers to tracemalloc); for the cvxpy baseline,
whose solver allocates natively, it is the growth of the child process's peak resident set size
(VmHWM at the end minus VmRSS before the problem is built).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import itemsampling as its
from itemsampling import corrections, distributions
from itemsampling.em import DEFAULT_MAX_ITER, DEFAULT_TOL
from itemsampling.kernels import kernel_columns, rank_kernel
from itemsampling.mes import mes_objective_value, solve_mes
from itemsampling.metrics import rank_weight

METRICS = ("recall", "ndcg", "ap")
KS = tuple(range(1, 51))
END_TO_END_METHODS = ("mle", "wmle", "mes", "bv_mle", "mn_mes")
#: tolerances of the agreement checks
MES_GAP_TOL = 1e-6
ADAPTIVE_DIFF_TOL = 1e-9
LINEAR_DIFF_TOL = 1e-8
COLUMNS = (
    "size", "task", "method", "time_s", "peak_MiB", "baseline", "base_time_s", "base_peak_MiB",
    "speedup", "check", "value", "tol", "ok", "detail",
)
MIB = 2.0**20


@dataclass(frozen=True)
class Size:
    """One benchmark problem: N items, sample size n, M users, adaptive n_0 and n_max."""

    label: str
    name: str
    n_items: int
    sample_size: int
    n_users: int
    n0: int
    n_max: int


FULL_SIZES = (
    Size("a", "ml-1m-like", 3706, 100, 6040, 100, 3200),
    Size("b", "pinterest-20-like", 20720, 1000, 136677, 100, 12800),
)
QUICK_SIZES = (
    Size("a", "quick-a", 400, 40, 800, 10, 320),
    Size("b", "quick-b", 700, 70, 2000, 15, 480),
)


# ----------------------------------------------------------------------------- problem


def rank_distribution(n_items: int, offset: float = 10.0, exponent: float = 1.1) -> np.ndarray:
    """Heavy-tailed global rank distribution P(R) ∝ (R + offset)^-exponent, R = 1..N."""
    p = (np.arange(1, n_items + 1) + offset) ** -exponent
    return p / p.sum()


@dataclass(frozen=True)
class Problem:
    size: Size
    global_ranks: np.ndarray
    sampled_ranks: np.ndarray
    adaptive_ranks: np.ndarray
    adaptive_sizes: np.ndarray


def make_problem(size: Size, seed: int) -> Problem:
    """Draw global ranks from :func:`rank_distribution` and simulate fixed and adaptive sampling."""
    gen = np.random.default_rng(seed)
    p = rank_distribution(size.n_items)
    global_ranks = gen.choice(size.n_items, size=size.n_users, p=p) + 1
    sampled = its.sample_ranks(global_ranks, size.n_items, size.sample_size, rng=gen)
    ranks, sizes = its.adaptive_sample_ranks(global_ranks, size.n_items, size.n0, size.n_max, rng=gen)
    return Problem(size, global_ranks, sampled, ranks, sizes)


# ----------------------------------------------------------------------------- measurement


def best_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Minimum wall time of ``repeats`` calls of ``fn`` and the result of the last call."""
    best, out = math.inf, None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def traced_peak_mib(fn: Callable[[], object]) -> float:
    """tracemalloc peak (MiB) of Python and numpy allocations during one call of ``fn``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def _status_kib(field: str) -> float | None:
    """A ``VmRSS``/``VmHWM`` entry of /proc/self/status in KiB (None off Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def row(size: Size, task: str, method: str, time_s: float, peak: float, **extra) -> dict:
    out = dict.fromkeys(COLUMNS, "")
    out.update(size=size.label, task=task, method=method, time_s=time_s, peak_MiB=peak)
    out.update(extra)
    if out["base_time_s"] != "" and time_s > 0:
        out["speedup"] = out["base_time_s"] / time_s
    if out["check"] and not out["ok"]:  # "n/a" is passed when the baseline did not finish
        out["ok"] = "yes" if out["value"] <= out["tol"] else "NO"
    return out


# ----------------------------------------------------------------------------- 1. MES vs cvxpy


def mes_inputs(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Kernel columns of the observed sampled ranks and their empirical probabilities P̃(r)."""
    size = problem.size
    distinct, counts = np.unique(problem.sampled_ranks, return_counts=True)
    kernel = kernel_columns(size.n_items, size.sample_size, distinct)
    return kernel, counts / counts.sum()


def cvxpy_worker(in_path: str, out_path: str) -> None:
    """Child process: solve the MES objective with cvxpy, write the solution and statistics."""
    import cvxpy as cp

    data = np.load(in_path)
    kernel, p, eta = data["kernel"], data["p"], float(data["eta"])
    rss_start = _status_kib("VmRSS")
    start = time.perf_counter()
    x = cp.Variable(kernel.shape[0], nonneg=True)
    resid = cp.Variable(kernel.shape[1])
    # f(π)/η: the same minimiser; dividing by η keeps the solver's absolute gap relative to f
    problem = cp.Problem(
        cp.Minimize(cp.sum_squares(resid) / eta - cp.sum(cp.entr(x))),
        [resid == cp.multiply(np.sqrt(p), kernel.T @ x - p), cp.sum(x) == 1],
    )
    installed = cp.installed_solvers()
    solver = "CLARABEL" if "CLARABEL" in installed else "SCS"
    problem.solve(solver=solver)
    elapsed = time.perf_counter() - start
    hwm = _status_kib("VmHWM")
    rss_growth = (hwm - rss_start) / 1024 if hwm is not None and rss_start is not None else float(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
    np.save(out_path + ".npy", np.asarray(x.value, dtype=np.float64))
    with open(out_path, "w") as fh:
        json.dump({"time_s": elapsed, "solve_time_s": problem.solver_stats.solve_time,
                   "status": problem.status, "solver": solver, "rss_MiB": rss_growth}, fh)


def run_cvxpy(kernel: np.ndarray, p: np.ndarray, eta: float, timeout: float) -> dict:
    """Run :func:`cvxpy_worker` in a child process; ``status`` says if it timed out or failed."""
    with tempfile.TemporaryDirectory() as tmp:
        in_path, out_path = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.json")
        np.savez(in_path, kernel=kernel, p=p, eta=eta)
        cmd = [sys.executable, __file__, "--cvxpy-worker", in_path, out_path]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"status": f"timeout after {timeout:.0f} s", "time_s": time.perf_counter() - start}
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            return {"status": f"failed: {tail[0][:120]}", "time_s": time.perf_counter() - start}
        with open(out_path) as fh:
            out = json.load(fh)
        out["x"] = np.load(out_path + ".npy")
        return out


def bench_mes(problem: Problem, repeats: int, timeout: float) -> dict:
    size, eta = problem.size, distributions.DEFAULT_ETA
    kernel, p = mes_inputs(problem)
    t_ours, result = best_time(lambda: solve_mes(kernel, p, eta), repeats)
    peak = traced_peak_mib(lambda: solve_mes(kernel, p, eta))
    base = run_cvxpy(kernel, p, eta, timeout)
    f_ours = result.objective
    common = dict(baseline="cvxpy", check="rel_objective_gap", tol=MES_GAP_TOL)
    if "x" not in base:
        return row(size, "mes", "mes (dual Newton)", t_ours, peak, **common,
                   base_time_s=base["time_s"], value=math.nan, ok="n/a",
                   detail=(f"cvxpy {base['status']} (so the speedup is a lower bound); "
                           f"f_ours={f_ours:.10e}; d={kernel.shape[1]}"))
    x = np.clip(base["x"], 0.0, None)
    f_base = mes_objective_value(x / x.sum(), kernel, p, eta)
    gap = abs(f_base - f_ours) / abs(f_ours)
    return row(size, "mes", "mes (dual Newton)", t_ours, peak, **common,
               base_time_s=base["time_s"], base_peak_MiB=base["rss_MiB"], value=gap,
               detail=(f"f_ours={f_ours:.10e} f_cvxpy={f_base:.10e} ({base['solver']} "
                       f"{base['status']}, solver {base['solve_time_s']:.2f} s); d={kernel.shape[1]}; "
                       f"Newton steps {result.n_iter}"))


# ----------------------------------------------------------------------------- 2. adaptive MLE


def per_user_columns(ranks, sizes, n_items, users) -> np.ndarray:
    """One kernel column P(r_u | R; n_u) per user in ``users`` (duplicates not merged)."""
    out = np.empty((n_items, users.size))
    for n in np.unique(sizes[users]):
        mine = np.flatnonzero(sizes[users] == n)
        out[:, mine] = kernel_columns(n_items, int(n), ranks[users[mine]])
    return out


def per_user_em(ranks, sizes, n_items, max_iter, tol, memory_budget):
    """Straightforward EM for adaptive sampling: every user keeps its own kernel column.

    π_R ← (1/M) Σ_u π_R P(r_u | R; n_u) / Σ_R' π_R' P(r_u | R'; n_u) (AAAI'23 App. G), with the
    stopping rule of :func:`itemsampling.em.em_mixture_weights`. The (N, M) matrix of columns is
    built once if it fits in ``memory_budget`` bytes; otherwise each iteration recomputes the
    columns for chunks of users (the same arithmetic, bounded memory).
    """
    n_users = ranks.size
    every = np.arange(n_users)
    pi = np.full(n_items, 1.0 / n_items)
    if n_items * n_users * 8 <= memory_budget:
        L = per_user_columns(ranks, sizes, n_items, every)
        q = L.T @ pi
        trace = [float(np.log(q).sum())]
        for _ in range(max_iter):
            pi = pi * (L @ (1.0 / q)) / n_users
            pi /= pi.sum()
            q = L.T @ pi
            trace.append(float(np.log(q).sum()))
            if trace[-1] - trace[-2] <= tol * abs(trace[-1]):
                break
        return pi, len(trace) - 1
    chunk = max(1, int(memory_budget // (8 * n_items)))
    for _ in range(max_iter):  # fixed number of iterations (tol is not used here)
        acc = np.zeros(n_items)
        for start in range(0, n_users, chunk):
            L = per_user_columns(ranks, sizes, n_items, every[start : start + chunk])
            acc += L @ (1.0 / (L.T @ pi))
        pi = pi * acc / n_users
        pi /= pi.sum()
    return pi, max_iter


def bench_adaptive(problem: Problem, repeats: int, base_repeats: int, memory_budget: float,
                   fixed_iter: int) -> dict:
    size = problem.size
    ranks, sizes, n_items = problem.adaptive_ranks, problem.adaptive_sizes, size.n_items
    n_pairs = np.unique(np.stack([sizes, ranks]), axis=1).shape[1]
    stored = n_items * ranks.size * 8 <= memory_budget
    if stored:
        max_iter, tol, mode = DEFAULT_MAX_ITER, DEFAULT_TOL, "full EM run (defaults)"
    else:
        max_iter, tol = fixed_iter, 0.0
        mode = (f"per-user kernel {n_items * ranks.size * 8 / MIB:.0f} MiB > budget "
                f"{memory_budget / MIB:.0f} MiB: baseline recomputes the columns chunk by chunk "
                f"in every iteration; both run {fixed_iter} iteration(s) from uniform, times are "
                "PER ITERATION (ours includes its setup)")

    def ours():
        return its.rank_distribution(ranks, n_items, sizes, "adaptive_mle", max_iter=max_iter, tol=tol)

    def base():
        return per_user_em(ranks, sizes, n_items, max_iter, tol, memory_budget)

    t_ours, result = best_time(ours, repeats)
    peak = traced_peak_mib(ours)
    t_base, (pi_base, n_base) = best_time(base, base_repeats if stored else 1)
    if stored:
        base_peak = traced_peak_mib(base)
    else:  # the peak is that of one chunk of users: trace one iteration on the first chunk
        first = np.arange(min(ranks.size, int(memory_budget // (8 * n_items))))
        base_peak = traced_peak_mib(lambda: per_user_em(ranks[first], sizes[first], n_items, 1,
                                                        0.0, memory_budget))
    diff = float(np.max(np.abs(result - pi_base)))
    per = 1 if stored else max_iter
    detail = (f"{mode}; EM iterations of the baseline {n_base} (ours: the same max_iter and tol); "
              f"{n_pairs} distinct (n_u, r_u) for {ranks.size} users; "
              f"mean n_u {sizes.mean():.0f} (n0={size.n0}, n_max={size.n_max})")
    return row(size, "adaptive_mle", "rank_distribution (EM grouped by (n_u, r_u))", t_ours / per, peak,
               baseline="per-user EM", base_time_s=t_base / per, base_peak_MiB=base_peak,
               check="max_abs_diff_P(R)", value=diff, tol=ADAPTIVE_DIFF_TOL, detail=detail)


# ----------------------------------------------------------------------------- 3. BV and MN


def target_weights(n_items: int) -> np.ndarray:
    """(50, 150) weights 1{R <= K} M(R), R = 1..50, for recall, ndcg, ap and K = 1..50."""
    ranks = np.arange(1, max(KS) + 1)
    return np.column_stack([rank_weight(m, ranks, n_items, k) for m in METRICS for k in KS])


def normal_equations(kernel: np.ndarray, prior: np.ndarray, family: str, gamma: float,
                     n_users: int) -> np.ndarray:
    """The n x n matrix G of BV (KDD'20 eq. 25) or MN (AAAI'23 eq. 11)."""
    gram = kernel.T @ (prior[:, None] * kernel)
    if family == "bv":
        return (1.0 - gamma) * gram + gamma * np.diag(kernel.T @ prior)
    return gram + (np.diag(kernel.sum(axis=0)) - kernel.T @ kernel) / n_users


def separate_solves(n_items, sample_size, p_tilde, weights, family, gamma, n_users,
                    budget_s: float) -> tuple[np.ndarray, int, float]:
    """Baseline: each (metric, K) forms its own normal equations and solves them.

    The kernel and prior are computed once; target j costs G_j = (...) and
    ``np.linalg.solve(G_j, Kᵀ D M_j)``. Stops after ``budget_s`` seconds; returns the estimates
    of the targets done, their number, and the time extrapolated to all targets.
    """
    start = time.perf_counter()
    kernel = rank_kernel(n_items, sample_size)
    prior = np.full(n_items, 1.0 / n_items)
    top = weights.shape[0]
    values = []
    for j in range(weights.shape[1]):
        system = normal_equations(kernel, prior, family, gamma, n_users)
        rhs = kernel[:top].T @ (prior[:top] * weights[:, j])
        values.append(p_tilde @ np.linalg.solve(system, rhs))
        if time.perf_counter() - start > budget_s:
            break
    elapsed = time.perf_counter() - start
    done = len(values)
    return np.asarray(values), done, elapsed * weights.shape[1] / done


def bench_linear(problem: Problem, family: str, repeats: int, base_repeats: int,
                 budget_s: float) -> dict:
    size = problem.size
    N, n, M = size.n_items, size.sample_size, problem.sampled_ranks.size
    p_tilde = corrections.sampled_rank_distribution(problem.sampled_ranks, n)
    weights = target_weights(N)
    gamma = 0.01

    def ours():
        if family == "bv":
            operator = corrections.bv_operator(N, n, gamma=gamma)
        else:
            operator = corrections.mn_operator(N, n, M)
        return p_tilde @ operator.apply(weights)

    t_ours, values = best_time(ours, repeats)
    peak = traced_peak_mib(ours)
    t_base, done = math.inf, 0
    for _ in range(max(1, base_repeats)):
        base_values, done, t = separate_solves(N, n, p_tilde, weights, family, gamma, M, budget_s)
        t_base = min(t_base, t)
        if done < weights.shape[1]:  # over budget: one (extrapolated) measurement is enough
            break
    base_peak = traced_peak_mib(
        lambda: separate_solves(N, n, p_tilde, weights[:, :1], family, gamma, M, math.inf))
    diff = float(np.max(np.abs(values[:done] - base_values)))
    total = weights.shape[1]
    timed = "all" if done == total else f"first {done} of {total} (time extrapolated x{total / done:.1f})"
    detail = (f"{total} targets (recall, ndcg, ap x K=1..50), uniform prior"
              f"{', gamma=0.01' if family == 'bv' else f', M={M}'}; baseline timed on {timed} targets")
    return row(size, family, f"{family}: one Cholesky, {total} right-hand sides", t_ours, peak,
               baseline=f"{total} separate solves", base_time_s=t_base, base_peak_MiB=base_peak,
               check="max_abs_diff_estimate", value=diff, tol=LINEAR_DIFF_TOL, detail=detail)


# ----------------------------------------------------------------------------- 4. end to end


def bench_estimate(problem: Problem, method: str, repeats: int) -> dict:
    size = problem.size

    def call():
        return its.estimate(problem.sampled_ranks, size.n_items, size.sample_size, method,
                            metrics=METRICS, ks=KS)

    t, out = best_time(call, repeats)
    peak = traced_peak_mib(call)
    truth = its.global_metrics(problem.global_ranks, size.n_items, "ndcg", 10)["value"].iloc[0]
    est = out.loc[(out["metric"] == "ndcg") & (out["k"] == 10), "estimate"].iloc[0]
    return row(size, "estimate", method, t, peak,
               detail=f"150 (metric, K) pairs; NDCG@10 estimate {est:.4f} (global {truth:.4f})")


# ----------------------------------------------------------------------------- output


def fmt(value) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4g}" if abs(value) < 10 else f"{value:.1f}"
        return f"{value:.2e}"
    return str(value)


def print_table(rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> None:
    """The rows as one Markdown table of ``columns`` (what the smoke tests parse)."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for r in rows:
        print("| " + " | ".join(fmt(r[c]) for c in columns) + " |")


def print_header(title: str, quick: bool, seed: int, threads: str) -> None:
    """The first lines of a benchmark's output: what ran, versions, CPUs, threads, load."""
    print(f"# itemsampling {title} benchmark ({'quick' if quick else 'full'}), seed {seed}")
    print(f"# python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} logical CPUs; {threads}")
    print(f"# load average at start (1, 5, 15 min): {load_average()}")


def run_sizes(title: str, args, problems: dict, bench_size, columns: tuple[str, ...]) -> list[dict]:
    """Header, ``bench_size(size, N, n, M, draws, repeats, seed)`` of every ``size: (N, n, M, draws)``
    of ``problems`` (one BLAS thread) with its duration, then the rows as one table."""
    threads = limit_threads(1)
    print_header(title, args.quick, args.seed, threads)
    rows = []
    for size, (n_items, n, n_users, draws) in problems.items():
        start = time.perf_counter()
        rows += bench_size(size, n_items, n, n_users, draws, args.repeats, args.seed)
        print(f"# size {size}: N={n_items} n={n} M={n_users} ({time.perf_counter() - start:.0f} s)")
    print(f"# load average at end (1, 5, 15 min): {load_average()}")
    print_table(rows, columns)
    return rows


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, for the header of a benchmark's output."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def header(args, sizes) -> list[str]:
    lines = [
        f"# itemsampling estimator benchmark ({'quick' if args.quick else 'full'}), seed {args.seed}",
        f"# python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} logical CPUs",
        f"# load average at start (1, 5, 15 min): {load_average()}",
        "# P(R) ∝ (R + 10)^-1.1; times: best of repeats (ours "
        f"{args.repeats}, baselines {args.baseline_repeats}), seconds; peak_MiB: tracemalloc peak "
        "(cvxpy: child RSS growth)",
    ]
    lines += [f"# size {s.label} ({s.name}): N={s.n_items}, n={s.sample_size}, M={s.n_users}, "
              f"adaptive n0={s.n0}, n_max={s.n_max}" for s in sizes]
    return lines


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (seconds)")
    parser.add_argument("--output", type=Path, help="also write the table as CSV to this file")
    parser.add_argument("--sizes", default="a,b", help="comma-separated size labels (default a,b)")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--repeats", type=int, help="repeats of our methods (default 5; quick 2)")
    parser.add_argument("--baseline-repeats", type=int, help="repeats of the baselines (default 2; quick 1)")
    parser.add_argument("--cvxpy-timeout", type=float, default=600.0, help="seconds (default 600)")
    parser.add_argument("--baseline-memory-mib", type=float,
                        help="per-user EM keeps its (N, M) kernel in memory up to this size "
                        "(default 2048; quick 8)")
    parser.add_argument("--fixed-iterations", type=int, default=1,
                        help="EM iterations timed when the per-user kernel does not fit (default 1)")
    parser.add_argument("--solve-budget", type=float, default=120.0,
                        help="seconds per separate-solves baseline before extrapolating (default 120)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for every method and baseline (default 1)")
    parser.add_argument("--cvxpy-worker", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 2 if args.quick else 5
    if args.baseline_repeats is None:
        args.baseline_repeats = 1 if args.quick else 2
    if args.baseline_memory_mib is None:
        args.baseline_memory_mib = 8.0 if args.quick else 2048.0
    return args


def limit_threads(threads: int) -> str:
    """Limit the BLAS/OpenMP threads of this process (and of the cvxpy child, by environment)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)  # inherited by the cvxpy child process
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return f"threads: not limited in this process (threadpoolctl missing), child {threads}"
    threadpool_limits(threads)
    return f"BLAS/OpenMP threads limited to {threads}"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.cvxpy_worker:
        cvxpy_worker(*args.cvxpy_worker)
        return 0
    threads_note = limit_threads(args.threads)
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    sizes = [s for s in (QUICK_SIZES if args.quick else FULL_SIZES) if s.label in labels]
    if not sizes:
        raise SystemExit(f"--sizes must name some of a, b; got {args.sizes!r}")
    for line in [*header(args, sizes), f"# {threads_note}"]:
        print(line, flush=True)
    rows = []
    budget = args.baseline_memory_mib * MIB
    for index, size in enumerate(sizes):
        problem = make_problem(size, args.seed + index)
        steps = [
            lambda p=problem: bench_mes(p, args.repeats, args.cvxpy_timeout),
            lambda p=problem: bench_adaptive(p, args.repeats, args.baseline_repeats, budget,
                                             args.fixed_iterations),
            lambda p=problem: bench_linear(p, "bv", args.repeats, args.baseline_repeats,
                                           args.solve_budget),
            lambda p=problem: bench_linear(p, "mn", args.repeats, args.baseline_repeats,
                                           args.solve_budget),
        ]
        steps += [lambda p=problem, m=m: bench_estimate(p, m, args.repeats) for m in END_TO_END_METHODS]
        for step in steps:
            rows.append(step())
            r = rows[-1]
            print(f"# done: size {r['size']} {r['task']} {r['method']} ({fmt(r['time_s'])} s)",
                  file=sys.stderr, flush=True)
    print(f"# load average at end (1, 5, 15 min): {load_average()}")
    print_table(rows)
    if args.output:
        with open(args.output, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
