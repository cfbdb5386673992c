# Experiment computations: repeated sampling and estimation on real ranks, cached as tables that
# the notebooks only read and plot (so a change of colour reruns no model and no simulation).
# BLAS gets as many threads as the rule: more threads than cores makes the many small
# factorizations of the corrections an order of magnitude slower.


rule sampled_metrics_tables:
    input:
        unpack(sampled_metrics_ranks),
        source=package_sources(
            "experiments_krichene",
            "experiments",
            "simulation",
            "corrections",
            "kernels",
            "metrics",
        ),
    output:
        runs=table(NB_SAMPLED, "table3_runs"),
        table3=table(NB_SAMPLED, "table3"),
        table4=table(NB_SAMPLED, "table4"),
        curve=table(NB_SAMPLED, "fig6_expected_recall"),
    log:
        "results/logs/experiments/sampled_metrics_tables.log",
    params:
        ranks=sampled_metrics_ranks_option,
        out_dir=lambda wildcards, output: str(Path(output.table3).parent),
        seed=config["seed"],
        study=config["sampled_metrics"],
        gammas=" ".join(str(g) for g in config["sampled_metrics"]["gammas"]),
        sizes=" ".join(str(n) for n in config["sampled_metrics"]["curve_sample_sizes"]),
    threads: 1
    conda:
        ENV
    resources:
        mem_mb=4000,
        runtime=120,
    shell:
        "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "python -m itemsampling.experiments_krichene "
        "--ranks {params.ranks} --sample-size {params.study[sample_size]} "
        "--repeats {params.study[repeats]} --seed {params.seed} --k {params.study[k]} "
        "--gammas {params.gammas} --scheme {params.study[scheme]} "
        "--n-groups {params.study[n_item_groups]} --curve-sample-sizes {params.sizes} "
        "--curve-gamma {params.study[curve_gamma]} --out-dir {params.out_dir} > {log} 2>&1"
