"""Redraw every figure from the committed tables: execute each notebook of workflow/notebooks.yaml
with the parameters of the configuration, without training or recomputing any table.

    python workflow/scripts/replot.py [--configfile config/config.yaml] [--html]

(`make figures` runs it.) The notebooks only read results/tables/ and write figures/ and
results/notebooks/; a missing table stops with the snakemake command that makes it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import papermill
import yaml

from itemsampling.commands.study import notebook_parameters

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--html", action="store_true", help="also write the HTML copies")
    args = parser.parse_args(argv)
    config = yaml.safe_load(args.configfile.read_text())
    notebooks = yaml.safe_load((ROOT / "workflow" / "notebooks.yaml").read_text())
    out_dir = ROOT / "results" / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, spec in notebooks.items():
        parameters = notebook_parameters(spec["study"], config, str(ROOT))
        print(f"{name}: {json.dumps(parameters, sort_keys=True)[:120]}...", flush=True)
        out = out_dir / f"{name}.ipynb"
        papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters,
                                   kernel_name="python3", cwd=str(ROOT), progress_bar=False)
        if args.html:
            subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(out)], check=True,
                           capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
