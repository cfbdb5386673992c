"""``itemsampling estimate``: estimate global top-K metrics from a CSV file of sampled ranks.

``itemsampling estimate RANKS.csv --n-items N --sample-size n [--method mn_mes]
[--metric ndcg ...] [--k 10 | --k 1-50 | --k 1,5,10 ...] [--gamma G] [--eta E] [--n-users M]
[--scheme binomial|hypergeometric] [--output FILE]``

RANKS.csv has a column named ``rank``: the 1-based rank of each test user's held-out item among the
n items of its sample set (the item itself and n - 1 sampled items). An optional column
``sample_size`` gives each user's own n (adaptive sampling; needs ``--method adaptive_mle``).
Use ``-`` to read the CSV from standard input. The result is a CSV table with the columns
``metric, k, estimate``, written to standard output or to ``--output``.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..estimators import METHODS, estimate, method_options
from ..kernels import SCHEMES
from ..metrics import METRICS
from ._common import check_output_file, plain_text

__all__ = ["parse_ks", "read_ranks", "register"]

DEFAULT_METRICS = ("recall", "ndcg", "ap")
DEFAULT_KS = "1-50"


def register(subparsers) -> None:
    """Add the ``estimate`` command."""
    parser = subparsers.add_parser(
        "estimate", help="estimate global metrics@K from item-sampled ranks",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ranks", metavar="RANKS.csv",
                        help="CSV with a 'rank' column (and optionally 'sample_size'); '-' = stdin")
    parser.add_argument("--n-items", type=int, required=True, metavar="N",
                        help="number of items N ranked globally")
    parser.add_argument("--sample-size", type=int, metavar="n",
                        help="sample set size n (the target plus n - 1 sampled items)")
    parser.add_argument("--method", default="mn_mes", choices=METHODS,
                        help="estimator (default: %(default)s)")
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help=f"metric, repeatable: {', '.join(METRICS)} "
                             f"(default: {', '.join(DEFAULT_METRICS)})")
    parser.add_argument("--k", action="append", type=parse_ks, metavar="K",
                        help=f"cut-off(s), repeatable: 10, 1-50 or 1,5,10 (default: {DEFAULT_KS})")
    parser.add_argument("--gamma", type=float, help="BV variance weight γ (bv, bv_mle, bv_mes; default 0.01)")
    parser.add_argument("--eta", type=float, help="MES entropy weight η (mes, bv_mes, mn_mes; default 0.001)")
    parser.add_argument("--n-users", type=int, metavar="M",
                        help="MN's number of users M (mn, mn_mle, mn_mes; default: number of ranks)")
    parser.add_argument("--scheme", choices=SCHEMES,
                        help="sampling with replacement (binomial, default) or without (hypergeometric)")
    parser.add_argument("--output", metavar="FILE",
                        help="write the CSV table to FILE instead of stdout; the folder of FILE must "
                             "exist and an existing FILE is overwritten")
    parser.set_defaults(func=_run)


def parse_ks(text: str) -> list[int]:
    """Parse a cut-off argument: ``"10"``, a range ``"1-50"`` or a list ``"1,5,10"``."""
    ks = []
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            lo = int(first)
            hi = int(last) if dash else lo
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid cut-off {text!r}: use a positive integer (10), a range (1-50) or a list (1,5,10)"
            ) from None
        if lo < 1 or hi < lo:
            raise argparse.ArgumentTypeError(
                f"invalid cut-off {part.strip()!r}: cut-offs are positive and ranges go up (1-50)"
            )
        ks.extend(range(lo, hi + 1))
    return ks


def read_ranks(source: str) -> pd.DataFrame:
    """Read the ranks CSV (``-`` for stdin) and check that it has a ``rank`` column.

    Blank lines are errors rather than skipped: in a file with only a ``rank`` column a blank
    line is a user whose rank is missing, and dropping it would bias every estimate.
    """
    if source != "-" and not Path(source).is_file():
        raise FileNotFoundError(f"ranks file {source!r} does not exist")
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8-sig")
    _check_no_blank_lines(text, source)
    try:
        table = pd.read_csv(io.StringIO(text))
    except pd.errors.EmptyDataError:
        raise ValueError(f"ranks file {source!r} is empty; it needs a header line with a 'rank' column") from None
    if "rank" not in table.columns:
        raise ValueError(
            f"ranks file {source!r} has no 'rank' column (columns found: {', '.join(map(str, table.columns))}); "
            "it needs a column 'rank' with the 1-based sampled rank of each user's held-out item"
        )
    return table


def _check_no_blank_lines(text: str, source: str) -> None:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # after the line break that ends the last line (or in an empty file)
    blank = [number for number, line in enumerate(lines, start=1) if not line.strip()]
    if blank:
        more = f" (and {len(blank) - 1} more)" if len(blank) > 1 else ""
        raise ValueError(
            f"ranks file {source!r} has a blank line at line {blank[0]}{more}; every line after the "
            "header must hold one user's rank: fill in the missing rank or delete the line"
        )


def _sample_size(table: pd.DataFrame, given: int | None, method: str):
    """One n for all users, or the per-user ``sample_size`` column for ``adaptive_mle``."""
    if "sample_size" not in table.columns:
        if given is None:
            raise ValueError("give --sample-size n, or a 'sample_size' column in the ranks file")
        return given
    if given is not None:
        raise ValueError("the ranks file has a 'sample_size' column; do not also give --sample-size")
    sizes = table["sample_size"].to_numpy()
    if method == "adaptive_mle":
        return sizes
    distinct = pd.unique(sizes)
    if distinct.size > 1:
        raise ValueError(
            f"the 'sample_size' column has {distinct.size} different values; per-user sample "
            "sizes need --method adaptive_mle"
        )
    return distinct[0].item()


def _run(args) -> int:
    if args.output:
        check_output_file(args.output)
    table = read_ranks(args.ranks)
    sample_size = _sample_size(table, args.sample_size, args.method)
    options = {name: value for name, value in (("gamma", args.gamma), ("eta", args.eta),
                                               ("n_users", args.n_users), ("scheme", args.scheme))
               if value is not None}
    for name in options:
        if name not in method_options(args.method):
            users = [m for m in METHODS if name in method_options(m)]
            raise ValueError(
                f"--{name.replace('_', '-')} does not apply to --method {args.method}; "
                f"it is an option of {', '.join(users)}"
            )
    if "progress" in method_options(args.method):
        options["progress"] = sys.stderr.isatty()
    ks = np.concatenate(args.k).tolist() if args.k else parse_ks(DEFAULT_KS)
    result = estimate(table["rank"].to_numpy(), args.n_items, sample_size, args.method,
                      metrics=args.metric or DEFAULT_METRICS, ks=ks, **options)
    if args.output:
        result.to_csv(args.output, index=False)
    else:
        result.to_csv(sys.stdout, index=False)
    return 0
