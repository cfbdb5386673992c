# Studies: repeated sampling and estimation in chunks (one per ranks file, or per part of a ranks
# file: {chunk} is "<protocol>" or "<protocol>/<part>"; Snakemake runs them in parallel on cores
# or a cluster), then every table of a notebook from its chunks.
# The rules of each notebook are made from the list in workflow/notebooks.yaml (their outputs
# differ from notebook to notebook, which a single wildcard rule cannot declare).
# BLAS gets one thread per job (BLAS_THREADS with threads: 1): the many small factorizations of
# the estimators are several times slower when BLAS threads compete for the cores.


wildcard_constraints:
    notebook="[^/]+",
    chunk=CHUNK_PATTERN,


localrules:
    package_source,


rule package_source:
    input:
        PACKAGE,
    output:
        PACKAGE_SOURCE,
    log:
        "results/logs/package_source.log",
    benchmark:
        "results/logs/package_source.benchmark.tsv",
    run:
        write_package_source(input, output[0])


# What computes the study on this machine (BLAS library, kernels and threads as the study steps
# see them, package versions): make check compares byte for byte when it matches the committed
# record, within tolerance otherwise (itemsampling.provenance, workflow/scripts/check_reproduction.py).
rule provenance:
    input:
        source=PACKAGE_SOURCE,
    output:
        PROVENANCE,
    log:
        "results/logs/provenance.log",
    benchmark:
        "results/logs/provenance.benchmark.tsv",
    threads: 1
    shell:
        BLAS_THREADS
        + "itemsampling study provenance --output {output} > {log} 2>&1"


rule study_chunk:
    input:
        ranks=get_chunk_ranks,
        source=PACKAGE_SOURCE,
    output:
        "results/runs/{notebook}/{dataset}/{model}/{chunk}.parquet",
    log:
        "results/logs/studies/{notebook}/{dataset}_{model}_{chunk}.log",
    benchmark:
        "results/logs/studies/{notebook}/{dataset}_{model}_{chunk}.benchmark.tsv",
    params:
        study=lambda w: NOTEBOOKS[w.notebook]["study"],
        config=lambda w: study_config_json(w.notebook),
        seed=config["seed"],
        labels=lambda w: chunk_options(w.chunk),
    threads: 1
    shell:
        BLAS_THREADS
        + "itemsampling study chunk --study {params.study} --config {params.config:q} --seed {params.seed} "
        "--dataset {wildcards.dataset} --model {wildcards.model} {params.labels} "
        "--output {output} > {log} 2>&1"


for _notebook, _spec in NOTEBOOKS.items():

    rule:
        name:
            f"tables_{_notebook}"
        input:
            runs=chunk_files(_notebook),
            inputs=get_study_inputs(_spec["study"], study(_notebook), study_config(_notebook)),
            source=PACKAGE_SOURCE,
        output:
            report_tables(_notebook),
            record=record(_notebook, _spec["study"]),
        log:
            f"results/logs/studies/{_notebook}/tables.log",
        benchmark:
            f"results/logs/studies/{_notebook}/tables.benchmark.tsv",
        params:
            study=_spec["study"],
            config=study_config_json(_notebook),
            seed=config["seed"],
            tables=" ".join(_spec["tables"]),
            out_dir=lambda wildcards, output: str(Path(output[0]).parent),
        threads: 1
        shell:
            BLAS_THREADS
            + "itemsampling study tables --study {params.study} --config {params.config:q} "
            "--seed {params.seed} --runs {input.runs} --tables {params.tables} "
            "--out-dir {params.out_dir} > {log} 2>&1"


# The live evaluation of notebook 05: each model of adaptive_sampling.live is loaded from its
# committed train.json (a refit with its hyper-parameters and seed, with the BLAS threads that
# fitted it) and evaluated both by adaptive sampling against its own scores and by full ranking.
# Its ranks must be the committed ones within rounding (itemsampling.studies.refits).
# live_times.csv holds wall times (one BLAS thread). The job holds one core: the refits (about 5
# of its 35 s) raise BLAS to fit_threads threads inside the job (threadpoolctl), and everything
# else runs on one thread, so declaring fit_threads would leave a core idle for half a minute.
# The dataset is checked as it is loaded (not through rule verify_data: as an input of this rule,
# the check would make Snakemake retrain every model whose ranks are committed).


rule live_evaluation:
    input:
        inputs=get_study_inputs("adaptive_sampling.live", LIVE_STUDY, LIVE),
        source=PACKAGE_SOURCE,
    output:
        [table(LIVE_NOTEBOOK, name) for name in LIVE_TABLES],
        record=record(LIVE_NOTEBOOK, "live_evaluation"),
    log:
        "results/logs/studies/live_evaluation.log",
    benchmark:
        "results/logs/studies/live_evaluation.benchmark.tsv",
    params:
        config=json.dumps(LIVE, sort_keys=True),
        seed=config["seed"],
        tables=" ".join(LIVE_TABLES),
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    threads: 1
    shell:
        BLAS_THREADS
        + "itemsampling study tables --study live_evaluation --config {params.config:q} --seed {params.seed} "
        "--tables {params.tables} --out-dir {params.out_dir} > {log} 2>&1"


# The sensitivity step of notebook 05: what the adaptive MLE's accuracy at small K depends on (EM
# steps, n_0 and n_max, the AAAI'23 code's convention for n), on the pairs and few repeats of
# adaptive_sampling.sensitivity (itemsampling.studies.adaptive_sensitivity), and the shape of every
# pair's rank distribution. Its cost with the configured pairs and repeats: docs/study.md. The
# longest job of the study (about 5 minutes): its priority starts it early, so that it overlaps
# with the chunks instead of running alone at the end.


rule adaptive_sensitivity:
    input:
        inputs=get_study_inputs("adaptive_sampling.sensitivity", SENSITIVITY_STUDY, SENSITIVITY),
        source=PACKAGE_SOURCE,
    output:
        [table(SENSITIVITY_NOTEBOOK, name) for name in SENSITIVITY_TABLES],
        record=record(SENSITIVITY_NOTEBOOK, "adaptive_sensitivity"),
    log:
        "results/logs/studies/adaptive_sensitivity.log",
    benchmark:
        "results/logs/studies/adaptive_sensitivity.benchmark.tsv",
    params:
        config=json.dumps(SENSITIVITY, sort_keys=True),
        seed=config["seed"],
        tables=" ".join(SENSITIVITY_TABLES),
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    threads: 1
    priority: 10
    shell:
        BLAS_THREADS
        + "itemsampling study tables --study adaptive_sensitivity --config {params.config:q} --seed {params.seed} "
        "--tables {params.tables} --out-dir {params.out_dir} > {log} 2>&1"


# The two checks of notebook 04, each its own study and rule writing one table of the same name
# (itemsampling.studies.wmle_readings: the readings of WMLE; itemsampling.studies.mn_users: MN's M),
# computed from the committed global ranks (and simulated ranks) in a few CPU minutes, without the
# chunks of notebook 04.
for _check in CHECKS:

    rule:
        name:
            _check
        input:
            inputs=get_study_inputs(f"estimator_checks ({_check})", load_study(_check),
                                    load_study(_check).study_config(config)),
            source=PACKAGE_SOURCE,
        output:
            table(CHECKS_NOTEBOOK, _check),
            record=record(CHECKS_NOTEBOOK, _check),
        log:
            f"results/logs/studies/{_check}.log",
        benchmark:
            f"results/logs/studies/{_check}.benchmark.tsv",
        params:
            study=_check,
            config=json.dumps(load_study(_check).study_config(config), sort_keys=True),
            seed=config["seed"],
            out_dir=lambda wildcards, output: str(Path(output[0]).parent),
        threads: 1
        shell:
            BLAS_THREADS
            + "itemsampling study tables --study {params.study} --config {params.config:q} --seed {params.seed} "
            "--tables {params.study} --out-dir {params.out_dir} > {log} 2>&1"


# One verdict per claim of the papers that a notebook tests, computed from every notebook's tables
# (itemsampling.studies.verdicts); each notebook ends with its rows, the report's front page and the
# README show them all.
rule verdicts:
    input:
        tables=[t for nb in NOTEBOOKS for t in notebook_tables(nb)],
        inputs=[table(nb, name) for nb in NOTEBOOKS for name in NOTEBOOKS[nb].get("inputs", [])],
        source=PACKAGE_SOURCE,
    output:
        VERDICTS,
        checks=CHECKS_TABLE,
        record=str(record_path(Path(VERDICTS).parent, "verdicts")),
    log:
        "results/logs/studies/verdicts.log",
    benchmark:
        "results/logs/studies/verdicts.benchmark.tsv",
    params:
        notebooks=json.dumps({nb: spec["study"] for nb, spec in NOTEBOOKS.items()}),
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    threads: 1
    shell:
        "itemsampling study verdicts --notebooks {params.notebooks:q} --out-dir {params.out_dir} > {log} 2>&1"
