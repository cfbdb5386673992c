"""``itemsampling estimate``: the command line mirrors :func:`itemsampling.estimate`."""

import argparse
import io
import sys

import numpy as np
import pandas as pd
import pytest

import itemsampling as its
from itemsampling.cli import main
from itemsampling.commands.estimate import ESTIMATOR_OPTIONS, parse_ks, read_distribution
from itemsampling.estimators import estimate, method_options

N_ITEMS, SAMPLE_SIZE = 400, 50


@pytest.fixture(scope="module")
def ranks():
    rng = np.random.default_rng(3)
    global_ranks = np.minimum(np.ceil(rng.lognormal(3.0, 1.2, size=2000)), N_ITEMS).astype(int)
    return its.sample_ranks(global_ranks, N_ITEMS, SAMPLE_SIZE, rng=rng)


@pytest.fixture
def ranks_csv(tmp_path, ranks):
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"user": np.arange(ranks.size), "rank": ranks}).to_csv(path, index=False)
    return path


def _run(argv, capsys):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_writes_the_same_table_as_the_python_api(ranks_csv, ranks, tmp_path, capsys):
    out = tmp_path / "estimates.csv"
    status, stdout, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--method", "bv", "--metric", "ndcg", "--metric", "hr", "--k", "10",
                              "--k", "1-3", "--gamma", "0.1", "--output", out], capsys)
    assert status == 0 and stdout == ""
    got = pd.read_csv(out)
    expected = estimate(ranks, N_ITEMS, SAMPLE_SIZE, "bv", ["ndcg", "hr"], [10, 1, 2, 3], gamma=0.1)
    assert got.metric.tolist() == expected.metric.tolist()
    assert got.k.tolist() == expected.k.tolist()
    np.testing.assert_allclose(got.estimate, expected.estimate, rtol=1e-12)


def test_defaults_print_all_metrics_and_cutoffs_to_stdout(ranks_csv, ranks, capsys):
    status, stdout, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--method", "mle"], capsys)
    assert status == 0
    got = pd.read_csv(io.StringIO(stdout))
    assert list(got.columns) == ["metric", "k", "estimate"]
    assert len(got) == 150 and got.k.tolist() == list(range(1, 51)) * 3
    np.testing.assert_allclose(got.estimate, estimate(ranks, N_ITEMS, SAMPLE_SIZE, "mle").estimate,
                               rtol=1e-12)


def test_default_method_is_mn_mes_and_options_reach_it(ranks_csv, ranks, capsys):
    status, stdout, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--k", "5,20", "--eta", "0.01", "--n-users", "100",
                              "--scheme", "hypergeometric"], capsys)
    assert status == 0
    expected = estimate(ranks, N_ITEMS, SAMPLE_SIZE, "mn_mes", ks=[5, 20], eta=0.01, n_users=100,
                        scheme="hypergeometric")
    np.testing.assert_allclose(pd.read_csv(io.StringIO(stdout)).estimate, expected.estimate, rtol=1e-10)


def test_per_user_sample_sizes_for_adaptive_mle(tmp_path, capsys):
    rng = np.random.default_rng(4)
    global_ranks = rng.integers(1, N_ITEMS + 1, size=1500)
    ranks, sizes = its.adaptive_sample_ranks(global_ranks, N_ITEMS, 20, 160, rng=rng)
    path = tmp_path / "adaptive.csv"
    pd.DataFrame({"rank": ranks, "sample_size": sizes}).to_csv(path, index=False)
    status, stdout, _ = _run(["estimate", path, "--n-items", N_ITEMS, "--method", "adaptive_mle",
                              "--metric", "recall", "--k", "40"], capsys)
    assert status == 0
    expected = estimate(ranks, N_ITEMS, sizes, "adaptive_mle", "recall", 40).estimate.item()
    assert pd.read_csv(io.StringIO(stdout)).estimate.item() == pytest.approx(expected, rel=1e-12)
    # other methods need one size for all users
    status, _, err = _run(["estimate", path, "--n-items", N_ITEMS, "--method", "mle"], capsys)
    assert status == 2 and "need --method adaptive_mle" in err


def test_a_constant_sample_size_column_replaces_the_option(tmp_path, ranks, capsys):
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"rank": ranks, "sample_size": SAMPLE_SIZE}).to_csv(path, index=False)
    status, stdout, _ = _run(["estimate", path, "--n-items", N_ITEMS, "--method", "sampled",
                              "--metric", "recall", "--k", "1"], capsys)
    assert status == 0
    assert pd.read_csv(io.StringIO(stdout)).estimate.item() == pytest.approx(np.mean(ranks == 1))


def test_reads_standard_input(ranks, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("rank\n" + "\n".join(map(str, ranks)) + "\n"))
    status, stdout, _ = _run(["estimate", "-", "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--method", "rank_estimate", "--metric", "ap", "--k", "50"], capsys)
    assert status == 0
    expected = estimate(ranks, N_ITEMS, SAMPLE_SIZE, "rank_estimate", "ap", 50).estimate.item()
    assert pd.read_csv(io.StringIO(stdout)).estimate.item() == pytest.approx(expected)


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, [], "does not exist"),
        ("", [], "is empty"),
        ("user,position\n1,3\n", [], "has no 'rank' column (columns found: user, position)"),
        ("rank\n1\n0\n", [], "found 0"),
        ("rank\n1\n51\n", [], "must lie in 1..n"),
        ("rank\n1\n2.5\n", [], "whole numbers"),
        ("rank\n1\n3\nx\n", [], "must be integers"),
        ("rank\n1\n", ["--metric", "hits"], "unknown metric 'hits'"),
        ("rank\n1\n", ["--method", "mle", "--gamma", "0.1"], "--gamma does not apply to --method mle"),
        ("rank\n1\n", ["--method", "bv", "--gamma", "-1"], "gamma must be"),
        ("rank,sample_size\n1,50\n", [], "do not also give --sample-size"),
    ],
)
def test_bad_input_exits_with_a_message(tmp_path, capsys, content, extra, message):
    path = tmp_path / "ranks.csv"
    if content is not None:
        path.write_text(content)
    status, stdout, err = _run(["estimate", path, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                                *extra], capsys)
    assert status == 2 and stdout == ""
    assert err.startswith("itemsampling estimate: error: ") and message in err


def test_missing_sample_size_is_reported(tmp_path, capsys):
    path = tmp_path / "ranks.csv"
    path.write_text("rank\n1\n2\n")
    status, _, err = _run(["estimate", path, "--n-items", N_ITEMS], capsys)
    assert status == 2 and "give --sample-size n" in err


@pytest.mark.parametrize("argv", [["--k", "0"], ["--k", "5-1"], ["--k", "ten"], ["--method", "magic"]])
def test_argument_errors_exit_with_usage(ranks_csv, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["estimate", str(ranks_csv), "--n-items", "400", "--sample-size", "50", *argv])
    assert exc.value.code == 2
    assert "usage: itemsampling estimate" in capsys.readouterr().err


def test_parse_ks():
    assert parse_ks("10") == [10]
    assert parse_ks("1-3,7") == [1, 2, 3, 7]
    with pytest.raises(argparse.ArgumentTypeError, match="range"):
        parse_ks("1-")


def test_an_existing_output_file_is_overwritten(ranks_csv, tmp_path, capsys):
    out = tmp_path / "estimates.csv"
    out.write_text("left over from an earlier run\n" * 1000)
    status, _, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                         "--method", "sampled", "--metric", "recall", "--k", "1", "--output", out], capsys)
    assert status == 0
    assert out.read_text().splitlines()[0] == "metric,k,estimate" and len(pd.read_csv(out)) == 1


def test_every_estimator_option_has_a_flag():
    options = {name for method in its.METHODS for name in method_options(method)}
    assert set(ESTIMATOR_OPTIONS) == options - {"progress"}


@pytest.fixture(scope="module")
def prior():
    """A prior P(R) that differs from the uniform default: more mass on the top ranks."""
    weights = 1.0 / np.sqrt(np.arange(1, N_ITEMS + 1))
    return weights / weights.sum()


@pytest.mark.parametrize(
    ("method", "flags", "options"),
    [
        ("cls", ["--prior", "{csv}"], {"prior": "prior"}),
        ("bv", ["--prior", "{npy}", "--gamma", "0.2"], {"prior": "prior", "gamma": 0.2}),
        ("mn", ["--prior", "{csv}", "--n-users", "50"], {"prior": "prior", "n_users": 50}),
        ("mes", ["--eta", "0.01", "--eta-scale", "code", "--max-iter", "40", "--tol", "1e-4"],
         {"eta": 0.01, "eta_scale": "code", "max_iter": 40, "tol": 1e-4}),
        ("wmle", ["--weight", "ap", "--c", "3", "--init", "{npy}", "--max-iter", "5", "--tol", "0"],
         {"weight": "ap", "c": 3.0, "init": "prior", "max_iter": 5, "tol": 0.0}),
        ("mn_mle", ["--max-iter", "3", "--scheme", "hypergeometric"], {"max_iter": 3, "scheme": "hypergeometric"}),
    ],
)
def test_estimator_options_reach_estimate(method, flags, options, ranks_csv, ranks, prior, tmp_path, capsys):
    """Each flag changes the result, to exactly what the Python API gives with the option."""
    pd.DataFrame({"probability": prior}).to_csv(tmp_path / "prior.csv", index=False)
    np.save(tmp_path / "prior.npy", prior)
    files = {"csv": tmp_path / "prior.csv", "npy": tmp_path / "prior.npy"}
    status, stdout, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--method", method, "--metric", "ndcg", "--k", "5,20",
                              *[flag.format(**files) for flag in flags]], capsys)
    assert status == 0
    got = pd.read_csv(io.StringIO(stdout)).estimate.to_numpy()
    options = {name: prior if value == "prior" else value for name, value in options.items()}
    expected = estimate(ranks, N_ITEMS, SAMPLE_SIZE, method, "ndcg", [5, 20], **options).estimate
    default = estimate(ranks, N_ITEMS, SAMPLE_SIZE, method, "ndcg", [5, 20]).estimate
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert np.abs(got - default).max() > 1e-6


def test_read_distribution_skips_a_header_line_only(tmp_path):
    path = tmp_path / "prior.csv"
    path.write_text("0.25\n0.25\n0.5\n")
    np.testing.assert_array_equal(read_distribution(str(path), 3), [0.25, 0.25, 0.5])
    path.write_text("p\n0.25\n0.25\n0.5\n")
    np.testing.assert_array_equal(read_distribution(str(path), 3), [0.25, 0.25, 0.5])


def test_per_user_candidates_from_a_column(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n_items = rng.integers(300, 400, size=500)
    ranks = its.sample_ranks(np.minimum(rng.integers(1, 200, size=500), n_items), n_items, 20, rng=rng)
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"rank": ranks, "n_candidates": n_items}).to_csv(path, index=False)
    status, out, _ = _run(["estimate", path, "--sample-size", 20, "--method", "mle", "--n-groups", 3, "--k", 10], capsys)
    assert status == 0
    want = estimate(ranks, n_items, 20, "mle", ks=[10], n_groups=3)
    np.testing.assert_allclose(pd.read_csv(io.StringIO(out))["estimate"], want["estimate"], rtol=1e-9)
    status, _, err = _run(["estimate", path, "--n-items", 400, "--sample-size", 20], capsys)
    assert status == 2 and "not both" in err
    pd.DataFrame({"rank": ranks}).to_csv(path, index=False)
    status, _, err = _run(["estimate", path, "--sample-size", 20], capsys)
    assert status == 2 and "--n-items is required" in err


def test_clip_keeps_estimates_in_the_metric_range(tmp_path, capsys):
    path = tmp_path / "ranks.csv"
    pd.DataFrame({"rank": np.ones(30, dtype=int)}).to_csv(path, index=False)
    status, out, _ = _run(["estimate", path, "--n-items", 3000, "--sample-size", 100, "--method", "bv", "--clip"], capsys)
    assert status == 0
    assert pd.read_csv(io.StringIO(out))["estimate"].between(0, 1).all()


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--interval", "0.9"], {"interval": 0.9}),
        (["--interval", "0.8", "--interval-method", "bootstrap", "--n-bootstrap", "30", "--seed", "4"],
         {"interval": 0.8, "interval_method": "bootstrap", "n_bootstrap": 30, "seed": 4}),
    ],
)
def test_interval_flags_add_the_columns_of_the_python_api(flags, options, ranks_csv, ranks, capsys):
    status, stdout, _ = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--method", "mn_mle", "--metric", "ndcg", "--k", "5,20", *flags], capsys)
    assert status == 0
    got = pd.read_csv(io.StringIO(stdout))
    expected = estimate(ranks, N_ITEMS, SAMPLE_SIZE, "mn_mle", "ndcg", [5, 20], **options)
    assert list(got.columns) == ["metric", "k", "estimate", "se", "lower", "upper"]
    np.testing.assert_allclose(got[["estimate", "se", "lower", "upper"]], expected[["estimate", "se", "lower", "upper"]],
                               rtol=1e-9)


def test_bootstrap_flags_without_the_bootstrap_method_are_an_error(ranks_csv, capsys):
    status, _, stderr = _run(["estimate", ranks_csv, "--n-items", N_ITEMS, "--sample-size", SAMPLE_SIZE,
                              "--interval", "0.9", "--n-bootstrap", "50"], capsys)
    assert status == 2 and "n_bootstrap applies only with interval_method='bootstrap'" in stderr
