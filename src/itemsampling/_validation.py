"""Input checks shared by the public functions.

Every check raises :class:`ValueError` with a message that says what was wrong and what is
allowed, so that a user can act on it without reading the source.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = [
    "as_generator",
    "check_choice",
    "check_distribution",
    "check_n_items",
    "check_positive_integer",
    "check_ranks",
    "check_sample_size",
    "check_seed",
    "check_user_items",
    "check_users",
    "check_users_and_size",
]


def check_choice(kind: str, value: str, allowed: Iterable[str]) -> str:
    """Return ``value`` lower-cased if it is one of ``allowed``, else raise ``ValueError``."""
    allowed = list(allowed)
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ValueError(f"unknown {kind} {value!r}; allowed: {', '.join(allowed)}")
    return value.lower()


def check_n_items(n_items) -> int:
    """Check that the number of items N is an integer >= 2 and return it as ``int``."""
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 2:
        raise ValueError(f"n_items must be an integer >= 2, got {n_items!r}")
    return int(n_items)


def check_user_items(n_items, n_users: int) -> int | np.ndarray:
    """Check the number of candidate items: one integer N >= 2 for all users, returned as ``int``,
    or one integer N_u >= 2 per user, returned as an ``int64`` array of ``n_users`` entries.

    The one check of N_u behind every public function that takes per-user candidates, so that
    each kind of bad ``n_items`` gets one message whichever function it is given to.
    """
    arr = np.asarray(n_items)
    if arr.ndim == 0:
        return check_n_items(arr.item())
    if arr.ndim != 1 or arr.size != n_users or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"n_items must be one integer N or one N_u per user ({n_users} entries), got an array of shape "
            f"{arr.shape} and dtype {arr.dtype}"
        )
    if arr.size and arr.min() < 2:
        raise ValueError(
            f"per-user n_items N_u must be integers >= 2 (the target plus at least one other item), found {arr.min()}"
        )
    return arr.astype(np.int64)


def check_users(global_ranks, n_items) -> tuple[np.ndarray, np.ndarray]:
    """Checked global ranks R_u and per-user N_u (an ``int64`` array, a scalar N broadcast), with
    1 <= R_u <= N_u (:func:`check_user_items`, :func:`check_ranks`)."""
    n_users = np.asarray(global_ranks).size
    n_arr = check_user_items(n_items, n_users)
    N = np.full(n_users, n_arr, dtype=np.int64) if np.ndim(n_arr) == 0 else n_arr
    return check_ranks(global_ranks, N, name="global_ranks"), N


def check_users_and_size(global_ranks, n_items, sample_size, quantity: str) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`check_users` and one sample set size n <= min N_u for ``quantity`` (named in the error)."""
    R, N = check_users(global_ranks, n_items)
    if np.ndim(sample_size) != 0:
        raise ValueError(f"sample_size must be a single integer n for {quantity}")
    return R, N, check_sample_size(sample_size, int(N.min()))


def check_positive_integer(name: str, value) -> int:
    """Check that ``value`` is an integer >= 1 (``bool`` excluded) and return it as ``int``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_sample_size(sample_size, n_items: int) -> int:
    """Check that the sample set size n satisfies 1 <= n <= N and return it as ``int``.

    The sample set holds the target item plus n - 1 sampled items, so n can be at most N.
    """
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)):
        raise ValueError(f"sample_size must be an integer, got {sample_size!r}")
    if not 1 <= sample_size <= n_items:
        raise ValueError(
            f"sample_size n={sample_size} is out of range: it must satisfy 1 <= n <= n_items "
            f"(N={n_items}), since the sample set is the target plus n - 1 other items"
        )
    return int(sample_size)


def check_ranks(ranks, upper, name: str = "ranks") -> np.ndarray:
    """Check 1-based integer ranks and return them as a 1-D ``int64`` array.

    Parameters
    ----------
    ranks : array_like
        Ranks to check; float values are accepted only if they are whole numbers.
    upper : int or array_like
        Largest allowed rank, a scalar or one bound per rank (e.g. per-user sample sizes).
    name : str
        Name used in error messages.
    """
    arr = np.asarray(ranks)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: at least one rank is needed")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError(f"{name} contains {int(bad.sum())} NaN or infinite value(s); ranks must be integers")
        frac = arr != np.round(arr)
        if frac.any():
            raise ValueError(
                f"{name} must be whole numbers; found {arr[frac][0].item()!r} (and {int(frac.sum()) - 1} more)"
            )
    upper_arr = np.broadcast_to(np.asarray(upper, dtype=np.int64), arr.shape)
    # compared in the input's own dtype: a cast first would wrap a uint64 rank >= 2**63 to a
    # negative number and report that instead of the value the caller passed
    low = arr < 1
    if low.any():
        i = int(np.flatnonzero(low)[0])
        raise ValueError(
            f"{name} must lie in 1..n, counted from 1 (the best is 1); found {_shown(arr[i])} at position {i} "
            f"({int(low.sum())} below 1 in all). Values counted from 0, such as positions from numpy's "
            "argsort, need 1 added"
        )
    out = arr > upper_arr
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"{name} must lie in 1..n (1-based, n = {int(upper_arr[i])}); found {_shown(arr[i])} "
            f"at position {i} ({int(out.sum())} out of range in all)"
        )
    return arr.astype(np.int64)


def _shown(value: np.generic):
    """A rank as the caller gave it: Python int for integer dtypes (exact also beyond int64),
    whole floats as int while float64 holds them exactly, other floats unchanged."""
    value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


def check_distribution(p, size: int, name: str = "prior", atol: float = 1e-6) -> np.ndarray:
    """Check that ``p`` is a probability vector of length ``size`` and return it as float64."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), one entry per global rank, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; it must be a probability distribution")
    if (arr < 0).any():
        raise ValueError(f"{name} has negative entries (min {arr.min():.3g}); a distribution is non-negative")
    total = arr.sum()
    if abs(total - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1 (a probability distribution), but sums to {total:.6g}")
    return arr


def as_generator(rng=None) -> np.random.Generator:
    """Return a numpy ``Generator``: ``rng`` itself, or a new one seeded with ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator, int, numpy.random.SeedSequence or None
        A generator is used as is (and advanced); an integer seed gives the same stream every
        time; ``None`` draws fresh entropy from the operating system (not reproducible).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence) or (
        isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0
    ):
        return np.random.default_rng(rng)
    raise ValueError(
        f"rng must be a numpy Generator, a non-negative integer seed or None, got {rng!r}"
    )


def check_seed(seed) -> int | None:
    """Check a seed (``None`` or a non-negative integer) and return it as ``int`` or ``None``."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)
