# Studies: repeated sampling and estimation in chunks (one per ranks file, or per part of a ranks
# file: {chunk} is "<protocol>" or "<protocol>/<part>"; Snakemake runs them in parallel on cores
# or a cluster), then the tables of every study, each by one rule made in the loop below from
# the list in workflow/notebooks.yaml (their outputs differ from study to study, which a single
# wildcard rule cannot declare). Every job reads its study's parameters from its configuration
# file (job_config in common.smk).
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
        config=lambda w: job_config(f"studies/{NOTEBOOKS[w.notebook]['study']}"),
        source=PACKAGE_SOURCE,
    output:
        "results/runs/{notebook}/{dataset}/{model}/{chunk}.parquet",
    log:
        "results/logs/studies/{notebook}/{dataset}_{model}_{chunk}.log",
    benchmark:
        "results/logs/studies/{notebook}/{dataset}_{model}_{chunk}.benchmark.tsv",
    params:
        study=lambda w: NOTEBOOKS[w.notebook]["study"],
        seed=config["seed"],
        labels=lambda w: chunk_options(w.chunk),
    threads: 1
    shell:
        BLAS_THREADS
        + "itemsampling study chunk --study {params.study} --config {input.config} --seed {params.seed} "
        "--dataset {wildcards.dataset} --model {wildcards.model} {params.labels} "
        "--output {output} > {log} 2>&1"


# The tables of every study (STUDY_STEPS), one rule each: a notebook's own study (rule
# tables_<notebook>) from its chunks, and the further studies the notebook reads from the committed
# ranks alone (each rule named after its study: notebook 04's checks wmle_readings and mn_users,
# notebook 06's live_evaluation and adaptive_sensitivity; see their modules in itemsampling_study).
# A study without chunks waits for no other job, so its priority starts it before the chunks: the
# longest of them, adaptive_sensitivity (about 5 minutes), would otherwise run alone at the end.
# Every job holds one core: live_evaluation's refits raise BLAS to fit_threads threads inside the
# job (threadpoolctl) for about 5 of its 35 s, so declaring fit_threads would leave a core idle.
# A study that loads a dataset checks it as it loads it; rule verify_data is no input of any, since
# it would make Snakemake retrain every model whose ranks are committed (workflow/rules/ranks.smk).
for _step in STUDY_STEPS.values():

    rule:
        name:
            _step.rule
        input:
            runs=chunk_files(_step),
            inputs=get_study_inputs(_step.study),
            config=job_config(f"studies/{_step.study}"),
            source=PACKAGE_SOURCE,
        output:
            report_tables(_step.notebook, _step.tables),
            record=record(_step.notebook, _step.study),
        log:
            f"results/logs/studies/{_step.notebook}/{_step.study}.log",
        benchmark:
            f"results/logs/studies/{_step.notebook}/{_step.study}.benchmark.tsv",
        params:
            study=_step.study,
            seed=config["seed"],
            tables=" ".join(_step.tables),
            out_dir=lambda wildcards, output: str(Path(output[0]).parent),
        threads: 1
        priority: 0 if chunk_files(_step) else 10
        shell:
            BLAS_THREADS
            + "itemsampling study tables --study {params.study} --config {input.config} --seed {params.seed} "
            "--runs {input.runs} --tables {params.tables} --out-dir {params.out_dir} > {log} 2>&1"


# One verdict per claim of the papers that a notebook tests, computed from every notebook's tables
# (itemsampling_study.verdicts); each notebook ends with its rows, the report's front page and the
# README show them all.
rule verdicts:
    input:
        tables=[t for nb in NOTEBOOKS for t in notebook_tables(nb)],
        inputs=[t for nb in NOTEBOOKS for t in read_tables(nb)],
        notebooks=job_config("verdicts"),
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
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    threads: 1
    shell:
        "itemsampling study verdicts --notebooks {input.notebooks} --out-dir {params.out_dir} > {log} 2>&1"
