"""Loaders: registry files -> :class:`~itemsampling.data.dataset.Dataset` with a leave-one-out split.

Each ``load_*`` function reads files in one published format and applies one documented
split; :func:`load_dataset` looks the files of a registered dataset up (failing before any
parsing if one is missing) and dispatches to the loader the registry names.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import pandas as pd

from .dataset import Dataset
from .formats import (
    read_cmn_test,
    read_grouplens_csv,
    read_grouplens_dat,
    read_item_lists,
    read_ncf_rating,
    read_udata,
)
from .registry import DatasetEntry, Registry, default_registry
from .splits import dataset_from_indices, dataset_from_pairs, latest_per_user, unique_latest
from .synthetic import make_synthetic

__all__ = [
    "LOADERS",
    "load_citeulike",
    "load_dataset",
    "load_diffnet_yelp",
    "load_leave_last_out",
    "load_ml1m_ncf",
    "load_ncf_split",
    "load_pinterest_subset",
]

PathLike = str | os.PathLike

_READERS = {"dat": read_grouplens_dat, "udata": read_udata, "csv": read_grouplens_csv}


def load_ml1m_ncf(interactions: PathLike, *, name: str = "ml-1m") -> Dataset:
    """MovieLens 1M with the NCF leave-one-out split (He et al., WWW 2017, §4.1).

    Reads ``ml-1m.interactions.tsv.gz`` (columns ``user_id, item_id, chrono_rank, ncf_item,
    ncf_split``). Row ``u`` is the NCF user ``user_id - 1``; column ``j`` is NCF item ``j``
    (``item_ids[j]`` is its MovieID). The held-out item of each user is the pair marked
    ``test`` (NCF ``ml-1m.test.rating``, the user's latest rating); all other pairs train.
    """
    frame = pd.read_csv(interactions, sep="\t", usecols=["user_id", "item_id", "ncf_item", "ncf_split"])
    rows = frame["user_id"].to_numpy(np.int64) - 1
    cols = frame["ncf_item"].to_numpy(np.int64)
    n_users, n_items = int(rows.max()) + 1, int(cols.max()) + 1
    movie_of = pd.Series(frame["item_id"].to_numpy(np.int64)).groupby(cols).agg(["min", "max"])
    if len(movie_of) != n_items or (movie_of["min"] != movie_of["max"]).any():
        raise ValueError(f"{interactions}: ncf_item must map one-to-one onto MovieIDs 0..{n_items - 1}")
    is_test = frame["ncf_split"].to_numpy() == "test"
    if is_test.sum() != n_users or np.bincount(rows[is_test], minlength=n_users).max() != 1:
        raise ValueError(f"{interactions}: every user needs exactly one 'test' pair")
    return dataset_from_indices(
        name,
        rows,
        cols,
        rows[is_test],
        cols[is_test],
        n_users=n_users,
        n_items=n_items,
        description=(
            "MovieLens 1M (GroupLens), all 1,000,209 ratings as implicit feedback; NCF leave-one-out "
            "split (held-out item = NCF ml-1m.test.rating, each user's latest rating); NCF item index"
        ),
        user_ids=np.arange(1, n_users + 1),
        item_ids=movie_of["min"].to_numpy(np.int64),
    )


def load_leave_last_out(
    path: PathLike, fmt: str, *, name: str, title: str, member: str | None = None
) -> Dataset:
    """A MovieLens ratings file with each user's latest rating held out.

    Parameters
    ----------
    path, member : path and optional zip member
        ``ratings.dat`` (``fmt="dat"``), ``u.data`` (``"udata"``) or ``ratings.csv`` (``"csv"``).
    title : str
        What the data is (the start of the description).

    Notes
    -----
    All ratings count as positive interactions. Repeated (user, item) pairs keep their latest
    timestamp. The held-out item is the latest one; ties in timestamp are broken by the larger
    item id (:func:`~itemsampling.data.splits.latest_per_user`), independent of file order.
    """
    if fmt not in _READERS:
        raise ValueError(f"unknown ratings format {fmt!r}; allowed: {', '.join(_READERS)}")
    frame = unique_latest(_READERS[fmt](path, member))
    is_test = latest_per_user(frame)
    users, items = frame["user"].to_numpy(), frame["item"].to_numpy()
    return dataset_from_pairs(
        name,
        users,
        items,
        users[is_test],
        items[is_test],
        description=f"{title}; all ratings as implicit feedback; held-out item = each user's latest rating "
        "(timestamp ties broken by the larger item id)",
    )


def load_citeulike(users: PathLike, test: PathLike, *, name: str = "citeulike-a") -> Dataset:
    """CiteULike-a (``users.dat``) with the CMN held-out article of each user (Ebesu et al. 2018).

    Train = the ``users.dat`` pairs minus the held-out pair; ids are the files' 0-based ids.
    """
    pairs = read_item_lists(users, first="count")
    held = read_cmn_test(test)
    _require_among(pairs, held, name, "the CMN test item")
    n_users = int(pairs["user"].max()) + 1
    n_items = int(max(pairs["item"].max(), held["item"].max())) + 1
    return dataset_from_indices(
        name,
        pairs["user"].to_numpy(),
        pairs["item"].to_numpy(),
        held["user"].to_numpy(),
        held["item"].to_numpy(),
        n_users=n_users,
        n_items=n_items,
        description="CiteULike-a (users.dat, Wang & Blei 2011): 204,986 user-article pairs; held-out item = "
        "the CMN (Ebesu et al. SIGIR 2018) test article of each user",
        user_ids=np.arange(n_users),
        item_ids=np.arange(n_items),
    )


def load_pinterest_subset(
    train: PathLike, test: PathLike, ncf_test: PathLike, *, name: str = "pinterest-subset"
) -> Dataset:
    """The HMGCN pinterest files (a 37,501-user subset of pinterest-20), NCF test item held out.

    The HMGCN ``train.txt`` and ``test.txt`` are pooled and deduplicated (they repeat pairs);
    each user's held-out item is its NCF ``pinterest-20.test.rating`` item, which is among the
    user's HMGCN items. Users and items are those occurring in the HMGCN files (original NCF
    ids in ``user_ids`` / ``item_ids``).
    """
    pairs = pd.concat([read_item_lists(train, first="user"), read_item_lists(test, first="user")])
    held = read_ncf_rating(ncf_test)
    held = held[held["user"].isin(pairs["user"].unique())]
    _require_among(pairs, held, name, "the NCF pinterest-20 test item")
    return _dataset_from_frames(
        name, pairs, held,
        description="a 37,501-user subset of pinterest-20 (HMGCN train+test files, duplicates removed; "
        "not the users' complete histories, not pinterest-20 itself); held-out item = the NCF "
        "pinterest-20 test item of each user",
    )


def load_diffnet_yelp(
    train: PathLike, val: PathLike, test: PathLike, *, name: str = "yelp-diffnet"
) -> Dataset:
    """The DiffNet social-recommendation yelp (not the Li/Jin yelp), one held-out item per user.

    All pairs of ``yelp.train.rating``, ``yelp.val.rating`` and ``yelp.test.rating`` are pooled;
    each user's held-out item is the user's first line in ``yelp.test.rating`` (file order,
    which the registry checksum fixes); the user's other test and validation items train.
    Users without a line in the test file keep all their items in train and have no held-out
    item (``test_items == -1``).
    """
    parts = [read_ncf_rating(p)[["user", "item"]] for p in (train, val, test)]
    held = parts[2].drop_duplicates("user", keep="first")
    pairs = pd.concat(parts)
    return _dataset_from_frames(
        name, pairs, held,
        description="the DiffNet yelp (ll0ruc/DivSR; 17,220 users, 35,351 businesses; a different yelp from "
        "Li et al.'s) with train, validation and test pooled; held-out item = each user's first item in "
        "yelp.test.rating; users without test items have none",
    )


def load_ncf_split(train: PathLike, test: PathLike, *, name: str, title: str) -> Dataset:
    """An NCF-format split: ``*.train.rating`` plus one held-out item per user in ``*.test.rating``.

    Repeated training pairs count once; a training pair equal to the user's held-out pair is
    dropped from train. Users and items are those occurring in either file.
    """
    pairs = read_ncf_rating(train)[["user", "item"]]
    held = read_ncf_rating(test)[["user", "item"]]
    if held["user"].duplicated().any():
        user = int(held.loc[held["user"].duplicated(), "user"].iloc[0])
        raise ValueError(f"{test}: user {user} has more than one test item; NCF test files hold one per user")
    return _dataset_from_frames(
        name, pairs, held,
        description=f"{title}; held-out item = the NCF-format test.rating item of each user",
    )


def _dataset_from_frames(name: str, pairs: pd.DataFrame, held: pd.DataFrame, *, description: str) -> Dataset:
    """:func:`~itemsampling.data.splits.dataset_from_pairs` on the ``user``/``item`` columns of the
    interaction frame ``pairs`` and of the held-out frame ``held``."""
    return dataset_from_pairs(
        name,
        pairs["user"].to_numpy(),
        pairs["item"].to_numpy(),
        held["user"].to_numpy(),
        held["item"].to_numpy(),
        description=description,
    )


def _require_among(pairs: pd.DataFrame, held: pd.DataFrame, name: str, what: str) -> None:
    """Raise unless every held-out (user, item) pair is one of ``pairs``."""
    known = pd.MultiIndex.from_frame(pairs[["user", "item"]])
    inside = pd.MultiIndex.from_frame(held[["user", "item"]]).isin(known)
    if not inside.all():
        row = held[~inside].iloc[0]
        raise ValueError(
            f"{name}: {what} of user {int(row['user'])} (item {int(row['item'])}) is not among the user's "
            f"interactions ({int((~inside).sum())} such users); the files do not belong together"
        )


# registry loader name -> function(paths by role, registry entry) -> Dataset
LOADERS: dict[str, Callable[[dict, DatasetEntry], Dataset]] = {
    "ml1m_ncf": lambda p, e: load_ml1m_ncf(p["interactions"], name=e.name),
    "grouplens_dat": lambda p, e: load_leave_last_out(
        p["archive"], "dat", member=e.files["archive"].member, name=e.name, title=e.title
    ),
    "grouplens_udata": lambda p, e: load_leave_last_out(p["ratings"], "udata", name=e.name, title=e.title),
    "grouplens_csv": lambda p, e: load_leave_last_out(
        p["archive"], "csv", member=e.files["archive"].member, name=e.name, title=e.title
    ),
    "citeulike_cmn": lambda p, e: load_citeulike(p["users"], p["cmn_test"], name=e.name),
    "hmgcn_pinterest": lambda p, e: load_pinterest_subset(p["train"], p["test"], p["ncf_test"], name=e.name),
    "diffnet_yelp": lambda p, e: load_diffnet_yelp(p["train"], p["val"], p["test"], name=e.name),
    "ncf_rating": lambda p, e: load_ncf_split(p["train"], p["test"], name=e.name, title=e.title),
}


def load_dataset(name: str, *, registry: Registry | None = None, download: bool | None = None, **opts) -> Dataset:
    """Load a registered dataset by name.

    Parameters
    ----------
    name : str
        A registry name (``ml-1m``, ``citeulike-a``, ``ml-100k``, ``pinterest-subset``,
        ``yelp-diffnet``, ``pinterest-20``, ``yelp``, ``ml-20m``, ``ml-1m-grouplens``,
        ``synthetic``); an unknown name raises ``ValueError`` listing the names.
    registry : Registry, optional
        Default :func:`~itemsampling.data.registry.default_registry`.
    download : bool, optional
        Allow downloads of missing files (default: the registry's setting).
    **opts
        Options of the loader; only ``synthetic`` takes any (see :func:`make_synthetic`).

    Raises
    ------
    FileNotFoundError
        Before any parsing, if a file is missing; the message names it and the three ways to
        provide it.
    """
    registry = registry if registry is not None else default_registry()
    entry = registry.dataset(name)
    if entry.loader == "synthetic":
        return make_synthetic(**{"n_users": 2000, "n_items": 1000, "seed": 0, **opts}, name=name)
    if entry.loader not in LOADERS:
        raise ValueError(f"dataset {name!r} names an unknown loader {entry.loader!r}; known: {', '.join(LOADERS)}")
    if opts:
        raise ValueError(f"dataset {name!r} takes no options, got {', '.join(opts)}")
    paths = registry.resolve(name, download=download)
    return LOADERS[entry.loader](paths, entry)
