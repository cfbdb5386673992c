"""Verdicts of notebook 03: each rule turns when the numbers under it turn."""

from __future__ import annotations

from itemsampling.studies.paper import PAPER_DATASETS, paper_table

from .verdict_helpers import reader, verdict_of


def test_mapping_verdicts_follow_the_errors_and_the_parameters():
    from itemsampling.studies.verdicts import mapping_functions

    def linear_best(errors):
        return errors.assign(value=errors["value"].where(errors["mapping"] != "linear", 0.0))

    table = reader("03_mapping_functions", mapping_errors=linear_best)
    rows = mapping_functions.claims(table)
    assert verdict_of(rows, "The linear mapping is the worst") == "not reproduced"
    assert verdict_of(rows, "Beta@P has the smallest") == "not reproduced"

    paper = paper_table("li2020kdd_table2")

    def as_paper(beta):
        key = beta["dataset"].map(PAPER_DATASETS) + "/" + beta["model"]
        printed = dict(zip(paper["paper_dataset"] + "/" + paper["model"], paper["paper_a"], strict=True))
        return beta.assign(a=key.map(printed).fillna(beta["a"]))

    rows = mapping_functions.claims(reader("03_mapping_functions", beta_parameters=as_paper))
    for protocol in ("all", "unseen"):
        assert verdict_of(rows, f"Beta@P parameters a of eq. 19 (n = 100), read as protocol `{protocol}`") == "reproduced"
