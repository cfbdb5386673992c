"""The verdict table: its rows, its rules, the strict joins with the paper tables, and where it is
shown (README section, report front page)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from html import unescape
from pathlib import Path

import jinja2
import pandas as pd
import pytest
import yaml
from docutils.core import publish_parts

import itemsampling_study.verdicts as verdicts
from itemsampling_study.paper import (
    PAPER_DATASETS,
    PAPER_TABLES,
    SAME_DATA,
    paper_merge,
    paper_table,
    stand_ins,
)
from itemsampling_study.verdicts import (
    COLUMNS,
    VERDICTS,
    Check,
    Claim,
    paper_text,
    papers_folder,
    quote_found,
    read_checks,
    read_verdicts,
    report_summary,
    share_verdict,
    source_found,
    summary_markdown,
    verdict_counts,
    verdict_tables,
)

from .conftest import REPO

NOTEBOOKS = yaml.safe_load((REPO / "workflow" / "notebooks.yaml").read_text())
STUDIES = {notebook: spec["study"] for notebook, spec in NOTEBOOKS.items()}
#: notebooks of our own findings (their own table ``findings``), which test no paper's claim
OWN_FINDINGS = {"05_protocols_in_use"}


def _claim(**changes) -> Claim:
    fields = {"paper": "li2023aaai", "claim": "a claim", "quote": "the words", "source": "Table 7", "dataset": "ml-1m",
              "our_value": "0.1", "paper_value": "0.2", "verdict": "partly", "reason": "rule: ..."}
    return Claim(**{**fields, **changes})


@pytest.mark.parametrize("changes, error", [
    ({"paper": "someone2020"}, "unknown paper"),
    ({"verdict": "mostly"}, "verdict must be one of"),
    ({"reason": " "}, "non-empty reason"),
    ({"claim": ""}, "non-empty claim"),
    ({"quote": ""}, "non-empty quote"),
    ({"setup": None}, "text formatted"),
    ({"our_value": 0.1}, "text formatted"),
])
def test_a_claim_rejects_what_the_table_cannot_hold(changes, error):
    with pytest.raises((ValueError, TypeError), match=error):
        _claim(**changes)


def test_a_check_needs_no_quote_and_no_paper_value():
    check = Check(paper="li2023aaai", claim="ours", source="§4.3", dataset="ml-1m", our_value="1", verdict="partly",
                  reason="rule: ...")
    assert check.quote == "" and check.paper_value == ""
    with pytest.raises(ValueError, match="non-empty reason"):
        Check(paper="li2023aaai", claim="ours", source="§4.3", dataset="ml-1m", our_value="1", verdict="partly",
              reason="")


@pytest.mark.parametrize("holds, cases, expected", [
    (10, 10, "reproduced"), (9, 10, "reproduced"), (8, 10, "partly"), (5, 10, "partly"), (4, 10, "not reproduced"),
    (0, 10, "not reproduced"), (0, 0, "not testable here"),
])
def test_share_verdict_thresholds(holds, cases, expected):
    assert share_verdict(holds, cases) == expected


def test_share_verdict_rejects_impossible_counts():
    with pytest.raises(ValueError, match="holds <= cases"):
        share_verdict(11, 10)
    with pytest.raises(ValueError, match="partly <= reproduced"):
        share_verdict(1, 2, reproduced=0.4, partly=0.6)


def test_paper_merge_fails_loudly_on_a_lost_paper_row():
    """A label spelt differently on one side (beta@p against beta@P) must not vanish from a comparison."""
    paper = pd.DataFrame({"mapping": ["linear", "beta@p"], "paper_value": [1.0, 2.0]})
    ours = pd.DataFrame({"mapping": ["linear", "beta@P"], "value": [1.1, 2.1]})
    with pytest.raises(ValueError, match=r"1 row\(s\) of the paper table find no partner.*beta@p"):
        paper_merge(ours, paper, on=["mapping"])
    fixed = paper.assign(mapping=["linear", "beta@P"])
    assert len(paper_merge(ours, fixed, on=["mapping"])) == 2


def test_paper_merge_scope_leaves_out_rows_of_other_datasets_only():
    paper = pd.DataFrame({"dataset": ["ml-1m", "ml-1m", "book-x"], "k": [1, 2, 1], "paper_value": [1.0, 2.0, 3.0]})
    ours = pd.DataFrame({"dataset": ["ml-1m", "ml-1m"], "k": [1, 2], "value": [0.9, 2.1]})
    assert len(paper_merge(ours, paper, on=["dataset", "k"], scope={"dataset": ["ml-1m"]})) == 2
    with pytest.raises(ValueError, match="book-x"):
        paper_merge(ours, paper, on=["dataset", "k"])
    with pytest.raises(ValueError, match="lacks the columns"):
        paper_merge(ours.drop(columns="k"), paper, on=["dataset", "k"])


@pytest.mark.parametrize("name", PAPER_TABLES)
def test_the_paper_tables_name_our_datasets_as_paper_datasets_does(name):
    """A paper table that names our dataset next to the paper's names the one of PAPER_DATASETS."""
    table = paper_table(name)
    if not {"dataset", "paper_dataset"} <= set(table.columns):
        return
    pairs = table[["dataset", "paper_dataset"]].drop_duplicates()
    expected = pairs["paper_dataset"].map({paper: ours for ours, paper in PAPER_DATASETS.items()})
    assert pairs["dataset"].fillna("").tolist() == expected.fillna("").tolist(), name


def test_same_data_are_stand_ins():
    assert set(SAME_DATA) <= set(PAPER_DATASETS)
    assert {PAPER_DATASETS[d] for d in SAME_DATA} == {"ml-1m", "citeulike"}
    assert stand_ins("li2023aaai_adaptive") == {"pinterest-subset": "pinterest-20", "yelp-diffnet": "yelp"}


def test_kdd20_table7_compares_every_mapping_including_beta_p():
    from itemsampling_study.mapping_functions import with_paper
    from itemsampling_study.tables import read_table

    errors = read_table("03_mapping_functions", "mapping_errors", REPO)
    merged = with_paper(errors, "li2020kdd_table7", ["paper_dataset", "model", "mapping", "error"])
    assert set(merged["mapping"]) == set(paper_table("li2020kdd_table7")["mapping"])
    assert "beta@P" in set(merged["mapping"])


def _claims_sources() -> str:
    """The source of every claims module (a module of the verdicts package, or a package in it)."""
    root = Path(verdicts.__file__).parent
    return "\n".join(path.read_text() for path in sorted(root.rglob("*.py")) if path != root / "__init__.py")


@pytest.mark.parametrize("name", PAPER_TABLES)
def test_every_paper_table_is_compared_by_a_verdict(name):
    """Each paper CSV is read by some notebook's claims, whose joins fail loudly on a lost row
    (building the committed verdict table below runs them all)."""
    assert name in _claims_sources(), f"no claims module of itemsampling_study.verdicts compares {name}"


def test_every_notebook_has_a_claims_module():
    for study in STUDIES.values():
        assert callable(importlib.import_module(f"itemsampling_study.verdicts.{study}").claims)


def test_the_committed_verdicts_and_checks_are_what_the_committed_tables_give():
    claims, checks = verdict_tables(STUDIES, REPO)
    committed = read_verdicts(REPO)
    pd.testing.assert_frame_equal(claims.astype(str).reset_index(drop=True), committed, check_dtype=False)
    pd.testing.assert_frame_equal(checks.astype(str).reset_index(drop=True), read_checks(REPO), check_dtype=False)
    assert tuple(committed.columns) == COLUMNS
    assert set(committed["verdict"]) <= set(VERDICTS)
    assert set(committed["notebook"]) == set(STUDIES) - OWN_FINDINGS  # every other notebook tests some claim
    assert not verdict_tables({nb: STUDIES[nb] for nb in OWN_FINDINGS}, REPO)[0].size  # ours are no paper's claims
    assert not committed[["claim", "quote", "source", "reason"]].eq("").any().any()
    assert not set(committed["claim"]) & set(read_checks(REPO)["claim"])  # a check is never a paper's claim


PAPERS_FOLDER = papers_folder(REPO)
needs_papers = pytest.mark.skipif(PAPERS_FOLDER is None, reason="the papers' text is not here (ITEMSAMPLING_PAPERS, "
                                  "or papers/ beside ITEMSAMPLING_DATA)")


@needs_papers
@pytest.mark.parametrize("name", ["verdicts", "checks"])
def test_every_quote_is_the_papers_words_and_every_source_a_place_of_the_paper(name):
    frame = read_verdicts(REPO) if name == "verdicts" else read_checks(REPO)
    texts = {paper: paper_text(paper, PAPERS_FOLDER) for paper in set(frame["paper"])}
    wrong_quotes = [(row.paper, row.quote[:80]) for row in frame.itertuples()
                    if row.quote and not quote_found(row.quote, texts[row.paper])]
    assert not wrong_quotes, wrong_quotes
    if name == "verdicts":
        wrong_sources = [(row.paper, row.source, source_found(row.source, texts[row.paper]))
                         for row in frame.itertuples() if source_found(row.source, texts[row.paper])]
        assert not wrong_sources, wrong_sources


def test_a_quote_is_found_up_to_whitespace_and_latex_only():
    text = "Remedy #3: When $a > b$, $f(k; a) \\leq f(k; b)$ for any k .\nThis holds even if a and b are \n not close."
    assert quote_found("When a > b, f(k; a) ≤ f(k; b) for any k", text)
    assert quote_found("When a > b ... This holds even if a and b are not close.", text)
    assert not quote_found("When a < b, f(k; a) ≤ f(k; b)", text)  # one character of the claim
    assert not quote_found("This holds even if a and b are not close ... When a > b", text)  # the order matters
    assert not quote_found("When a > b, f(k; a) ≤ f(k; b) for every k", text)
    assert not quote_found(" ... ", text)
    # case, emphasis, dashes and quotation marks are the paper's characters, not markup
    assert not quote_found("when a > b, f(k; a) ≤ f(k; b) for any k", text)
    emphasis = "e.g., *recommender A is better than B*, not “even” in ml−1m – expectation."
    assert quote_found("e.g., *recommender A is better than B*, not “even” in ml−1m – expectation.", emphasis)
    for altered in ("e.g., recommender A is better than B, not", 'not "even"', "ml-1m", "ml−1m - expectation"):
        assert not quote_found(altered, emphasis), altered
    assert quote_found("the difference between", "the difference be-\ntween")  # a word broken at a line end


def test_a_source_names_places_the_paper_has():
    text = "## 4.2 Sampling\nTable 4: counts\nFigure 6: curves (20)\n# C Rewriting\nTHEOREM 2.1 (X)\n#### Abstract\n"
    assert source_found("§4.2; Table 4; Fig. 6; eq. 20; App. C; Theorem 2.1; Abstract", text) == []
    assert source_found("§4.3; Table 5; Fig. 7; eq. 21; App. D; Theorem 2.2", text) == [
        "§4.3", "Table 5", "Fig. 7", "eq. 21", "App. D", "Theorem 2.2"]
    assert source_found("Tables 4, 5", text) == ["Tables 4, 5"]  # one place per item
    assert source_found("Introduction", text) == ["Introduction"]
    assert source_found("Introduction", "Introduction\nRecommendation ...") == []  # a heading without a number
    assert source_found("Introduction", "1 INTRODUCTION\n") == []
    assert source_found("Introduction", "see the introduction\n") == ["Introduction"]  # a word, not a heading


def test_counts_and_markdown_cover_every_row():
    frame = read_verdicts(REPO)
    counts = verdict_counts(frame)
    assert counts.loc["all four papers"].sum() == len(frame)
    text = summary_markdown(frame, read_checks(REPO))
    assert text.count("\n- ") == int((frame["verdict"] == "not reproduced").sum())
    assert "checks.csv" in text


def test_the_readme_section_is_the_committed_table():
    done = subprocess.run([sys.executable, str(REPO / "workflow" / "scripts" / "readme_verdicts.py")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_front_page_shows_the_verdicts_without_rst_errors():
    frame = pd.DataFrame([vars(_claim(verdict="not reproduced", our_value="max |ours - paper| 0.3",
                                      claim="f(k; a) *grows* with a_ref at Recall@10.")) | {"notebook": "03_mapping_functions"}],
                         columns=list(COLUMNS))
    config = {"seed": 1, "train": {}, "report_front_page": {
        "commit": "abc", "notebooks": {}, "parameters": {}, "machine": None, "verdicts": report_summary(frame)}}
    snakemake = type("S", (), {"config": config})
    text = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    rst = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(text).render(snakemake=snakemake)
    html = publish_parts(rst, writer="html", settings_overrides={"report_level": 2, "halt_level": 5})["html_body"]
    assert "System Message" not in html
    assert "mailto:" not in html
    html = unescape(html)
    assert "max |ours - paper| 0.3" in html and "*grows* with a_ref at Recall@10: “the words” — ours max |ours - paper| 0.3; paper 0.2." in html
    assert "Li et al., AAAI 2023: 0 reproduced, 0 partly, 1 not reproduced" in " ".join(html.split())


def test_the_notebook_table_is_the_same_on_every_run():
    from itemsampling_study.verdicts import verdicts_html

    frame = read_verdicts(REPO).head(3).drop(columns="notebook")
    first, second = verdicts_html(frame), verdicts_html(frame)
    assert first == second and 'id="T_verdicts"' in first
    assert first.count("<tr") == 4  # a header and three rows, no index column
