"""The repeat-and-estimate engine shared by the studies.

For the global ranks R_u of one (dataset, model, protocol), :func:`repeat_estimates` draws
sampled ranks for every scheme x sample size x repeat and runs a list of estimators on each
draw, giving one tidy table with the columns of :data:`RUN_COLUMNS`:
``dataset, model, protocol, scheme, sample_size, repeat, estimator, metric, k, estimate, exact``.

**Schemes.** ``binomial`` (sampling with replacement; the estimators use the binomial kernel),
``hypergeometric`` (without replacement; hypergeometric kernel) and ``actual``: items drawn
uniformly without replacement among the user's candidates, as an evaluation toolkit does,
evaluated with the binomial kernel that the papers' estimators assume. Drawing n - 1 of the
N_u - 1 other candidates without replacement puts the held-out item at sampled rank r with
exactly the hypergeometric law of r given R_u, so ``actual`` needs no rescoring of items.

**Seeds.** Every (scheme, sample size, repeat) draw has its own generator, seeded by
:func:`derive_seed` from the study seed and the labels (dataset, model, protocol), the scheme,
n and the repeat: a chunk of repeats reruns alone with the same sampled ranks, and adding a model,
a sample size or repeats changes none of the other draws. The same call gives the same bytes;
the EM fits of a chunk's draws advance together (see Reuse), so a chunk with other repeats gives
the same estimates up to rounding (the estimators without an EM fit: the same bytes).

**Intervals.** With ``interval`` (a level in (0, 1)) every estimate gets a confidence interval
(:mod:`itemsampling.intervals`): the table then has the columns ``level``, ``se``, ``lower`` and
``upper`` after ``estimate``, and :func:`itemsampling.intervals.interval_coverage` gives their
coverage of ``exact`` over the repeats. A bootstrap resamples users with its own generator,
seeded like the draw (with the key ``bootstrap`` added).

**Reuse.** One :class:`~itemsampling.kernels.KernelCache` serves all draws (and may be shared
between calls): kernels and fixed-prior corrections are computed once per (N_g, n, scheme),
and each draw fits every prior once. The MLE-family fits (and the MLE priors of BV and MN) of
all repeats of a (scheme, n) advance together, each EM step two matrix–matrix products over the
kernel's band for all repeats (:func:`~itemsampling.estimators.estimate_draws`); everything else
is computed draw by draw.

**Draws alone.** :func:`draw_sampled_ranks` gives the sampled ranks of one draw, exactly those
that :func:`repeat_estimates` estimates from, for studies that need the draws themselves (e.g. a
prior fitted to the ranks of all repeats at once).

**Cost.** ``timing=True`` adds the wall seconds of each draw — its sampling and an equal share of
the estimation of all repeats of its (scheme, n), which are computed together — which vary from
run to run: studies report them in their ``*_times`` tables only.

**Adaptive sampling.** :func:`repeat_adaptive_estimates` repeats Algorithm 1 of Li et al.
(AAAI 2023) and its adaptive MLE in the same way; its table has the columns of
:data:`ADAPTIVE_COLUMNS`.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from itemsampling._validation import check_choice, check_positive_integer, check_ranks, check_seed
from itemsampling.candidates import DEFAULT_N_GROUPS
from itemsampling.estimators import Estimator, estimate_draws
from itemsampling.intervals import interval_spec
from itemsampling.kernels import KernelCache
from itemsampling.metrics import global_metrics
from itemsampling.simulation import adaptive_sample_ranks, sample_ranks

__all__ = ["ADAPTIVE_COLUMNS", "LABELS", "RUN_COLUMNS", "STUDY_SCHEMES", "derive_seed", "draw_sampled_ranks",
           "exact_values", "repeat_adaptive_estimates", "repeat_estimates"]

#: labels that identify the global ranks of one study chunk
LABELS = ("dataset", "model", "protocol")
#: columns of the table of :func:`repeat_estimates`
RUN_COLUMNS = (*LABELS, "scheme", "sample_size", "repeat", "estimator", "metric", "k", "estimate", "exact")
#: columns of the table of :func:`repeat_adaptive_estimates`
ADAPTIVE_COLUMNS = (*RUN_COLUMNS, "mean_sample_size")
#: the studies' sampling schemes: how the sampled ranks are drawn and which kernel the estimators use
#: (:data:`itemsampling.kernels.SCHEMES` names the kernels)
STUDY_SCHEMES = {"binomial": ("binomial", "binomial"), "hypergeometric": ("hypergeometric", "hypergeometric"),
           "actual": ("hypergeometric", "binomial")}


def derive_seed(seed: int, *keys) -> np.random.SeedSequence:
    """A seed sequence for one draw: the study ``seed`` with ``keys`` as its spawn key.

    Each key (a label, a scheme, a sample size, a repeat) is turned into a 32-bit word by
    CRC-32 of its text, so the stream depends only on the values, never on the order in which
    draws are made or on Python's randomised string hashing.
    """
    seed = check_seed(seed)
    if seed is None:
        raise ValueError("a study needs an integer seed >= 0")
    return np.random.SeedSequence(seed, spawn_key=tuple(zlib.crc32(str(k).encode()) for k in keys))


def exact_values(global_ranks, n_items, targets: Sequence[tuple[str, int | None]]) -> np.ndarray:
    """Exact value of each (metric, K) of ``targets``: the mean of 1{R_u <= K} M(R_u; N_u)."""
    values = {}
    for metric in dict.fromkeys(m for m, _ in targets):
        ks = list(dict.fromkeys(k for m, k in targets if m == metric))
        table = global_metrics(global_ranks, n_items, metric, ks)
        values.update({(metric, k): v for k, v in zip(ks, table["value"], strict=True)})
    return np.array([values[target] for target in targets])


def draw_sampled_ranks(global_ranks, n_items, sample_size: int, *, seed: int, labels: Mapping[str, str],
                       scheme: str, repeat: int) -> np.ndarray:
    """The sampled ranks r_u of one draw: (``labels``, ``scheme``, ``sample_size``, ``repeat``).

    The generator is seeded by :func:`derive_seed` from ``seed``, the labels (dataset, model,
    protocol), the scheme, n and the repeat, so these are the ranks that :func:`repeat_estimates`
    estimates from in that draw. ``scheme`` is a key of :data:`STUDY_SCHEMES` (``actual`` draws
    without replacement).
    """
    draw, _ = STUDY_SCHEMES[check_choice("scheme", scheme, STUDY_SCHEMES)]
    key = [str(labels[k]) for k in LABELS]
    rng = np.random.default_rng(derive_seed(seed, *key, scheme, sample_size, repeat))
    return sample_ranks(global_ranks, n_items, sample_size, rng=rng, scheme=draw)


def repeat_estimates(
    global_ranks,
    n_items,
    *,
    estimators: Sequence[Estimator],
    targets: Sequence[tuple[str, int | None]],
    sample_sizes: Iterable[int],
    seed: int,
    labels: Mapping[str, str],
    schemes: Iterable[str] = ("binomial",),
    repeats: int = 100,
    first_repeat: int = 0,
    n_groups: int | None = DEFAULT_N_GROUPS,
    cache: KernelCache | None = None,
    progress: bool | None = None,
    timing: bool = False,
    interval: float | None = None,
    interval_method: str | None = None,
) -> pd.DataFrame:
    """Sample, estimate and tabulate: every scheme x sample size x repeat x estimator x target.

    Parameters
    ----------
    global_ranks : array_like of int
        Global rank R_u of each test user's held-out item, 1 <= R_u <= N_u.
    n_items : int or array_like of int
        Number of candidates: one N, or N_u per user (``unseen`` protocol); the estimators
        group users by N_u (:mod:`itemsampling.candidates`).
    estimators : sequence of Estimator
        What to run on every draw (distinct labels).
    targets : sequence of (str, int or None)
        The (metric, K) pairs to estimate.
    sample_sizes : iterable of int
        Sample set sizes n (2 <= n <= min N_u).
    seed : int
        Study seed (see :func:`derive_seed`).
    labels : mapping
        ``dataset``, ``model`` and ``protocol`` of these ranks: columns of the table and part of
        every draw's seed.
    schemes : iterable of str
        Keys of :data:`STUDY_SCHEMES`.
    repeats, first_repeat : int
        Repeats ``first_repeat .. first_repeat + repeats - 1`` (a chunk of a larger study).
    n_groups : int or None
        Groups of users by N_u for the estimators.
    cache : KernelCache, optional
        Shared with other calls at the same N and n to reuse kernels and operators.
    progress : bool or None
        Progress bar (None: only when interactive).
    timing : bool
        Add a column ``seconds``: the wall time of each draw (its sampling and an equal share of
        the estimation of its scheme and n), on every row of the draw. It varies between runs;
        leave it out of deterministic tables.
    interval : float, optional
        Confidence level of an interval around every estimate (see the module docstring).
    interval_method : {"analytic", "bootstrap"}, optional
        How the interval is computed (default analytic; :func:`itemsampling.estimate`).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`RUN_COLUMNS` (with ``interval``, also ``level``, ``se``,
        ``lower`` and ``upper``; with ``timing``, ``seconds``), in the order scheme, n, repeat,
        estimator, target.
    """
    missing = [key for key in LABELS if key not in labels]
    if missing:
        raise ValueError(f"labels must name {', '.join(LABELS)}; missing {', '.join(missing)}")
    schemes = [check_choice("scheme", s, STUDY_SCHEMES) for s in schemes]
    sizes = [check_positive_integer("sample size", n) for n in sample_sizes]
    check_positive_integer("repeats", repeats)
    if isinstance(first_repeat, bool) or not isinstance(first_repeat, (int, np.integer)) or first_repeat < 0:
        raise ValueError(f"first_repeat must be an integer >= 0, got {first_repeat!r}")
    if not schemes or not sizes:
        raise ValueError("schemes and sample_sizes must each name at least one value")
    spec = interval_spec(interval, interval_method)  # checked before any draw
    bootstrap = spec is not None and spec.method == "bootstrap"
    n_users = np.asarray(global_ranks).size
    per_user = np.broadcast_to(np.asarray(n_items), (n_users,)) if np.ndim(n_items) else n_items
    R = check_ranks(global_ranks, per_user, name="global_ranks")
    targets = [(m, k) for m, k in targets]
    exact = exact_values(R, n_items, targets)
    cache = KernelCache() if cache is None else cache
    key = [str(labels[k]) for k in LABELS]
    blocks = []
    settings = [(s, n) for s in schemes for n in sizes]
    indices = range(first_repeat, first_repeat + repeats)
    for scheme, n in tqdm(settings, desc=" ".join(key), disable=None if progress is None else not progress):
        draws, seconds = [], []
        for repeat in indices:
            start = time.perf_counter()
            draws.append(draw_sampled_ranks(R, n_items, n, seed=seed, labels=labels, scheme=scheme, repeat=repeat))
            seconds.append(time.perf_counter() - start)
        resampling = ([np.random.default_rng(derive_seed(seed, *key, scheme, n, repeat, "bootstrap"))
                       for repeat in indices] if bootstrap else None)
        start = time.perf_counter()
        tables = estimate_draws(draws, n_items, n, estimators, targets=targets, scheme=STUDY_SCHEMES[scheme][1],
                                n_groups=n_groups, cache=cache, warn=False,  # raw values, as defined
                                interval=interval, interval_method=interval_method, seeds=resampling)
        share = (time.perf_counter() - start) / repeats
        blocks.extend((scheme, n, repeat, table, own + share)
                      for repeat, table, own in zip(indices, tables, seconds, strict=True))
    first = blocks[0][3]
    rows = len(first)
    out = pd.DataFrame({
        **{k: labels[k] for k in LABELS},
        "scheme": np.repeat([b[0] for b in blocks], rows),
        "sample_size": np.repeat([b[1] for b in blocks], rows),
        "repeat": np.repeat([b[2] for b in blocks], rows),
        "estimator": np.tile(first["estimator"].to_numpy(), len(blocks)),
        "metric": np.tile(first["metric"].to_numpy(), len(blocks)),
        "k": pd.array(np.tile(first["k"].to_numpy(), len(blocks)), dtype="Int64"),
        "estimate": np.concatenate([b[3]["estimate"].to_numpy() for b in blocks]),
        "exact": np.tile(exact, len(blocks) * len(estimators)),
    })
    if timing:
        out["seconds"] = np.repeat([b[4] for b in blocks], rows)
    if interval is not None:
        out.insert(out.columns.get_loc("estimate") + 1, "level", float(interval))
        for offset, name in enumerate(("se", "lower", "upper"), start=2):
            out.insert(out.columns.get_loc("estimate") + offset, name,
                       np.concatenate([b[3][name].to_numpy() for b in blocks]))
    return out


def repeat_adaptive_estimates(
    global_ranks,
    n_items,
    *,
    targets: Sequence[tuple[str, int | None]],
    n0: int,
    n_max_values: Iterable[int],
    seed: int,
    labels: Mapping[str, str],
    scheme: str = "binomial",
    repeats: int = 100,
    n_groups: int | None = DEFAULT_N_GROUPS,
    cache: KernelCache | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Adaptive sampling (Li et al. AAAI 2023, Algorithm 1) and the adaptive MLE, repeated.

    Every draw runs :func:`~itemsampling.simulation.adaptive_sample_ranks` from n_0 items up to
    a terminal size n_max and estimates every target with ``adaptive_mle`` (eq. 12, App. G), the
    MLE whose kernel is each user's P(r | R; n_u). The seed of a draw is :func:`derive_seed` of
    the labels, the scheme, ``"adaptive"``, n_0 and the repeat, not of n_max: the draws of two
    terminal sizes sample the same items, cut at different ceilings, so a user who stops below
    both gets the same (r_u, n_u) in both (common random numbers across n_max).

    Parameters
    ----------
    global_ranks, n_items, targets, seed, labels, repeats, n_groups, progress
        As in :func:`repeat_estimates` (repeats 0 .. repeats - 1).
    cache : KernelCache, optional
        Kernels shared with other calls. By default the kernel of each (N_g, n_u) is computed
        only at the ranks observed with it in any repeat of an n_max, once for all of them
        (``full_kernels=False``): a few hundred of the thousands of columns of the whole
        kernels of a doubling ladder.
    n0 : int
        Initial sample set size n_0 (the paper: 100).
    n_max_values : iterable of int
        Terminal sizes n_max, n_0 <= n_max <= min N_u (the paper: 3200).
    scheme : str
        A key of :data:`STUDY_SCHEMES`: how items are drawn and which kernel the estimator assumes.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`ADAPTIVE_COLUMNS` in the order n_max, repeat, target: ``sample_size``
        is n_max, ``estimator`` is ``adaptive_mle`` and ``mean_sample_size`` the draw's average
        n_u (on every row of the draw).
    """
    missing = [key for key in LABELS if key not in labels]
    if missing:
        raise ValueError(f"labels must name {', '.join(LABELS)}; missing {', '.join(missing)}")
    draw, kernel = STUDY_SCHEMES[check_choice("scheme", scheme, STUDY_SCHEMES)]
    ceilings = [check_positive_integer("n_max", n) for n in n_max_values]
    if not ceilings:
        raise ValueError("n_max_values must name at least one terminal size")
    check_positive_integer("repeats", repeats)
    n_users = np.asarray(global_ranks).size
    R = check_ranks(global_ranks, np.broadcast_to(np.asarray(n_items), (n_users,)), name="global_ranks")
    targets = [(m, k) for m, k in targets]
    exact = exact_values(R, n_items, targets)
    cache = KernelCache(full_kernels=False) if cache is None else cache
    key = [str(labels[k]) for k in LABELS]
    frames = []
    for n_max in tqdm(ceilings, desc=" ".join(key), disable=None if progress is None else not progress):
        draws = [adaptive_sample_ranks(R, n_items, n0, n_max, scheme=draw, rng=np.random.default_rng(
            derive_seed(seed, *key, scheme, "adaptive", n0, repeat))) for repeat in range(repeats)]
        tables = estimate_draws([sampled for sampled, _ in draws], n_items, [sizes for _, sizes in draws],
                                [Estimator("adaptive_mle")], targets=targets, scheme=kernel, n_groups=n_groups,
                                cache=cache, warn=False)
        frames.extend(table.assign(scheme=scheme, sample_size=n_max, repeat=repeat, exact=exact,
                                   mean_sample_size=sizes.mean())
                      for repeat, (table, (_, sizes)) in enumerate(zip(tables, draws, strict=True)))
    out = pd.concat(frames, ignore_index=True).assign(**{k: labels[k] for k in LABELS})
    return out[list(ADAPTIVE_COLUMNS)]
