"""Verdicts of notebook 02: each rule turns when the numbers under it turn."""

from __future__ import annotations

from .verdict_helpers import reader, verdict_of


def test_theorem_verdict_fails_when_a_dominating_pair_flips():
    from itemsampling.studies.verdicts import sampling_theorem

    claim = "Theorem 2.1"
    assert verdict_of(sampling_theorem.claims(reader("02_sampling_theorem")), claim) == "reproduced"

    def one_flip(pairs):
        first = pairs.index[(pairs["hr_relation"] != "cross") & (pairs["protocol"] == "all")][0]
        return pairs.assign(expected_order_kept=pairs["expected_order_kept"].where(pairs.index != first, False))

    table = reader("02_sampling_theorem", theorem_pairs=one_flip)
    assert verdict_of(sampling_theorem.claims(table), claim) == "not reproduced"
