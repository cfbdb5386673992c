# Helpers shared by the workflow files. Everything about the notebooks comes from one list,
# workflow/notebooks.yaml; the protocols from the package (itemsampling.ranks.PROTOCOLS).
import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

import pandas as pd

from itemsampling.studies.registry import load_study, notebook_parameters as study_notebook_parameters
from itemsampling.data import default_registry
from itemsampling.models.registry import check_hyperparameters
from itemsampling.ranks import PROTOCOLS
from itemsampling.studies.contract import check_sample_sizes as check_study_sample_sizes
from itemsampling.studies.records import record_path
from itemsampling.studies.tables import chunk_path, ranks_path, table_path
from itemsampling.studies.verdicts import CHECKS_PATH, VERDICTS_PATH, read_verdicts, report_summary

#: the repository root (where the Snakefile lives); sources are read from here, outputs are
#: written relative to the working directory (the same folder unless --directory is given)
ROOT = Path(workflow.basedir)
#: the notebooks, their studies, tables and figures
NOTEBOOKS = yaml.safe_load((ROOT / "workflow" / "notebooks.yaml").read_text())

# Shell commands (itemsampling, papermill, jupyter) come from the environment that runs
# Snakemake, even when it is not activated (e.g. `.venv/bin/snakemake`). Rules have no per-rule
# conda environments: every rule runs in that one environment (.venv or environment.yml).
os.environ.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
#: the start of every shell command that computes: BLAS and OpenMP get the threads of the job,
#: not a thread per core of the machine (see workflow/rules/studies.smk)
BLAS_THREADS = "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "

_PACKAGE_DIR = ROOT / "src" / "itemsampling"
#: the whole package: a study or a notebook reruns when any of it changes
PACKAGE = sorted(str(p) for p in _PACKAGE_DIR.rglob("*") if p.suffix in (".py", ".csv"))
#: the one input that stands for PACKAGE in the study and notebook rules (rule package_source
#: writes the SHA-256 of every file): Snakemake checks every input of every waiting job each
#: time it schedules, and with the whole package as an input of each of the 125 chunks of
#: notebooks 04-05 the scheduler alone kept a third of a core busy
PACKAGE_SOURCE = "results/package_source.sha256"
#: what computed the study (rule provenance), shown on the report's front page
PROVENANCE = "results/provenance.json"
#: one verdict per claim of the papers (rule verdicts), read by every notebook
VERDICTS = VERDICTS_PATH.as_posix()
#: our own checks beside them (rule verdicts), shown apart from the papers' claims
CHECKS_TABLE = CHECKS_PATH.as_posix()
#: the code that determines the global ranks (data, models, ranking, the train command)
RANKS_CODE = sorted(
    str(p) for p in PACKAGE
    if Path(p).relative_to(_PACKAGE_DIR).parts[0] in ("data", "models", "ranks.py", "candidate_sampling.py",
                                                      "_validation.py")
    or p.endswith(os.path.join("commands", "train.py"))
)


def write_package_source(sources, path):
    """Write `<sha256>  <path relative to the repository>` for every source file (rule package_source)."""
    lines = [f"{hashlib.sha256(Path(src).read_bytes()).hexdigest()}  {Path(src).relative_to(ROOT)}\n" for src in sources]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(lines))


def check_config(cfg):
    """Cross-field checks that the schema cannot express; raise ValueError naming the key. They
    read no data (the dataset registry, data/registry.json, is part of the repository), so every
    parse of the workflow runs them; the sample sizes, checked against the ranks, are checked when
    the jobs are planned (get_study_inputs, get_chunk_ranks)."""
    registry = default_registry()
    for dataset in cfg["train"]:
        registry.dataset(dataset)  # ValueError listing the registered datasets
    for model, values in cfg["models"].items():
        _checked(f"models.{model}", check_hyperparameters, model, values)
    for dataset, per_model in cfg["hyperparameters"].items():
        for model, values in per_model.items():
            _checked(f"hyperparameters.{dataset}.{model}", check_hyperparameters, model, values)
    for dataset, per_model in cfg["hyperparameters"].items():
        unknown = sorted(set(per_model) - set(cfg["train"].get(dataset, [])))
        if unknown:
            raise ValueError(
                f"config hyperparameters.{dataset} names models {unknown} that are not trained on it "
                f"(train.{dataset}: {cfg['train'].get(dataset, [])})"
            )
    for dataset, models in cfg["train"].items():
        unknown = sorted(set(models) - set(cfg["models"]))
        if unknown:
            raise ValueError(
                f"config train.{dataset} names models {unknown} that are not in `models` "
                f"(known: {sorted(cfg['models'])})"
            )
    for notebook in NOTEBOOKS:
        for chunk in study(notebook).chunks(study_config(notebook)):
            if chunk["model"] not in cfg["train"].get(chunk["dataset"], []):
                raise ValueError(
                    f"notebook {notebook} needs the ranks of model {chunk['model']!r} on dataset "
                    f"{chunk['dataset']!r}; add it to train.{chunk['dataset']}"
                )
    live = LIVE_STUDY.study_config(cfg)
    untrained = sorted(set(live["models"]) - set(cfg["train"].get(live["dataset"], [])))
    if untrained:
        raise ValueError(
            f"config adaptive_sampling.live evaluates models {untrained} that are not trained on "
            f"{live['dataset']!r}; add them to train.{live['dataset']}"
        )


def _checked(key, check, *args):
    """Run a package check; its ValueError names the config key."""
    try:
        check(*args)
    except ValueError as exc:
        raise ValueError(f"config {key}: {exc}") from None


@functools.cache
def smallest_candidates(dataset, protocol):
    """The smallest N_u of a dataset under a protocol, read from any ranks file of it that
    exists (N_u does not depend on the model; read once per run of Snakemake, whichever studies
    ask); None before any model is trained on it."""
    for path in sorted(Path("results", "ranks", dataset).glob(f"*/{protocol}.parquet")):
        return int(pd.read_parquet(path, columns=["n_candidates"])["n_candidates"].min())
    return None


def check_sample_sizes(name, studied, study_cfg):
    """Every sample size of a study fits the candidates of its ranks (1 <= n <= min N_u), checked
    against the ranks already there, so that a dry run rejects what the run would reject
    (:func:`itemsampling.studies.contract.check_sample_sizes`; ``name`` names the study in the message).
    Called by the input functions of the steps that read the ranks, when Snakemake plans the jobs:
    parsing the workflow (--list-rules, --lint) reads no ranks."""
    check_study_sample_sizes(name, studied, study_cfg, smallest_candidates)


#: the live evaluation of notebook 05, a study without chunks whose tables (made by the rule
#: live_evaluation) are inputs of a notebook
LIVE_STUDY = load_study("live_evaluation")
#: the sensitivity step of notebook 05 (rule adaptive_sensitivity), likewise without chunks
SENSITIVITY_STUDY = load_study("adaptive_sensitivity")


def study(notebook):
    """The study module (itemsampling.studies.<study>) of a notebook."""
    return load_study(NOTEBOOKS[notebook]["study"])


def study_config(notebook):
    """The parameters of a notebook's study (and of the notebook), from the config."""
    return study(notebook).study_config(config)


def study_config_json(notebook):
    return json.dumps(study_config(notebook), sort_keys=True)


def get_study_inputs(name, studied, study_cfg):
    """The input function of the step that writes a study's tables: the files they are computed
    from (ancient: see workflow/rules/ranks.smk), once the study's sample sizes fit the ranks
    already there (check_sample_sizes; ``name`` names the study's section of the config)."""

    def get_inputs(wildcards):
        check_sample_sizes(name, studied, study_cfg)
        return [ancient(path) for path in studied.inputs(study_cfg)]

    return get_inputs


def get_chunk_ranks(wildcards):
    """The input function of study_chunk's ranks: the ranks file of a chunk (ancient), once the
    sample sizes of the notebook's study fit the ranks already there (check_sample_sizes)."""
    notebook = wildcards.notebook
    check_sample_sizes(NOTEBOOKS[notebook]["study"], study(notebook), study_config(notebook))
    return ancient(ranks_file(wildcards.dataset, wildcards.model, chunk_protocol(wildcards.chunk)))


check_config(config)

DATASETS = sorted(config["train"])
#: the notebook whose folder holds the dataset summary of rule dataset_summary
DATA_NOTEBOOK = next(nb for nb, spec in NOTEBOOKS.items() if "datasets" in spec.get("inputs", []))
#: the tables of rule live_evaluation, and the notebook whose folder holds them
LIVE_TABLES = ["live_evaluation", "live_times"]
LIVE_NOTEBOOK = next(nb for nb, spec in NOTEBOOKS.items() if set(LIVE_TABLES) <= set(spec.get("inputs", [])))
LIVE = LIVE_STUDY.study_config(config)
#: the tables of rule adaptive_sensitivity, and the notebook whose folder holds them
SENSITIVITY_TABLES = list(SENSITIVITY_STUDY.SENSITIVITY_TABLES)
SENSITIVITY_NOTEBOOK = next(nb for nb, spec in NOTEBOOKS.items()
                            if set(SENSITIVITY_TABLES) <= set(spec.get("inputs", [])))
SENSITIVITY = SENSITIVITY_STUDY.study_config(config)
#: the checks of notebook 04, studies without chunks whose one table each (named after the study and
#: its rule) is an input of a notebook
CHECKS = ["wmle_readings", "mn_users"]
CHECKS_NOTEBOOK = next(nb for nb, spec in NOTEBOOKS.items() if set(CHECKS) <= set(spec.get("inputs", [])))
PAIRS = sorted((d, m) for d, models in config["train"].items() for m in models)


def notebook_source(name):
    return str(ROOT / "notebooks" / f"{name}.ipynb")


def ranks_file(dataset, model, protocol):
    return str(ranks_path(dataset, model, protocol))


def train_info(dataset, model):
    return f"results/ranks/{dataset}/{model}/train.json"


def table(notebook, name):
    return str(table_path(notebook, name))


def record(notebook, step):
    """The record of the step that writes tables into a notebook's folder (itemsampling.studies.records)."""
    return str(record_path(Path("results", "tables", notebook), step))


def hyperparameters(dataset, model):
    """The hyperparameters of a model on a dataset: `models`, updated by `hyperparameters`."""
    return {**config["models"][model], **config["hyperparameters"].get(dataset, {}).get(model, {})}


def set_options(dataset, model):
    """``--set key=value`` options of `itemsampling train` for the hyperparameters in the config."""

    def text(value):
        return str(value).lower() if isinstance(value, bool) or value is None else str(value)

    return " ".join(f"--set {key}={text(value)}" for key, value in sorted(hyperparameters(dataset, model).items()))


def chunk_files(notebook):
    """The run files of a notebook's study: one per chunk (dataset, model, protocol[, part])."""
    return [str(chunk_path(notebook, c)) for c in study(notebook).chunks(study_config(notebook))]


#: the {chunk} wildcard of a run file: "<protocol>" or "<protocol>/<part>"
CHUNK_PATTERN = f"({'|'.join(PROTOCOLS)})(/[^/]+)?"


def chunk_protocol(chunk):
    return chunk.partition("/")[0]


def chunk_options(chunk):
    """--protocol (and --part) of `itemsampling study chunk` for a {chunk} wildcard."""
    protocol, _, part = chunk.partition("/")
    return f"--protocol {protocol}" + (f" --part {part}" if part else "")


def notebook_tables(notebook):
    return [table(notebook, name) for name in NOTEBOOKS[notebook]["tables"]]


def figures(notebook):
    """(file stem, caption name) of every figure of a notebook."""
    out = []
    for figure in NOTEBOOKS[notebook]["figures"]:
        if figure.get("per") == "dataset":
            out.extend((f"{figure['name']}_{d}", figure["name"]) for d in study_config(notebook)["datasets"])
        else:
            out.append((figure["name"], figure["name"]))
    return out


def figure_pdfs(notebook):
    return [f"figures/{notebook}/{name}.pdf" for name, _ in figures(notebook)]


def report_figures(notebook):
    """PNG outputs wrapped for `snakemake --report`, each with its caption file."""
    out = []
    for name, caption in figures(notebook):
        subcategory = name.removeprefix(f"{caption}_") if caption != name else None
        caption_file = ROOT / "workflow" / "report" / notebook / f"{caption}.rst"
        png = f"figures/{notebook}/{name}.png"
        out.append(report(png, caption=str(caption_file), category=notebook, subcategory=subcategory))
    return out


def notebook_parameters(notebook):
    """Papermill parameters of a notebook, as a JSON string (JSON is valid YAML)."""
    return json.dumps(study_notebook_parameters(NOTEBOOKS[notebook]["study"], config, "."), sort_keys=True)


def git_commit():
    """The commit of the repository, marked when the working tree has uncommitted changes."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit} (with uncommitted changes)" if dirty else commit


def report_front_page():
    """What workflow/report/workflow.rst shows: the commit, the notebooks and, for each, its
    study's parameters as ``key: value`` lines, the machine of results/provenance.json and the
    verdicts."""
    parameters = {
        notebook: [f"{key}: {json.dumps(value)}" for key, value in sorted(study_config(notebook).items())]
        for notebook in NOTEBOOKS
    }
    path = Path(PROVENANCE)
    machine = json.loads(path.read_text()) if path.is_file() else None
    verdicts = report_summary(read_verdicts(".")) if Path(VERDICTS).is_file() else None
    return {"commit": git_commit(), "notebooks": {nb: spec["title"] for nb, spec in NOTEBOOKS.items()},
            "parameters": parameters, "machine": machine, "verdicts": verdicts}


class ReportFrontPage(dict):
    """report_front_page(), computed when the report reads it: only `snakemake --report` runs git
    and reads the results. Snakemake renders workflow/report/workflow.rst from ``config`` and tells
    the workflow, when it is parsed, nothing of a report to come; a dry run or a job on a cluster
    parses the workflow too, and finds this dict empty."""

    def __missing__(self, key):
        if self:
            raise KeyError(key)
        self.update(report_front_page())
        return self[key]


def report_tables(notebook):
    """The tables of a notebook, those listed in report_tables wrapped for `snakemake --report`."""
    shown = NOTEBOOKS[notebook].get("report_tables", [])
    out = []
    for name in NOTEBOOKS[notebook]["tables"]:
        path = table(notebook, name)
        if name in shown:
            caption = ROOT / "workflow" / "report" / notebook / f"{name}.rst"
            path = report(path, caption=str(caption), category=notebook, subcategory="tables")
        out.append(path)
    return out


def all_targets():
    targets = [f"results/notebooks/{nb}.{ext}" for nb in NOTEBOOKS for ext in ("ipynb", "html")]
    targets.append(PROVENANCE)
    targets += [VERDICTS, CHECKS_TABLE]
    targets += [t for nb in NOTEBOOKS for t in notebook_tables(nb)]
    targets += [table(nb, name) for nb in NOTEBOOKS for name in NOTEBOOKS[nb].get("inputs", [])]
    targets.append(record(DATA_NOTEBOOK, "datasets"))  # so that a fresh clone checks its data
    return targets
