"""Redraw every figure from the committed tables: execute each notebook of workflow/notebooks.yaml
with the parameters of the configuration, without training or recomputing any table.

    python workflow/scripts/replot.py [--configfile config/config.yaml] [--html] [--report FILE]

(`make figures` runs it with --html and --report results/report.html.) The notebooks only read
results/tables/ and write figures/ and results/notebooks/. A notebook whose tables are not there
(its study has not been run yet) is not redrawn: the script names the missing tables and the
snakemake command that computes them, redraws the others, and builds the report of those.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from itemsampling_study.notebook_defaults import workflow_config
from itemsampling_study.notebook_execution import execute_notebook
from itemsampling_study.registry import notebook_parameters
from itemsampling_study.tables import table_path

ROOT = Path(__file__).resolve().parents[2]


def missing_tables(name: str, spec: dict) -> list[str]:
    """The tables a notebook reads that are not in results/tables/ (relative paths)."""
    tables = [*spec["tables"], *(t for names in spec.get("studies", {}).values() for t in names),
              *spec.get("inputs", [])]
    return [str(table_path(name, t)) for t in tables if not (ROOT / table_path(name, t)).is_file()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--html", action="store_true", help="also write the HTML copies")
    parser.add_argument("--report", type=Path, help="then build the Snakemake report of the redrawn notebooks here")
    args = parser.parse_args(argv)
    config = workflow_config(args.configfile, ROOT / "workflow" / "schemas" / "config.schema.yaml")
    notebooks = yaml.safe_load((ROOT / "workflow" / "notebooks.yaml").read_text())
    out_dir = ROOT / "results" / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    redrawn = []
    for name, spec in notebooks.items():
        missing = missing_tables(name, spec)
        if missing:
            print(f"{name}: not redrawn, its study has not been run ({len(missing)} tables missing, e.g. "
                  f"{missing[0]}); compute them with: snakemake --profile profiles/local "
                  f"results/notebooks/{name}.ipynb", file=sys.stderr, flush=True)
            continue
        parameters = notebook_parameters(spec["study"], config, ".")  # as the workflow runs them
        print(f"{name}: redrawing", flush=True)
        out = execute_notebook(ROOT / "notebooks" / f"{name}.ipynb", out_dir / f"{name}.ipynb", parameters, ROOT)
        if args.html:
            subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(out)], check=True,
                           capture_output=True)
        redrawn.append(name)
    if args.report:
        snakemake = Path(sys.executable).with_name("snakemake")
        report = subprocess.run([str(snakemake), "--profile", "profiles/local", "--report", str(args.report),
                                 *(f"results/notebooks/{name}.html" for name in redrawn)], cwd=ROOT,
                                capture_output=True, text=True)
        lines = (report.stdout + report.stderr).splitlines()
        # files that this checkout's Snakemake did not make (committed, or redrawn here) have no
        # job record: a note per file, not a problem
        unrecorded = [line for line in lines if line.startswith("Missing metadata for file")]
        shown = [line for line in lines if line not in unrecorded and not line.startswith("Adding ")]
        print("\n".join(shown), file=sys.stderr if report.returncode else sys.stdout)
        if unrecorded:
            print(f"({len(unrecorded)} files of the report were not made by this checkout's Snakemake runs: "
                  "the report shows no job times for them)")
        if report.returncode:
            return report.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
