# Models: train each (dataset, model) once and write the global rank of every test user's held-out
# item under both candidate protocols (unseen.parquet, all.parquet) plus train.json.


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",


rule train_and_rank:
    input:
        "results/ranks/{dataset}/verified.txt",
        package_sources("data/", "models/", "ranks", "commands/train"),
    output:
        unseen=ranks_file("{dataset}", "{model}", "unseen"),
        all=ranks_file("{dataset}", "{model}", "all"),
        info=train_info("{dataset}", "{model}"),
    log:
        "results/logs/train/{dataset}/{model}.log",
    params:
        options=lambda wildcards: set_options(wildcards.model),
        seed=config["seed"],
        out_dir=lambda wildcards, output: str(Path(output.info).parent),
    threads: 2
    conda:
        ENV
    resources:
        mem_mb=12000,
        runtime=240,
    shell:
        "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "itemsampling train --dataset {wildcards.dataset} --model {wildcards.model} "
        "{params.options} --seed {params.seed} --out-dir {params.out_dir} > {log} 2>&1"
