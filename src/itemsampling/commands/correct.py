"""``itemsampling correct``: the corrected global metrics of a framework's sampled evaluation.

``itemsampling correct RUN --format {scores,ranks,ncf,elliot,rechorus,recbole} [--scores FILE]
[--probabilities FILE] [--n-items N] [--model NAME] [--method mn_mes] [--metric recall ...] [--k 10 ...]
[--interval 0.95] [--output FILE]``

RUN is the run's file in the framework's format (:mod:`itemsampling.runs`); NCF's, Elliot's and
ReChorus's negatives files need the score matrix of their candidates (``--scores``, the
positive first); with ``--probabilities FILE`` (the popularity sampler's per-draw probability of
each item id) they are corrected as popularity-sampled runs (Hansen–Hurwitz rank estimates). The
result is the CSV table of ``itemsampling estimate`` with the columns ``model`` and ``protocol``
in front. Runs with several positives per user (one row per user and positive) are estimated
positive by positive (:func:`itemsampling.multi_positive.estimate_multi_positive`). A popularity run
without the negatives' ids or rank estimates (RecBole's ``popN`` ranks alone) is an error that
names what is missing.
"""

from __future__ import annotations

import argparse
import sys

from ..estimators import METHODS
from ..multi_positive import OWN_SIZE_METHODS
from ..runs import FORMATS, correct, read_run
from ._common import check_output_file, plain_text
from .estimate import parse_ks

__all__ = ["add_run_arguments", "register"]


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags shared by ``correct`` and ``compare``: format, scores, N, method, metrics, K."""
    parser.add_argument("--format", required=True, choices=FORMATS, help="the run's file format")
    parser.add_argument("--n-items", type=int, metavar="N", help="catalogue size N (not for recbole)")
    parser.add_argument("--method", default="mn_mes", choices=(*METHODS, *OWN_SIZE_METHODS),
                        help="estimator (default: %(default)s; posterior_mle for several positives per user)")
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help="metric, repeatable (default: recall, ndcg)")
    parser.add_argument("--k", action="append", type=parse_ks, metavar="K", help="cut-off(s) (default: 10)")
    parser.add_argument("--interval", type=float, default=0.95, metavar="LEVEL",
                        help="confidence level (default: %(default)s)")
    parser.add_argument("--output", metavar="FILE", help="write the CSV table to FILE instead of stdout")


def register(subparsers) -> None:
    """Add the ``correct`` command."""
    parser = subparsers.add_parser(
        "correct", help="corrected global metrics of a framework's sampled evaluation",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run", metavar="RUN", help="the run's file")
    parser.add_argument("--scores", metavar="FILE", help="score matrix, positive first (ncf, elliot, rechorus)")
    parser.add_argument("--model", metavar="NAME", help="the model's name (default: the file's stem)")
    parser.add_argument("--probabilities", metavar="FILE",
                        help="per-draw probability of each item id under the popularity sampler that drew the "
                             "negatives (.npy or one-column CSV; ncf, elliot, rechorus): corrects a "
                             "popularity-sampled run with the Hansen–Hurwitz rank estimate")
    add_run_arguments(parser)
    parser.set_defaults(func=_run)


def _run(args) -> int:
    if args.output:
        check_output_file(args.output)
    run = read_run(args.run, args.format, scores=args.scores, n_items=args.n_items, model=args.model,
                   probabilities=args.probabilities)
    try:
        table = correct(run, args.method, args.metric or ("recall", "ndcg"),
                        [k for group in args.k for k in group] if args.k else [10], interval=args.interval)
    except NotImplementedError as exc:
        raise ValueError(str(exc)) from None
    table.to_csv(args.output or sys.stdout, index=False)
    return 0
