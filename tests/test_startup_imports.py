"""Every job of the study is a Python process that imports the package and one study module, so
scipy.optimize and scipy.stats (0.1 s and 0.4 s to import), which only a few functions use, are
imported inside those functions."""

from __future__ import annotations

import subprocess
import sys

STUDY_MODULES = ("sampling_theorem", "mapping_functions", "estimator_accuracy", "adaptive_sampling", "sampled_metrics")


def test_the_package_and_its_study_modules_import_neither_scipy_optimize_nor_scipy_stats():
    code = ("import sys, itemsampling.cli as cli\n"
            "cli.build_parser()\n"
            + "".join(f"import itemsampling_study.{name}\n" for name in STUDY_MODULES)
            + "print(' '.join(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules "
              "if m.split('.')[:2] in (['scipy', 'optimize'], ['scipy', 'stats'])})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []

