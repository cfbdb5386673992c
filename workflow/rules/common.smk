# Helpers shared by the workflow files: which (dataset, model) pairs exist, file names, and the
# package modules each step depends on (so that a code change reruns what it affects).
import json
import os
import sys
from pathlib import Path

#: the repository root (where the Snakefile lives); sources are read from here, outputs are
#: written relative to the working directory (the same folder unless --directory is given)
ROOT = Path(workflow.basedir)
#: every rule runs in this environment when --software-deployment-method conda is given
ENV = str(ROOT / "environment.yml")
PROTOCOLS = ("unseen", "all")

# Shell commands (itemsampling, papermill, jupyter) come from the environment that runs
# Snakemake, even when it is not activated (e.g. `.venv/bin/snakemake`); a conda environment
# given by --software-deployment-method conda is still put in front of this.
os.environ.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
NB_DATA = "00_data_and_models"
NB_SAMPLED = "01_sampled_metrics"
NOTEBOOKS = (NB_DATA, NB_SAMPLED)


def check_config(cfg):
    """Cross-field checks that the schema cannot express; raise ValueError naming the key."""
    for dataset, models in cfg["train"].items():
        unknown = sorted(set(models) - set(cfg["models"]))
        if unknown:
            raise ValueError(
                f"config train.{dataset} names models {unknown} that are not in `models` "
                f"(known: {sorted(cfg['models'])})"
            )
    study = cfg["sampled_metrics"]
    trained = cfg["train"].get(study["dataset"], [])
    missing = sorted(set(study["recommenders"].values()) - set(trained))
    if missing:
        raise ValueError(
            f"config sampled_metrics.recommenders uses models {missing} that are not trained on "
            f"sampled_metrics.dataset={study['dataset']!r}; add them to train.{study['dataset']}"
        )


check_config(config)

DATASETS = sorted(config["train"])
PAIRS = sorted((d, m) for d, models in config["train"].items() for m in models)


def package_sources(*modules):
    """Paths of itemsampling modules (``"metrics"``, ``"data/"`` for a subpackage) that exist."""
    base = ROOT / "src" / "itemsampling"
    paths = []
    for module in ("__init__", *modules):
        if module.endswith("/"):
            paths.extend(sorted(str(p) for p in (base / module).rglob("*.py")))
        elif (base / f"{module}.py").exists():
            paths.append(str(base / f"{module}.py"))
    return paths


def notebook_source(name):
    return str(ROOT / "notebooks" / f"{name}.ipynb")


def ranks_file(dataset, model, protocol):
    return f"results/ranks/{dataset}/{model}/{protocol}.parquet"


def train_info(dataset, model):
    return f"results/ranks/{dataset}/{model}/train.json"


def set_options(model):
    """``--set key=value`` options of `itemsampling train` for the hyperparameters in the config."""
    params = config["models"][model]

    def text(value):
        return str(value).lower() if isinstance(value, bool) else str(value)

    return " ".join(f"--set {key}={text(value)}" for key, value in sorted(params.items()))


def table(notebook, name):
    return f"results/tables/{notebook}/{name}.csv"


#: figure kinds of notebook 00; each is drawn once per dataset as ``<kind>_<dataset>``
DATA_FIGURE_KINDS = ("metrics_at_k", "rank_distribution")


def data_figures():
    """(figure name, caption name) of notebook 00: one figure of each kind per dataset."""
    return [(f"{kind}_{d}", kind) for d in DATASETS for kind in DATA_FIGURE_KINDS]


SAMPLED_FIGURE_NAMES = (
    "fig1_metric_vs_rank",
    "fig2_toy_expected_vs_sample_size",
    "fig3_expected_vs_true_rank",
    "fig4_corrected_ap",
    "fig5_rank_distributions",
    "fig6_expected_recall_vs_sample_size",
)


def sampled_figures():
    """(figure name, caption name) of notebook 01."""
    return [(name, name) for name in SAMPLED_FIGURE_NAMES]
SAMPLED_RULE_TABLES = ("table3_runs", "table3", "table4", "fig6_expected_recall")
SAMPLED_NOTEBOOK_TABLES = ("table1_toy_exact", "table2_toy_sampled")
DATA_NOTEBOOK_TABLES = ("training", "training_times", "exact_metrics")


def figure_pdfs(notebook, figures):
    return [f"figures/{notebook}/{name}.pdf" for name, _ in figures]


def report_figures(notebook, figures):
    """PNG outputs wrapped for `snakemake --report`, each with its caption file."""
    out = []
    for name, caption in figures:
        subcategory = name.removeprefix(f"{caption}_") if caption != name else None
        caption_file = ROOT / "workflow" / "report" / notebook / f"{caption}.rst"
        png = f"figures/{notebook}/{name}.png"
        out.append(report(png, caption=str(caption_file), category=notebook, subcategory=subcategory))
    return out


def notebook_parameters(notebook):
    """Papermill parameters of a notebook, as a JSON string (JSON is valid YAML)."""
    common = {"seed": config["seed"], "root": "."}
    if notebook == NB_DATA:
        params = {
            "datasets": config["train"],
            "protocols": config["data_and_models"]["protocols"],
            "max_k": config["data_and_models"]["max_k"],
        }
    else:
        params = dict(config["sampled_metrics"])
    return json.dumps({**common, **params}, sort_keys=True)


def all_targets():
    targets = [f"results/notebooks/{nb}.{ext}" for nb in NOTEBOOKS for ext in ("ipynb", "html")]
    targets += [table(NB_DATA, "datasets")]
    targets += [table(NB_SAMPLED, name) for name in SAMPLED_RULE_TABLES]
    return targets


def sampled_metrics_ranks(wildcards):
    """Global ranks of each recommender of the K&R study, keyed by its label (X, Y, Z)."""
    study = config["sampled_metrics"]
    return {
        label: ranks_file(study["dataset"], model, study["protocol"])
        for label, model in study["recommenders"].items()
    }


def sampled_metrics_ranks_option(wildcards, input):
    """``LABEL=PATH ...`` for ``--ranks`` of ``python -m itemsampling.experiments_krichene``."""
    labels = config["sampled_metrics"]["recommenders"]
    return " ".join(f"{label}={input[label]}" for label in labels)


def data_notebook_inputs(wildcards):
    """Everything notebook 00 reads: the dataset table, ranks of both protocols, train.json."""
    protocols = config["data_and_models"]["protocols"]
    return {
        "datasets": table(NB_DATA, "datasets"),
        "ranks": [ranks_file(d, m, p) for d, m in PAIRS for p in protocols],
        "info": [train_info(d, m) for d, m in PAIRS],
    }
