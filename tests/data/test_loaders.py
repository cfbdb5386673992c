"""Loaders on small files written in each real format; leave-one-out split properties."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from itemsampling.data import Dataset, fetch, load_dataset
from itemsampling.data.formats import read_item_lists
from itemsampling.data.registry import REGISTRY_PATH, Registry


def check_split(data: Dataset) -> None:
    """At most one held-out item per user, never also a training item; binary float32 csr."""
    assert data.train.dtype == np.float32 and data.train.format == "csr"
    assert np.all(data.train.data == 1)
    assert data.test_items.dtype == np.int64 and data.test_items.shape == (data.n_users,)
    users = data.test_users
    assert np.all(data.train[users, data.test_items[users]].A1 == 0)
    assert data.user_ids.shape == (data.n_users,) and data.item_ids.shape == (data.n_items,)


def train_sets(data: Dataset) -> list[set]:
    """Training items of each user, as original item ids."""
    return [set(data.item_ids[data.train.indices[a:b]].tolist()) for a, b in zip(data.train.indptr[:-1], data.train.indptr[1:], strict=True)]


def held_out(data: Dataset) -> list:
    """Held-out item of each user, as an original item id (None if none)."""
    return [int(data.item_ids[i]) if i >= 0 else None for i in data.test_items]


def one(name, loader, files, folder=None):
    spec = {"loader": loader, "title": f"tiny {name}", "files": {role: {"path": path, **extra} for role, (path, extra) in files.items()}}
    if folder:
        spec["folder"] = folder
    return {name: spec}


ML1M_TSV = (
    "user_id\titem_id\tchrono_rank\tncf_item\tncf_split\n"
    "1\t20\t0\t0\ttrain\n1\t10\t1\t1\ttest\n2\t30\t0\t2\ttrain\n2\t20\t1\t0\ttest\n2\t10\t2\t1\ttrain\n"
)


def test_ml1m_ncf_split(tiny):
    registry = tiny.build(one("ml-1m", "ml1m_ncf", {"interactions": ("ml-1m.interactions.tsv.gz", {})}),
                          {("ml-1m", "interactions"): gzip.compress(ML1M_TSV.encode(), mtime=0)})
    data = load_dataset("ml-1m", registry=registry)
    check_split(data)
    assert data.item_ids.tolist() == [20, 10, 30]  # column j = NCF item j
    assert data.user_ids.tolist() == [1, 2]
    assert held_out(data) == [10, 20]
    assert train_sets(data) == [{20}, {30, 10}]
    assert "NCF" in data.description


def test_ml1m_ncf_rejects_a_user_without_test_pair(tiny):
    bad = ML1M_TSV.replace("1\t10\t1\t1\ttest", "1\t10\t1\t1\ttrain")
    registry = tiny.build(one("ml-1m", "ml1m_ncf", {"interactions": ("i.tsv.gz", {})}),
                          {("ml-1m", "interactions"): gzip.compress(bad.encode())})
    with pytest.raises(ValueError, match="exactly one 'test' pair"):
        load_dataset("ml-1m", registry=registry)


RATINGS_DAT = "1::10::5::100\n1::20::3::200\n1::30::4::200\n2::20::4::50\n2::10::2::40\n"


@pytest.mark.parametrize("reverse", [False, True])
def test_grouplens_ratings_dat_leave_last_out_with_ties(tiny, make_zip, reverse):
    lines = RATINGS_DAT.splitlines(keepends=True)
    text = "".join(lines[::-1] if reverse else lines)
    registry = tiny.build(
        one("ml-1m-grouplens", "grouplens_dat", {"archive": ("ml-1m.zip", {"member": "ml-1m/ratings.dat"})}, folder="ml-1m"),
        {("ml-1m-grouplens", "archive"): make_zip("ml-1m/ratings.dat", text.encode())},
    )
    data = load_dataset("ml-1m-grouplens", registry=registry)
    check_split(data)
    # user 1: items 20 and 30 tie at the latest timestamp; the larger item id is held out
    assert held_out(data) == [30, 20]
    assert train_sets(data) == [{10, 20}, {10}]
    assert data.user_ids.tolist() == [1, 2] and data.item_ids.tolist() == [10, 20, 30]


def test_udata_repeated_pair_keeps_latest_timestamp(tiny):
    udata = "1\t10\t3\t100\n1\t20\t4\t200\n1\t10\t5\t300\n2\t20\t1\t10\n2\t30\t2\t5\n"
    registry = tiny.build(one("ml-100k", "grouplens_udata", {"ratings": ("u.data", {})}), {("ml-100k", "ratings"): udata.encode()})
    data = load_dataset("ml-100k", registry=registry)
    check_split(data)
    assert held_out(data) == [10, 20]
    assert train_sets(data) == [{20}, {30}]
    assert data.train.nnz + data.test_users.size == 4  # distinct pairs


def test_ml20m_ratings_csv_in_zip(tiny, make_zip):
    csv = "userId,movieId,rating,timestamp\n5,7,3.5,1000\n5,9,4.0,999\n6,7,1.5,3\n6,8,5.0,4\n"
    registry = tiny.build(
        one("ml-20m", "grouplens_csv", {"archive": ("ml-20m.zip", {"member": "ml-20m/ratings.csv"})}),
        {("ml-20m", "archive"): make_zip("ml-20m/ratings.csv", csv.encode())},
    )
    data = load_dataset("ml-20m", registry=registry)
    check_split(data)
    assert held_out(data) == [7, 8]
    assert train_sets(data) == [{9}, {7}]


CITEULIKE = {
    "users.dat": b"2 0 3\n3 1 2 3\n1 4",  # no trailing newline, as in the original
    "test.tsv": b"user\titem\tnegatives\n0\t3\t1,2\n1\t1\t0,4\n2\t4\t0,1\n",
}


def citeulike_registry(tiny, users=CITEULIKE["users.dat"], test=CITEULIKE["test.tsv"]):
    spec = one("citeulike-a", "citeulike_cmn", {"users": ("users.dat", {}), "cmn_test": ("cmn/test.tsv", {})})
    return tiny.build(spec, {("citeulike-a", "users"): users, ("citeulike-a", "cmn_test"): test})


def test_citeulike_train_is_users_dat_minus_cmn_test(tiny):
    data = load_dataset("citeulike-a", registry=citeulike_registry(tiny))
    check_split(data)
    assert held_out(data) == [3, 1, 4]
    assert train_sets(data) == [{0}, {2, 3}, set()]
    assert data.n_items == 5 and data.n_users == 3


def test_citeulike_rejects_bad_counts_and_foreign_test_items(tiny):
    with pytest.raises(ValueError, match="line 2 says 3 items but lists 2"):
        load_dataset("citeulike-a", registry=citeulike_registry(tiny, users=b"2 0 3\n3 1 2\n1 4"))
    with pytest.raises(ValueError, match=r"user 0 \(item 2\) is not among"):
        load_dataset("citeulike-a", registry=citeulike_registry(tiny, test=b"user\titem\tnegatives\n0\t2\t1\n"))


def test_pinterest_subset_dedupes_and_holds_out_the_ncf_item(tiny):
    spec = one("pinterest-subset", "hmgcn_pinterest", {
        "train": ("train.txt", {}), "test": ("test.txt", {}),
        "ncf_test": ("ncf/pinterest-20.test.rating", {"folder": "pinterest-20"})}, folder="pinterest-variant-hmgcn")
    registry = tiny.build(spec, {
        ("pinterest-subset", "train"): b"0 1 2 2\n1 3 4\n",
        ("pinterest-subset", "test"): b"0 5 1\n1 4\n",
        ("pinterest-subset", "ncf_test"): b"0\t5\t1\t0\n1\t3\t1\t0\n2\t9\t1\t0\n",  # user 2 is not in the subset
    })
    assert (tiny.mirror / "pinterest-20" / "ncf" / "pinterest-20.test.rating").is_file()
    data = load_dataset("pinterest-subset", registry=registry)
    check_split(data)
    assert data.user_ids.tolist() == [0, 1] and data.item_ids.tolist() == [1, 2, 3, 4, 5]
    assert held_out(data) == [5, 3]
    assert train_sets(data) == [{1, 2}, {4}]
    assert "subset of pinterest-20" in data.description


def test_diffnet_yelp_first_test_line_per_user(tiny):
    spec = one("yelp-diffnet", "diffnet_yelp", {"train": ("yelp.train.rating", {}), "val": ("yelp.val.rating", {}),
                                                "test": ("yelp.test.rating", {})})
    registry = tiny.build(spec, {
        ("yelp-diffnet", "train"): b"0\t1\t1\n1\t2\t1\n2\t3\t1\n",
        ("yelp-diffnet", "val"): b"0\t4\t1\n",
        ("yelp-diffnet", "test"): b"1\t5\t1\n0\t6\t1\n0\t7\t1\n",
    })
    data = load_dataset("yelp-diffnet", registry=registry)
    check_split(data)
    assert held_out(data) == [6, 5, None]  # user 2 has no test line: no held-out item
    assert train_sets(data) == [{1, 4, 7}, {2}, {3}]


@pytest.mark.parametrize("name", ["pinterest-20", "yelp"])
def test_ncf_rating_format(tiny, name):
    spec = one(name, "ncf_rating", {"train": ("ncf/x.train.rating", {}), "test": ("ncf/x.test.rating", {})})
    registry = tiny.build(spec, {
        (name, "train"): b"0\t1\t4.0\t100\n0\t1\t5.0\t200\n0\t2\t1\t7\n1\t0\t3.0\t100\n1\t2\t3.0\t100\n",
        (name, "test"): b"0\t3\t4.0\t300\n1\t2\t5.0\t300\n",  # user 1's test pair also occurs in train
    })
    data = load_dataset(name, registry=registry)
    check_split(data)
    assert held_out(data) == [3, 2]
    assert train_sets(data) == [{1, 2}, {0}]


def test_ncf_rating_rejects_two_test_items_for_a_user(tiny):
    spec = one("yelp", "ncf_rating", {"train": ("a", {}), "test": ("b", {})})
    registry = tiny.build(spec, {("yelp", "train"): b"0\t1\t1\t0\n", ("yelp", "test"): b"0\t2\t1\t0\n0\t3\t1\t0\n"})
    with pytest.raises(ValueError, match="user 0 has more than one test item"):
        load_dataset("yelp", registry=registry)


def test_registered_absent_datasets_fail_clearly(tiny, monkeypatch):
    """pinterest-20, yelp and ml-20m of the repository registry, with no file anywhere and no network."""
    def offline(url, timeout):
        raise OSError("network unreachable")

    monkeypatch.setattr(fetch, "urlopen", offline)
    registry = Registry.from_file(Path(__file__).resolve().parents[2] / REGISTRY_PATH)
    for name, missing in [("pinterest-20", "pinterest-20.train.rating"), ("yelp", "yelp.train.rating"), ("ml-20m", "ml-20m.zip")]:
        with pytest.raises(FileNotFoundError) as info:
            load_dataset(name, registry=registry)
        message = str(info.value)
        assert missing in message and "ITEMSAMPLING_DATA" in message and "data/raw" in message
        assert "network unreachable" in message


def test_item_lists_ignore_trailing_blank_lines(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("0 3 4\n1 5\n\n")
    frame = read_item_lists(path, first="user")
    assert frame["user"].tolist() == [0, 0, 1] and frame["item"].tolist() == [3, 4, 5]


def test_loader_options_are_rejected_for_real_data(tiny):
    registry = citeulike_registry(tiny)
    with pytest.raises(ValueError, match="takes no options"):
        load_dataset("citeulike-a", registry=registry, n_users=3)
