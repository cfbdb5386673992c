"""Recommenders that produce the scores from which global and sampled ranks are computed.

=================== =======================================================================
``Recommender``      abstract base: ``fit(train, seed=, progress=)``, ``score(users)``,
                     ``score_items(users, items)``
``score_batches``    score many users in batches, with a progress bar
=================== =======================================================================

Concrete models live in their own modules and are looked up by name in
:mod:`itemsampling.models.registry`, which imports only the model asked for (torch models are
never imported unless used).
"""

from .base import Recommender, score_batches

__all__ = ["Recommender", "score_batches"]
