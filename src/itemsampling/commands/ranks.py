"""``itemsampling ranks``: "actual" sampled ranks of a trained model's held-out items.

``itemsampling ranks --dataset D --model M --protocol P --sample-size n --repeats R [--replace]
--seed S --output FILE``
    For every test user and repeat, draw n - 1 candidate items (``--replace``: with
    replacement; default without), score them with the model trained by ``itemsampling train``
    and write the rank of the held-out item among them.
``... --adaptive --n0 N0 --n-max NMAX``
    Adaptive sampling instead (Li et al. AAAI 2023, Algorithm 1): start at n_0 and double
    while the held-out item is ranked first, up to n_max.

The model is read from ``--model-dir`` (default ``results/ranks/D/M``): its saved state, or a
refit with the recorded hyper-parameters and seed. Ties are broken with the tie-break seed of
``train.json``, so sampled and global ranks share one total order; ``--seed`` drives the
sampling only. FILE gets columns ``repeat, user, item, rank, sample_size, n_candidates``; it is
written as parquet if it ends in ``.parquet``, else as CSV (readable by ``itemsampling estimate``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .._validation import check_seed
from ..ranks import PROTOCOLS, adaptive_sampled_ranks, sampled_ranks, write_ranks
from ._common import check_output_file, plain_text

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``ranks`` command."""
    parser = subparsers.add_parser(
        "ranks", help="sampled ranks of a trained model's held-out items (fixed or adaptive sample sets)",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dataset", required=True, help="registered dataset name")
    parser.add_argument("--model", required=True, help="registered model name")
    parser.add_argument("--model-dir", help="output folder of `itemsampling train` (default results/ranks/D/M)")
    parser.add_argument("--protocol", required=True, choices=PROTOCOLS, help="candidate protocol")
    parser.add_argument("--sample-size", type=int, help="n: the held-out item plus n - 1 sampled items")
    parser.add_argument("--repeats", type=int, default=1, help="sample sets per user (default 1)")
    parser.add_argument("--replace", action="store_true", help="sample with replacement (default: without)")
    parser.add_argument("--adaptive", action="store_true", help="adaptive sampling (needs --n0 and --n-max)")
    parser.add_argument("--n0", type=int, help="initial sample set size of adaptive sampling")
    parser.add_argument("--n-max", type=int, help="largest sample set size of adaptive sampling")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling (default 0)")
    parser.add_argument("--output", required=True, metavar="FILE",
                        help="output file (.parquet, else CSV); the folder of FILE must exist and an "
                             "existing FILE is overwritten")
    parser.add_argument("--batch-size", type=int, default=256, help="users scored at once (default 256)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress bars (default: only in a terminal)")
    parser.set_defaults(func=run)


def _check_arguments(args: argparse.Namespace) -> None:
    if args.adaptive:
        if args.n0 is None or args.n_max is None:
            raise ValueError("--adaptive needs --n0 and --n-max")
        if args.sample_size is not None:
            raise ValueError("--sample-size does not apply to --adaptive (use --n0 and --n-max)")
    else:
        if args.sample_size is None:
            raise ValueError("--sample-size is required (or use --adaptive with --n0 and --n-max)")
        if args.n0 is not None or args.n_max is not None:
            raise ValueError("--n0 and --n-max apply only with --adaptive")
    check_seed(args.seed)


def run(args: argparse.Namespace) -> int:
    """Load the trained model, sample, rank and write the table; returns the exit status."""
    from ..data import load_dataset
    from ..models.trained import load_trained

    _check_arguments(args)
    check_output_file(args.output)
    model_dir = Path(args.model_dir or os.path.join("results", "ranks", args.dataset, args.model))
    if not (model_dir / "train.json").exists():  # fail before loading any data
        raise FileNotFoundError(
            f"{model_dir / 'train.json'} does not exist; run `itemsampling train --dataset {args.dataset} "
            f"--model {args.model}` first (or pass --model-dir)"
        )
    dataset = load_dataset(args.dataset)
    model, record = load_trained(model_dir, dataset, progress=args.progress)
    common = dict(protocol=args.protocol, repeats=args.repeats, replace=args.replace, rng=args.seed,
                  tie_seed=record["tie_break_seed"], batch_size=args.batch_size, progress=args.progress)
    if args.adaptive:
        frame = adaptive_sampled_ranks(model, dataset.test_items, n0=args.n0, n_max=args.n_max, **common)
    else:
        frame = sampled_ranks(model, dataset.test_items, sample_size=args.sample_size, **common)
    if args.output.endswith(".parquet"):
        write_ranks(frame, args.output)
    else:
        frame.to_csv(args.output, index=False)
    print(f"{len(frame)} sampled ranks of {args.model} on {args.dataset} ({args.protocol}) -> {args.output}")
    return 0
