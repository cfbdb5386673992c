"""The Gram matrix Kᵀ diag(w) K of a binomial kernel from the kernel of set size 2n - 1, against
the panel-by-panel rank-k updates of the kernel's band.

Run from the repository root::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_binomial_gram.py           # two sizes, about a minute
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_binomial_gram.py --quick   # seconds

Sizes: (a) N = 3,706 items, n = 500 (ml-1m, notebook 04's n = 500 chunks) and (b) N = 35,351,
n = 500 (yelp-diffnet, the largest chunks of notebook 04), M users with global ranks drawn, seeded,
from P(R) ∝ (R + 10)^-1.1 and binomial sampled ranks.

* ``Gram``: one ``Kᵀ diag(w) K`` for a prior w (that of BV and MN, KDD'20 eq. 25, AAAI'23
  eq. 11): :meth:`BinomialGram.gram <itemsampling.binomial_gram.BinomialGram.gram>` (the kernel
  of set size 2n - 1 built beforehand, once per (N, n) in a study) against
  :meth:`BandedKernel.gram_upper <itemsampling.banded_kernel.BandedKernel.gram_upper>` (the
  plain path, one ``dsyrk`` per row panel). ``value``: the largest relative difference of an
  entry above 1e-12 of the largest.
* ``estimate_draws``: the entry of a study's repeats, :func:`itemsampling.estimators.estimate_draws`
  with ``mes``, ``bv_mes`` and ``mn_mes`` on ``--draws`` draws and a shared
  :class:`~itemsampling.kernels.KernelCache` (as the study engine calls it), against the same
  call with the Gram matrices of the MES Newton steps and of the priors taken from the band
  (the code before the binomial Gram). ``value``: the largest relative difference of any
  estimate.
* ``build``: the one-off cost of :class:`~itemsampling.binomial_gram.BinomialGram` (the band of
  the kernel of set size 2n - 1) against building the banded kernel itself.

Times are the best of ``--repeats`` calls, seconds, one BLAS thread; ``speedup`` is
``base_time_s / time_s``.
"""

from __future__ import annotations

import argparse
import sys
from unittest import mock

import numpy as np
from bench_estimators import best_time, run_sizes

import itemsampling as its
from itemsampling import distributions
from itemsampling.banded_kernel import BandedKernel
from itemsampling.binomial_gram import BinomialGram
from itemsampling.estimators import estimate_draws
from itemsampling.kernels import KernelCache, rank_kernel

COLUMNS = ("size", "task", "time_s", "baseline", "base_time_s", "speedup", "check", "value", "detail")
SIZES = {"a": (3_706, 500, 6_040), "b": (35_351, 500, 21_000)}
ESTIMATORS = ("mes", "bv_mes", "mn_mes")


class _PanelGram:
    """The plain path: ``Kᵀ diag(w) K`` of the band, one ``dsyrk`` per row panel."""

    def __init__(self, n_items: int, n: int):
        self.banded = BandedKernel(rank_kernel(n_items, n))

    def gram(self, weights):
        upper = self.banded.gram_upper(weights)
        return upper + np.triu(upper, 1).T


def _largest_relative_difference(a: np.ndarray, b: np.ndarray, floor: float) -> float:
    big = np.abs(a) > floor
    return float(np.max(np.abs(a - b)[big] / np.abs(a[big])))


def bench_size(size: str, n_items: int, n: int, n_users: int, draws: int, timings: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    R = np.arange(1, n_items + 1)
    p = (R + 10.0) ** -1.1
    global_ranks = rng.choice(R, size=n_users, p=p / p.sum())
    samples = [its.sample_ranks(global_ranks, n_items, n, rng=rng) for _ in range(draws)]
    prior = rng.dirichlet(np.full(n_items, 0.5))
    fast_build_s, fast = best_time(lambda: BinomialGram(n_items, n), timings)
    plain_build_s, plain = best_time(lambda: _PanelGram(n_items, n), timings)
    fast_s, fast_gram = best_time(lambda: fast.gram(prior), timings)
    plain_s, plain_gram = best_time(lambda: plain.gram(prior), timings)
    estimators = [its.Estimator(name) for name in ESTIMATORS]
    targets = [(metric, k) for metric in ("recall", "ndcg") for k in range(1, 51)]

    def study(cache_factory):
        tables = estimate_draws(samples, n_items, n, estimators, targets=targets, cache=cache_factory())
        return np.concatenate([t["estimate"].to_numpy() for t in tables])

    ours_s, ours = best_time(lambda: study(KernelCache), timings)
    with mock.patch.object(distributions, "_has_binomial_gram", lambda *args: False), \
            mock.patch.object(distributions, "binomial_gram_of",
                              lambda cache, N, size: cache.get(("panel", N, size), lambda: _PanelGram(N, size))):
        base_s, base = best_time(lambda: study(KernelCache), timings)
    return [
        {"size": size, "task": "Gram", "time_s": fast_s, "baseline": "panel dsyrk", "base_time_s": plain_s,
         "speedup": plain_s / fast_s, "check": "max_rel_diff_entry",
         "value": _largest_relative_difference(plain_gram, fast_gram, 1e-12 * plain_gram.max()),
         "detail": f"N={n_items} n={n}; K2 band {fast.doubled.stored_entries} entries, K band "
                   f"{plain.banded.stored_entries}"},
        {"size": size, "task": "estimate_draws", "time_s": ours_s, "baseline": "panel dsyrk", "base_time_s": base_s,
         "speedup": base_s / ours_s, "check": "max_rel_diff_estimate",
         "value": _largest_relative_difference(base, ours, 1e-300),
         "detail": f"{draws} draws of M={n_users} users x {', '.join(ESTIMATORS)}, shared cache"},
        {"size": size, "task": "build", "time_s": fast_build_s, "baseline": "banded kernel",
         "base_time_s": plain_build_s, "speedup": plain_build_s / fast_build_s, "check": "", "value": float("nan"),
         "detail": "once per (N, n) and cache"},
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 2,000, n = 200, M = 2,000, 3 draws")
    parser.add_argument("--sizes", default="ab", help="which of the sizes a, b to run (default: both)")
    parser.add_argument("--draws", type=int, default=10, help="draws of sampled ranks for estimate_draws")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls (best of)")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args(argv)
    problems = {"quick": (2_000, 200, 2_000, 3)} if args.quick else {s: (*SIZES[s], args.draws) for s in args.sizes}
    rows = run_sizes("binomial Gram", args, problems, bench_size, COLUMNS)
    bad = [r for r in rows if r["check"] and not r["value"] <= 1e-6]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
