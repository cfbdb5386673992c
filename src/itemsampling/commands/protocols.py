"""``itemsampling estimate-sampled`` and ``estimate-positives``: the protocols in use.

``itemsampling estimate-sampled NEGATIVES.csv --n-items N --sampler popularity --probabilities
FILE [--method hansen_hurwitz] [--metric ndcg ...] [--k 1-50] [--interval 0.95 [--interval-method
bootstrap]] [--output FILE]`` estimates global metrics from negatives drawn with known,
possibly non-uniform probabilities. NEGATIVES.csv has one row per drawn negative, with columns
``user``, ``negative`` (0-based item index in 0..N-1) and ``above`` (1 if the negative scores at
or above the user's held-out item, else 0), and optionally ``positive`` (the held-out item, checked
never to be its own negative). ``--sampler``:

- ``popularity``: draws with replacement with the per-draw probabilities of ``--probabilities``
  (one per item, summing to one; ``hansen_hurwitz``), or inclusion probabilities π_j of
  ``--inclusion`` (``horvitz_thompson``);
- ``stratified``: ``--inclusion`` with π_j = n_h/N_h (``horvitz_thompson``);
- ``uniform``: the sampled rank 1 + #negatives above of each user goes to
  :func:`itemsampling.estimate` with ``--method`` (default ``mn_mes``) and n = draws + 1.

A method that assumes uniform negatives (MLE, MES, BV, MN, ...) cannot honour a popularity or
stratified sampler: a warning says so and the Horvitz–Thompson or Hansen–Hurwitz correction is
used instead. Files of probabilities are ``.npy`` (1-D) or one-column CSV.

``itemsampling estimate-positives RANKS.csv --n-items N --sample-size n [--method mn_mes]
[--scheme hypergeometric] [--interval 0.95]`` estimates metrics with several held-out items per
user (RecBole's recall, ndcg, hit; RecPack's calibrated_recall) from a ratio split's sampled
ranks: one row per user and positive, columns ``user`` and ``rank`` (the positive's 1-based rank
among itself and its n - 1 negatives, other positives excluded), and optionally
``sample_size`` (n per positive) and ``n_items`` (N per positive: the positive and the user's
non-relevant candidates), which override the options
(:func:`itemsampling.multi_positive.estimate_multi_positive`).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import pandas as pd

from ..estimators import METHODS, estimate
from ..multi_positive import MULTI_METHODS, MULTI_METRICS, estimate_multi_positive
from ..nonuniform import SAMPLED_METHODS, SAMPLERS, estimate_sampled
from ._common import check_output_file, plain_text
from .estimate import parse_ks, read_distribution

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``estimate-sampled`` and ``estimate-positives`` commands."""
    doc = plain_text(__doc__)
    p = subparsers.add_parser("estimate-sampled", help="estimate global metrics@K from negatives drawn "
                              "with known (e.g. popularity) probabilities", description=doc,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("negatives", metavar="NEGATIVES.csv", help="columns user, negative, above [, positive]")
    p.add_argument("--n-items", type=int, required=True, metavar="N", help="catalogue size N")
    p.add_argument("--sampler", choices=SAMPLERS, required=True, help="how the negatives were drawn")
    p.add_argument("--probabilities", metavar="FILE", help="per-draw probability of each item (sum 1)")
    p.add_argument("--inclusion", metavar="FILE", help="inclusion probability π_j of each item")
    p.add_argument("--method", choices=(*SAMPLED_METHODS, *METHODS),
                   help="default: hansen_hurwitz with --probabilities, horvitz_thompson with "
                        "--inclusion, mn_mes for the uniform sampler")
    _common(p)
    p.add_argument("--interval-method", choices=("analytic", "bootstrap"), default="analytic")
    p.set_defaults(func=_run_sampled)

    q = subparsers.add_parser("estimate-positives", help="estimate metrics@K with several held-out "
                              "items per user from their sampled ranks", description=doc,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("ranks", metavar="RANKS.csv", help="columns user, rank: one row per user and positive")
    q.add_argument("--n-items", type=int, metavar="N",
                   help="a positive and its non-relevant candidates (or a column n_items)")
    q.add_argument("--sample-size", type=int, metavar="n",
                   help="a positive and its n - 1 negatives (or a column sample_size)")
    q.add_argument("--method", choices=MULTI_METHODS,
                   default="mn_mes", help="estimator of each positive's rank (default mn_mes)")
    q.add_argument("--scheme", choices=("hypergeometric", "binomial"), default="hypergeometric",
                   help="negatives drawn without (default) or with replacement")
    q.add_argument("--metric", action="append", choices=MULTI_METRICS, help="repeatable (default: all)")
    q.add_argument("--k", action="append", type=parse_ks, metavar="K", help="cut-offs (default 1,5,10,20,50)")
    q.add_argument("--interval", type=float, metavar="LEVEL", help="add se, lower, upper at this level")
    q.add_argument("--output", metavar="FILE", help="CSV output (default: standard output)")
    q.set_defaults(func=_run_positives)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metric", action="append", metavar="NAME", help="repeatable (default recall, ndcg, ap)")
    p.add_argument("--k", action="append", type=parse_ks, metavar="K", help="cut-offs (default 1-50)")
    p.add_argument("--interval", type=float, metavar="LEVEL", help="add se, lower, upper at this level")
    p.add_argument("--output", metavar="FILE", help="CSV output (default: standard output)")


def _read_csv(path: str, columns: tuple[str, ...]) -> pd.DataFrame:
    if not Path(path).is_file():
        raise FileNotFoundError(f"file {path!r} does not exist")
    table = pd.read_csv(path)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{path!r} lacks the column(s) {', '.join(missing)}; it needs {', '.join(columns)}")
    if table[list(columns)].isna().to_numpy().any():
        raise ValueError(f"{path!r} has blank values in {', '.join(columns)}")
    return table


def _write(table: pd.DataFrame, output: str | None) -> None:
    table.to_csv(output if output else sys.stdout, index=False)


def _ks(args) -> list[int]:
    return sorted({k for ks in args.k for k in ks}) if args.k else list(range(1, 51))


def _run_sampled(args) -> int:
    if args.output:
        check_output_file(args.output)
    if args.probabilities and args.inclusion:
        raise ValueError("give --probabilities (per-draw, with replacement) or --inclusion, not both")
    t = _read_csv(args.negatives, ("user", "negative", "above"))
    metrics = args.metric or ["recall", "ndcg", "ap"]
    ks = _ks(args)
    method = args.method
    if args.sampler == "uniform" and (method is None or method in METHODS):
        draws = t.groupby("user", sort=True).size()
        if draws.nunique() != 1:
            raise ValueError("the uniform sampler needs the same number of negatives per user")
        ranks = 1 + t.groupby("user", sort=True)["above"].sum().to_numpy()
        table = estimate(ranks, args.n_items, int(draws.iloc[0]) + 1, method or "mn_mes", metrics, ks,
                         interval=args.interval)
        _write(table, args.output)
        return 0
    if method is not None and method not in SAMPLED_METHODS:
        fallback = "hansen_hurwitz" if args.probabilities else "horvitz_thompson"
        warnings.warn(f"--method {method} assumes uniformly drawn negatives and cannot honour the "
                      f"{args.sampler} sampler; using {fallback}", stacklevel=1)
        method = fallback
    if method is None:
        method = "hansen_hurwitz" if args.probabilities else "horvitz_thompson"
    if method == "hansen_hurwitz" and not args.probabilities:
        raise ValueError("hansen_hurwitz needs --probabilities (per-draw probability of each item)")
    if method == "horvitz_thompson" and not args.inclusion:
        raise ValueError("horvitz_thompson needs --inclusion (inclusion probability of each item)")
    p = read_distribution(args.probabilities, args.n_items, "--probabilities") if args.probabilities else None
    pi = read_distribution(args.inclusion, args.n_items, "--inclusion") if args.inclusion else None
    table = estimate_sampled(t["user"].to_numpy(), t["negative"].to_numpy(), t["above"].to_numpy() != 0,
                             args.n_items, method=method, probabilities=p, inclusion=pi,
                             positives=t["positive"].to_numpy() if "positive" in t else None,
                             metrics=metrics, ks=ks, interval=args.interval,
                             interval_method=args.interval_method)
    _write(table, args.output)
    return 0


def _run_positives(args) -> int:
    if args.output:
        check_output_file(args.output)
    t = _read_csv(args.ranks, ("user", "rank"))
    ks = sorted({k for ks in args.k for k in ks}) if args.k else [1, 5, 10, 20, 50]
    sizes = {}
    for column, option in (("n_items", "--n-items"), ("sample_size", "--sample-size")):
        given = getattr(args, column)
        if column in t.columns:
            sizes[column] = _read_csv(args.ranks, ("user", "rank", column))[column].to_numpy()
        elif given is None:
            raise ValueError(f"{args.ranks!r} has no column {column}: give {option}")
        else:
            sizes[column] = given
    table = estimate_multi_positive(t["rank"].to_numpy(), t["user"].to_numpy(), sizes["n_items"],
                                    sizes["sample_size"], args.metric or list(MULTI_METRICS), ks,
                                    method=args.method, scheme=args.scheme, interval=args.interval)
    _write(table, args.output)
    return 0
