"""``itemsampling study``: compute one study's runs and tables (used by the workflow).

    itemsampling study chunk  --study sampled_metrics --config CONFIG.json --seed S \\
        --dataset D --model M --protocol P --output results/runs/01_sampled_metrics/D/M/P.parquet
    itemsampling study tables --study sampled_metrics --config CONFIG.json --seed S \\
        --runs RUN.parquet ... --tables NAME ... --out-dir results/tables/01_sampled_metrics
    itemsampling study notebook --notebook notebooks/N.ipynb --parameters PARAMETERS.json \\
        --output results/notebooks/N.ipynb
    itemsampling study datasets --dataset D ... --output results/tables/00_data_and_models/datasets.csv
    itemsampling study provenance --output results/provenance.json
    itemsampling study verdicts --notebooks NOTEBOOKS.json --out-dir results/tables

A study is a module of :mod:`itemsampling_study` that keeps the contract of
:mod:`~itemsampling_study.contract`: ``study_config``, ``chunks``, ``inputs`` and
``study_tables`` (:class:`~itemsampling_study.contract.Study`, checked when it is loaded),
and ``chunk_table`` when it has chunks (:class:`~itemsampling_study.contract.ChunkedStudy`).
``--config`` is a JSON file of the study's parameters (what ``study_config`` returns for the
workflow configuration; the workflow writes it to ``results/configs/studies/<study>.json``). A
chunk is named by its dataset, model and protocol, and by ``--part`` when the study runs several
parts on one ranks file (e.g. one per sample size). A study with millions of
runs sets ``CATEGORICAL_RUNS = True`` (:class:`~itemsampling_study.contract.CategoricalRunsStudy`):
``tables`` then reads its chunks with text columns as categoricals
(:func:`~itemsampling_study.tables.read_runs`).

``tables`` also writes the step's record, ``<study>.record.json`` beside the tables
(:mod:`~itemsampling_study.records`). ``--config`` is read with its keys sorted, so the rows
come in the same order however the caller ordered them.

``notebook`` executes a notebook with papermill and writes it without wall-clock times
(:mod:`~itemsampling_study.notebook_execution`), so that a rerun with the same tables writes
the same file.

``verdicts`` writes ``verdicts.csv``, one verdict per claim of the papers that a notebook tests,
computed from the notebooks' tables (:mod:`~itemsampling_study.verdicts`), and its record.
``--notebooks`` is a JSON file that maps each notebook to its study, in reading order.

``provenance`` records what computes the study on this machine: BLAS library, kernels and
threads, package versions (:func:`~itemsampling.provenance.machine_record`).

The chunk and tables steps compute with one BLAS thread, whatever the machine: multithreaded BLAS adds in
another order, and the ill-conditioned least squares of the CLS correction then changes in the
eighth digit, so the tables would depend on the number of cores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from threadpoolctl import threadpool_limits

from itemsampling._validation import check_seed
from itemsampling.commands._common import check_output_dir, check_output_file, plain_text

from .contract import CategoricalRunsStudy, ChunkedStudy, check_study
from .engine import LABELS
from .records import canonical_config, record_path, write_record
from .registry import load_study
from .tables import read_model_ranks, read_runs, write_table

__all__ = ["register"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("study", help="compute the runs and tables of one study",
                                   description=plain_text(__doc__),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    for step, help_text in (("chunk", "repeated sampling and estimation on one ranks file"),
                            ("tables", "every table of the study, from its chunks and ranks")):
        sub = steps.add_parser(step, help=help_text, description=help_text)
        sub.add_argument("--study", required=True, help="module of itemsampling_study, e.g. sampled_metrics")
        sub.add_argument("--config", type=Path, required=True, help="JSON file of the study's parameters")
        sub.add_argument("--seed", type=int, required=True, help="study seed (integer >= 0)")
        sub.add_argument("--root", type=Path, default=Path("."), help="folder that holds results/ (default .)")
        if step == "chunk":
            for label in LABELS:
                sub.add_argument(f"--{label}", required=True)
            sub.add_argument("--part", help="part of the study on this ranks file (studies whose chunks have one)")
            sub.add_argument("--output", type=Path, required=True,
                             help="parquet file of the runs (overwritten if it exists)")
            sub.set_defaults(func=_chunk)
        else:
            sub.add_argument("--runs", type=Path, nargs="*", default=[], help="the chunks' parquet files")
            sub.add_argument("--tables", nargs="+", required=True,
                             help="names of the tables the study must write (checked)")
            sub.add_argument("--out-dir", type=Path, required=True,
                             help="folder of the CSV tables (existing tables are overwritten)")
            sub.set_defaults(func=_tables)
    sub = steps.add_parser("notebook", help="execute a notebook with papermill and write it without times",
                           description="execute a notebook with papermill and write it without times "
                                       "(itemsampling_study.notebook_execution)")
    sub.add_argument("--notebook", type=Path, required=True, help="the notebook to execute, e.g. notebooks/00_x.ipynb")
    sub.add_argument("--parameters", type=Path, required=True, help="JSON file of its parameters")
    sub.add_argument("--root", type=Path, default=Path("."), help="folder that holds results/ (default .)")
    sub.add_argument("--output", type=Path, required=True, help="the executed notebook (overwritten if it exists)")
    sub.set_defaults(func=_notebook)
    sub = steps.add_parser("datasets", help="interactions, users, items and density of the study's datasets",
                           description="interactions, users, items and density of the study's datasets, "
                                       "written as a table with its record")
    sub.add_argument("--dataset", action="append", required=True, metavar="NAME",
                     help="dataset to include (repeatable)")
    sub.add_argument("--output", type=Path, required=True, help="CSV file (overwritten if it exists)")
    sub.set_defaults(func=_datasets)
    sub = steps.add_parser("provenance", help="record the BLAS kernels, threads and package versions of this machine",
                           description="record the BLAS kernels, threads and package versions of this machine")
    sub.add_argument("--output", type=Path, required=True, help="JSON file (overwritten if it exists)")
    sub.set_defaults(func=_provenance)
    sub = steps.add_parser("verdicts", help="one verdict per claim of the papers, from the notebooks' tables",
                           description="one verdict per claim of the papers, from the notebooks' tables "
                                       "(itemsampling_study.verdicts)")
    sub.add_argument("--notebooks", type=Path, required=True,
                     help='JSON file of an object notebook -> study, in reading order, '
                          'e.g. {"01_sampled_metrics": "sampled_metrics"}')
    sub.add_argument("--root", type=Path, default=Path("."), help="folder that holds results/ (default .)")
    sub.add_argument("--out-dir", type=Path, required=True, help="folder of verdicts.csv (overwritten if it exists)")
    sub.set_defaults(func=_verdicts)


def _notebook(args) -> int:
    from .notebook_execution import execute_notebook

    check_output_file(str(args.output))
    if not args.notebook.is_file():
        raise FileNotFoundError(f"--notebook {str(args.notebook)!r} does not exist")
    parameters = _json_object(args.parameters, "--parameters", "the notebook's parameters")
    execute_notebook(args.notebook, args.output, parameters, args.root)
    return 0


def _datasets(args) -> int:
    from itemsampling.commands.data import dataset_table

    check_output_file(str(args.output))
    table, names = dataset_table(args.dataset)
    written = write_table(table, args.output)
    write_record(record_path(written.parent, written.stem), step="study datasets", config={"datasets": names},
                 seed=None, tables=[written])
    print(f"wrote {len(table)} dataset(s) to {args.output}")
    return 0


def _provenance(args) -> int:
    from itemsampling.provenance import machine_record

    check_output_file(str(args.output))
    tmp = args.output.with_name(f".{args.output.name}.tmp")
    tmp.write_text(json.dumps(machine_record(), indent=2) + "\n")
    tmp.replace(args.output)
    return 0


def _json_object(path: Path, option: str, what: str) -> dict:
    """The JSON object in the file ``path`` given to ``option``; the errors name the option and
    what the object holds."""
    if not path.is_file():
        raise FileNotFoundError(f"{option} {str(path)!r} does not exist")
    try:
        value = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option} {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{option} must be a JSON object of {what}")
    return value


def _config(args) -> dict:
    config = canonical_config(_json_object(args.config, "--config", "the study's parameters"))
    check_seed(args.seed)
    return config


def _chunk(args) -> int:
    check_output_file(str(args.output))
    study, config = check_study(load_study(args.study), ChunkedStudy), _config(args)
    labels = {label: getattr(args, label) for label in LABELS}
    if args.part is not None:
        labels["part"] = args.part
    if labels not in study.chunks(config):
        raise ValueError(f"{labels} is not a chunk of study {args.study!r}; its chunks: {study.chunks(config)}")
    ranks = read_model_ranks(labels["dataset"], labels["model"], labels["protocol"], args.root)
    with threadpool_limits(1, user_api="blas"):
        table = study.chunk_table(config, args.seed, labels, ranks)
    tmp = args.output.with_name(f".{args.output.name}.tmp")
    table.to_parquet(tmp, engine="pyarrow", index=False)
    tmp.replace(args.output)
    return 0


def _tables(args) -> int:
    check_output_dir(str(args.out_dir))
    study, config = load_study(args.study), _config(args)
    categorical = isinstance(study, CategoricalRunsStudy) and study.CATEGORICAL_RUNS
    runs = read_runs(args.runs, categorical=categorical) if args.runs else None
    with threadpool_limits(1, user_api="blas"):
        tables = study.study_tables(config, args.seed, runs, args.root)
    expected, made = set(args.tables), set(tables)
    if expected != made:
        raise ValueError(f"study {args.study!r} makes the tables {sorted(made)}, but the workflow lists "
                         f"{sorted(expected)}: update workflow/notebooks.yaml")
    written = [write_table(tables[name], args.out_dir / f"{name}.csv") for name in args.tables]
    write_record(record_path(args.out_dir, args.study), step=f"study tables --study {args.study}", config=config,
                 seed=args.seed, tables=written)
    return 0


def _verdicts(args) -> int:
    from .verdicts import CHECKS_PATH, VERDICTS_PATH, verdict_tables

    check_output_dir(str(args.out_dir))
    notebooks = _json_object(args.notebooks, "--notebooks", "each notebook's study")
    if not all(isinstance(v, str) for v in notebooks.values()):
        raise ValueError("--notebooks must be a JSON object of each notebook's study")
    claims, checks = verdict_tables(notebooks, args.root)
    paths = [write_table(claims, args.out_dir / VERDICTS_PATH.name), write_table(checks, args.out_dir / CHECKS_PATH.name)]
    write_record(record_path(args.out_dir, "verdicts"), step="study verdicts", config={"notebooks": notebooks},
                 seed=None, tables=paths)
    return 0
