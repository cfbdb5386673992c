"""Verdicts of notebook 01: each rule turns when the numbers under it turn."""

from __future__ import annotations

from .verdict_helpers import reader, verdict_of


def test_k_and_r_inconsistency_verdict_follows_the_orders():
    from itemsampling.studies.verdicts import sampled_metrics

    claim = "Sampled Recall, NDCG and AP (m = 100) order"
    assert verdict_of(sampled_metrics.claims(reader("01_sampled_metrics")), claim) == "reproduced"

    def recall_consistent(orders):
        hit = (orders["metric"] == "recall") & (orders["method"] == "sampled")
        return orders.assign(agrees=orders["agrees"] | hit)

    table = reader("01_sampled_metrics", table3_orders=recall_consistent)
    assert verdict_of(sampled_metrics.claims(table), claim) == "partly"
