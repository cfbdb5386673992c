"""The claims of AAAI'21, AAAI'23 and K&R that notebook 04 tests, with their verdicts, and our
own checks beside them.

Every row is read from notebook 04's tables (``metrics_at_k``, ``winners``, ``true_winners``,
``rank_distribution``, ``relative_error``, ``pooled_prior``, ``metric_levels`` and the inputs
``wmle_readings`` and ``mn_users``) and the papers' tables (:mod:`itemsampling_study.paper`),
joined with :func:`~itemsampling_study.paper.paper_merge`. Each public function of the modules
below makes one :class:`Claim` or :class:`Check` (or a list of them); its rule is in its
docstring and, with its numbers, in the row's ``reason``. Where our run has several readings of
an estimator, the row is graded on the one closest to the paper's, picked by a rule on setup
facts (:mod:`.common`), with the verdicts under the others in ``other_setups``.

=============================== ==============================================================
:mod:`.levels`                   our exact metrics and SHR@1 against AAAI'21's and KDD'20's (checks)
:mod:`.bias`                     bias and variance (AAAI'21 Tables 2-3, App. D), WMLE's readings,
                                 BV's γ (K&R §7)
:mod:`.winners`                  the true winner (AAAI'21 Tables 4, 8-10; AAAI'23 Table 8, check)
:mod:`.rank_distribution`        the learned P(R) (AAAI'21 Figs. 2-3, App. C); MES and n (check)
:mod:`.aaai23`                   AAAI'23 §5 and App. I.5 on Tables 6, 9, 10; their sizes and MN's M
                                 (checks)
:mod:`.common`                   what the rows share: estimators, setups, verdict words, formats
=============================== ==============================================================
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from .. import Claim
from . import aaai23, bias, levels, rank_distribution, winners
from .aaai23 import (
    blind_spot_best_effort,
    blind_spot_not_estimators,
    ease_example,
    mn_among_best,
    mn_outperform,
    mn_spread,
    mn_users_scope,
    prior_estimators_ahead,
    relative_error_levels,
    table9_proposed_best,
    table10_consistently,
    table10_mn_mes,
)
from .bias import (
    appendix_d_accuracy,
    appendix_d_overall,
    cls_worst,
    kr_gamma_tradeoff,
    learned_variance,
    not_on_sampled_ranks,
    printed_tables,
    table2_mle_mes,
    table3_comparable,
    table3_wmle_best,
    wmle_close_to_mle,
)
from .common import AAAI21, FACTOR
from .levels import exact_levels, kdd20_hit_ratios
from .rank_distribution import (
    fig2_bv,
    fig2_cdf_accurate,
    fig2_comparable_wmle_above,
    fig3_especially_bv,
    fig3_ml1m_check,
    fig3_sample_size,
    mes_sample_size_check,
)
from .winners import (
    table4_mle_mes_bv,
    table4_wmle,
    winner_counts_aaai21,
    winner_counts_aaai23,
    winners_best_check,
)

#: the rows' functions of every module, and what the notebook reads from :mod:`.common`
__all__ = ["AAAI21", "FACTOR", "claims", *aaai23.__all__, *bias.__all__, *levels.__all__,
           *rank_distribution.__all__, *winners.__all__]


def claims(table: Callable[[str], pd.DataFrame]) -> list[Claim]:
    """Every claim and check of notebook 04, from its tables (``table(name)``)."""
    at_k, wins, errors, pooled = table("metrics_at_k"), table("winners"), table("relative_error"), table("pooled_prior")
    rd, readings, truth = table("rank_distribution"), table("wmle_readings"), table("true_winners")
    return [
        *printed_tables(at_k, readings),
        table2_mle_mes(at_k, readings),
        table3_wmle_best(at_k, readings),
        table3_comparable(at_k, readings),
        *cls_worst(at_k, readings),
        learned_variance(at_k, readings),
        appendix_d_accuracy(at_k, readings),
        appendix_d_overall(at_k, readings),
        not_on_sampled_ranks(at_k, readings),
        wmle_close_to_mle(readings),
        table4_wmle(wins, readings),
        table4_mle_mes_bv(wins, at_k),
        *winner_counts_aaai21(wins, at_k, truth),
        fig2_bv(rd),
        fig2_comparable_wmle_above(rd, at_k, readings),
        fig2_cdf_accurate(rd, at_k),
        fig3_sample_size(rd, at_k),
        fig3_especially_bv(rd, at_k),
        mn_among_best(errors, pooled),
        mn_outperform(errors, pooled),
        mn_spread(errors, pooled),
        prior_estimators_ahead(errors, pooled),
        ease_example(errors, pooled),
        table9_proposed_best(errors, pooled),
        table10_mn_mes(errors, pooled),
        table10_consistently(errors, pooled),
        blind_spot_best_effort(table("interval_coverage")),
        blind_spot_not_estimators(table("interval_coverage")),
        # our own checks
        kr_gamma_tradeoff(at_k),
        exact_levels(at_k),
        kdd20_hit_ratios(table("metric_levels")),
        winners_best_check(wins, truth),
        *relative_error_levels(errors, pooled),
        winner_counts_aaai23(wins),
        fig3_ml1m_check(rd),
        mes_sample_size_check(rd, table("metric_levels")),
        mn_users_scope(table("mn_users")),
    ]
