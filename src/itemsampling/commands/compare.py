"""``itemsampling compare``: paired comparison of models evaluated on the same sampled negatives.

``itemsampling compare RUN_A RUN_B [RUN ...] --format FORMAT [--scores A.npy --scores B.npy ...]
[--n-items N] [--metric recall] [--k 10] [--interval 0.95] [--output FILE]``

One row per pair of models: both estimates, the difference with its paired interval, P(A > B),
the p-value, the Holm-adjusted p-value over all pairs and whether the sampled metrics order the
pair the other way (:mod:`itemsampling.compare`). For ncf, elliot and rechorus give one RUN (the
negatives file) and one ``--scores`` per model, named with ``--model``.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..compare import compare_many
from ..runs import read_run
from ._common import check_output_file, plain_text
from .correct import add_run_arguments

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``compare`` command."""
    parser = subparsers.add_parser(
        "compare", help="paired comparison of models on the same sampled evaluation",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="the runs' files (one per model)")
    parser.add_argument("--scores", action="append", metavar="FILE", help="one score matrix per model")
    parser.add_argument("--model", action="append", metavar="NAME", help="the models' names, in order")
    add_run_arguments(parser)
    parser.set_defaults(func=_run)


def _run(args) -> int:
    if args.output:
        check_output_file(args.output)
    sources = args.runs * len(args.scores) if args.scores and len(args.runs) == 1 else args.runs
    scores = args.scores or [None] * len(sources)
    names = args.model or [None] * len(sources)
    if not len(sources) == len(scores) == len(names) or len(sources) < 2:
        raise ValueError("give at least two models: one RUN per model (or one negatives file and one "
                         "--scores per model), and as many --model names as models if any")
    runs = [read_run(source, args.format, scores=score, n_items=args.n_items, model=name)
            for source, score, name in zip(sources, scores, names, strict=True)]
    metrics = args.metric or ["recall"]
    ks = [k for group in args.k for k in group] if args.k else [10]
    try:
        table = pd.concat([compare_many(runs, metric, k, args.method, args.interval)
                           for metric in metrics for k in ks], ignore_index=True)
    except NotImplementedError as exc:
        raise ValueError(str(exc)) from None
    table.to_csv(args.output or sys.stdout, index=False, float_format="%.6g")
    return 0
