"""Verdicts of notebook 00: the datasets of Li et al.'s Table 4 (KDD 2020, App. A; the same numbers
in Jin et al., AAAI 2021, Table 5 and Li et al., AAAI 2023, Table 5).

Notebook 00 compares no result of the papers with ours (our models are not the papers', so their
exact metrics are no target; later notebooks compare every estimate with our own exact values),
but whether our data are the papers' decides how every later comparison is read. A dataset with
the paper's users, items and interactions is ``reproduced``. The paper's pinterest-20, yelp and
book-X are not among our data: their rows of Table 4 are ``not testable here``, and the reason
says what stands in for them (pinterest-subset, yelp-diffnet, and for book-X's Fig. 8 our dataset
with the most items) and how it differs — for yelp-diffnet including where one model's held-out
items sink (table ``bottom_ranks``). The later rows grade the papers' claims on the stand-ins in
kind, never their printed numbers.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..data_and_models import isolated_shares, sinking_note
from ..paper import PAPER_DATASETS, paper_merge
from . import Claim

__all__ = ["claims"]

PAPER = "li2020kdd"
COUNTS = ("users", "items", "interactions")
QUOTE = ("We use four of the most commonly used datasets for recommendation studies, together with the book-X dataset, "
         "with a relatively large number of total items, for evaluating the effect of sampling size. The "
         "characteristics of these datasets are in Table 4.")
SOURCE = "App. A; Table 4"
#: the dataset of Table 4 that none of ours stands in for (Fig. 8's large dataset)
BOOK_X = "book-X"


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """One row per dataset of Table 4: ours where one of ours is it or stands in for it, and book-X."""
    datasets = table("datasets")
    ours = datasets[datasets["dataset"].isin(list(PAPER_DATASETS))]
    ours = ours.assign(paper_dataset=ours["dataset"].map(PAPER_DATASETS))
    if ours.empty:
        return []
    merged = paper_merge(ours, "li2020kdd_datasets", on=["paper_dataset"], scope={"paper_dataset": ours["paper_dataset"]},
                         how="inner")
    try:
        bottom = table("bottom_ranks")
    except FileNotFoundError:
        bottom = None
    shares = isolated_shares(bottom) if bottom is not None else pd.Series(dtype=float)
    most_isolated = shares.idxmax() if len(shares) else None
    out = []
    for row in merged.itertuples():
        mine = {c: int(getattr(row, f"{c}_x")) for c in COUNTS}
        theirs = {c: int(getattr(row, f"{c}_y")) for c in COUNTS}
        same = mine == theirs
        described = f" ({row.description})" if isinstance(getattr(row, "description", None), str) else ""
        if same:
            reason = "rule: users, items and interactions equal to the paper's (they are)."
        else:
            reason = (f"rule: users, items and interactions equal to the paper's. The paper's {row.paper_dataset} is "
                      f"not among our data: our {row.dataset} stands in for it{described}. Later rows grade "
                      f"the papers' claims on {row.dataset} in kind, never the numbers they print for "
                      f"{row.paper_dataset}.")
            if bottom is not None and row.dataset == most_isolated:
                reason += f" {sinking_note(bottom, row.dataset)}"
        out.append(Claim(paper=PAPER, claim=f"The {row.paper_dataset} dataset of Table 4 (users, items, interactions)",
                         quote=QUOTE, source=SOURCE, dataset=row.dataset,
                         our_value=", ".join(f"{mine[c]:,} {c}" for c in COUNTS),
                         paper_value=", ".join(f"{theirs[c]:,} {c}" for c in COUNTS),
                         verdict="reproduced" if same else "not testable here", reason=reason))
    largest = datasets.loc[datasets["items"].idxmax()]
    out.append(Claim(paper=PAPER, claim=f"The {BOOK_X} dataset of Table 4 (users, items, interactions)", quote=QUOTE,
                     source=SOURCE, dataset="none", our_value="", paper_value="Table 4", verdict="not testable here",
                     reason=f"the paper's {BOOK_X} ('with a relatively large number of total items') is not among our data. "
                     f"Its one use "
                     f"is Fig. 8 (the sample size); notebook 03 grades Fig. 8's claim on {largest['dataset']}, our "
                     f"dataset with the most items ({int(largest['items']):,}), in kind."))
    return out
