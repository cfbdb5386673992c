"""``itemsampling evaluate-adaptive``: adaptive item-sampled evaluation of a live model.

``itemsampling evaluate-adaptive --dataset D (--model-dir DIR | --scorer MODULE:FACTORY)
--protocol P --n0 N0 --n-max NMAX [--replace] [--seed S] [--metric NAME ...] [--k K ...]
[--output FILE] [--ranks-output FILE]``

Runs Algorithm 1 of Li et al. (AAAI 2023) on every test user of dataset D: rank the held-out
item among n_0 - 1 sampled candidates and double the sample while it is ranked first, up to
n_max; the model is asked only for the held-out items and the sampled items, never for the
whole catalogue. The global metrics are then estimated by adaptive MLE (AAAI'23 eq. 12). See
:mod:`itemsampling.adaptive_evaluation`.

The model is either

* ``--model-dir DIR``: a model trained by ``itemsampling train`` (its saved state, or a refit
  with the recorded hyper-parameters and seed), scored by ``Recommender.score_items`` (EASE
  computes only the requested scores; other models score all items and keep those); ties are
  broken with the tie-break seed of its ``train.json``, so the sampled ranks share the total
  order of its global ranks; or
* ``--scorer MODULE:FACTORY``: ``FACTORY(dataset)`` gets the loaded ``Dataset`` (``train``,
  ``test_items``, ``n_users``, ``n_items``) and returns the scorer ``score(users, items)``:
  int64 arrays of shapes (B,) and (B, m) in, a (B, m) array of finite scores out (higher is
  better; wrap a torch model, an implicit model or a service). MODULE is an importable module
  or a path to a ``.py`` file.

The estimates (CSV: ``metric, k, estimate``) go to standard output or ``--output``;
``--ranks-output`` writes each user's ``user, item, rank, sample_size, n_candidates``
(parquet if the name ends in ``.parquet``, else CSV, which ``itemsampling estimate --method
adaptive_mle`` reads). A summary with the number of items scored against a full ranking
(M x N) is printed to standard error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path

import numpy as np

from .._validation import check_seed
from ..adaptive_evaluation import evaluate_adaptive
from ..metrics import METRICS
from ..ranks import PROTOCOLS, write_ranks
from ._common import check_output_file, plain_text
from .estimate import DEFAULT_KS, DEFAULT_METRICS, parse_ks

__all__ = ["load_scorer_factory", "register"]


def register(subparsers) -> None:
    """Add the ``evaluate-adaptive`` command."""
    parser = subparsers.add_parser(
        "evaluate-adaptive", help="adaptive sampled evaluation of a trained model or any scorer (AAAI'23 Alg. 1)",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dataset", required=True, help="registered dataset name (test items and training data)")
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--model-dir", metavar="DIR", help="output folder of `itemsampling train`")
    model.add_argument("--scorer", metavar="MODULE:FACTORY",
                       help="FACTORY(dataset) returns score(users, items); MODULE: module name or .py file")
    parser.add_argument("--protocol", required=True, choices=PROTOCOLS,
                        help="candidates: the user's unseen items, or all items")
    parser.add_argument("--n0", type=int, required=True, help="initial sample set size n_0")
    parser.add_argument("--n-max", type=int, required=True,
                        help="terminal sample set size n_max (AAAI'23 suggests 10-15%% of the items)")
    parser.add_argument("--replace", action="store_true", help="sample with replacement (default: without)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling (default 0)")
    parser.add_argument("--tie-seed", type=int,
                        help="tie-break seed (default: the one of train.json with --model-dir, else 0)")
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help=f"metric, repeatable: {', '.join(METRICS)} (default: {', '.join(DEFAULT_METRICS)})")
    parser.add_argument("--k", action="append", type=parse_ks, metavar="K",
                        help=f"cut-off(s), repeatable: 10, 1-50 or 1,5,10 (default: {DEFAULT_KS})")
    parser.add_argument("--output", metavar="FILE",
                        help="write the estimates as CSV to FILE instead of stdout; the folder of FILE must "
                             "exist and an existing FILE is overwritten")
    parser.add_argument("--ranks-output", metavar="FILE",
                        help="also write the per-user ranks and sample sizes (.parquet, else CSV); the folder "
                             "of FILE must exist and an existing FILE is overwritten")
    parser.add_argument("--batch-size", type=int, default=1024,
                        help="users sampled together; a scorer call gets at most this many (default 1024)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress bars (default: only in a terminal)")
    parser.set_defaults(func=run)


def load_scorer_factory(spec: str):
    """The callable named by ``MODULE:FACTORY`` (MODULE: an importable module or a ``.py`` file).

    Raises
    ------
    ValueError
        If ``spec`` is malformed, the module cannot be imported or has no such callable.
    FileNotFoundError
        If MODULE names a ``.py`` file that does not exist.
    """
    module_name, sep, name = spec.rpartition(":")
    if not sep or not module_name or not name.isidentifier():
        raise ValueError(f"--scorer must be MODULE:FACTORY (e.g. mypackage.scoring:make_scorer or "
                         f"scoring.py:make_scorer), got {spec!r}")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise FileNotFoundError(f"--scorer: the file {module_name!r} does not exist")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            raise ValueError(f"--scorer: cannot import {module_name!r} ({exc}); put it on PYTHONPATH or "
                             "give the path of its .py file") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ValueError(f"--scorer: {module_name!r} has no callable {name!r}")
    return factory


def _scorer_and_tie_seed(args, dataset):
    """The scorer and the default tie-break seed of ``--model-dir`` or ``--scorer``."""
    if args.scorer:
        return load_scorer_factory(args.scorer)(dataset), 0
    from ..models.trained import load_trained

    model, record = load_trained(args.model_dir, dataset, progress=args.progress)
    return model.score_items, record["tie_break_seed"]


def _check_paths(args) -> None:
    for option in ("output", "ranks_output"):
        if getattr(args, option):
            check_output_file(getattr(args, option), f"--{option.replace('_', '-')}")
    if args.model_dir and not (Path(args.model_dir) / "train.json").exists():  # fail before loading any data
        raise FileNotFoundError(f"{Path(args.model_dir) / 'train.json'} does not exist; run `itemsampling train "
                                f"--dataset {args.dataset} --model M --out-dir {args.model_dir}` first")


def run(args: argparse.Namespace) -> int:
    """Load the data and the model, evaluate, write the outputs; returns the exit status."""
    from ..data import load_dataset

    check_seed(args.seed)
    check_seed(args.tie_seed)
    _check_paths(args)
    dataset = load_dataset(args.dataset)
    score, tie_seed = _scorer_and_tie_seed(args, dataset)
    result = evaluate_adaptive(
        score, dataset.test_items, dataset.n_items, n0=args.n0, n_max=args.n_max,
        exclude=dataset.train if args.protocol == "unseen" else None,
        metrics=args.metric or DEFAULT_METRICS, ks=np.concatenate(args.k).tolist() if args.k else parse_ks(DEFAULT_KS),
        replace=args.replace, rng=args.seed, tie_seed=tie_seed if args.tie_seed is None else args.tie_seed,
        batch_size=args.batch_size, progress=args.progress,
    )
    if args.ranks_output:
        if args.ranks_output.endswith(".parquet"):
            write_ranks(result.ranks, args.ranks_output)
        else:
            result.ranks.to_csv(args.ranks_output, index=False)
    result.estimates.to_csv(args.output or sys.stdout, index=False)
    cost = result.cost
    print(f"{cost.n_users} users of {args.dataset} ({args.protocol}): mean sample size "
          f"{result.ranks['sample_size'].mean():.1f} (n0 = {result.n0}, n_max = {result.n_max}); scored "
          f"{cost.items_scored} items in {cost.calls} calls, {cost.fraction:.2%} of the {cost.full_ranking} "
          f"(M x N) of a full ranking" + (f" -> {args.output}" if args.output else ""), file=sys.stderr)
    return 0
