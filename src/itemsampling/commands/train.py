"""``itemsampling train``: fit a recommender and write the global ranks of its test users.

``itemsampling train --dataset D --model M [--set key=value ...] --seed S --out-dir DIR``
    Fit model M (registry name, see :mod:`itemsampling.models.registry`) on dataset D with the
    registry defaults for D updated by ``--set``; rank every test user's held-out item under
    each protocol and write, in DIR (default ``results/ranks/D/M``):

    * ``<protocol>.parquet``: columns ``user, item, rank, n_candidates`` (global rank R_u and
      N_u; see :mod:`itemsampling.ranks`);
    * ``popularity_profile.parquet`` (when ``unseen`` is ranked): per test user, the unseen
      candidates of each popularity class that precede the target, and all of them
      (:mod:`itemsampling.popularity_profiles`; ``itemsampling profile`` writes it alone);
    * ``train.json``: model, hyper-parameters, seed (it also seeds the tie-break), sizes, fit
      and rank wall times, exact Recall@10 / NDCG@10 per protocol and the name of the state;
    * ``model.npz``: the fitted parameters, if they take at most ``--max-state-mb``; otherwise
      ``itemsampling ranks`` refits the model (fits are deterministic given the seed).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import __version__
from .._validation import check_seed
from ..metrics import global_metrics
from ..models.trained import STATE_FILE, TRAIN_FILE
from ..popularity_profiles import PROFILE_FILE, popularity_profile, write_profile
from ..ranks import PROTOCOLS, global_ranks, write_ranks
from ._common import check_output_dir, plain_text

if TYPE_CHECKING:
    from ..data import Dataset
    from ..models.base import Recommender

__all__ = ["Fitted", "add_fit_arguments", "fit", "output_dir", "parse_overrides", "register"]


def parse_value(text: str):
    """``none``/``null`` -> None, ``true``/``false`` -> bool, then int, float, else the string."""
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_overrides(items: list[str] | None) -> dict:
    """Turn ``["key=value", ...]`` into a dict of typed values (see :func:`parse_value`)."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects key=value (e.g. --set l2=500), got {item!r}")
        out[key.strip()] = parse_value(value)
    return out


def add_fit_arguments(parser: argparse.ArgumentParser, out_dir_help: str) -> None:
    """The options that say which model to fit and how (shared with ``itemsampling profile``)."""
    parser.add_argument("--dataset", required=True, help="registered dataset name, e.g. ml-1m")
    parser.add_argument("--model", required=True, help="registered model name, e.g. ease, krX")
    parser.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE",
                        help="override a hyper-parameter (repeatable); none/true/false/numbers are typed")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fit and of the tie-break (default 0)")
    parser.add_argument("--out-dir", metavar="DIR", help=out_dir_help)
    parser.add_argument("--batch-size", type=int, default=1024, help="users scored at once (default 1024)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress bars (default: only in a terminal)")


def register(subparsers) -> None:
    """Add the ``train`` command."""
    parser = subparsers.add_parser(
        "train", help="fit a recommender and write the global ranks of its test users",
        description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fit_arguments(parser, "output folder, created if missing; the folder that holds DIR must exist "
                              "and files of an earlier run in DIR are overwritten (default "
                              "results/ranks/<dataset>/<model>, created with its parents)")
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS), choices=PROTOCOLS,
                        help="candidate protocols to rank under (default: both)")
    parser.add_argument("--max-state-mb", type=float, default=512.0,
                        help="save the fitted parameters only up to this size (default 512 MB)")
    parser.set_defaults(func=run)


@dataclass
class Fitted:
    """A model fitted as ``itemsampling train`` fits it, with what it was fitted from."""

    model: Recommender
    dataset: Dataset
    overrides: dict
    seed: int
    out_dir: Path
    fit_seconds: float


def output_dir(args: argparse.Namespace) -> Path:
    """``--out-dir``, checked, or results/ranks/<dataset>/<model>."""
    if args.out_dir:
        check_output_dir(args.out_dir)
    return Path(args.out_dir or os.path.join("results", "ranks", args.dataset, args.model))


def fit(args: argparse.Namespace) -> Fitted:
    """Check the output folder, build model ``args.model`` for ``args.dataset`` with the
    registry's hyper-parameters updated by ``--set``, and fit it with ``args.seed``: the one code
    path of every fit whose ranks are written (fits are deterministic given the seed)."""
    from ..data import load_dataset
    from ..models.registry import make_model

    seed = check_seed(args.seed)
    out_dir = output_dir(args)
    overrides = parse_overrides(args.overrides)
    model = make_model(args.model, args.dataset, overrides)  # fails early on a bad name or key
    dataset = load_dataset(args.dataset)
    start = time.perf_counter()
    model.fit(dataset.train, seed=seed, progress=args.progress)
    return Fitted(model, dataset, overrides, seed, out_dir, time.perf_counter() - start)


def run(args: argparse.Namespace) -> int:
    """Fit, rank under each protocol and write the outputs; returns the exit status."""
    fitted = fit(args)
    model, dataset, overrides, seed, out_dir = (fitted.model, fitted.dataset, fitted.overrides, fitted.seed,
                                                fitted.out_dir)
    fit_seconds = fitted.fit_seconds
    start = time.perf_counter()
    ranks = global_ranks(model, dataset.test_items, protocols=args.protocols, seed=seed,
                         batch_size=args.batch_size, progress=args.progress)
    rank_seconds = time.perf_counter() - start

    out_dir.mkdir(parents=True, exist_ok=True)
    metrics = {}
    for protocol, frame in ranks.items():
        write_ranks(frame, out_dir / f"{protocol}.parquet")
        values = global_metrics(frame["rank"], frame["n_candidates"].to_numpy(), ("recall", "ndcg"), 10)
        metrics[protocol] = {f"{m}@10": float(v) for m, v in zip(values["metric"], values["value"], strict=True)}
    if "unseen" in ranks:
        write_profile(popularity_profile(model, dataset.test_items, protocol="unseen", seed=seed,
                                         batch_size=args.batch_size, progress=args.progress),
                      out_dir / PROFILE_FILE)
    state_file = None
    state_bytes = model.state_nbytes()
    if state_bytes <= args.max_state_mb * 2**20:
        np.savez(out_dir / STATE_FILE, **model.state())
        state_file = STATE_FILE
    elif (out_dir / STATE_FILE).exists():
        (out_dir / STATE_FILE).unlink()  # a stale state of an earlier fit must not be reused
    record = {
        "dataset": args.dataset,
        "dataset_description": dataset.description,
        "model": args.model,
        "model_class": type(model).__name__,
        "hyperparameters": model.hyperparameters,
        "overrides": overrides,
        "seed": seed,
        "tie_break_seed": seed,
        "device": model.device,
        "n_users": dataset.n_users,
        "n_items": dataset.n_items,
        "n_test_users": int(dataset.test_users.size),
        "protocols": list(ranks),
        "fit_seconds": fit_seconds,
        "rank_seconds": rank_seconds,
        "metrics": metrics,
        "state": state_file,
        "state_bytes": state_bytes,
        "itemsampling_version": __version__,
    }
    (out_dir / TRAIN_FILE).write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.model} on {args.dataset}: fit {fit_seconds:.1f}s, ranks {rank_seconds:.1f}s, "
          + ", ".join(f"{p} Recall@10 {m['recall@10']:.4f}" for p, m in metrics.items())
          + f" -> {out_dir}")
    return 0
