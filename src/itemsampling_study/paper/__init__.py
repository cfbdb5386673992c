"""Numbers printed in the papers, kept as small CSV files next to this module.

Each file is one table of one paper in long form, with a ``source`` column that names the
paper (authors, title, venue, DOI) and the table. Li et al.'s datasets keep the paper's names
(column ``paper_dataset``); :data:`PAPER_DATASETS` says which of ours stands in for each, and
:data:`SAME_DATA` which of those have the paper's users and items. They are read only to compare
our results with the papers; nothing is ever tuned to them.

============================================ ==================================================================
``krichene2020kdd_table1``                   toy example, exact metrics (recommender, metric, k, paper)
``krichene2020kdd_table2``                   toy example, sampled metrics (paper_mean, paper_std)
``krichene2020kdd_table3``                   ml-1m, exact / sampled / corrected metrics (paper_percent, paper_std_percent)
``krichene2020kdd_table4``                   ml-1m, correct orderings of pairs out of 100 runs (paper_agree)
``krichene2020kdd_text``                     numbers stated in the text about Figs. 5-6 (figure, subject,
                                             pair, quantity, relation: =, < or >, paper_value)
``li2020kdd_datasets``                       dataset statistics, Table 4 (interactions, users, items; the same in
                                             AAAI'21 Table 5 and AAAI'23 Table 5)
``li2020kdd_table2``                         Beta@P parameter a per model and dataset (paper_a)
``li2020kdd_table3``                         SHR@k and HR@f(k) for bound and Beta@0.5 (paper_value)
``li2020kdd_table5``, ``li2020kdd_table6``   MultiVAE on ml-1m, n = 100 and 1000, three schemes (paper_value)
``li2020kdd_table7``                         mapping errors (paper_value)
``jin2021aaai_metrics_at_10``                Recall, NDCG, AP@10, exact and mean ± std of six estimators,
                                             n = 100 (Tables 2, 3, 6, 7; paper_percent, paper_std_percent)
``jin2021aaai_winners``                      correct winners out of 100 repeats, n = 100 (Tables 4, 8-10;
                                             paper_correct)
``li2023aaai_relative_error``                average relative error over K = 1..50, pinterest-20 and yelp
                                             (Tables 6, 9, 10), and ml-20m of Table 10 (paper_percent,
                                             paper_std_percent)
``li2023aaai_winners``                       Table 8: correct winners out of 100 repeats, K = 10, 20, of the
                                             fixed-size estimators (n = 500; ml-20m n = 1000) and of the
                                             adaptive MLE (``sample_size``: n_max = 3200; paper_correct)
``li2023aaai_adaptive``                      AAAI'23 Tables 7, 11: fixed-size estimators and adaptive MLE
                                             (paper_percent, paper_std_percent, mean_sample_size)
============================================ ==================================================================

The AAAI 2021 and 2023 tables carry the paper's dataset name (``paper_dataset``) and ours
(``dataset``, as :data:`PAPER_DATASETS` maps them; empty for ml-20m, which none of ours stands
in for): citeulike is our citeulike-a (the same users and items), pinterest-20 and yelp are
other versions of our pinterest-subset (a subset of pinterest-20's users) and yelp-diffnet; ALS
is our iALS (``ials``). The AAAI 2021 text calls Tables 8, 9 and 10 pinterest-20, yelp and
citeulike, their captions citeulike, yelp and pinterest-20: the files follow the captions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from importlib.resources import files

import pandas as pd

__all__ = ["PAPER_DATASETS", "PAPER_TABLES", "SAME_DATA", "paper_merge", "paper_table", "stand_ins"]

PAPER_TABLES = tuple(sorted(p.name.removesuffix(".csv") for p in files(__name__).iterdir()
                            if p.name.endswith(".csv")))
#: our datasets and the papers' datasets they stand in for (KDD 2020 Tables 2-4, 7; AAAI 2021;
#: AAAI 2023): the ``dataset`` and ``paper_dataset`` of the paper tables
PAPER_DATASETS = {"ml-1m": "ml-1m", "citeulike-a": "citeulike", "pinterest-subset": "pinterest-20",
                  "yelp-diffnet": "yelp"}
#: our datasets with the same users and items as the papers' (the others are other versions of
#: pinterest-20 and yelp, with other N): only these can be held against the papers' exact metrics
SAME_DATA = ("ml-1m", "citeulike-a")


def paper_table(name: str) -> pd.DataFrame:
    """One paper table of :data:`PAPER_TABLES` (cut-offs ``k`` as nullable integers)."""
    if name not in PAPER_TABLES:
        raise ValueError(f"unknown paper table {name!r}; available: {', '.join(PAPER_TABLES)}")
    frame = pd.read_csv(files(__name__).joinpath(f"{name}.csv"))
    if "k" in frame.columns:
        frame["k"] = frame["k"].astype("Int64")
    return frame


def stand_ins(name: str) -> dict[str, str]:
    """Our datasets that stand in for the datasets of the paper table ``name`` (ours -> the
    paper's, in the order of :data:`PAPER_DATASETS`)."""
    theirs = set(paper_table(name)["paper_dataset"])
    return {ours: paper for ours, paper in PAPER_DATASETS.items() if paper in theirs}


def paper_merge(ours: pd.DataFrame, paper: str | pd.DataFrame, on: Sequence[str], *,
                scope: Mapping[str, Collection] | None = None, how: str = "inner") -> pd.DataFrame:
    """``ours`` joined to a paper table on ``on``, failing loudly when a paper row finds no partner.

    A comparison with a paper must not lose a row silently (a label spelt ``beta@p`` in one table
    and ``beta@P`` in the other would drop it from an inner join). Every row of the paper table
    within ``scope`` must match at least one row of ``ours``.

    Parameters
    ----------
    ours : DataFrame
        Our results, with the columns ``on``.
    paper : str or DataFrame
        A name of :data:`PAPER_TABLES`, or such a table already filtered.
    on : sequence of str
        The join columns; both sides must have them all.
    scope : mapping of column to values, optional
        The paper rows the comparison is about (e.g. ``{"dataset": ["ml-1m"]}``: the paper's rows
        of datasets we do not have are left out). Without it, every paper row must match.
    how : {"inner", "left"}
        ``inner``: only the matched rows; ``left``: every row of ours, with the paper's columns
        empty where the paper has no value.

    Raises
    ------
    ValueError
        A join column is missing, or a paper row in scope has no partner in ``ours`` (the
        unmatched keys are listed, with the values ours has in each join column).
    """
    if how not in ("inner", "left"):
        raise ValueError(f"how must be 'inner' or 'left', got {how!r}")
    theirs = paper_table(paper) if isinstance(paper, str) else paper
    label = paper if isinstance(paper, str) else "the paper table"
    on = list(on)
    for side, frame in (("ours", ours), (label, theirs)):
        missing = [c for c in on if c not in frame.columns]
        if missing:
            raise ValueError(f"cannot join with {label}: {side} lacks the columns {missing}")
    if scope:
        for column, values in scope.items():
            if column not in theirs.columns:
                raise ValueError(f"scope names {column!r}, which {label} does not have")
            theirs = theirs[theirs[column].isin(list(values))]
    if "source" in theirs.columns and "source" not in on:
        theirs = theirs.drop(columns="source")
    keys = theirs[on].drop_duplicates()
    found = keys.merge(ours[on].drop_duplicates(), on=on, how="left", indicator=True)
    lost = found[found["_merge"] == "left_only"][on]
    if len(lost):
        have = "; ".join(f"{c}: {sorted(map(str, ours[c].dropna().unique()))[:12]}" for c in on)
        raise ValueError(f"{len(lost)} row(s) of {label} find no partner in our results on {on}: "
                         f"{lost.head(5).to_dict('records')} (ours have {have})")
    return ours.merge(theirs, on=on, how=how)
