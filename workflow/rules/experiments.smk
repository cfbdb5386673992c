# Experiment computations: repeated sampling and estimation on real ranks, cached as tables that
# the notebooks only read and plot (so a change of colour reruns no model and no simulation).


rule sampled_metrics_tables:
    input:
        unpack(sampled_metrics_ranks),
        source=package_sources(
            "experiments_krichene",
            "experiments",
            "simulation",
            "corrections",
            "estimate",
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
        study=config["sampled_metrics"],
        seed=config["seed"],
    threads: 1
    conda:
        ENV
    resources:
        mem_mb=4000,
        runtime=120,
    script:
        "../scripts/sampled_metrics_tables.py"
