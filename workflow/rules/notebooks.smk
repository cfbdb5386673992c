# Notebooks: execute each with papermill (parameters from the config), then an HTML copy.
# A notebook rule lists the notebook, every file it reads and the package modules it imports,
# so that editing any of them reruns it; it only reads tables and ranks and plots.


rule notebook_data_and_models:
    input:
        unpack(data_notebook_inputs),
        notebook=notebook_source(NB_DATA),
        source=package_sources("plotting", "experiments_krichene", "metrics"),
    output:
        notebook=f"results/notebooks/{NB_DATA}.ipynb",
        tables=[table(NB_DATA, name) for name in DATA_NOTEBOOK_TABLES],
        pdf=figure_pdfs(NB_DATA, data_figures()),
        png=report_figures(NB_DATA, data_figures()),
    log:
        f"results/logs/notebooks/{NB_DATA}.log",
    params:
        parameters=notebook_parameters(NB_DATA),
    conda:
        ENV
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "papermill {input.notebook:q} {output.notebook} --kernel python3 --cwd . "
        "--parameters_yaml {params.parameters:q} > {log} 2>&1"


rule notebook_sampled_metrics:
    input:
        unpack(sampled_metrics_ranks),
        tables=[table(NB_SAMPLED, name) for name in SAMPLED_RULE_TABLES],
        notebook=notebook_source(NB_SAMPLED),
        source=package_sources(
            "plotting",
            "experiments_krichene",
            "metrics",
            "kernels",
            "simulation",
            "toy",
            "corrections",
            "estimate",
        ),
    output:
        notebook=f"results/notebooks/{NB_SAMPLED}.ipynb",
        tables=[table(NB_SAMPLED, name) for name in SAMPLED_NOTEBOOK_TABLES],
        pdf=figure_pdfs(NB_SAMPLED, sampled_figures()),
        png=report_figures(NB_SAMPLED, sampled_figures()),
    log:
        f"results/logs/notebooks/{NB_SAMPLED}.log",
    params:
        parameters=notebook_parameters(NB_SAMPLED),
    conda:
        ENV
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "env OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "papermill {input.notebook:q} {output.notebook} --kernel python3 --cwd . "
        "--parameters_yaml {params.parameters:q} > {log} 2>&1"


rule notebook_html:
    input:
        "results/notebooks/{notebook}.ipynb",
    output:
        "results/notebooks/{notebook}.html",
    log:
        "results/logs/notebooks/{notebook}_html.log",
    params:
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    conda:
        ENV
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "jupyter nbconvert --to html --output {wildcards.notebook} --output-dir {params.out_dir} "
        "{input} > {log} 2>&1"
