# Helpers shared by the workflow files. Everything about the notebooks comes from one list,
# workflow/notebooks.yaml; the protocols from the package (itemsampling.ranks.PROTOCOLS).
import collections
import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

import pandas as pd

from itemsampling_study.registry import load_study, notebook_parameters as study_notebook_parameters
from itemsampling.data import default_registry
from itemsampling.models.registry import check_hyperparameters
from itemsampling.ranks import PROTOCOLS
from itemsampling_study.contract import check_sample_sizes as check_study_sample_sizes
from itemsampling_study.records import canonical_config, record_path
from itemsampling_study.tables import chunk_path, ranks_path, table_path
from itemsampling_study.verdicts import CHECKS_PATH, VERDICTS_PATH, read_verdicts, report_summary

#: the repository root (where the Snakefile lives); sources are read from here, outputs are
#: written relative to the working directory (the same folder unless --directory is given)
ROOT = Path(workflow.basedir)
#: the notebooks, their studies, tables and figures
NOTEBOOKS = yaml.safe_load((ROOT / "workflow" / "notebooks.yaml").read_text())


#: the step that writes a study's tables (`itemsampling study tables`): the study (module of
#: itemsampling_study), the notebook whose folder, results/tables/<notebook>/, holds its tables,
#: their names and the name of its rule
StudyStep = collections.namedtuple("StudyStep", ["study", "notebook", "tables", "rule"])


def _study_steps():
    """Every study of workflow/notebooks.yaml, by name: each notebook's own study (`study`, rule
    tables_<notebook>, which reads the study's chunks), then the further studies it reads
    (`studies`: no chunks, each rule named after its study)."""
    steps = {}
    for notebook, spec in NOTEBOOKS.items():
        steps[spec["study"]] = StudyStep(spec["study"], notebook, spec["tables"], f"tables_{notebook}")
        for name, tables in spec.get("studies", {}).items():
            steps[name] = StudyStep(name, notebook, tables, name)
    return steps


#: the step of every study, by study name (workflow/rules/studies.smk makes a rule of each)
STUDY_STEPS = _study_steps()

# Shell commands (itemsampling, papermill, jupyter) come from the environment that runs
# Snakemake, even when it is not activated (e.g. `.venv/bin/snakemake`). Rules have no per-rule
# conda environments: every rule runs in that one environment (.venv or environment.yml).
os.environ.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
#: the start of every shell command that computes: BLAS and OpenMP get the threads of the job,
#: not a thread per core of the machine (see workflow/rules/studies.smk)
BLAS_THREADS = "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "

_PACKAGE_DIR = ROOT / "src" / "itemsampling"
#: both packages, the estimators and the compendium: a study or a notebook reruns when any of them changes
PACKAGE = sorted(str(p) for package in (_PACKAGE_DIR, ROOT / "src" / "itemsampling_study")
                 for p in package.rglob("*") if p.suffix in (".py", ".csv"))
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
    str(p) for p in PACKAGE if Path(p).is_relative_to(_PACKAGE_DIR)
    and Path(p).relative_to(_PACKAGE_DIR).parts[0] in ("data", "models", "ranks.py", "candidate_sampling.py",
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
    for dataset, models in cfg["ratio_split"]["train"].items():
        unknown = sorted(set(models) - set(cfg["train"].get(dataset, [])))
        if unknown:
            raise ValueError(
                f"config ratio_split.train.{dataset} names models {unknown} that are not trained on it "
                f"(train.{dataset}: {cfg['train'].get(dataset, [])}); their hyperparameters come from there"
            )
    for step in STUDY_STEPS.values():
        studied = load_study(step.study)
        study_cfg = studied.study_config(cfg)
        chunks = studied.chunks(study_cfg)
        if chunks and step.study != NOTEBOOKS[step.notebook]["study"]:
            raise ValueError(f"workflow/notebooks.yaml: study {step.study} of notebook {step.notebook} has chunks; "
                             f"only a notebook's own study (its `study`) may have chunks")
        # the (dataset, model) of every ranks file it reads: results/ranks/<dataset>/<model>/...
        ranks = {(chunk["dataset"], chunk["model"]) for chunk in chunks}
        inputs = [Path(p).parts for p in studied.inputs(study_cfg) if Path(p).parts[:2] == ("results", "ranks")]
        ratio = [parts for parts in inputs if len(parts) > 4 and parts[3] == "ratio"]
        ranks |= {parts[2:4] for parts in inputs if parts not in ratio}
        for dataset, model in sorted({(parts[2], Path(parts[4]).stem) for parts in ratio}):
            if model not in cfg["ratio_split"]["train"].get(dataset, []):
                raise ValueError(
                    f"study {step.study} of notebook {step.notebook} needs the ratio-split ranks of model "
                    f"{model!r} on dataset {dataset!r}; add it to ratio_split.train.{dataset}"
                )
        for dataset, model in sorted(ranks):
            if model not in cfg["train"].get(dataset, []):
                raise ValueError(
                    f"study {step.study} of notebook {step.notebook} needs the ranks of model {model!r} on "
                    f"dataset {dataset!r}; add it to train.{dataset}"
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
    (:func:`itemsampling_study.contract.check_sample_sizes`; ``name`` names the study in the message).
    Called by the input functions of the steps that read the ranks, when Snakemake plans the jobs:
    parsing the workflow (--list-rules, --lint) reads no ranks."""
    check_study_sample_sizes(name, studied, study_cfg, smallest_candidates)


def study(notebook):
    """The study module (itemsampling_study.<study>) of a notebook."""
    return load_study(NOTEBOOKS[notebook]["study"])


def study_parameters(name):
    """The parameters of the study ``name``, picked out of the config by its study_config()."""
    return load_study(name).study_config(config)


def study_config(notebook):
    """The parameters of a notebook's study (and of the notebook), from the config."""
    return study_parameters(NOTEBOOKS[notebook]["study"])


def get_study_inputs(name):
    """The input function of the step that writes the tables of the study ``name``: the files they
    are computed from (ancient: see workflow/rules/ranks.smk), once the study's sample sizes fit
    the ranks already there (check_sample_sizes)."""

    def get_inputs(wildcards):
        studied, study_cfg = load_study(name), study_parameters(name)
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
PAIRS = sorted((d, m) for d, models in config["train"].items() for m in models)

#: what each job that reads a configuration finds in its configuration file (job_config), rather
#: than as JSON on its shell line: the parameters of every study (`itemsampling study chunk` and
#: `study tables --config`), the papermill parameters of every notebook (`study notebook
#: --parameters`), both with every mapping's keys sorted, so that the order of the config's keys
#: reruns nothing, and the study of every notebook in reading order (`study verdicts --notebooks`)
JOB_CONFIGS = {
    **{f"studies/{name}": canonical_config(study_parameters(name)) for name in STUDY_STEPS},
    **{f"notebooks/{nb}": study_notebook_parameters(spec["study"], config, ".") for nb, spec in NOTEBOOKS.items()},
    "verdicts": {nb: spec["study"] for nb, spec in NOTEBOOKS.items()},
}


def job_config(name):
    """The configuration file of a job, results/configs/<name>.json (JOB_CONFIGS)."""
    return f"results/configs/{name}.json"


def write_job_configs():
    """Write every configuration file of JOB_CONFIGS that is missing or holds other content, when
    the workflow is parsed (a dry run too): a file always holds the config Snakemake was given,
    however it was started (--rerun-triggers, .snakemake/ deleted), and it changes only when its
    content does, so that its date reruns exactly the jobs that read it."""
    for name, value in JOB_CONFIGS.items():
        path, text = Path(job_config(name)), json.dumps(value, indent=1) + "\n"
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


write_job_configs()


def notebook_source(name):
    return str(ROOT / "notebooks" / f"{name}.ipynb")


def ranks_file(dataset, model, protocol):
    return str(ranks_path(dataset, model, protocol))


def train_info(dataset, model):
    return f"results/ranks/{dataset}/{model}/train.json"


def profile_file(dataset, model):
    """The popularity profile of a model's unseen ranks (rule popularity_profile)."""
    return f"results/ranks/{dataset}/{model}/popularity_profile.parquet"


def ratio_ranks_file(dataset, model):
    """The ranks of every held-out item of the ratio split (`itemsampling train --split ratio`)."""
    return f"results/ranks/{dataset}/ratio/{model}.parquet"


def ratio_info(dataset, model):
    return f"results/ranks/{dataset}/ratio/{model}.json"


#: every ratio-split ranks file of the config
RATIO_RANKS = [ratio_ranks_file(d, m) for d, models in sorted(config["ratio_split"]["train"].items()) for m in models]


def table(notebook, name):
    return str(table_path(notebook, name))


def record(notebook, step):
    """The record of the step that writes tables into a notebook's folder (itemsampling_study.records)."""
    return str(record_path(Path("results", "tables", notebook), step))


def hyperparameters(dataset, model):
    """The hyperparameters of a model on a dataset: `models`, updated by `hyperparameters`."""
    return {**config["models"][model], **config["hyperparameters"].get(dataset, {}).get(model, {})}


def set_options(dataset, model):
    """``--set key=value`` options of `itemsampling train` for the hyperparameters in the config."""

    def text(value):
        return str(value).lower() if isinstance(value, bool) or value is None else str(value)

    return " ".join(f"--set {key}={text(value)}" for key, value in sorted(hyperparameters(dataset, model).items()))


def chunk_files(step):
    """The run files of a study step: one per chunk (dataset, model, protocol[, part]); none for a
    study without chunks."""
    return [str(chunk_path(step.notebook, c)) for c in load_study(step.study).chunks(study_parameters(step.study))]


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


def read_tables(notebook):
    """The tables of a notebook's folder that other steps write for it: those of its further
    studies (`studies`) and its `inputs`."""
    names = [name for tables in NOTEBOOKS[notebook].get("studies", {}).values() for name in tables]
    return [table(notebook, name) for name in [*names, *NOTEBOOKS[notebook].get("inputs", [])]]


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


def report_tables(notebook, names):
    """The tables ``names`` of a notebook's folder, those listed in its report_tables wrapped for
    `snakemake --report`."""
    shown = NOTEBOOKS[notebook].get("report_tables", [])
    out = []
    for name in names:
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
    targets += [t for nb in NOTEBOOKS for t in read_tables(nb)]
    targets.append(record(DATA_NOTEBOOK, "datasets"))  # so that a fresh clone checks its data
    targets += RATIO_RANKS  # committed: a fresh clone finds them (rule train_and_rank_ratio)
    return targets
