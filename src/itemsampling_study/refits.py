"""Whether a model that a study refits is the model whose ranks are committed.

Two studies refit committed models: the sensitivity runs of notebook 01 refit K&R's
recommenders (:mod:`itemsampling_study.readings`) and the live evaluation of notebook 06
reloads models from their ``train.json`` (:mod:`itemsampling_study.live_evaluation`). A refit
with the recorded dataset, hyper-parameters and seed is the same model in exact arithmetic, but
its floating-point results depend on the BLAS kernels that OpenBLAS picks for the CPU (and on
the number of BLAS threads): on another machine a few near-tied scores come out in another
order and some held-out items move. On ml-1m, refitted under OpenBLAS's SkylakeX kernels (an
Intel Xeon with AVX-512) instead of the Haswell ones that made the committed ranks, krX moved 107
of 6,040 held-out items by at most 2 ranks and EASE 9 by 1; iALS, whose alternating least
squares sweeps carry rounding forward, moved 2,440 by up to 4.7% of the catalogue (under the
Sandybridge kernels: 2,150 by up to 2.1%). Its relative ranks R/N_u still correlate with the
committed ones at ρ = 0.99999, while a refit with another regularisation (1 instead of 10; 0.995)
or another seed (0.934) does not.

The check is therefore in two parts:

* :func:`check_record`: the committed ``train.json`` records the dataset, hyper-parameters and
  seed that the study would fit with; anything else is a real inconsistency (an error that says
  to retrain);
* :func:`compare_refit_ranks`: the refit ranks the same users, held-out items and candidate
  sets (an error otherwise: another dataset or split), and its relative ranks correlate with the
  committed ones at least at :data:`MIN_RANK_CORRELATION`, which rounding keeps and another fit
  does not. Within that, the refit is the committed model computed on other kernels; how far it
  landed (:class:`RefitAgreement`) is reported, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["MIN_RANK_CORRELATION", "RefitAgreement", "check_record", "compare_refit_ranks"]

#: least Pearson correlation of the relative ranks R/N_u of a refit and the committed ranks that
#: counts as the same model in other rounding (measured: 0.99999 for rounding, 0.995 for another
#: regularisation, 0.934 for another seed)
MIN_RANK_CORRELATION = 0.999
_KEYS = ("user", "item", "n_candidates")


@dataclass(frozen=True)
class RefitAgreement:
    """How far the global ranks of a refit landed from the committed ones.

    Attributes
    ----------
    what : str
        The ranks compared, e.g. ``"krX on ml-1m (unseen)"``.
    users : int
        Test users.
    moved : int
        Users whose held-out item has another rank.
    max_shift : int
        The largest |R_refit − R_committed|.
    max_relative_shift : float
        The largest |R_refit − R_committed| / N_u.
    correlation : float
        Pearson correlation of R_refit / N_u and R_committed / N_u (1 when they are equal).
    """

    what: str
    users: int
    moved: int
    max_shift: int
    max_relative_shift: float
    correlation: float

    @property
    def identical(self) -> bool:
        """Whether every rank is the committed one."""
        return self.moved == 0

    def __str__(self) -> str:
        if self.identical:
            return f"the refit of {self.what} gives the committed ranks of all {self.users} users"
        return (f"the refit of {self.what} moves {self.moved} of {self.users} held-out items from their committed "
                f"ranks, by at most {self.max_shift} ({self.max_relative_shift:.2%} of the candidates; correlation "
                f"{self.correlation:.6f}): rounding of other BLAS kernels or thread counts, within the tolerance")


def check_record(record_path: str | Path, dataset: str, hyperparameters: Mapping, seed: int, what: str) -> None:
    """Check that a committed ``train.json`` was fitted as the study would fit the model.

    Parameters
    ----------
    record_path : path
        The ``train.json`` that ``itemsampling train`` wrote next to the committed ranks.
    dataset : str
        The dataset the study fits on.
    hyperparameters : mapping
        The model's full hyper-parameters as the study would construct it
        (``Recommender.hyperparameters``).
    seed : int
        The seed the study fits with.
    what : str
        The model, for the message.

    Raises
    ------
    FileNotFoundError
        If ``record_path`` does not exist.
    ValueError
        If the record names another dataset, other hyper-parameters or another seed.
    """
    path = Path(record_path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: the committed ranks of {what} have no training record; "
                                "retrain it (make retrain)")
    record = json.loads(path.read_text())
    wanted = {"dataset": dataset, "hyperparameters": json.loads(json.dumps(dict(hyperparameters))), "seed": seed}
    differ = [f"{key} {record.get(key)!r} (configured: {value!r})" for key, value in wanted.items()
              if record.get(key) != value]
    if differ:
        raise ValueError(f"the committed ranks of {what} were fitted with another " + "; ".join(differ)
                         + ": retrain it with the configured hyper-parameters (make retrain) and commit its ranks")


def compare_refit_ranks(refit: pd.DataFrame, committed: pd.DataFrame, what: str) -> RefitAgreement:
    """Compare the global ranks of a refitted model with its committed ranks.

    Parameters
    ----------
    refit, committed : pandas.DataFrame
        Ranks tables (``user, item, rank, n_candidates``), one row per test user.
    what : str
        The ranks compared, for messages (e.g. ``"krX on ml-1m (unseen)"``).

    Returns
    -------
    RefitAgreement
        How many held-out items moved and how far.

    Raises
    ------
    ValueError
        If the tables hold other users, held-out items or candidate counts (another dataset or
        split), or the relative ranks correlate below :data:`MIN_RANK_CORRELATION` (another
        model: other hyper-parameters, seed or training data).
    """
    mine = refit.sort_values("user", kind="stable").reset_index(drop=True)
    theirs = committed.sort_values("user", kind="stable").reset_index(drop=True)
    if len(mine) != len(theirs) or not all(np.array_equal(mine[k].to_numpy(), theirs[k].to_numpy()) for k in _KEYS):
        raise ValueError(f"the refit of {what} ranks other test users, held-out items or candidate sets than its "
                         "committed ranks: they were made from another dataset or split; retrain it (make retrain)")
    n_candidates = theirs["n_candidates"].to_numpy()
    a, b = mine["rank"].to_numpy() / n_candidates, theirs["rank"].to_numpy() / n_candidates
    shift = np.abs(mine["rank"].to_numpy(np.int64) - theirs["rank"].to_numpy(np.int64))
    if np.array_equal(a, b):
        correlation = 1.0
    elif a.std() == 0 or b.std() == 0:
        correlation = 0.0
    else:
        correlation = float(np.corrcoef(a, b)[0, 1])
    agreement = RefitAgreement(what, len(theirs), int((shift > 0).sum()), int(shift.max(initial=0)),
                               float((shift / n_candidates).max(initial=0.0)), correlation)
    if correlation < MIN_RANK_CORRELATION:
        raise ValueError(
            f"the refit of {what} is not the committed model: {agreement.moved} of {agreement.users} held-out items "
            f"moved (by up to {agreement.max_shift} ranks) and the relative ranks correlate at {correlation:.4f} < "
            f"{MIN_RANK_CORRELATION}, far below what rounding on other BLAS kernels does (0.99999); the committed "
            "ranks were made by another fit: retrain it (make retrain) and commit its ranks")
    return agreement
