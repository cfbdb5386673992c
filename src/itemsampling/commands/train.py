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
    * ``train.json``: model, hyper-parameters, seed (it also seeds the tie-break), sizes, the
      machine (BLAS kernels, package versions; for a torch model torch's CPU kernels and
      threads), fit and rank wall times, exact Recall@10 / NDCG@10 per protocol and the name of
      the state;
    * ``model.npz``: the fitted parameters, if they take at most ``--max-state-mb``; otherwise
      ``itemsampling ranks`` refits the model (fits are deterministic given the seed).

``itemsampling train --split ratio ...`` holds out ``--test-fraction`` (default 0.2) of each
user's items instead, at random with the seed (RecBole's ``RS`` split, random order; see
:func:`itemsampling.data.splits.ratio_split`), from all of the dataset's pairs (its training
pairs and its leave-one-out item), fits the model on the rest and writes, in DIR (default
``results/ranks/D/ratio``):

    * ``<model>.parquet``: one row per held-out item (positive), columns ``user, item, rank,
      negative_rank, n_candidates, n_positives`` under ``unseen``
      (:func:`itemsampling.ranks.positive_ranks`);
    * ``<model>.json``: as ``train.json``, with the split rule and exact Recall@10, NDCG@10 and
      HR@10 with several positives (:func:`itemsampling.multi_positive.multi_positive_metrics`).
      No fitted state is saved.
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
import scipy.sparse as sp

from .. import __version__
from .._validation import check_seed
from ..metrics import global_metrics
from ..models.trained import STATE_FILE, TRAIN_FILE
from ..multi_positive import multi_positive_metrics
from ..popularity_profiles import PROFILE_FILE, popularity_profile, write_profile
from ..provenance import machine_record
from ..ranks import PROTOCOLS, global_ranks, positive_ranks, write_ranks
from ._common import check_output_dir, plain_text

if TYPE_CHECKING:
    from ..data import Dataset
    from ..models.base import Recommender

__all__ = ["SPLITS", "Fitted", "add_fit_arguments", "fit", "output_dir", "parse_overrides", "register"]

#: how the held-out items are chosen: the dataset's own leave-one-out item, or a ratio split
SPLITS = ("leave-one-out", "ratio")


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
                        help="candidate protocols to rank under (default: both; --split ratio: unseen only)")
    parser.add_argument("--split", choices=SPLITS, default="leave-one-out",
                        help="held-out items: the dataset's leave-one-out item (default) or a random "
                             "--test-fraction of each user's items")
    parser.add_argument("--test-fraction", type=float, default=0.2,
                        help="share of each user's items held out by --split ratio (default 0.2)")
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
    train: sp.csr_matrix
    held_out: sp.csr_matrix | None = None  # the ratio split's held-out items (None: leave-one-out)


def _split(args: argparse.Namespace) -> str:
    return getattr(args, "split", "leave-one-out")


def output_dir(args: argparse.Namespace) -> Path:
    """``--out-dir``, checked, or results/ranks/<dataset>/<model> (a ratio split:
    results/ranks/<dataset>/ratio)."""
    if args.out_dir:
        check_output_dir(args.out_dir)
    folder = "ratio" if _split(args) == "ratio" else args.model
    return Path(args.out_dir or os.path.join("results", "ranks", args.dataset, folder))


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
    train, held_out = dataset.train, None
    if _split(args) == "ratio":
        from ..data.splits import all_interactions, ratio_split

        train, held_out = ratio_split(all_interactions(dataset), test_fraction=args.test_fraction, seed=seed)
    start = time.perf_counter()
    model.fit(train, seed=seed, progress=args.progress)
    return Fitted(model, dataset, overrides, seed, out_dir, time.perf_counter() - start, train, held_out)


def _check_split(args: argparse.Namespace) -> None:
    """Options of ``--split ratio`` checked before anything is loaded."""
    if args.split == "ratio":
        if args.protocols not in (list(PROTOCOLS), ["unseen"]):
            raise ValueError("--split ratio ranks under the unseen protocol only; drop --protocols")
        if not 0 < args.test_fraction < 1:
            raise ValueError(f"--test-fraction must lie strictly between 0 and 1, got {args.test_fraction}")


def run(args: argparse.Namespace) -> int:
    """Fit, rank and write the outputs of the chosen split; returns the exit status."""
    _check_split(args)
    fitted = fit(args)
    if fitted.held_out is not None:
        return _ratio(args, fitted)
    model, dataset, seed, out_dir = fitted.model, fitted.dataset, fitted.seed, fitted.out_dir
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
        **_fit_record(args, fitted),
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


def _fit_record(args: argparse.Namespace, fitted: Fitted) -> dict:
    """The head of a run's record: data, model, hyper-parameters, seeds and sizes, and the machine
    that fitted it (:func:`itemsampling.provenance.machine_record` and the model's
    :attr:`~itemsampling.models.base.Recommender.environment`: torch's version, CPU kernels and
    threads for a torch model), so that a refit elsewhere that moves the ranks can be traced to
    what differs."""
    return {
        "dataset": args.dataset,
        "dataset_description": fitted.dataset.description,
        "model": args.model,
        "model_class": type(fitted.model).__name__,
        "hyperparameters": fitted.model.hyperparameters,
        "overrides": fitted.overrides,
        "seed": fitted.seed,
        "tie_break_seed": fitted.seed,
        "device": fitted.model.device,
        "n_users": fitted.dataset.n_users,
        "n_items": fitted.dataset.n_items,
        "machine": {**machine_record(), **fitted.model.environment},
    }


def _ratio(args: argparse.Namespace, fitted: Fitted) -> int:
    """Rank every held-out item of the ratio split and write its ranks and record."""
    model, seed, out_dir = fitted.model, fitted.seed, fitted.out_dir
    start = time.perf_counter()
    ranks = positive_ranks(model, fitted.held_out, seed=seed, batch_size=args.batch_size, progress=args.progress)
    rank_seconds = time.perf_counter() - start
    out_dir.mkdir(parents=True, exist_ok=True)
    write_ranks(ranks, out_dir / f"{args.model}.parquet")
    values = multi_positive_metrics(ranks["negative_rank"], ranks["user"], ("recall", "ndcg", "hit"), 10)
    metrics = {f"{m}@10": float(v) for m, v in zip(values["metric"], values["value"], strict=True)}
    record = {
        **_fit_record(args, fitted),
        "split": {
            "kind": "ratio",
            "test_fraction": args.test_fraction,
            "seed": seed,
            "rule": "each user's items in a seeded random order; the first floor(f t) held out, one "
                    "when 0 < f t < 1 and t >= 2 (RecBole RS split, order RO)",
            "source": "all pairs of the dataset: its training pairs and its leave-one-out item",
        },
        "protocol": "unseen",
        "n_train_pairs": int(fitted.train.nnz),
        "n_test_users": int(ranks["user"].nunique()),
        "n_positives": len(ranks),
        "fit_seconds": fitted.fit_seconds,
        "rank_seconds": rank_seconds,
        "metrics": metrics,
        "itemsampling_version": __version__,
    }
    (out_dir / f"{args.model}.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.model} on {args.dataset} (ratio split): fit {fitted.fit_seconds:.1f}s, ranks {rank_seconds:.1f}s, "
          + ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()) + f" -> {out_dir}")
    return 0
