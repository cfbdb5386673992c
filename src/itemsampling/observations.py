"""The users of one call grouped by what the estimators see of them.

A user is seen through its observation o = (candidate group g, sample size n_u, sampled rank r_u):
users with the same observation contribute identical terms to every likelihood, moment and
influence value, so each quantity is computed once per observation and weighted by its number of
users. Two groupings serve the estimators:

* by **kernel column** (N_g, n, r), where the candidate groups with the same N_g share one rank
  kernel: the columns of the EM and likelihood kernels (AAAI'21 eq. 18–23; AAAI'23 eq. 12);
* by **observation** (g, n, r): the users resampled within their candidate group, as the
  intervals' standard errors and influence values need (:mod:`itemsampling.intervals`);
* by **sampled rank** r alone: the sampled rank distribution P̃(r) that MES fits with the
  user-averaged kernel (AAAI'21 eq. 24–27).

:class:`Observations` holds the three, each computed on first use.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .candidates import CandidateGroups

__all__ = ["Observations", "codes_of", "keys_of"]


class Observations:
    """The users of sampled ranks ``ranks`` with sample sizes ``sizes`` and candidate ``groups``,
    grouped by kernel column, by observation and by sampled rank (module docstring), each
    grouping computed on first use.
    """

    def __init__(self, ranks: np.ndarray, sizes: np.ndarray, groups: CandidateGroups):
        self.groups = groups
        self._ranks, self._sizes = ranks, sizes
        self._base = int(sizes.max()) + 1

    @cached_property
    def _by_column(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes, user, count = np.unique(codes_of(self.groups.kernel_index, self._sizes, self._ranks, self._base),
                                       return_inverse=True, return_counts=True)
        return keys_of(codes, self._base), user.ravel(), count

    @property
    def keys(self) -> np.ndarray:
        """``(d, 3)`` (kernel index, n, r) of the distinct kernel columns, sorted by kernel (N_g),
        then n, then r."""
        return self._by_column[0]

    @property
    def column_of_user(self) -> np.ndarray:
        """Each user's kernel column."""
        return self._by_column[1]

    @property
    def column_counts(self) -> np.ndarray:
        """The number of users of each kernel column (integers)."""
        return self._by_column[2]

    @cached_property
    def sampled_distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct sampled ranks r and their share of the users P̃(r), over every group and
        size (what MES fits; AAAI'21 eq. 24–27)."""
        ranks, counts = np.unique(self._ranks, return_counts=True)
        return ranks, counts / self._ranks.size

    @cached_property
    def _by_observation(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes, user, count = np.unique(codes_of(self.groups.index, self._sizes, self._ranks, self._base),
                                       return_inverse=True, return_counts=True)
        return codes, user.ravel(), count.astype(np.float64)

    @property
    def group(self) -> np.ndarray:
        """The candidate group g of each observation (sorted by g, then n, then r)."""
        return self._by_observation[0] // (self._base * self._base)

    @property
    def size(self) -> np.ndarray:
        """The sample size n of each observation."""
        return self._by_observation[0] // self._base % self._base

    @property
    def rank(self) -> np.ndarray:
        """The sampled rank r of each observation."""
        return self._by_observation[0] % self._base

    @property
    def count(self) -> np.ndarray:
        """The number of users of each observation (float)."""
        return self._by_observation[2]

    @property
    def user(self) -> np.ndarray:
        """Each user's observation."""
        return self._by_observation[1]

    @cached_property
    def column(self) -> np.ndarray:
        """The kernel column of each observation."""
        first_user = np.zeros(self.count.size, dtype=np.int64)
        first_user[self.user[::-1]] = np.arange(self.user.size)[::-1]
        return self.column_of_user[first_user]

    def standard_error(self, psi: np.ndarray) -> np.ndarray:
        """se of the mean of the users' influence values ψ (``(observations, m)``), with the users
        resampled within their candidate group (:mod:`itemsampling.intervals`)."""
        users = self.count.sum()
        n_groups = self.groups.n_groups
        dof = users - n_groups
        if dof < 1:
            raise ValueError(f"an interval needs more users ({users:.0f}) than groups of users by N_u "
                             f"({n_groups}); use fewer groups (n_groups) or more users")
        per_group = np.bincount(self.group, weights=self.count, minlength=n_groups)
        sums = np.zeros((n_groups, psi.shape[1]))
        np.add.at(sums, self.group, self.count[:, None] * psi)
        resid = psi - (sums / per_group[:, None])[self.group]
        return np.sqrt(self.count @ resid**2 / (users * dof))


def codes_of(index: np.ndarray, sizes: np.ndarray, ranks: np.ndarray, base: int) -> np.ndarray:
    """One integer per user for (index, n_u, r_u), with ``base`` above every n_u: sorted codes are
    ordered by index (a kernel's or a candidate group's), then n, then r."""
    return (index * base + sizes) * base + ranks


def keys_of(codes: np.ndarray, base: int) -> np.ndarray:
    """``(d, 3)`` (index, n, r) of each code of :func:`codes_of`."""
    return np.stack([codes // (base * base), codes // base % base, codes % base], axis=1)
