"""Verdicts of notebook 00: the datasets the papers describe (Li et al., KDD 2020, Table 4; the
same numbers in Jin et al., AAAI 2021, Table 5 and Li et al., AAAI 2023, Table 5).

Notebook 00 compares no result of the papers with ours (our models are not the papers', so their
exact metrics are no target; later notebooks compare every estimate with our own exact values),
but whether our data are the papers' decides how every later comparison is read: a dataset with
the paper's users, items and interactions is ``reproduced``; our pinterest-subset and yelp-diffnet
stand in for the paper's pinterest-20 and yelp but are other versions, so the paper's results on
those can be compared only in kind (``not testable here``), and the reason says how they differ —
for yelp-diffnet including where one model's held-out items sink (table ``bottom_ranks``).
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


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """One row per dataset of ours that stands in for one of the papers' (``datasets`` table)."""
    ours = table("datasets")
    ours = ours[ours["dataset"].isin(list(PAPER_DATASETS))].assign(paper_dataset=lambda t: t["dataset"].map(PAPER_DATASETS))
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
        reason = (f"rule: users, items and interactions equal to the paper's ({'they are' if same else 'they differ'})."
                  + ("" if same else f" Our {row.dataset} stands in for the paper's {row.paper_dataset}; its results "
                     "compare with the paper's only in kind."))
        if not same and bottom is not None and row.dataset == most_isolated:
            reason += f" {sinking_note(bottom, row.dataset)}"
        out.append(Claim(paper=PAPER, claim=f"The {row.paper_dataset} dataset of the papers' experiments", quote=f"The {row.paper_dataset} dataset of the papers' experiments", source="Table 4", dataset=row.dataset, our_value=", ".join(f"{mine[c]:,} {c}" for c in COUNTS), paper_value=", ".join(f"{theirs[c]:,} {c}" for c in COUNTS), verdict="reproduced" if same else "not testable here", reason=reason))
    return out
