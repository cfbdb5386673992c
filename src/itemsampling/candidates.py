"""Per-user numbers of candidate items N_u, grouped for the estimators.

Under the ``unseen`` protocol user u's held-out item is ranked among the N_u = N − |train_u|
items the user has not interacted with, so the rank kernel P(r | R, N_u) differs from user to
user. The estimators handle this by grouping users with similar N_u (Krichene & Rendle, KDD
2020, §6.1, compute their corrections for groups of users in the same way): users are split
into at most ``n_groups`` contiguous quantile groups of N_u, and every group uses the rounded
mean N_u of its users. Users with equal N_u always share a group, so one N for everybody (the
``all`` protocol, or a scalar ``n_items``) is one exact group, and ``n_groups=None`` gives one
exact group per distinct N_u.

**One kernel where the groups' kernels are indistinguishable.** Every kernel computation is
repeated per distinct N_g, yet on data sets whose N_u all lie within about 1 % of each other
(many items, few training items per user) the groups' kernels differ by less than the grouping
error itself. When the root-mean-square of ln(N_u / N̄) over the users is at most
:data:`GROUP_TOLERANCE` (0.5 %), with N̄ the rounded mean of all N_u, every group therefore uses
N̄. The groups themselves are kept: MN still takes each group's number of users as its M, and
the corrections are still averaged with the groups' user shares (which, with one kernel, gives
the correction of all the users together). Users with equal N_u are unaffected (one exact group),
and so is ``n_groups=None``. ``benchmarks/bench_groups.py`` measures the change of the estimates
on the study's data sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_positive_integer, check_user_items

__all__ = ["DEFAULT_N_GROUPS", "GROUP_TOLERANCE", "CandidateGroups", "item_groups"]

#: groups of users by N_u used by default (as in Krichene & Rendle's real-data study)
DEFAULT_N_GROUPS = 20
#: all groups use the mean N when the root-mean-square of ln(N_u / N) over the users is at most this
GROUP_TOLERANCE = 5e-3


def item_groups(n_items, n_groups: int | None = DEFAULT_N_GROUPS) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous quantile groups of users by their number of candidates N_u.

    Parameters
    ----------
    n_items : array_like of int
        N_u per user.
    n_groups : int or None
        Largest number of groups (fewer when N_u takes fewer distinct values); ``None`` makes
        one group per distinct N_u.

    Returns
    -------
    group : numpy.ndarray
        int64 group index of each user; users with equal N_u share a group.
    group_n_items : numpy.ndarray
        int64 rounded mean N_u of each group, increasing; with ``n_groups`` given, all equal to
        the rounded mean of all N_u when that is within :data:`GROUP_TOLERANCE` of them (see
        the module docstring).
    """
    N = np.asarray(n_items, dtype=np.int64)
    if n_groups is None:
        group_n, group = np.unique(N, return_inverse=True)
        return group.astype(np.int64), group_n.astype(np.int64)
    check_positive_integer("n_groups", n_groups)
    edges = np.unique(np.quantile(N, np.linspace(0, 1, n_groups + 1)[1:-1], method="lower"))
    group = np.searchsorted(edges, N, side="left")
    _, group = np.unique(group, return_inverse=True)  # drop empty groups
    counts = np.bincount(group)
    common = np.rint(N.mean())
    if np.sqrt(np.mean(np.log(N / common) ** 2)) <= GROUP_TOLERANCE:
        return group.astype(np.int64), np.full(counts.size, common, dtype=np.int64)
    sums = np.bincount(group, weights=N)
    return group.astype(np.int64), np.rint(sums / counts).astype(np.int64)


@dataclass(frozen=True)
class CandidateGroups:
    """Users grouped by their number of candidates; see the module docstring.

    Attributes
    ----------
    index : numpy.ndarray
        ``(M,)`` group of each user.
    n_items : numpy.ndarray
        ``(G,)`` number of candidates N_g of each group (non-decreasing; equal for all groups
        when one kernel serves them, see the module docstring).
    n_users : numpy.ndarray
        ``(G,)`` number of users M_g of each group.
    """

    index: np.ndarray
    n_items: np.ndarray
    n_users: np.ndarray

    @classmethod
    def build(cls, n_items, n_users: int, n_groups: int | None = DEFAULT_N_GROUPS) -> CandidateGroups:
        """Group ``n_users`` users by ``n_items``: one integer N, or one N_u per user.

        Raises
        ------
        ValueError
            If ``n_items`` is not an integer >= 2 or an array of ``n_users`` such integers, or
            ``n_groups`` is neither ``None`` nor a positive integer (checked for one N too).
        """
        arr = check_user_items(n_items, n_users)
        if np.ndim(arr) == 0:  # one group; item_groups checks n_groups on the other path
            if n_groups is not None:
                check_positive_integer("n_groups", n_groups)
            return cls(np.zeros(n_users, dtype=np.int64), np.array([arr], dtype=np.int64),
                       np.array([n_users], dtype=np.int64))
        index, group_n = item_groups(arr, n_groups)
        return cls(index, group_n, np.bincount(index, minlength=group_n.size).astype(np.int64))

    def of_users(self, users: np.ndarray) -> CandidateGroups:
        """The groups of the users ``users`` (indices into this grouping, with repeats: a bootstrap
        resample), each keeping its N_g; groups with the same N_g are one group, as
        :meth:`build` makes them from one N_g per user, and nothing is checked again."""
        group_n, index = np.unique(self.n_items[self.index[users]], return_inverse=True)
        index = index.reshape(-1).astype(np.int64)
        return CandidateGroups(index, group_n.astype(np.int64), np.bincount(index, minlength=group_n.size).astype(np.int64))

    @property
    def n_groups(self) -> int:
        """Number of groups G."""
        return int(self.n_items.size)

    @property
    def max_items(self) -> int:
        """The largest N_g: estimated rank distributions cover R = 1..max_items."""
        return int(self.n_items[-1])

    @property
    def fractions(self) -> np.ndarray:
        """``(G,)`` share M_g / M of the users in each group."""
        return self.n_users / self.n_users.sum()

    def members(self, g: int) -> np.ndarray:
        """Boolean mask of the users of group ``g``."""
        return self.index == g

    @property
    def kernel_items(self) -> np.ndarray:
        """The distinct N_g (increasing): one rank kernel each."""
        return np.unique(self.n_items)

    @property
    def kernel_index(self) -> np.ndarray:
        """``(M,)`` position in :attr:`kernel_items` of each user's N_g."""
        return np.searchsorted(self.kernel_items, self.n_items)[self.index]

    @property
    def kernel_users(self) -> np.ndarray:
        """Number of users whose group has each N_g of :attr:`kernel_items`."""
        return np.bincount(np.searchsorted(self.kernel_items, self.n_items), weights=self.n_users).astype(np.int64)

    @property
    def kernel_fractions(self) -> np.ndarray:
        """Share of the users whose group has each N_g of :attr:`kernel_items`."""
        return self.kernel_users / self.n_users.sum()
