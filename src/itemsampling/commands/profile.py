"""``itemsampling profile``: the popularity profile of a model's committed global ranks.

``itemsampling profile --dataset D --model M [--set key=value ...] --seed S --out-dir DIR``
    Refit model M on dataset D exactly as ``itemsampling train`` does (same options, same seed,
    same code path), count per test user the unseen candidates of each popularity class that
    precede the held-out item and all of them (:mod:`itemsampling.popularity_profiles`), and
    write ``DIR/popularity_profile.parquet`` (default DIR ``results/ranks/D/M``), atomically.

    The global ranks the profile implies (1 + the candidates preceding the target) must equal
    the committed ``DIR/unseen.parquet``, user by user: otherwise the command writes nothing and
    fails, since the profile would describe another fit. It never rewrites ``unseen.parquet``,
    ``all.parquet`` or ``train.json``.
"""

from __future__ import annotations

import argparse

import numpy as np

from ..popularity_profiles import PROFILE_FILE, popularity_profile, write_profile
from ..ranks import read_ranks
from ._common import plain_text
from .train import add_fit_arguments, fit, output_dir

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``profile`` command."""
    parser = subparsers.add_parser(
        "profile", help="write the popularity profile of a model's committed unseen global ranks",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fit_arguments(parser, "folder of the committed ranks (unseen.parquet) and of the profile "
                              "(default results/ranks/<dataset>/<model>)")
    parser.set_defaults(func=run)


def check_same_ranks(committed, users, items, ranks, n_candidates, path) -> None:
    """Raise ``ValueError`` unless the recomputed ranks equal the committed ones user by user."""
    recomputed = {"user": users, "item": items, "rank": ranks, "n_candidates": n_candidates}
    if len(committed) != users.size or not np.array_equal(committed["user"].to_numpy(), users):
        raise ValueError(f"{path}: the committed ranks have other test users ({len(committed)}) than the refit "
                         f"({users.size}); the dataset or the split changed. Retrain with `itemsampling train`")
    for column, values in recomputed.items():
        shift = np.abs(values - committed[column].to_numpy())
        if shift.any():
            raise ValueError(
                f"{path}: the refit's {column} differs from the committed one for {int((shift > 0).sum())} "
                f"of {users.size} users, by up to {int(shift.max())} (first: user {int(users[shift > 0][0])}); "
                "the fit is not the committed one (other options, seed, code, or floating-point rounding of "
                "other BLAS/torch kernels or thread counts). Nothing was written; retrain with "
                "`itemsampling train` to replace the ranks and the profile together"
            )


def run(args: argparse.Namespace) -> int:
    """Refit, check the ranks against the committed ones and write the profile; returns 0."""
    committed_path = output_dir(args) / "unseen.parquet"
    committed = read_ranks(committed_path)  # fails before the fit when the ranks are missing
    fitted = fit(args)
    profile = popularity_profile(fitted.model, fitted.dataset.test_items, protocol="unseen", seed=fitted.seed,
                                 batch_size=args.batch_size, progress=args.progress)
    check_same_ranks(committed, profile.users, profile.items, profile.ranks, profile.n_candidates, committed_path)
    write_profile(profile, fitted.out_dir / PROFILE_FILE)
    print(f"{args.model} on {args.dataset}: fit {fitted.fit_seconds:.1f}s, {profile.n_classes} popularity "
          f"classes, ranks of {profile.users.size} users equal the committed ones -> "
          f"{fitted.out_dir / PROFILE_FILE}")
    return 0
