# Two commands set everything up on a new machine:
#   make test       create .venv from the pinned dependencies, run the test suite
#   make reproduce  create .venv, run the whole study with Snakemake
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= 2
# A local mirror of the datasets, if there is one beside the checkout; files are otherwise looked
# up in data/raw/ and then downloaded (see data/README.md).
ifneq ($(wildcard ../shared/data/MANIFEST.md),)
export ITEMSAMPLING_DATA ?= $(abspath ../shared/data)
endif

.PHONY: test reproduce figures retrain check smoke lint bench clean-venv cluster-check recbole-check recbole-test ncf-check

$(STAMP): pyproject.toml compendium/pyproject.toml requirements/lock.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c requirements/lock.txt -e '.[all]' -e ./compendium
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

reproduce: $(STAMP)
	$(BIN)/snakemake --profile profiles/local --cores $(CORES)
	$(BIN)/python workflow/scripts/readme_verdicts.py --write
	$(BIN)/snakemake --profile profiles/local --cores $(CORES) --report results/report.html

# Redraw every figure and executed notebook from the committed tables (no training, no study),
# then the report.
figures: $(STAMP)
	$(BIN)/python workflow/scripts/replot.py --html --report results/report.html

# Retrain every model (the global ranks are committed results; see docs/study.md).
retrain: $(STAMP)
	$(BIN)/snakemake --profile profiles/local --cores $(CORES) --forcerun train_and_rank train_and_rank_ratio

# Rerun every study step from the committed ranks (every chunk, the tables of every study
# and the notebooks; the models are not retrained: that is make retrain) and verify that every
# committed table is reproduced: byte for byte on a machine like the one that made them
# (results/provenance.json: same BLAS kernels, threads and package versions), within each
# table's stated tolerance elsewhere; wall times (*_times.csv) are never compared. Prints the
# largest differences of every table. (--forceall would retrain every model.)
# The rule of every study of workflow/notebooks.yaml (workflow/rules/studies.smk): tables_<notebook>
# for each notebook's own study (a notebook without chunks, 00, too), the study's name for each
# further study it reads.
STUDY_RULES = $(shell $(BIN)/python -c 'import yaml; notebooks = yaml.safe_load(open("workflow/notebooks.yaml")); \
  print(*(rule for name, spec in notebooks.items() for rule in ["tables_" + name, *spec.get("studies", {})]))')
check: $(STAMP)
	$(BIN)/snakemake --profile profiles/local --cores $(CORES) --forcerun study_chunk provenance verdicts $(STUDY_RULES)
	$(BIN)/python workflow/scripts/check_reproduction.py

# The smoke study through profiles/slurm on a one-node SLURM cluster started from Debian's packages
# (workflow/cluster/start.sh, as root), compared with the local smoke run: about 13 minutes.
cluster-check: $(STAMP)
	ITEMSAMPLING_CLUSTER_CHECK=1 $(BIN)/python -m pytest tests/workflow/test_cluster.py

smoke: $(STAMP)
	$(BIN)/snakemake --configfile config/smoke.yaml --directory results/smoke --cores $(CORES)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks

# make bench: every script in benchmarks/, each in its quick mode, one BLAS thread (benchmarks/README.md);
# make bench BENCH=full: their full runs (far longer: cvxpy, model fits). BENCH_ARGS go to every script.
BENCH ?= quick
bench: $(STAMP)
	set -e; for script in benchmarks/bench_*.py; do echo "## $$script"; \
	  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	  $(BIN)/python $$script $(if $(filter quick,$(BENCH)),--quick) $(BENCH_ARGS); done

clean-venv:
	rm -rf $(VENV)

# RecBole in its own environment (its pins clash with ours: numpy<2, pandas<2.3, scipy<1.14,
# setuptools<70; torch CPU only, pinned), then our correction of its uni100 runs against its own
# full ranking on ml-100k (docs/frameworks.md; numbers in results/frameworks/).
RECBOLE_VENV := .venv-recbole
$(RECBOLE_VENV)/.installed:
	test -x $(RECBOLE_VENV)/bin/python || $(PYTHON) -m venv $(RECBOLE_VENV)
	$(RECBOLE_VENV)/bin/python -m pip install --quiet "torch==2.13.0+cpu" || \
	  $(RECBOLE_VENV)/bin/python -m pip install --quiet "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
	$(RECBOLE_VENV)/bin/python -m pip install --quiet "recbole==1.2.1" "numpy<2" "pandas<2.3" "scipy<1.14" \
	  "torch==2.13.0+cpu" "tqdm" "threadpoolctl" "pytest"
	# RecBole's ray imports pkg_resources (setuptools<70); torch declares setuptools>=77 but runs with it
	$(RECBOLE_VENV)/bin/python -m pip install --quiet "setuptools<70" 2>&1 | grep -v "incompatible" || true
	$(RECBOLE_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

# RecBole itself on a tiny generated dataset (tests/test_recbole_integration.py; .ci/run calls it).
recbole-test: $(RECBOLE_VENV)/.installed
	TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONPATH=$(CURDIR)/src $(RECBOLE_VENV)/bin/python -m pytest -q \
	  -p no:cacheprovider -W ignore tests/test_recbole_integration.py

recbole-check: $(RECBOLE_VENV)/.installed
	TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONPATH=$(CURDIR)/src $(RECBOLE_VENV)/bin/python \
	  workflow/scripts/recbole_check.py --output results/frameworks/recbole_check.csv

# Our five ml-1m models scored on NCF's own ml-1m.test.negative (its repeated negatives included),
# corrected, and compared with their exact metrics (docs/frameworks.md; numbers in results/frameworks/).
ncf-check: $(STAMP)
	$(BIN)/python workflow/scripts/ncf_check.py --output results/frameworks/ncf_check.csv
