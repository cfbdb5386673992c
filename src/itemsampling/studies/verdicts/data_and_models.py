"""Claims of the papers that notebook 00 (data and models) tests: none.

Notebook 00 describes our datasets, how our models were trained, their exact metrics, their
global rank distributions and where the held-out items sink (table ``bottom_ranks``). None of it
is compared with a number or a statement of the four papers: our datasets are not the papers'
splits (DiffNet's yelp is not Li et al.'s yelp, pinterest-subset is not pinterest-20) and our
models are not tuned as theirs, so the papers' exact metrics (the "Exact" column of Jin et al.,
AAAI 2021, for instance) are no target for ours; the later notebooks compare estimates with our
own exact values. The notebook therefore contributes no row to ``verdicts.csv``.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from . import Claim

__all__ = ["claims"]


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """No claims: notebook 00 tests none of the papers' claims (see the module docstring)."""
    return []
