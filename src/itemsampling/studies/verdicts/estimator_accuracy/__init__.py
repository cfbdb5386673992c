"""The claims of AAAI'21, AAAI'23 and KDD'20 that notebook 04 tests, with their verdicts.

Every claim is read from notebook 04's tables (``metrics_at_k``, ``winners``,
``rank_distribution``, ``relative_error``, ``metric_levels`` and the inputs ``wmle_readings``
and ``mn_users``) and the papers' tables (:mod:`itemsampling.studies.paper`), joined with
:func:`~itemsampling.studies.paper.paper_merge`. Each public function of the modules below makes
one :class:`Claim` (or a list of them); its rule is in its docstring and, with its numbers, in
the row's ``reason``. Shares of cases give the verdict through
:func:`~itemsampling.studies.verdicts.share_verdict` (at least 90 %: reproduced, 50 %: partly).

=============================== ==============================================================
:mod:`.levels`                   exact metrics and sampled hit ratios against the papers'
:mod:`.bias`                     bias and variance of the estimators (AAAI'21, KDD'20 §5.2)
:mod:`.winners`                  the estimator that picks the true winner
:mod:`.rank_distribution`        the learned P(R) (AAAI'21 Figs. 2-3)
:mod:`.aaai23`                   AAAI'23's relative errors and MN's M
:mod:`.common`                   what the claims share (AAAI'21's estimators, formats)
=============================== ==============================================================
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from .. import Claim
from .aaai23 import (
    mn_among_best,
    mn_spread,
    mn_users_scope,
    prior_estimators_ahead,
    relative_error_level,
)
from .bias import bias_ranking, kdd20_gamma_tradeoff, learned_variance, wmle_close_to_mle
from .common import AAAI21, FACTOR
from .levels import exact_levels, kdd20_hit_ratios
from .rank_distribution import fig2_wmle_above, fig3_sample_size
from .winners import winner_counts_aaai23, winners_best, wmle_winners

__all__ = [
    "AAAI21",
    "FACTOR",
    "bias_ranking",
    "claims",
    "exact_levels",
    "fig2_wmle_above",
    "fig3_sample_size",
    "kdd20_gamma_tradeoff",
    "kdd20_hit_ratios",
    "learned_variance",
    "mn_among_best",
    "mn_spread",
    "mn_users_scope",
    "prior_estimators_ahead",
    "relative_error_level",
    "winner_counts_aaai23",
    "winners_best",
    "wmle_close_to_mle",
    "wmle_winners",
]


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """Every claim of notebook 04, from its tables (``table(name)``)."""
    at_k, wins, errors = table("metrics_at_k"), table("winners"), table("relative_error")
    rd = table("rank_distribution")
    return [
        exact_levels(at_k),
        kdd20_hit_ratios(table("metric_levels")),
        *bias_ranking(at_k),
        learned_variance(at_k),
        wmle_close_to_mle(table("wmle_readings")),
        wmle_winners(wins, at_k),
        *winners_best(wins),
        fig2_wmle_above(rd),
        fig3_sample_size(rd),
        mn_among_best(errors),
        prior_estimators_ahead(errors),
        mn_spread(errors),
        relative_error_level(errors),
        winner_counts_aaai23(wins),
        mn_users_scope(table("mn_users")),
        kdd20_gamma_tradeoff(at_k),
    ]
