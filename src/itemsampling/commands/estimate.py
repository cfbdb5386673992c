"""``itemsampling estimate``: estimate global top-K metrics from a CSV file of sampled ranks.

``itemsampling estimate RANKS.csv --n-items N --sample-size n [--method mn_mes]
[--metric ndcg ...] [--k 10 | --k 1-50 | --k 1,5,10 ...] [method options] [--clip]
[--interval 0.95 [--interval-method bootstrap --n-bootstrap B --seed S]] [--output FILE]``

RANKS.csv has a column named ``rank``: the 1-based rank of each test user's held-out item
among the n items of its sample set (the item itself and n - 1 sampled items); a blank line is
an error. An optional column ``sample_size`` gives each user's own n (adaptive sampling; needs
``--method adaptive_mle``). An optional column ``n_candidates`` gives each user's number of
candidate items N_u (the ``unseen`` protocol) in place of ``--n-items``. Use ``-`` to read the
CSV from standard input. The result is a CSV table with the columns ``metric, k, estimate``
(and with ``--interval`` the standard error and confidence bounds ``se, lower, upper``; see
:mod:`itemsampling.intervals`), written to standard output or to ``--output``.

Every option of :func:`itemsampling.estimate` except ``progress`` has a flag: ``--scheme``, ``--grid``,
``--n-groups``, ``--gamma``, ``--prior``, ``--n-users``, ``--eta``, ``--eta-scale``, ``--weight``, ``--c``,
``--init``, ``--max-iter`` and ``--tol``. A method takes only the options it uses (listed with
each flag below); giving another one is an error. ``--prior`` and ``--init`` name a file with
one probability per global rank R = 1..N: a ``.npy`` file with a 1-D array, or else a CSV file
with one column (and an optional header line).
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..distributions import ETA_SCALES, WMLE_WEIGHTS
from ..estimators import M_SCOPES, METHODS, estimate, method_options
from ..intervals import DEFAULT_N_BOOTSTRAP, INTERVAL_METHODS
from ..kernels import SCHEMES
from ..metrics import METRICS
from ..rank_grid import AUTO_MIN_ITEMS, GRIDS
from ._common import check_output_file, plain_text

__all__ = ["ESTIMATOR_OPTIONS", "parse_ks", "read_distribution", "read_sampled_ranks", "register"]

DEFAULT_METRICS = ("recall", "ndcg", "ap")
DEFAULT_KS = "1-50"
#: options of :func:`itemsampling.estimate` that have a flag; ``progress`` is not one of them:
#: the command shows a progress bar when standard error is a terminal
ESTIMATOR_OPTIONS = ("scheme", "n_groups", "grid", "gamma", "prior", "n_users", "m_scope", "eta", "eta_scale", "weight",
                     "c", "init", "max_iter", "tol")
#: options whose flag names a file with one probability per global rank
_DISTRIBUTION_OPTIONS = ("prior", "init")


def register(subparsers) -> None:
    """Add the ``estimate`` command."""
    parser = subparsers.add_parser(
        "estimate", help="estimate global metrics@K from item-sampled ranks",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ranks", metavar="RANKS.csv",
                        help="CSV with a 'rank' column (and optionally 'sample_size', and "
                             "'n_candidates': each user's number of candidate items N_u); '-' = stdin")
    parser.add_argument("--n-items", type=int, metavar="N",
                        help="number of items N ranked globally (needed unless the CSV has a column "
                             "'n_candidates')")
    parser.add_argument("--sample-size", type=int, metavar="n",
                        help="sample set size n (the target plus n - 1 sampled items)")
    parser.add_argument("--method", default="mn_mes", choices=METHODS,
                        help="estimator (default: %(default)s)")
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help=f"metric, repeatable: {', '.join(METRICS)}; aliases (rows carry the canonical "
                             "name): hr, hit_ratio, hitrate = recall; rr, mrr = ap "
                             f"(default: {', '.join(DEFAULT_METRICS)})")
    parser.add_argument("--k", action="append", type=parse_ks, metavar="K",
                        help=f"cut-off(s), repeatable: 10, 1-50 or 1,5,10 (default: {DEFAULT_KS})")
    _add_estimator_options(parser)
    parser.add_argument("--clip", action="store_true",
                        help="clip estimates to [0, 1] (by default values outside, which linear "
                             "corrections can give, are reported as they are, with a warning)")
    _add_interval_options(parser)
    parser.add_argument("--output", metavar="FILE",
                        help="write the CSV table to FILE instead of stdout; the folder of FILE must "
                             "exist and an existing FILE is overwritten")
    parser.set_defaults(func=_run)


def _add_estimator_options(parser: argparse.ArgumentParser) -> None:
    """One flag per name in :data:`ESTIMATOR_OPTIONS`; each help ends with the methods that use it."""
    described = {
        "scheme": (dict(choices=SCHEMES), "sampling with replacement (binomial, default) or without "
                                          "(hypergeometric)"),
        "n_groups": (dict(type=int, metavar="G"), "with per-user candidates (column n_candidates), the "
                                                  "largest number of groups of users by N_u (default 20)"),
        "grid": (dict(choices=GRIDS), "global ranks to sum over: auto (default: a coarse-to-fine grid from "
                                      f"N = {AUTO_MIN_ITEMS:,} items on), exact (every rank 1..N) or coarse"),
        "gamma": (dict(type=float, metavar="G"), "BV variance weight γ >= 0 (default 0.01)"),
        "prior": (dict(metavar="FILE"), "prior P(R), R = 1..N, of the correction (default uniform)"),
        "n_users": (dict(type=int, metavar="M"), "MN's number of users M (default: number of ranks)"),
        "m_scope": (dict(choices=M_SCOPES), "with per-user candidates, MN's M in each group: the group's "
                                            "users (group, default) or all users (total)"),
        "eta": (dict(type=float, metavar="E"), "MES entropy weight η > 0 (default 0.001)"),
        "eta_scale": (dict(choices=ETA_SCALES), "η as in the paper (default) or η/n as in the authors' code"),
        "weight": (dict(choices=WMLE_WEIGHTS), "WMLE weight w(r) = M(r/C) (default ndcg)"),
        "c": (dict(type=float, metavar="C"), "WMLE constant C > 0 (default 10)"),
        "init": (dict(metavar="FILE"), "start distribution of EM, R = 1..N (default uniform)"),
        "max_iter": (dict(type=int, metavar="I"), "iteration cap of EM or of the MES solver "
                                                  "(default: the method's own)"),
        "tol": (dict(type=float, metavar="T"), "tolerance of EM or of the MES solver "
                                               "(default: the method's own)"),
    }
    for name in ESTIMATOR_OPTIONS:
        kwargs, text = described[name]
        parser.add_argument(_flag(name), **kwargs, help=f"{text}; methods: {', '.join(_methods_using(name))}")


def _add_interval_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, metavar="LEVEL",
                        help="add a confidence interval at this level in (0, 1), e.g. 0.95: columns "
                             "se, lower, upper")
    parser.add_argument("--interval-method", choices=INTERVAL_METHODS,
                        help="analytic (default: central limit theorem / delta method on the users' "
                             "influence values) or bootstrap (refits on resampled users)")
    parser.add_argument("--n-bootstrap", type=int, metavar="B",
                        help=f"bootstrap replicates (default {DEFAULT_N_BOOTSTRAP}); bootstrap only")
    parser.add_argument("--seed", type=int, metavar="S",
                        help="seed of the bootstrap (default 0); bootstrap only")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _methods_using(name: str) -> list[str]:
    return [method for method in METHODS if name in method_options(method)]


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


def read_sampled_ranks(source: str) -> pd.DataFrame:
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


def read_distribution(path: str, n_items: int, option: str = "--prior") -> np.ndarray:
    """Read one probability per global rank R = 1..N from a ``.npy`` file or a one-column CSV.

    The CSV file may start with a header line; blank lines and values that are not numbers are
    errors that name the line. Whether the values form a distribution is checked by
    :func:`itemsampling.estimate`.

    Parameters
    ----------
    path : str
        The file; ``.npy`` files hold a 1-D array, every other file is read as CSV.
    n_items : int
        N, the number of values the file must hold.
    option : str
        The flag that named the file, for the messages.

    Returns
    -------
    numpy.ndarray
        Shape ``(N,)``, float64.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"{option} file {path!r} does not exist")
    values = np.load(path, allow_pickle=False) if path.endswith(".npy") else _read_column(path, option)
    if values.ndim != 1 or values.size != n_items:
        raise ValueError(
            f"{option} file {path!r} holds {values.size} value(s) in shape {values.shape}; it needs one "
            f"probability per global rank R = 1..N, N = {n_items} (--n-items)"
        )
    return values.astype(np.float64)


def _read_column(path: str, option: str) -> np.ndarray:
    """The numbers of a one-column CSV file, after an optional header line."""
    try:
        table = pd.read_csv(path, header=None, dtype=str, skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{option} file {path!r} is empty") from None
    if table.shape[1] != 1:
        raise ValueError(f"{option} file {path!r} has {table.shape[1]} columns; it needs exactly one")
    text = table.iloc[:, 0]
    values = pd.to_numeric(text, errors="coerce")
    first_line = 1
    if pd.isna(values.iloc[0]) and not pd.isna(text.iloc[0]):  # a header line
        values, first_line = values.iloc[1:], 2
    bad = np.flatnonzero(values.isna().to_numpy())
    if bad.size:
        raise ValueError(
            f"{option} file {path!r}: line {first_line + bad[0]} is not a number (blank or text); "
            "the file needs one probability per line"
        )
    return values.to_numpy(dtype=np.float64)


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


def _n_items(table: pd.DataFrame, given: int | None):
    """One N (``--n-items``), or each user's N_u from the column ``n_candidates``."""
    if "n_candidates" in table.columns:
        if given is not None:
            raise ValueError("give the number of items either as --n-items or as the column "
                             "'n_candidates' of the ranks file, not both")
        return table["n_candidates"].to_numpy()
    if given is None:
        raise ValueError("--n-items is required (or a column 'n_candidates' in the ranks file with "
                         "each user's number of candidate items N_u)")
    return given


def _estimator_options(args, n_items) -> dict:
    """The options given for ``estimate``, checked against ``--method``, with their files read."""
    accepted = method_options(args.method)
    options = {name: getattr(args, name) for name in ESTIMATOR_OPTIONS if getattr(args, name) is not None}
    for name in options:
        if name not in accepted:
            raise ValueError(
                f"{_flag(name)} does not apply to --method {args.method}; "
                f"it is an option of {', '.join(_methods_using(name))}"
            )
    for name in _DISTRIBUTION_OPTIONS:
        if name in options:
            options[name] = read_distribution(options[name], int(np.max(n_items)), _flag(name))
    if "progress" in accepted:
        options["progress"] = sys.stderr.isatty()
    return options


def _run(args) -> int:
    if args.output:
        check_output_file(args.output)
    table = read_sampled_ranks(args.ranks)
    n_items = _n_items(table, args.n_items)
    options = _estimator_options(args, n_items)
    sample_size = _sample_size(table, args.sample_size, args.method)
    ks = np.concatenate(args.k).tolist() if args.k else parse_ks(DEFAULT_KS)
    result = estimate(table["rank"].to_numpy(), n_items, sample_size, args.method,
                      metrics=args.metric or DEFAULT_METRICS, ks=ks, clip=args.clip, interval=args.interval,
                      interval_method=args.interval_method, n_bootstrap=args.n_bootstrap, seed=args.seed,
                      **options)
    if args.output:
        result.to_csv(args.output, index=False)
    else:
        result.to_csv(sys.stdout, index=False)
    return 0
