# Notebooks: execute each with papermill (its parameters from its configuration file, job_config in
# common.smk; written without times by itemsampling study notebook), then an HTML copy.
# A notebook only reads its study's tables and draws figures, so a change of colour reruns no
# model and no simulation. The rules are made from the list in workflow/notebooks.yaml.

for _notebook in NOTEBOOKS:

    rule:
        name:
            f"notebook_{_notebook}"
        input:
            tables=notebook_tables(_notebook),
            extra=read_tables(_notebook),
            verdicts=VERDICTS,
            checks=CHECKS_TABLE,
            notebook=notebook_source(_notebook),
            parameters=job_config(f"notebooks/{_notebook}"),
            source=PACKAGE_SOURCE,
        output:
            notebook=f"results/notebooks/{_notebook}.ipynb",
            pdf=figure_pdfs(_notebook),
            png=report_figures(_notebook),
        log:
            f"results/logs/notebooks/{_notebook}.log",
        benchmark:
            f"results/logs/notebooks/{_notebook}.benchmark.tsv",
        threads: 1
        shell:
            BLAS_THREADS
            + "itemsampling study notebook --notebook {input.notebook:q} --output {output.notebook} "
            "--parameters {input.parameters} > {log} 2>&1"


rule notebook_html:
    input:
        "results/notebooks/{notebook}.ipynb",
    output:
        report("results/notebooks/{notebook}.html", caption=str(ROOT / "workflow" / "report" / "notebook.rst"),
               category="notebooks"),
    log:
        "results/logs/notebooks/{notebook}_html.log",
    benchmark:
        "results/logs/notebooks/{notebook}_html.benchmark.tsv",
    params:
        out_dir=lambda wildcards, output: str(Path(output[0]).parent),
    shell:
        "jupyter nbconvert --to html --output {wildcards.notebook} --output-dir {params.out_dir} "
        "{input} > {log} 2>&1"
