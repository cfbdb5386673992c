"""The bad-input contract of the public functions and of the command line, in one place.

Every row of a table is one bad call and a fragment of the message it must give. Functions
raise ``ValueError``; commands exit with status 2 and print one line
``itemsampling <command>: error: <message>`` to standard error, without a traceback.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

import itemsampling as its
from itemsampling import corrections, kernels
from itemsampling.cli import build_parser, main
from itemsampling.hit_ratio import hit_ratio_curve
from itemsampling.metrics import metric_weights

INT64_OVERFLOW = 2**63 + 5  # a uint64 rank that int64 cannot hold


def case(id: str, func, *args, message: str, **kwargs):
    """One row: ``func(*args, **kwargs)`` raises a ValueError whose message contains ``message``."""
    return pytest.param(func, args, kwargs, message, id=id)


FUNCTION_CASES = [
    # metric_weights
    case("metric_weights/unknown-metric", its.metric_weights, "hits", 10, 100,
         message="unknown metric 'hits'; allowed: recall, precision, ndcg, ap, auc"),
    case("metric_weights/float-cutoff", its.metric_weights, "ndcg", 10.0, 100,
         message="cut-offs k must be positive integers or None (no cut-off), got 10.0"),
    # global_metrics
    case("global_metrics/float-cutoff", its.global_metrics, [1, 2, 3], 10, ks=10.0,
         message="cut-offs k must be positive integers or None (no cut-off), got 10.0"),
    case("global_metrics/float-cutoff-in-list", its.global_metrics, [1, 2, 3], 10, ks=[5, 10.0],
         message="cut-offs k must be positive integers or None (no cut-off), got 10.0"),
    case("global_metrics/per-user-n-too-short", its.global_metrics, [1, 2, 3], np.array([10, 10]),
         message="n_items must be one integer N or one N_u per user (3 entries), got an array of shape (2,)"),
    case("global_metrics/per-user-n-of-one", its.global_metrics, [1, 2, 3], np.array([10]),
         message="n_items must be one integer N or one N_u per user (3 entries), got an array of shape (1,)"),
    case("global_metrics/uint64-overflow", its.global_metrics,
         np.array([1, INT64_OVERFLOW], dtype=np.uint64), 10, message=f"found {INT64_OVERFLOW} at position 1"),
    # rank_kernel, kernel_columns
    case("rank_kernel/n-above-N", its.rank_kernel, 10, 11, message="1 <= n <= n_items (N=10)"),
    case("rank_kernel/unknown-scheme", its.rank_kernel, 10, 5, "poisson",
         message="unknown sampling scheme 'poisson'; allowed: binomial, hypergeometric"),
    case("kernel_columns/rank-above-n", its.kernel_columns, 10, 5, [6], message="must lie in 1..n (n = 5)"),
    # sample_ranks, adaptive_sample_ranks, sampling_cost
    case("sample_ranks/global-rank-above-N", its.sample_ranks, [1, 11], 10, 5, rng=0,
         message="global_ranks must lie in 1..n (1-based, n = 10); found 11 at position 1"),
    case("sample_ranks/zero-based-ranks", its.sample_ranks, [0, 3], 10, 5, rng=0,
         message="global_ranks must lie in 1..n, counted from 1 (the best is 1); found 0 at position 0 "
                 "(1 below 1 in all). Values counted from 0, such as positions from numpy's argsort, need 1 added"),
    case("estimate/negative-ranks", its.estimate, [-2, 3], 100, 10, "sampled", "recall", 5,
         message="sampled_ranks must lie in 1..n, counted from 1"),
    case("sample_ranks/n-above-N", its.sample_ranks, [1, 2], 10, 11, rng=0, message="1 <= n <= n_items"),
    case("adaptive_sample_ranks/n0-above-n-max", its.adaptive_sample_ranks, [1, 2], 100, 20, 10, rng=0,
         message="n0 = 20 must not exceed n_max = 10"),
    case("sampling_cost/n0-above-n-max", its.sampling_cost, [5, 10], n0=10, n_max=5,
         message="n0=10, n_max=5"),
    # mapping, fit_beta, expected_sampled_hit_ratio
    case("mapping/unknown-kind", its.mapping, [1, 5], 100, 10, kind="cubic",
         message="unknown mapping kind 'cubic'; allowed: linear, bound, beta"),
    case("fit_beta/rank-above-n", its.fit_beta, [1, 11], 100, 10, message="found 11 at position 1"),
    case("expected_sampled_hit_ratio/short-distribution", its.expected_sampled_hit_ratio, np.full(5, 0.2), 10, 5,
         [1], message="rank_distribution must have shape (10,), one entry per global rank"),
    # sampled_ranks_from_scores
    case("sampled_ranks_from_scores/1-d", its.sampled_ranks_from_scores, [0.3, 0.2],
         message="scores must be a 2-D array, one row per user"),
    case("sampled_ranks_from_scores/one-column", its.sampled_ranks_from_scores, [[0.3], [0.2]],
         message="at least one row and two columns (the held-out item and at least one sampled item)"),
    case("sampled_ranks_from_scores/no-rows", its.sampled_ranks_from_scores, np.zeros((0, 5)),
         message="at least one row and two columns"),
    case("sampled_ranks_from_scores/nan", its.sampled_ranks_from_scores, [[0.3, 0.2], [0.1, np.nan]],
         message="1 NaN or infinite value(s), the first at row 1, column 1"),
    case("sampled_ranks_from_scores/inf", its.sampled_ranks_from_scores, [[np.inf, 0.2]],
         message="NaN or infinite value(s), the first at row 0, column 0"),
    case("sampled_ranks_from_scores/text", its.sampled_ranks_from_scores, [["0.3", "0.2"]],
         message="scores must be numbers"),
    case("sampled_ranks_from_scores/column-out-of-range", its.sampled_ranks_from_scores, [[0.3, 0.2]],
         target_column=2, message="target_column must lie in 0..1 (scores has 2 columns)"),
    case("sampled_ranks_from_scores/column-not-integer", its.sampled_ranks_from_scores, [[0.3, 0.2]],
         target_column=1.0, message="target_column must be an integer or one integer per row"),
    case("sampled_ranks_from_scores/columns-per-row-too-few", its.sampled_ranks_from_scores,
         [[0.3, 0.2], [0.1, 0.4]], target_column=[0], message="target_column has 1 entries but scores has 2 rows"),
    # evaluate_adaptive
    case("evaluate_adaptive/n-max-above-N", its.evaluate_adaptive, lambda u, i: np.zeros(i.shape), [1, 2], 10,
         n0=2, n_max=11, message="n_max = 11 exceeds the number of candidate items of some user (smallest N_u = 10)"),
    case("evaluate_adaptive/nan-scores", its.evaluate_adaptive, lambda u, i: np.full(i.shape, np.nan), [1, 2], 10,
         n0=2, n_max=8, message="the scorer returned 4 NaN and 0 infinite score(s) when asked for 2 item(s) of "
                                "each of 2 user(s)"),
    # rank_distribution, estimate
    case("rank_distribution/method-without-distribution", its.rank_distribution, [1, 2], 100, 10, "sampled",
         message="method 'sampled' corrects each metric separately and does not define a rank distribution"),
    case("estimate/unknown-method", its.estimate, [1, 2], 100, 10, "magic", message="unknown method 'magic'"),
    case("estimate/option-of-another-method", its.estimate, [1, 2], 100, 10, "mle", gamma=0.1,
         message="unknown option(s) 'gamma' for method 'mle'; allowed:"),
    case("estimate/rank-above-n", its.estimate, [1, 11], 100, 10, "mle",
         message="sampled_ranks must lie in 1..n (1-based, n = 10); found 11"),
    case("estimate/kernel-too-large", its.estimate, [1, 2], 10**7, 1000, "bv", grid="exact",
         message="use a smaller sample size n or fewer items N"),
    case("estimate/per-user-n-wrong-length", its.estimate, [1, 2], [50, 60, 70], 10, "mle",
         message="n_items must be one integer N or one N_u per user (2 entries)"),
    case("estimate/n-above-a-users-candidates", its.estimate, [1, 2], [50, 8], 10, "bv",
         message="sample_size n=10 is out of range"),
    # Run, read_run, correct, compare, compare_many
    case("Run/rank-above-candidates", its.Run, [1, 5], 4, 100, "uniform_without_replacement",
         message="row 1: rank 5 is outside 1..n_u = 4"),
    case("Run/unknown-protocol", its.Run, [1, 2], 4, 100, "sorted", message="unknown protocol 'sorted'"),
    case("read_run/unknown-format", its.read_run, [[0.3, 0.2]], "csv", message="unknown format 'csv'"),
    case("correct/needs-a-run", its.correct, its.Run([1, 2], 4, 100, "uniform_without_replacement"), "magic",
         message="unknown method 'magic'"),
    case("compare/other-users", its.compare, its.Run([1, 2], 4, 100, "uniform_without_replacement", "a"),
         its.Run([1, 2, 3], 4, 100, "uniform_without_replacement", "b"), message="must hold the same users"),
    case("compare_many/same-names", its.compare_many, [its.Run([1, 2], 4, 100, "uniform_without_replacement")] * 2,
         message="models need distinct names to be compared"),
    # estimate_many, Estimator
    case("estimate_many/duplicate-labels", its.estimate_many, [1, 2], 50, 10, [its.Estimator("bv")] * 2,
         message="distinct labels"),
    case("Estimator/option-of-another-method", its.Estimator, "mle", {"gamma": 0.1},
         message="unknown option(s) 'gamma' for method 'mle'"),
    case("Estimator/scheme-is-per-call", its.Estimator, "bv", {"scheme": "binomial"},
         message="scheme and n_groups apply to all estimators of a call"),    # estimate_sampled (drawn negatives with known probabilities)
    case("estimate_sampled/positive-as-own-negative", its.estimate_sampled, [0, 0], [1, 2], [True, False], 10,
         inclusion=np.full(10, 0.5), positives=[2, 2],
         message="1 rows draw the user's positive as its own negative (first: user 0, item 2)"),
    case("estimate_sampled/negative-outside-catalogue", its.estimate_sampled, [0], [12], [True], 10,
         inclusion=np.full(10, 0.5), message="negatives must be item indices in 0..9 (the catalogue); found [12]"),
    case("estimate_sampled/probabilities-not-summing-to-one", its.estimate_sampled, [0], [1], [True], 10,
         method="hansen_hurwitz", probabilities=np.full(10, 0.2), message="sum to 2, not 1"),
    case("estimate_sampled/unknown-method", its.estimate_sampled, [0], [1], [True], 10, method="mn_mes",
         message="method must be one of horvitz_thompson, hansen_hurwitz, sampled"),
    # multi_positive_metrics, estimate_multi_positive (several held-out items)
    case("multi_positive_metrics/unknown-metric", its.multi_positive_metrics, [1, 2], [0, 0], "mrr",
         message="unknown metric(s) ['mrr']"),
    case("estimate_multi_positive/rank-above-n", its.estimate_multi_positive, [1, 11], [0, 0], 100, 10,
         message="sampled_ranks must lie in 1..n (1-based, n = 10); found 11 at position 1"),
    case("estimate_multi_positive/uncorrected-method", its.estimate_multi_positive, [1, 2], [0, 0], 100, 10,
         method="sampled", message="method 'sampled' does not estimate metrics with several positives"),
    case("estimate_multi_positive/users-length", its.estimate_multi_positive, [1, 2], [0, 0, 1], 100, 10,
         message="users must be one value or one per sampled rank (2)"),
    case("estimate_multi_positive/n-above-N", its.estimate_multi_positive, [1, 2], [0, 0], 10, 20,
         message="sample_size (n <= N) must lie in 1..n (1-based, n = 10)"),
]


DOORS = {  # public functions that take per-user candidates N_u, each given three users
    "global_metrics": lambda n_items: its.global_metrics([1, 2, 3], n_items),
    "sample_ranks": lambda n_items: its.sample_ranks([1, 2, 3], n_items, 2, rng=0),
    "hit_ratio_curve": lambda n_items: hit_ratio_curve([1, 2, 3], n_items),
    "estimate": lambda n_items: its.estimate([1, 2, 1], n_items, 2, "bv", "recall", 1),
    "fit_beta": lambda n_items: its.fit_beta([1, 2, 3], n_items, 2),
}


@pytest.mark.parametrize(("n_items", "message"), [
    (np.array([10, 10]), "n_items must be one integer N or one N_u per user (3 entries), got an array of shape (2,)"),
    (np.array([10.0, 10.0, 10.0]), "n_items must be one integer N or one N_u per user (3 entries), got an array of "
                                   "shape (3,) and dtype float64"),
    (np.array([10, 1, 10]), "per-user n_items N_u must be integers >= 2 (the target plus at least one other item), "
                            "found 1"),
    (1, "n_items must be an integer >= 2, got 1"),
])
@pytest.mark.parametrize("door", sorted(DOORS))
def test_one_message_per_kind_of_bad_candidates_whichever_door(door, n_items, message):
    with pytest.raises(ValueError) as info:
        DOORS[door](n_items)
    assert message in str(info.value)


def test_every_public_function_has_a_row():
    public = {name for name in its.__all__ if callable(getattr(its, name))
              and not (isinstance(getattr(its, name), type) and issubclass(getattr(its, name), Warning))}
    assert public - {row.values[0].__name__ for row in FUNCTION_CASES} == set()


@pytest.mark.parametrize(("func", "args", "kwargs", "message"), FUNCTION_CASES)
def test_function_rejects_bad_input(func, args, kwargs, message):
    with pytest.raises(ValueError) as info:
        func(*args, **kwargs)
    assert message in str(info.value)


def test_cls_refuses_a_problem_larger_than_the_memory_limit(monkeypatch):
    """The kernel alone fits under the limit, but cls holds four N x n arrays at its peak."""
    n_items, sample_size = 1000, 100
    monkeypatch.setattr(kernels, "MAX_KERNEL_BYTES", 2 * n_items * sample_size * 8)
    weights = metric_weights("recall", 10, n_items)[:10]
    with pytest.raises(ValueError, match=r"cls would need about .* GiB \(4 arrays of N x n = 1000 x 100"):
        corrections.cls(weights, n_items, sample_size)
    with pytest.raises(ValueError, match=r"raise itemsampling\.kernels\.MAX_KERNEL_BYTES"):
        its.estimate([1, 2], n_items, sample_size, "cls", ks=[10])


# ----------------------------------------------------------------------------- command line

#: Placeholders (see :func:`paths`): ``{ranks}`` a ranks CSV, ``{blank_line}`` one with a blank
#: third line, ``{absent}`` a file that does not exist, ``{no_folder}`` a file in a folder that
#: does not exist, ``{folder}`` an existing folder, ``{file}`` an existing file; priors for
#: N = 100: ``{prior_short}`` with 3 values, ``{prior_text}`` with text on line 3,
#: ``{prior_2d}`` a 10 x 10 array, ``{prior_sum}`` with values that do not sum to one; JSON files:
#: ``{json_object}`` an empty object, ``{json_list}`` a list, ``{unknown_study}`` a notebook whose
#: study does not exist.
ESTIMATE = ["estimate", "{ranks}", "--n-items", "100", "--sample-size", "10"]
#: Output paths are checked before anything is read or computed: these commands name inputs
#: that do not exist, so an error about those would mean that the output was checked too late.
ESTIMATE_ABSENT = ["estimate", "{absent}", "--n-items", "100", "--sample-size", "10"]
STATS = ["data", "stats", "--dataset", "no-such-dataset"]
TRAIN = ["train", "--dataset", "no-such-dataset", "--model", "no-such-model"]
PROFILE = ["profile", "--dataset", "no-such-dataset", "--model", "no-such-model"]
RANKS = ["ranks", "--dataset", "no-such-dataset", "--model", "no-such-model", "--protocol", "all",
         "--sample-size", "10"]
STUDY = ["study"]
EVALUATE = ["evaluate-adaptive", "--dataset", "no-such-dataset", "--scorer", "no_such_module:f", "--protocol", "all",
            "--n0", "2", "--n-max", "4"]
STUDY_ARGS = ["--study", "sampled_metrics", "--config", "{json_object}", "--seed", "0"]
MISSING_FOLDER = "the folder '{folder}{sep}no-such-folder' does not exist; create it first"

COMMAND_CASES = [
    # itemsampling correct, itemsampling compare
    pytest.param(["correct", "{ranks}", "--format", "ranks", "--n-items", "100"],
                 "has no 'sample_size' column (n_u: the positive plus its sampled negatives)",
                 id="correct/ranks-without-sample-size"),
    pytest.param(["compare", "{ranks}", "--format", "ranks", "--n-items", "100"], "give at least two models",
                 id="compare/one-model"),
    # itemsampling estimate
    pytest.param([*ESTIMATE_ABSENT, "--output", "{no_folder}"], MISSING_FOLDER, id="estimate/output-folder-missing"),
    pytest.param([*ESTIMATE_ABSENT, "--output", "{folder}"], "--output '{folder}' is a folder",
                 id="estimate/output-is-a-folder"),
    pytest.param(["estimate", "{blank_line}", *ESTIMATE[2:]], "has a blank line at line 3", id="estimate/blank-line"),
    pytest.param([*ESTIMATE, "--method", "mle", "--prior", "{prior_short}"],
                 "--prior does not apply to --method mle; it is an option of cls, bv, mn",
                 id="estimate/prior-not-an-option-of-mle"),
    pytest.param([*ESTIMATE, "--method", "mn_mes", "--c", "5"],
                 "--c does not apply to --method mn_mes; it is an option of wmle", id="estimate/c-not-an-option"),
    pytest.param([*ESTIMATE, "--method", "wmle", "--eta-scale", "code"],
                 "--eta-scale does not apply to --method wmle", id="estimate/eta-scale-not-an-option"),
    pytest.param([*ESTIMATE, "--method", "bv", "--max-iter", "5"],
                 "--max-iter does not apply to --method bv", id="estimate/max-iter-not-an-option"),
    pytest.param([*ESTIMATE, "--method", "cls", "--prior", "{absent}"], "--prior file '{absent}' does not exist",
                 id="estimate/prior-file-missing"),
    pytest.param([*ESTIMATE, "--method", "bv", "--prior", "{prior_short}"],
                 "holds 3 value(s) in shape (3,); it needs one probability per global rank R = 1..N, N = 100",
                 id="estimate/prior-too-short"),
    pytest.param([*ESTIMATE, "--method", "bv", "--prior", "{prior_text}"], "line 3 is not a number",
                 id="estimate/prior-with-text"),
    pytest.param([*ESTIMATE, "--method", "mle", "--init", "{prior_2d}"], "holds 100 value(s) in shape (10, 10)",
                 id="estimate/init-not-1d"),
    pytest.param([*ESTIMATE, "--method", "mn", "--prior", "{prior_sum}"], "prior must sum to 1",
                 id="estimate/prior-not-a-distribution"),
    # itemsampling estimate-sampled, estimate-positives
    pytest.param(["estimate-sampled", "{absent}", "--n-items", "100", "--sampler", "popularity", "--output",
                  "{no_folder}"], MISSING_FOLDER, id="estimate-sampled/output-folder-missing"),
    pytest.param(["estimate-sampled", "{ranks}", "--n-items", "100", "--sampler", "popularity"],
                 "lacks the column(s) user, negative, above", id="estimate-sampled/wrong-columns"),
    pytest.param(["estimate-positives", "{absent}", "--n-items", "100", "--sample-size", "10", "--output",
                  "{folder}"], "--output '{folder}' is a folder", id="estimate-positives/output-is-a-folder"),
    pytest.param(["estimate-positives", "{absent}", "--n-items", "100", "--sample-size", "10"],
                 "file '{absent}' does not exist", id="estimate-positives/ranks-missing"),
    # itemsampling data stats
    pytest.param([*STATS, "--output", "{no_folder}"], MISSING_FOLDER, id="data-stats/output-folder-missing"),
    pytest.param([*STATS, "--output", "{folder}"], "--output '{folder}' is a folder",
                 id="data-stats/output-is-a-folder"),
    # itemsampling study datasets (the compendium's table of the datasets, with its record)
    pytest.param(["study", "datasets", *STATS[2:], "--output", "{no_folder}"], MISSING_FOLDER,
                 id="study-datasets/output-folder-missing"),
    # itemsampling data verify (writes no file)
    pytest.param(["data", "verify", "--dataset", "no-such-dataset"], "unknown dataset 'no-such-dataset'",
                 id="data-verify/unknown-dataset"),
    # itemsampling train
    pytest.param([*TRAIN, "--out-dir", "{no_folder}"], MISSING_FOLDER, id="train/out-dir-folder-missing"),
    pytest.param([*TRAIN, "--out-dir", "{file}"], "--out-dir '{file}' is a file", id="train/out-dir-is-a-file"),
    # itemsampling profile: the committed ranks are read before anything is fitted
    pytest.param([*PROFILE, "--out-dir", "{no_folder}"], MISSING_FOLDER, id="profile/out-dir-folder-missing"),
    pytest.param([*PROFILE, "--out-dir", "{file}"], "--out-dir '{file}' is a file", id="profile/out-dir-is-a-file"),
    pytest.param([*PROFILE, "--out-dir", "{folder}"], "unseen.parquet' does not exist; run `itemsampling train` first",
                 id="profile/no-committed-ranks"),
    # itemsampling study
    pytest.param([*STUDY, "chunk", *STUDY_ARGS, "--dataset", "d", "--model", "m", "--protocol", "all",
                  "--output", "{no_folder}"], MISSING_FOLDER, id="study-chunk/output-folder-missing"),
    pytest.param([*STUDY, "chunk", "--study", "nosuch", "--config", "{json_object}", "--seed", "0", "--dataset", "d",
                  "--model", "m", "--protocol", "all", "--output", "{folder}{sep}x.parquet"],
                 "unknown study 'nosuch'", id="study-chunk/unknown-study"),
    pytest.param([*STUDY, "chunk", "--study", "mn_users", "--config", "{json_object}", "--seed", "0", "--dataset", "d",
                  "--model", "m", "--protocol", "all", "--output", "{folder}{sep}x.parquet"],
                 "itemsampling_study.mn_users is not a ChunkedStudy (itemsampling_study.contract): it lacks "
                 "chunk_table", id="study-chunk/study-without-chunks"),
    pytest.param([*STUDY, "tables", *STUDY_ARGS, "--tables", "t", "--out-dir", "{file}"],
                 "--out-dir '{file}' is a file", id="study-tables/out-dir-is-a-file"),
    pytest.param([*STUDY, "tables", "--study", "sampled_metrics", "--config", "{json_list}", "--seed", "0", "--tables",
                  "t", "--out-dir", "{folder}"], "--config must be a JSON object", id="study-tables/config-not-an-object"),
    pytest.param([*STUDY, "tables", "--study", "sampled_metrics", "--config", "{file}", "--seed", "0", "--tables", "t",
                  "--out-dir", "{folder}"], "--config '{file}' is not valid JSON", id="study-tables/config-not-json"),
    pytest.param([*STUDY, "tables", "--study", "sampled_metrics", "--config", "{absent}", "--seed", "0", "--tables",
                  "t", "--out-dir", "{folder}"], "--config '{absent}' does not exist", id="study-tables/config-missing"),
    pytest.param([*STUDY, "provenance", "--output", "{folder}"], "--output '{folder}' is a folder",
                 id="study-provenance/output-is-a-folder"),
    pytest.param([*STUDY, "verdicts", "--notebooks", "{json_list}", "--out-dir", "{folder}"],
                 "--notebooks must be a JSON object", id="study-verdicts/notebooks-not-an-object"),
    pytest.param([*STUDY, "verdicts", "--notebooks", "{unknown_study}", "--out-dir", "{folder}"],
                 "study 'nosuch' has no claims module", id="study-verdicts/unknown-study"),
    pytest.param([*STUDY, "verdicts", "--notebooks", "{json_object}", "--out-dir", "{file}"],
                 "--out-dir '{file}' is a file", id="study-verdicts/out-dir-is-a-file"),
    pytest.param([*STUDY, "notebook", "--notebook", "{absent}", "--parameters", "{json_object}", "--output",
                  "{folder}{sep}x.ipynb"], "--notebook '{absent}' does not exist", id="study-notebook/notebook-missing"),
    pytest.param([*STUDY, "notebook", "--notebook", "{file}", "--parameters", "{json_list}", "--output",
                  "{folder}{sep}x.ipynb"],
                 "--parameters must be a JSON object", id="study-notebook/parameters-not-an-object"),
    pytest.param([*STUDY, "notebook", "--notebook", "{file}", "--parameters", "{json_object}", "--output", "{folder}"],
                 "--output '{folder}' is a folder", id="study-notebook/output-is-a-folder"),
    # itemsampling ranks
    pytest.param([*RANKS, "--output", "{no_folder}"], MISSING_FOLDER, id="ranks/output-folder-missing"),
    pytest.param([*RANKS, "--output", "{folder}"], "--output '{folder}' is a folder", id="ranks/output-is-a-folder"),
    # itemsampling evaluate-adaptive
    pytest.param([*EVALUATE, "--output", "{no_folder}"], MISSING_FOLDER, id="evaluate-adaptive/output-folder-missing"),
    pytest.param([*EVALUATE, "--ranks-output", "{folder}"], "--ranks-output '{folder}' is a folder",
                 id="evaluate-adaptive/ranks-output-is-a-folder"),
]


def _command_names(parser: argparse.ArgumentParser, prefix: str = "") -> set[str]:
    """Names of the runnable commands of ``parser``, sub-commands joined by spaces."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        return {prefix}
    return set().union(*(_command_names(sub, f"{prefix} {name}".strip())
                         for name, sub in subparsers[0].choices.items()))


def test_every_command_has_a_row():
    commands = {tuple(name.split()) for name in _command_names(build_parser())}
    covered = {command for command in commands for row in COMMAND_CASES
               if tuple(row.values[0][: len(command)]) == command}
    assert commands - covered == set()


@pytest.fixture
def paths(tmp_path):
    """The placeholders of :data:`COMMAND_CASES`, as files and folders in ``tmp_path``."""
    (tmp_path / "ranks.csv").write_text("rank\n1\n3\n2\n")
    (tmp_path / "blank.csv").write_text("rank\n1\n\n3\n")
    (tmp_path / "short.csv").write_text("0.25\n0.25\n0.5\n")
    (tmp_path / "text.csv").write_text("probability\n0.5\nhalf\n")
    np.save(tmp_path / "square.npy", np.full((10, 10), 0.01))
    np.savetxt(tmp_path / "sum.csv", np.full(100, 0.5))
    (tmp_path / "object.json").write_text("{}")
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "unknown_study.json").write_text('{"01": "nosuch"}')
    return {"ranks": tmp_path / "ranks.csv", "blank_line": tmp_path / "blank.csv",
            "absent": tmp_path / "absent.csv", "no_folder": tmp_path / "no-such-folder" / "out.csv",
            "folder": tmp_path, "file": tmp_path / "blank.csv", "prior_short": tmp_path / "short.csv",
            "prior_text": tmp_path / "text.csv", "prior_2d": tmp_path / "square.npy",
            "prior_sum": tmp_path / "sum.csv", "json_object": tmp_path / "object.json",
            "json_list": tmp_path / "list.json", "unknown_study": tmp_path / "unknown_study.json", "sep": os.sep}


@pytest.mark.parametrize(("argv", "message"), COMMAND_CASES)
def test_command_exits_with_one_error_line(argv, message, paths, capsys):
    status = main([arg.format(**paths) for arg in argv])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.startswith(f"itemsampling {argv[0]}: error: ") and captured.err.count("\n") == 1
    assert message.format(**paths) in captured.err
