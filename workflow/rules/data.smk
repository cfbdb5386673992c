# Data: check (or fetch) every dataset before any compute, and summarise them in one table.


rule verify_data:
    output:
        "results/ranks/{dataset}/verified.txt",
    log:
        "results/logs/data/verify_{dataset}.log",
    benchmark:
        "results/logs/data/verify_{dataset}.benchmark.tsv",
    # first of all jobs: a clone without the data learns in seconds which files to put where
    priority: 100
    shell:
        "itemsampling data verify --dataset {wildcards.dataset} > {output} 2> {log} || {{ cat {log} >&2; exit 1; }}"


rule dataset_summary:
    input:
        expand("results/ranks/{dataset}/verified.txt", dataset=DATASETS),
    output:
        table=table(DATA_NOTEBOOK, "datasets"),
        record=record(DATA_NOTEBOOK, "datasets"),
    log:
        "results/logs/data/dataset_summary.log",
    benchmark:
        "results/logs/data/dataset_summary.benchmark.tsv",
    params:
        datasets=" ".join(f"--dataset {d}" for d in DATASETS),
    shell:
        "itemsampling study datasets {params.datasets} --output {output.table} > {log} 2>&1"
