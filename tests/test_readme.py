"""The README's examples run as written and print what the README says they print."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import itemsampling as its

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


@pytest.fixture
def readme_namespace(tmp_path, monkeypatch, capsys):
    """Run every Python block of the README, in order, in a fresh folder."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    blocks = _blocks("python")
    assert blocks, "the README has no Python example"
    for code in blocks:
        exec(compile(code, str(README), "exec"), namespace)
    capsys.readouterr()
    return namespace


def test_python_example_gives_the_numbers_it_claims(readme_namespace):
    table = readme_namespace["table"].set_index(["metric", "k"]).estimate
    exact = its.global_metrics(readme_namespace["global_ranks"], 3706, ["recall", "ndcg"], [10, 20, 50])
    exact = exact.set_index(["metric", "k"]).value
    # the comments in the README example
    assert table["recall", 10] == pytest.approx(0.126, abs=5e-4)
    assert exact["recall", 10] == pytest.approx(0.127, abs=5e-4)
    assert table["ndcg", 10] == pytest.approx(0.058, abs=5e-4)
    assert exact["ndcg", 10] == pytest.approx(0.050, abs=5e-4)
    assert readme_namespace["p_hat"][:50].sum() == pytest.approx(0.486, abs=5e-4)
    assert exact["recall", 50] == pytest.approx(0.486, abs=5e-4)
    assert np.abs(table.to_numpy() - exact.to_numpy()).max() < 0.03
    bounds = readme_namespace["bounds"].iloc[0]
    assert (bounds["lower"], bounds["upper"]) == pytest.approx((0.103, 0.149), abs=5e-4)
    assert bounds["lower"] <= exact["recall", 10] <= bounds["upper"]


def test_score_matrix_example_gives_the_numbers_it_claims(readme_namespace):
    table = readme_namespace["score_table"].set_index(["metric", "k"]).estimate
    assert table["recall", 10] == pytest.approx(0.026, abs=5e-4)
    assert (readme_namespace["ranks_from_scores"] <= 10).mean() == pytest.approx(0.39, abs=5e-3)


def test_live_example_gives_the_numbers_it_claims(readme_namespace):
    ns = readme_namespace
    live, all_scores, held_out = ns["live"], ns["all_scores"], ns["held_out"]
    table = live.estimates.set_index(["metric", "k"]).estimate
    global_ranks = 1 + (all_scores > all_scores[np.arange(held_out.size), held_out][:, None]).sum(axis=1)
    exact = its.global_metrics(global_ranks, 3706, ["recall", "ndcg"], 10).set_index(["metric", "k"]).value
    assert table["recall", 10] == pytest.approx(0.223, abs=5e-4)
    assert exact["recall", 10] == pytest.approx(0.227, abs=5e-4)
    assert table["ndcg", 10] == pytest.approx(0.145, abs=5e-4)
    assert exact["ndcg", 10] == pytest.approx(0.139, abs=5e-4)
    assert live.cost.fraction == pytest.approx(0.050, abs=5e-4)
    assert live.cost.full_ranking == 2000 * 3706


def test_console_example_runs_with_the_installed_script(readme_namespace, tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    commands = [line[2:] for block in _blocks("console") for line in block.splitlines()
                if line.startswith("$ ")]
    estimate_commands = [c for c in commands if c.startswith("itemsampling estimate")]
    assert estimate_commands, "the README shows no `itemsampling estimate` command"
    for command in commands:
        done = subprocess.run(shlex.split(command), cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=False, timeout=300)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
    got = pd.read_csv(tmp_path / "estimates.csv")
    expected = its.estimate(readme_namespace["sampled_ranks"], 3706, 100, "mn_mes",
                            ["recall", "ndcg"], [10, 20])
    assert got.metric.tolist() == expected.metric.tolist()
    np.testing.assert_allclose(got.estimate, expected.estimate, rtol=1e-9)


def test_findings_on_krichene_rendle_quote_the_committed_tables():
    """The findings on K&R's Y and Z (docs/findings.md) state what notebook 01's committed tables hold."""
    tables = README.parent / "results" / "tables" / "01_sampled_metrics"
    text = " ".join((README.parent / "docs" / "findings.md").read_text().split())
    ties = pd.read_csv(tables / "ties.csv").set_index("recommender")
    summary = pd.read_csv(tables / "sensitivity_summary.csv").set_index(["reading", "ties"])
    sens = pd.read_csv(tables / "sensitivity.csv")
    z = ties.loc["Z"]
    users = int(pd.read_csv(tables / "rank_summary.csv").set_index("recommender").at["Z", "users"])
    closest = summary["paper_mean_abs_difference"].idxmin()
    default = summary[summary["default"]].iloc[0]
    y_auc = 100 * sens.loc[sens["recommender"] == "Y", "auc"]
    worse = summary["rank_estimate_worse"]
    claims = [
        f"{int(z['tied_users']):,} of Z's {users:,} held-out items",
        f"({int(z['zero_score_users']):,} at score 0)",
        f"AUC is {100 * z['auc_random']:.2f} with our random ties, {100 * z['auc_pessimistic']:.2f} if ties are "
        f"ranked last and {100 * z['auc_optimistic']:.2f} if first",
        f"Y's AUC stays at {y_auc.min():.2f}–{y_auc.max():.2f}",
        f"(`{closest[0]}`, {closest[1]} ties) is {summary.loc[closest, 'paper_mean_abs_difference']:.2f} points",
        f"{summary.loc[closest, 'paper_max_abs_difference']:.2f} at most",
        f"({default['paper_mean_abs_difference']:.2f} points on average, "
        f"{default['paper_max_abs_difference']:.2f} at most)",
        f"better on {int(default['rank_estimate_paper_better'])} of the 9 Recall/NDCG/AP comparisons and as good on "
        f"{int(default['rank_estimate_paper_same'])}",
        f"better on {int(default['rank_estimate_better'])} and worse on {int(default['rank_estimate_worse'])}",
        f"worse on {int(worse.min())}–{int(worse.max())} of the 9",
    ]
    for claim in claims:
        assert claim in text, claim


def test_popularity_example_gives_the_numbers_it_claims(readme_namespace):
    ns = readme_namespace
    exact = its.global_metrics(ns["pop_ranks"], 3706, ["recall"], [10])["value"].iloc[0]
    assert exact == pytest.approx(0.125, abs=5e-4)
    assert ns["naive"]["estimate"].iloc[0] == pytest.approx(0.327, abs=5e-4)
    row = ns["pop_corrected"].iloc[0]
    assert (row["estimate"], row["lower"], row["upper"]) == pytest.approx((0.144, 0.135, 0.152), abs=5e-4)
