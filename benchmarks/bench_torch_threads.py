"""Fit time of the torch models with a fixed thread count and with the environment's.

NeuMF and Mult-VAE are fitted on ml-100k, with the registry's hyper-parameters for ml-100k
except for fewer epochs (``--neumf-epochs``, ``--multivae-epochs``), in two conditions:

* ``alone``: nothing else is started by this script;
* ``busy``: beside one busy single-threaded process (a numpy loop in a child process), as when
  a one-thread workflow rule runs next to another job;

and with two thread settings, both under ``OMP_NUM_THREADS=1`` (what the workflow sets for a
one-thread rule):

* ``fixed-2``: ``num_threads=2``, the thread count the models used whatever the environment;
* ``default``: ``num_threads=None``, which follows ``OMP_NUM_THREADS``
  (:func:`itemsampling.models._torch.resolve_num_threads`).

It prints a header (versions, cores, load average at start and end) and two Markdown tables:
the fit times (minimum over ``--repeats`` rounds, with the 1-minute load average just before
that fit) and, per model, the ratios fixed-2 / default in each condition and busy / alone for
each setting. The cells are run interleaved, round by round. The busy process and every other
process on the machine compete for the same cores, so the load average is part of the result.

Usage::

    ITEMSAMPLING_DATA=... python benchmarks/bench_torch_threads.py [--repeats 1]
    ITEMSAMPLING_DATA=... python benchmarks/bench_torch_threads.py --quick    # one epoch of each model
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import time
from contextlib import nullcontext

os.environ["OMP_NUM_THREADS"] = "1"  # before torch is imported: the setting under test

import numpy as np
import torch

from itemsampling.data import load_dataset
from itemsampling.models._torch import resolve_num_threads
from itemsampling.models.registry import make_model

DATASET = "ml-100k"
MODELS = ("neumf", "multivae")
#: setting name -> value of the num_threads hyper-parameter
SETTINGS = {"fixed-2": 2, "default": None}
CONDITIONS = ("alone", "busy")


def spin(started, stop) -> None:
    """Keep one core busy with single-threaded numpy work until ``stop`` is set."""
    x = np.random.default_rng(0).random(100_000)
    started.set()
    while not stop.is_set():
        x = np.sin(x) + 1.0


class BusyProcess:
    """Context manager running :func:`spin` in a child process (spawned, so no torch state)."""

    def __enter__(self) -> BusyProcess:
        context = mp.get_context("spawn")
        self._started, self._stop = context.Event(), context.Event()
        self._process = context.Process(target=spin, args=(self._started, self._stop), daemon=True)
        self._process.start()
        if not self._started.wait(timeout=60):
            raise RuntimeError("the busy process did not start")
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._process.join(timeout=10)


def fit_seconds(name: str, epochs: int, num_threads: int | None, train, seed: int) -> float:
    """Wall time of one fit of model ``name`` with ``epochs`` epochs and ``num_threads``."""
    model = make_model(name, DATASET, {"n_epochs": epochs, "num_threads": num_threads})
    start = time.perf_counter()
    model.fit(train, seed=seed, progress=False)
    return time.perf_counter() - start


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--neumf-epochs", type=int, default=2, help="NeuMF epochs (registry: 10)")
    parser.add_argument("--multivae-epochs", type=int, default=5, help="Mult-VAE epochs (registry: 30)")
    parser.add_argument("--repeats", type=int, default=1, help="fits per cell; the minimum is reported")
    parser.add_argument("--seed", type=int, default=0, help="seed of every fit")
    parser.add_argument("--quick", action="store_true", help="one epoch of each model")
    args = parser.parse_args()
    if args.quick:
        args.neumf_epochs = args.multivae_epochs = 1
    epochs = {"neumf": args.neumf_epochs, "multivae": args.multivae_epochs}

    train = load_dataset(DATASET).train
    print(f"# python {platform.python_version()}, torch {torch.__version__}, "
          f"cores: os.cpu_count()={os.cpu_count()}, affinity={len(os.sched_getaffinity(0))}")
    print(f"# {DATASET}: {train.shape[0]} users x {train.shape[1]} items, {train.nnz} interactions; "
          f"epochs: {epochs}; OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    print("# threads used: " + ", ".join(f"{s}={resolve_num_threads(v)}" for s, v in SETTINGS.items()))
    print("# load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for name in MODELS:  # warm-up (lazy initialisation of torch kernels), not timed
        fit_seconds(name, 1, 1, train, args.seed)

    # interleaved, so that a change of the background load hits every cell alike
    times: dict[tuple[str, str, str], float] = {}
    loads: dict[tuple[str, str, str], float] = {}
    for _ in range(args.repeats):
        for name in MODELS:
            for condition in CONDITIONS:
                with BusyProcess() if condition == "busy" else nullcontext():
                    for setting, num_threads in SETTINGS.items():
                        key = (name, condition, setting)
                        load = os.getloadavg()[0]
                        t = fit_seconds(name, epochs[name], num_threads, train, args.seed)
                        if t < times.get(key, np.inf):
                            times[key], loads[key] = t, load
    print("# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print()
    print(markdown(
        ["model", "epochs", "condition", "setting", "threads", "fit_s", "load_1min"],
        [[name, str(epochs[name]), condition, setting, str(resolve_num_threads(SETTINGS[setting])),
          f"{times[name, condition, setting]:.2f}", f"{loads[name, condition, setting]:.2f}"]
         for name in MODELS for condition in CONDITIONS for setting in SETTINGS],
    ))
    print()
    print(markdown(
        ["model", "fixed-2/default alone", "fixed-2/default busy", "busy/alone fixed-2", "busy/alone default"],
        [[name,
          *(f"{times[name, c, 'fixed-2'] / times[name, c, 'default']:.2f}" for c in CONDITIONS),
          *(f"{times[name, 'busy', s] / times[name, 'alone', s]:.2f}" for s in SETTINGS)]
         for name in MODELS],
    ))


if __name__ == "__main__":
    main()
