"""Popularity profiles of global ranks: what a popularity sampler needs to know about each user.

Under a popularity sampler (p_j ∝ c_j^α, c_j the item's training interaction count) the sampled
rank depends on which candidates precede the target, through their popularity, not on R_u alone
(``docs/estimators.md``, "Non-uniform samplers"). Items with the same count are exchangeable for
the sampler, so the per-user counts

* ``above[u, b]``: candidates of popularity class b (the target excluded) that precede the target
  in the seeded total order of :mod:`itemsampling.ranks` (R_u = 1 + Σ_b above[u, b]);
* ``pool[u, b]``: candidates of class b other than the target,

are a sufficient statistic for the sampled rank and for the Hansen–Hurwitz / Horvitz–Thompson
rank estimates of :mod:`itemsampling.nonuniform`, once the counts are grouped into classes.

Classes (:func:`popularity_classes`): class 0 holds the items with count 0, classes 1..E the
counts 1..E exactly (E = ``exact_up_to``, default 10), then counts are cut at edges growing by the
``ratio`` (default 1.25): e_0 = E + 1, e_{k+1} = max(e_k + 1, ⌈ratio · e_k⌉), and empty classes
are dropped. Each class is represented by the mean count of its items, so under α = 1 a class's
total sampling mass is exact. The sampler simulated from a profile (:func:`popularity_sampled_ranks`)
is therefore popularity^α with the counts quantised to the classes: exact for counts up to E, and
within a factor ``ratio`` of the true count above. With the defaults the study datasets have 37
classes (ml-1m), 26 (citeulike-a), 31 (pinterest-subset) and 24 (yelp-diffnet, no item of count 0).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._validation import as_generator, check_choice, check_positive_integer
from .candidate_sampling import test_users
from .models.base import Recommender, score_batches
from .ranks import PROTOCOLS, preceding

__all__ = [
    "PROFILE_FILE",
    "PopularityProfile",
    "mixture_sampled_ranks",
    "popularity_classes",
    "popularity_profile",
    "popularity_sampled_ranks",
    "read_profile",
    "stratified_sampled_ranks",
    "write_profile",
]

#: file name of a profile beside the global ranks, results/ranks/<dataset>/<model>/
PROFILE_FILE = "popularity_profile.parquet"
_META_KEY = b"itemsampling.popularity_profile"


@dataclass(frozen=True)
class PopularityProfile:
    """Per-user popularity profile of the global ranks of one model (see the module docstring).

    Attributes
    ----------
    users, items, ranks, n_candidates : numpy.ndarray
        ``(U,)`` test user, held-out item, global rank R_u and N_u (as in the ranks files).
    above, pool : numpy.ndarray
        ``(U, C)`` int: candidates of each class that precede the target, and all candidates of
        each class other than the target (Σ_b pool[u, b] = N_u - 1).
    representative : numpy.ndarray
        ``(C,)`` float: mean training count of the items of each class (class 0: count 0).
    upper : numpy.ndarray
        ``(C,)`` int: largest training count of each class.
    protocol : str
        Candidate protocol of the ranks (``unseen`` or ``all``).
    """

    users: np.ndarray
    items: np.ndarray
    ranks: np.ndarray
    n_candidates: np.ndarray
    above: np.ndarray
    pool: np.ndarray
    representative: np.ndarray
    upper: np.ndarray
    protocol: str

    @property
    def n_classes(self) -> int:
        """Number of popularity classes C."""
        return int(self.representative.size)


def popularity_classes(counts, *, exact_up_to: int = 10, ratio: float = 1.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Popularity class of each item from its training count (module docstring).

    Parameters
    ----------
    counts : array_like of int
        ``(N,)`` training interaction count of each item (non-negative).
    exact_up_to : int
        E: counts 1..E each get their own class.
    ratio : float
        Growth of the class edges above E (> 1).

    Returns
    -------
    classes : numpy.ndarray
        ``(N,)`` int64 class of each item; class 0 is count 0 (kept even when empty), the other
        classes are the non-empty count ranges in increasing order.
    representative : numpy.ndarray
        ``(C,)`` mean count of each class's items (0 for class 0).
    upper : numpy.ndarray
        ``(C,)`` largest count in each class.
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ValueError("counts must be a 1-D array of non-negative integer training counts per item")
    exact_up_to = check_positive_integer("exact_up_to", exact_up_to)
    if not ratio > 1:
        raise ValueError(f"ratio must be > 1 (the growth of the class edges), got {ratio}")
    edges = list(range(exact_up_to + 2))  # [0, 1), [1, 2), ..., [E, E+1)
    top = int(counts.max(initial=0))
    while edges[-1] <= top:
        edges.append(max(edges[-1] + 1, int(np.ceil(ratio * edges[-1]))))
    raw = np.searchsorted(np.asarray(edges), counts, side="right") - 1
    used = np.union1d([0], raw)
    classes = np.searchsorted(used, raw).astype(np.int64)
    n_classes = used.size
    sizes = np.bincount(classes, minlength=n_classes)
    totals = np.bincount(classes, weights=counts.astype(np.float64), minlength=n_classes)
    representative = np.divide(totals, sizes, out=np.zeros(n_classes), where=sizes > 0)
    upper = np.zeros(n_classes, dtype=np.int64)
    np.maximum.at(upper, classes, counts.astype(np.int64))
    return classes, representative, upper


def popularity_profile(
    model: Recommender,
    test_items,
    *,
    protocol: str = "unseen",
    seed: int,
    exact_up_to: int = 10,
    ratio: float = 1.25,
    batch_size: int = 1024,
    progress: bool | None = None,
) -> PopularityProfile:
    """Popularity profile of a fitted model's global ranks, in the order of :func:`global_ranks`.

    Each batch of users is scored once (like :func:`itemsampling.ranks.global_ranks`); the
    candidates preceding the target (:func:`itemsampling.ranks.preceding`, seeded tie-break) are
    counted per popularity class, so 1 + Σ_b above[u, b] is exactly the R_u of
    ``global_ranks(..., seed=seed)``. Popularity is the number of training users of each item
    (``model.train_``), classed by :func:`popularity_classes`.

    Parameters
    ----------
    model : Recommender
        A fitted model.
    test_items : array_like of int
        ``(n_users,)`` held-out item per user, ``-1`` for none.
    protocol : {"unseen", "all"}
        Candidates: the user's unseen items or all items.
    seed : int
        Tie-break seed of the global ranks (the training seed).
    exact_up_to, ratio
        Class edges (:func:`popularity_classes`).
    batch_size : int
        Users scored at once; memory is about ``batch_size × N`` scores.
    progress : bool or None
        Progress bar; ``None`` shows it only in an interactive terminal.

    Returns
    -------
    PopularityProfile
    """
    protocol = check_choice("protocol", protocol, PROTOCOLS)
    batch_size = check_positive_integer("batch_size", batch_size)
    users, targets = test_users(test_items, model.n_users, None)
    train = sp.csr_matrix(model.train_)
    counts = np.bincount(train.indices, minlength=model.n_items)
    classes, representative, upper = popularity_classes(counts, exact_up_to=exact_up_to, ratio=ratio)
    n_classes = representative.size
    onehot = sp.csr_matrix((np.ones(model.n_items, np.int64), (np.arange(model.n_items), classes)),
                           shape=(model.n_items, n_classes))
    class_sizes = np.bincount(classes, minlength=n_classes).astype(np.int64)
    above = np.empty((users.size, n_classes), np.int64)
    pool = np.empty((users.size, n_classes), np.int64)
    pos = 0
    for batch, scores in score_batches(model, users, batch_size, progress):
        sl = slice(pos, pos + batch.size)
        exclude = train[batch] if protocol == "unseen" else None
        before = preceding(scores, batch, targets[sl], exclude=exclude, seed=seed)
        # per-class counts through the sparse pattern of `before` (about R_u entries per row)
        above[sl] = (sp.csr_matrix(before, dtype=np.int64) @ onehot).toarray()
        pool[sl] = class_sizes
        if exclude is not None:
            pool[sl] -= (sp.csr_matrix(exclude.astype(bool), dtype=np.int64) @ onehot).toarray()
        np.subtract.at(pool[sl], (np.arange(batch.size), classes[targets[sl]]), 1)
        pos += batch.size
    n_candidates = pool.sum(axis=1) + 1
    return PopularityProfile(users=users, items=targets, ranks=1 + above.sum(axis=1), n_candidates=n_candidates,
                             above=above, pool=pool, representative=representative, upper=upper, protocol=protocol)


def write_profile(profile: PopularityProfile, path: str | os.PathLike) -> None:
    """Write a profile as parquet, atomically (a temporary file renamed over ``path``).

    One row per user: ``user, item, rank, n_candidates`` (int32), then ``above_<b>`` and
    ``pool_<b>`` for every class b (the smallest unsigned type that holds them). The classes'
    representative and largest counts and the protocol are in the file's metadata.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    wide = np.uint16 if max(profile.pool.max(initial=0), profile.above.max(initial=0)) < 2**16 else np.uint32
    columns = {"user": profile.users.astype(np.int32), "item": profile.items.astype(np.int32),
               "rank": profile.ranks.astype(np.int32), "n_candidates": profile.n_candidates.astype(np.int32)}
    columns.update({f"above_{b}": profile.above[:, b].astype(wide) for b in range(profile.n_classes)})
    columns.update({f"pool_{b}": profile.pool[:, b].astype(wide) for b in range(profile.n_classes)})
    table = pa.table(columns)
    meta = {"protocol": profile.protocol, "representative": profile.representative.tolist(),
            "upper": profile.upper.tolist()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: json.dumps(meta).encode()})
    tmp = f"{path}.tmp"
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_profile(path: str | os.PathLike) -> PopularityProfile:
    """Read a profile written by :func:`write_profile`."""
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        raise FileNotFoundError(f"profile {os.fspath(path)!r} does not exist; run `itemsampling profile` first")
    table = pq.read_table(path)
    meta = (table.schema.metadata or {}).get(_META_KEY)
    if meta is None:
        raise ValueError(f"{os.fspath(path)}: not a popularity profile (no class metadata); "
                         "write it with `itemsampling profile`")
    meta = json.loads(meta)
    n_classes = len(meta["representative"])
    frame = table.to_pandas()

    def block(prefix):
        return frame[[f"{prefix}_{b}" for b in range(n_classes)]].to_numpy(np.int64)

    return PopularityProfile(
        users=frame["user"].to_numpy(np.int64), items=frame["item"].to_numpy(np.int64),
        ranks=frame["rank"].to_numpy(np.int64), n_candidates=frame["n_candidates"].to_numpy(np.int64),
        above=block("above"), pool=block("pool"), representative=np.asarray(meta["representative"], float),
        upper=np.asarray(meta["upper"], np.int64), protocol=meta["protocol"],
    )


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be a finite number >= 0 (0: uniform), got {alpha}")
    return alpha


def popularity_sampled_ranks(profile: PopularityProfile, alpha: float, n_draws: int, *, repeats: int = 1,
                             rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Sampled ranks and Hansen–Hurwitz rank estimates under a popularity^α sampler.

    For each user, m = ``n_draws`` negatives are drawn with replacement from the candidates
    other than the target, item j of class b with p_j = w_b / Z_u, w_b = rep_b^α and
    Z_u = Σ_b pool[u, b] w_b. The draws that precede the target, per class, are one
    multinomial draw with cells above[u, b] w_b / Z_u (and the rest), so no item is drawn
    individually. Returns r_u = 1 + #{draws preceding the target} and the Hansen–Hurwitz
    estimate R̂_u = 1 + (1/m) Σ_{draws d preceding} 1/p_{j_d}
    (:func:`itemsampling.nonuniform.hansen_hurwitz_rank`), unbiased for R_u when every
    candidate preceding the target has p_j > 0 (with α > 0, items of count 0 are never drawn and
    are missing from R̂_u). α = 0 is uniform sampling with replacement: r_u - 1 is binomial
    (m, (R_u - 1)/(N_u - 1)).

    Parameters
    ----------
    profile : PopularityProfile
        From :func:`popularity_profile` or :func:`read_profile`.
    alpha : float
        Exponent α >= 0.
    n_draws : int
        m, negatives per user (the sample set has m + 1 items).
    repeats : int
        Independent samples per user.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    ranks : numpy.ndarray
        ``(repeats, U)`` int64 sampled ranks r_u in 1..m + 1.
    estimates : numpy.ndarray
        ``(repeats, U)`` float Hansen–Hurwitz estimates of R_u.
    """
    alpha = _check_alpha(alpha)
    n_draws = check_positive_integer("n_draws", n_draws)
    repeats = check_positive_integer("repeats", repeats)
    gen = as_generator(rng)
    weights = profile.representative ** alpha  # 0 ** 0 = 1: alpha = 0 is uniform
    mass = profile.pool @ weights
    if (mass <= 0).any():
        raise ValueError(f"{int((mass <= 0).sum())} user(s) have no candidate with positive sampling weight "
                         f"under alpha = {alpha} (only items never seen in training); use alpha = 0")
    cells = profile.above * weights / mass[:, None]
    inverse = np.divide(mass[:, None], weights[None, :], out=np.zeros(cells.shape), where=weights[None, :] > 0)
    return _hansen_hurwitz_draws(cells, inverse, n_draws, repeats, gen)


def mixture_sampled_ranks(profile: PopularityProfile, alpha: float, uniform_weight: float, n_draws: int, *,
                          repeats: int = 1, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Sampled ranks and Hansen–Hurwitz rank estimates under a defensive mixture of uniform and
    popularity^α sampling.

    Each of the m = ``n_draws`` draws (with replacement, target excluded) picks candidate j of
    class b with p_uj = λ / (N_u - 1) + (1 - λ) w_b / Z_u, λ = ``uniform_weight``, w_b = rep_b^α,
    Z_u = Σ_b pool[u, b] w_b (Hesterberg's defensive importance sampling: p_uj >= λ / (N_u - 1),
    so every candidate can be drawn, and in the Hansen–Hurwitz variance (Σ_{j above} 1/p_uj -
    (R_u - 1)²)/m the sum Σ_{j above} 1/p_uj is at most 1/λ times its uniform value
    (R_u - 1)(N_u - 1)). As in
    :func:`popularity_sampled_ranks` the draws preceding the target are one multinomial draw per
    user with cells above[u, b] p_ub; r_u = 1 + #{draws preceding} and
    R̂_u = 1 + (1/m) Σ_{draws d preceding} 1/p_{u j_d}, unbiased for R_u when λ > 0.
    λ = 1 is uniform sampling with replacement; λ = 0 is :func:`popularity_sampled_ranks`.

    Parameters
    ----------
    profile : PopularityProfile
        From :func:`popularity_profile` or :func:`read_profile`.
    alpha : float
        Exponent α >= 0 of the popularity component.
    uniform_weight : float
        λ in [0, 1], the share of the uniform component.
    n_draws : int
        m, negatives per user.
    repeats : int
        Independent samples per user.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    ranks : numpy.ndarray
        ``(repeats, U)`` int64 sampled ranks r_u in 1..m + 1.
    estimates : numpy.ndarray
        ``(repeats, U)`` float Hansen–Hurwitz estimates of R_u.
    """
    alpha = _check_alpha(alpha)
    lam = float(uniform_weight)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"uniform_weight must lie in [0, 1] (the uniform share of the mixture), got {uniform_weight}")
    n_draws = check_positive_integer("n_draws", n_draws)
    repeats = check_positive_integer("repeats", repeats)
    gen = as_generator(rng)
    weights = profile.representative ** alpha
    mass = profile.pool @ weights
    if lam < 1 and (mass <= 0).any():
        raise ValueError(f"{int((mass <= 0).sum())} user(s) have no candidate with positive popularity weight "
                         f"under alpha = {alpha}; use alpha = 0 or uniform_weight = 1")
    others = (profile.n_candidates - 1).astype(np.float64)
    popular = np.divide(weights[None, :], mass[:, None], out=np.zeros(profile.pool.shape), where=mass[:, None] > 0)
    item_p = lam / others[:, None] + (1.0 - lam) * popular  # per-item probability of each class, per user
    cells = profile.above * item_p
    inverse = np.divide(1.0, item_p, out=np.zeros(item_p.shape), where=item_p > 0)
    return _hansen_hurwitz_draws(cells, inverse, n_draws, repeats, gen)


def _hansen_hurwitz_draws(cells: np.ndarray, inverse: np.ndarray, n_draws: int, repeats: int,
                          gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """m draws with replacement per user, as one multinomial over the classes above the target.

    ``cells[u, b]``: probability that one draw lands on a class-b candidate preceding user u's
    target; ``inverse[u, b]`` = 1/p_j of one class-b item. Returns the sampled ranks
    1 + #{draws above} and the Hansen–Hurwitz estimates 1 + (1/m) Σ_{draws above} 1/p_j, each
    ``(repeats, U)``.
    """
    rest = np.clip(1.0 - cells.sum(axis=1), 0.0, 1.0)
    pvals = np.concatenate([cells, rest[:, None]], axis=1)
    pvals /= pvals.sum(axis=1, keepdims=True)
    ranks = np.empty((repeats, cells.shape[0]), np.int64)
    estimates = np.empty((repeats, cells.shape[0]))
    for rep in range(repeats):
        drawn = gen.multinomial(n_draws, pvals)[:, :-1]
        ranks[rep] = 1 + drawn.sum(axis=1)
        estimates[rep] = 1 + (drawn * inverse).sum(axis=1) / n_draws
    return ranks, estimates


def stratified_sampled_ranks(profile: PopularityProfile, strata, n_draws, *, repeats: int = 1,
                             rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Sampled ranks and Horvitz–Thompson estimates under a popularity-stratified sampler.

    The classes are grouped into strata of whole classes; in stratum h, n_h negatives are drawn
    uniformly without replacement from the user's N_uh candidates of that stratum (all of them
    when N_uh <= n_h), so π_j = min(n_h, N_uh) / N_uh and the number drawn that precede the
    target is hypergeometric (N_uh, A_uh, min(n_h, N_uh)), A_uh = Σ_{b in h} above[u, b].
    Returns r_u = 1 + Σ_h k_uh and R̂_u = 1 + Σ_h k_uh / π_h
    (:func:`itemsampling.nonuniform.horvitz_thompson_rank`), unbiased for R_u.

    Parameters
    ----------
    profile : PopularityProfile
        From :func:`popularity_profile` or :func:`read_profile`.
    strata : array_like of int
        ``(C,)`` stratum 0..H-1 of each class.
    n_draws : array_like of int
        ``(H,)`` draws n_h per stratum (>= 0).
    repeats : int
        Independent samples per user.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    ranks : numpy.ndarray
        ``(repeats, U)`` int64 sampled ranks.
    estimates : numpy.ndarray
        ``(repeats, U)`` float Horvitz–Thompson estimates of R_u.
    """
    strata = np.asarray(strata)
    n_draws = np.asarray(n_draws)
    if strata.shape != (profile.n_classes,) or not np.issubdtype(strata.dtype, np.integer):
        raise ValueError(f"strata must give an integer stratum for each of the {profile.n_classes} classes")
    if n_draws.ndim != 1 or not np.issubdtype(n_draws.dtype, np.integer) or (n_draws < 0).any():
        raise ValueError("n_draws must be a 1-D array of non-negative integer draws per stratum")
    if strata.min() < 0 or strata.max() >= n_draws.size:
        raise ValueError(f"strata must lie in 0..{n_draws.size - 1} (one entry of n_draws per stratum)")
    repeats = check_positive_integer("repeats", repeats)
    gen = as_generator(rng)
    member = np.zeros((profile.n_classes, n_draws.size), np.int64)
    member[np.arange(profile.n_classes), strata] = 1
    good = profile.above @ member
    total = profile.pool @ member
    take = np.minimum(n_draws[None, :], total)
    inverse = np.divide(total, take, out=np.zeros(total.shape), where=take > 0)
    ranks = np.empty((repeats, profile.users.size), np.int64)
    estimates = np.empty((repeats, profile.users.size))
    for rep in range(repeats):
        drawn = gen.hypergeometric(good, total - good, take)
        ranks[rep] = 1 + drawn.sum(axis=1)
        estimates[rep] = 1 + (drawn * inverse).sum(axis=1)
    return ranks, estimates
