"""The interface every recommender implements: fit on a binary user x item matrix, score users.

A :class:`Recommender` is fitted on the ``(n_users, n_items)`` binary training matrix and then
scores every item for a batch of users at once. Ranking (global ranks, sampled ranks, tie-breaks)
is not the model's business: :mod:`itemsampling.ranks` does it from the scores.

Subclasses implement

* ``__init__(self, *, <hyper-parameters>, ...)`` which validates its arguments and passes them
  to ``super().__init__(**hyperparameters)``;
* ``_fit(train, seed, progress)`` which learns the parameters;
* ``_score(users)`` which returns the ``(len(users), n_items)`` float32 scores;
* optionally ``_score_items(users, items)``, the scores of chosen items only, when the model
  can compute them for less than the whole catalogue (used by live evaluation,
  :mod:`itemsampling.adaptive_evaluation`);
* ``state_attributes``: the names of the fitted numpy arrays that :meth:`Recommender.state`
  saves and :meth:`Recommender.load_state` restores (models whose parameters are not plain
  arrays, e.g. torch modules, override ``state`` / ``load_state`` instead).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from .._validation import check_positive_integer, check_seed

__all__ = [
    "Recommender",
    "check_interactions",
    "check_users",
    "score_batches",
]


def check_interactions(train) -> sp.csr_matrix:
    """Check the training matrix and return it as a float32 CSR matrix.

    Parameters
    ----------
    train : scipy.sparse matrix or array
        ``(n_users, n_items)`` interactions; non-zero entries are the observed (user, item) pairs.

    Returns
    -------
    scipy.sparse.csr_matrix
        Binary float32 copy (every stored non-zero becomes 1) with sorted indices and no
        explicit zeros.
    """
    if not sp.issparse(train):
        raise ValueError(
            f"train must be a scipy.sparse (n_users, n_items) matrix, got {type(train).__name__}"
        )
    if train.ndim != 2 or train.shape[0] < 1 or train.shape[1] < 2:
        raise ValueError(f"train must have at least one user and two items, got shape {train.shape}")
    out = sp.csr_matrix(train, dtype=np.float32, copy=True)
    if not np.all(np.isfinite(out.data)) or (out.data < 0).any():
        raise ValueError("train must hold finite non-negative interaction values")
    out.sum_duplicates()
    out.eliminate_zeros()
    out.data[:] = 1.0
    return out


def check_users(users, n_users: int) -> np.ndarray:
    """Check user indices (0-based rows of the training matrix) and return them as int64."""
    arr = np.asarray(users)
    if arr.ndim != 1:
        raise ValueError(f"users must be a 1-D array of row indices, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"users must be integer row indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= n_users):
        raise ValueError(
            f"user indices must lie in 0..{n_users - 1} (the rows of the training matrix); "
            f"got values in {arr.min()}..{arr.max()}"
        )
    return arr


class Recommender(ABC):
    """Abstract recommender: ``fit(train)`` then ``score(users)``.

    Parameters
    ----------
    **hyperparameters
        The model's hyper-parameters (plain JSON-serialisable values), as validated by the
        subclass; returned by :attr:`hyperparameters`.

    Attributes
    ----------
    name : str
        Registry name of the model (class attribute).
    device : str
        Where the model computes; ``"cpu"`` for everything but torch models on a GPU.
    train_ : scipy.sparse.csr_matrix
        The float32 training matrix seen by :meth:`fit` (models score users from their rows).
    """

    name: ClassVar[str] = ""
    #: fitted numpy arrays saved by :meth:`state`
    state_attributes: ClassVar[tuple[str, ...]] = ()
    device: str = "cpu"

    def __init__(self, **hyperparameters: Any) -> None:
        self._hyperparameters = dict(hyperparameters)
        self.train_: sp.csr_matrix | None = None

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """A copy of the hyper-parameters the model was built with."""
        return dict(self._hyperparameters)

    @property
    def environment(self) -> dict[str, Any]:
        """What decides the bits of a fit besides the machine's BLAS and package versions, for the
        fit's record: nothing for these models (torch models name torch's kernels and threads)."""
        return {}

    @property
    def is_fitted(self) -> bool:
        """Whether :meth:`fit` (or :meth:`load_state`) has been called."""
        return self.train_ is not None

    @property
    def n_users(self) -> int:
        """Number of users (rows of the training matrix)."""
        self._check_fitted()
        return self.train_.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items N (columns of the training matrix)."""
        self._check_fitted()
        return self.train_.shape[1]

    def fit(self, train, *, seed: int | None = None, progress: bool | None = None) -> Recommender:
        """Learn the model from the binary training matrix.

        Parameters
        ----------
        train : scipy.sparse matrix
            ``(n_users, n_items)`` training interactions.
        seed : int or None
            Seed of every random choice the model makes (initialisation, sampling, shuffling);
            the same seed gives the same scores.
        progress : bool or None
            Show a progress bar; ``None`` shows it only in an interactive terminal.

        Returns
        -------
        Recommender
            ``self``, fitted.
        """
        train = check_interactions(train)
        seed = check_seed(seed)
        self.train_ = train
        self._fit(train, seed, progress)
        return self

    def score(self, users) -> np.ndarray:
        """Scores of every item for each user in ``users`` (higher is better).

        Parameters
        ----------
        users : array_like of int
            0-based user rows of the training matrix.

        Returns
        -------
        numpy.ndarray
            float32, shape ``(len(users), n_items)``. Training items are scored like any other
            item; excluding them is a choice of the evaluation protocol (see
            :mod:`itemsampling.ranks`).
        """
        self._check_fitted()
        users = check_users(users, self.n_users)
        scores = np.asarray(self._score(users), dtype=np.float32)
        if scores.shape != (users.size, self.n_items):
            raise RuntimeError(
                f"{type(self).__name__}._score returned shape {scores.shape}, "
                f"expected {(users.size, self.n_items)}"
            )
        return scores

    def score_items(self, users, items) -> np.ndarray:
        """Scores of chosen items: ``items[b, j]`` for user ``users[b]`` (a live-evaluation scorer).

        The same values as ``score(users)`` at those items. Models that can score single
        items cheaply override ``_score_items`` (EASE does); the default scores every item
        and keeps the ones asked for.

        Parameters
        ----------
        users : array_like of int
            ``(B,)`` 0-based user rows of the training matrix.
        items : array_like of int
            ``(B, m)`` 0-based item columns, one row per user.

        Returns
        -------
        numpy.ndarray
            float32, shape ``(B, m)``.
        """
        self._check_fitted()
        users = check_users(users, self.n_users)
        items = np.asarray(items)
        if items.ndim != 2 or items.shape[0] != users.size or (items.size and not np.issubdtype(items.dtype, np.integer)):
            raise ValueError(f"items must be an integer array of shape (len(users), m) = ({users.size}, m), "
                             f"got {items.dtype} of shape {items.shape}")
        if items.size and (items.min() < 0 or items.max() >= self.n_items):
            raise ValueError(f"item indices must lie in 0..{self.n_items - 1} (the columns of the training "
                             f"matrix); got values in {items.min()}..{items.max()}")
        return np.asarray(self._score_items(users, items.astype(np.int64, copy=False)), dtype=np.float32)

    def state(self) -> dict[str, np.ndarray]:
        """The fitted parameters as named numpy arrays (to save with ``numpy.savez``)."""
        self._check_fitted()
        return {name: np.asarray(getattr(self, name)) for name in self.state_attributes}

    def state_nbytes(self) -> int:
        """Size of :meth:`state` in bytes."""
        return int(sum(a.nbytes for a in self.state().values()))

    def load_state(self, train, state: dict[str, np.ndarray]) -> Recommender:
        """Restore a model fitted on ``train`` from the arrays returned by :meth:`state`."""
        missing = sorted(set(self.state_attributes) - set(state))
        if missing:
            raise ValueError(f"state of {type(self).__name__} lacks the arrays {missing}")
        self.train_ = check_interactions(train)
        for name in self.state_attributes:
            setattr(self, name, np.asarray(state[name]))
        return self

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._hyperparameters.items())
        return f"{type(self).__name__}({params})"

    def _check_fitted(self) -> None:
        if self.train_ is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(train) first")

    @abstractmethod
    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        """Learn the parameters from the checked training matrix."""

    @abstractmethod
    def _score(self, users: np.ndarray) -> np.ndarray:
        """Return ``(len(users), n_items)`` scores of the checked user indices."""

    def _score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Return the ``(B, m)`` scores of the checked ``items`` for the checked ``users``."""
        return np.take_along_axis(self.score(users), items, axis=1)


def score_batches(
    model: Recommender,
    users,
    batch_size: int = 1024,
    progress: bool | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Score ``users`` in batches: yield ``(batch_users, scores)`` pairs.

    Parameters
    ----------
    model : Recommender
        A fitted model.
    users : array_like of int
        0-based user rows to score, in the order they are yielded.
    batch_size : int
        Users per batch; the scores of one batch take ``batch_size x n_items x 4`` bytes.
    progress : bool or None
        Show a progress bar over users; ``None`` shows it only in an interactive terminal.

    Yields
    ------
    (numpy.ndarray, numpy.ndarray)
        The int64 user indices of the batch and their float32 ``(len(batch), n_items)`` scores.
    """
    check_positive_integer("batch_size", batch_size)
    users = check_users(users, model.n_users)
    with progress_bar(total=users.size, progress=progress, desc=f"scoring {model.name}", unit="user") as bar:
        for start in range(0, users.size, batch_size):
            batch = users[start : start + batch_size]
            yield batch, model.score(batch)
            bar.update(batch.size)
