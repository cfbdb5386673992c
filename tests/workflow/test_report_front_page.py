"""The report's front page (workflow/report/workflow.rst) renders as Snakemake renders it: lists
as lists, parameters as code in a collapsed part, no system messages."""

from __future__ import annotations

import jinja2
from docutils.core import publish_parts

from .conftest import REPO

CONFIG = {
    "seed": 7, "train": {"ml-1m": ["ease", "ials"], "yelp-diffnet": ["ease"]},
    "report_front_page": {
        "commit": "0123abc", "notebooks": {"00_data": "Data", "01_metrics": "Sampled metrics (K&R)"},
        "parameters": {"00_data": ['mapping: {"a": 0.5, "kind": "beta"}'],
                       "01_metrics": ['estimators: ["beta@0.5", "mle"]', "k: 10"]},
        "machine": {"cpu": "Some CPU", "machine": "x86_64", "packages": {"numpy": "2.4.6"},
                    "numpy_simd": {"baseline": ["X86_V2"], "dispatched": ["X86_V3", "X86_V4"]},
                    "blas": [{"library": "libscipy_openblas64_.so", "version": "0.3.30", "core_type": "Haswell",
                             "threads": 1}]},
    },
}


class _Snakemake:
    """What the template sees as ``snakemake``."""

    config = CONFIG


def test_the_front_page_renders_lists_and_a_collapsed_parameter_part():
    text = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    rst = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(text).render(snakemake=_Snakemake)  # as snakemake --report
    html = publish_parts(rst, writer="html", settings_overrides={"report_level": 2, "halt_level": 5})["html_body"]
    assert "System Message" not in html and "mailto:" not in html
    assert html.count("<ul") == 3
    assert "<details>" in html and html.index("<details>") < html.index("beta&#64;0.5") < html.index("</details>")
    text = " ".join(html.split())
    assert "Haswell kernels and 1 thread(s); numpy's loops dispatched to X86_V3, X86_V4; packages numpy 2.4.6 (" in text
    assert "0123abc" in html
