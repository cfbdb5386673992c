"""Verdicts of notebook 05: none. The notebook measures sampled evaluation as it is practised
(tiny candidate sets, samples with replacement, designs at an equal budget, model pairs); no
sentence of the four papers states these results, so they are our findings, in the notebook's
own table ``findings`` (:func:`itemsampling_study.protocols_in_use.findings`), never in
``verdicts.csv`` or ``checks.csv``.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

__all__ = ["claims"]


def claims(table: Callable[[str], pd.DataFrame]) -> list:
    """No claim of a paper: an empty list (``table`` is unused)."""
    return []
