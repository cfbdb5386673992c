# The whole study as one DAG: data -> ranks per (dataset, model) -> study tables ->
# notebooks (executed, HTML) -> `snakemake --report`. Scientific parameters are in config/
# (validated against workflow/schemas/config.schema.yaml); threads in the rules, memory and run time
# of each rule in profiles/.
#
#   snakemake --profile profiles/local                            # the default config, locally
#   snakemake --profile profiles/local --configfile config/smoke.yaml     # a few minutes
#   snakemake --profile profiles/slurm                            # on a SLURM cluster
#   snakemake --report results/report.html                        # figures with captions
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.0")


# The default config of the repository (also when --directory points elsewhere). A config given
# with --configfile replaces it rather than being merged into it, so a smoke config never
# inherits the datasets and models of the full study; missing keys take the schema defaults.
if not workflow.overwrite_configfiles:

    configfile: Path(workflow.basedir) / "config" / "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/studies.smk"
include: "workflow/rules/notebooks.smk"


# The front page of `snakemake --report`: what the study is, the notebooks, the parameters and
# the commit of the code. Added after validation, filled when the report reads it; no rule reads it.
report: "workflow/report/workflow.rst"


config["report_front_page"] = ReportFrontPage()


rule all:
    input:
        all_targets(),
    default_target: True
