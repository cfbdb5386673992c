"""The users grouped by what the estimators see (itemsampling.observations): three groupings of
the same users that agree with each other and with a per-user count."""

import numpy as np

from itemsampling.candidates import CandidateGroups
from itemsampling.observations import Observations


def _observations(seed=0, n_users=2_000):
    rng = np.random.default_rng(seed)
    index = rng.choice(4, n_users)  # groups 0 and 1 share N = 500 (one kernel, as when every N_u is close)
    sizes = rng.choice([10, 20, 40], n_users)
    ranks = 1 + (rng.random(n_users) * sizes).astype(np.int64)
    groups = CandidateGroups(index, np.array([500, 500, 800, 1200]), np.bincount(index, minlength=4))
    return Observations(ranks, sizes, groups), ranks, sizes, groups


def test_every_user_is_counted_once_in_each_grouping():
    obs, ranks, _, _ = _observations()
    assert obs.column_counts.sum() == ranks.size == obs.count.sum()
    np.testing.assert_array_equal(np.bincount(obs.column_of_user), obs.column_counts)
    np.testing.assert_array_equal(np.bincount(obs.user), obs.count)
    shared, p = obs.sampled_distribution
    np.testing.assert_allclose(p, np.bincount(ranks)[shared] / ranks.size)


def test_each_grouping_holds_the_users_own_group_size_and_rank():
    obs, ranks, sizes, groups = _observations(seed=1)
    np.testing.assert_array_equal(obs.keys[obs.column_of_user], np.column_stack(
        [groups.kernel_index, sizes, ranks]))
    np.testing.assert_array_equal(np.column_stack([obs.group, obs.size, obs.rank])[obs.user],
                                  np.column_stack([groups.index, sizes, ranks]))
    # an observation's kernel column is its users' column; columns are sorted by (kernel, n, r)
    np.testing.assert_array_equal(obs.column[obs.user], obs.column_of_user)
    codes = (obs.keys[:, 0] * 100 + obs.keys[:, 1]) * 100 + obs.keys[:, 2]
    assert np.all(np.diff(codes) > 0)
    assert obs.keys.shape[0] < obs.count.size  # groups with the same N share kernel columns
