"""The real datasets of the mirror ($ITEMSAMPLING_DATA): sizes as in MANIFEST.md and the papers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsampling.data import dataset_summary, default_registry, load_dataset
from itemsampling.data.registry import file_digests

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # loading takes about 5 s

# (interactions, users, items) from MANIFEST.md (ml-1m, citeulike-a, ml-100k: as in the papers)
EXPECTED = {
    "ml-1m": (1_000_209, 6_040, 3_706),
    "citeulike-a": (204_986, 5_551, 16_980),
    "ml-100k": (100_000, 943, 1_682),
    "pinterest-subset": (1_000_154, 37_501, 9_836),
    "yelp-diffnet": (205_529, 17_220, 35_351),
}


@pytest.fixture(scope="module")
def loaded():
    return {name: load_dataset(name, download=False) for name in EXPECTED}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_sizes_match_the_manifest(loaded, name):
    data = loaded[name]
    row = dataset_summary([data]).iloc[0]
    assert (row["interactions"], row["users"], row["items"]) == EXPECTED[name]
    users = data.test_users
    assert np.all(data.train[users, data.test_items[users]].A1 == 0)


def test_every_user_has_a_held_out_item_except_diffnet_users_without_test(loaded):
    for name in ["ml-1m", "citeulike-a", "ml-100k", "pinterest-subset"]:
        assert loaded[name].test_users.size == loaded[name].n_users, name
    test_users = pd.read_csv(default_registry().resolve("yelp-diffnet")["test"], sep="\t", header=None)[0].nunique()
    assert loaded["yelp-diffnet"].test_users.size == test_users


def test_ml1m_held_out_items_are_the_ncf_test_items(loaded):
    path = default_registry().resolve("ml-1m", ["ncf_test"])["ncf_test"]
    ncf = pd.read_csv(path, sep="\t", header=None, names=["user", "item", "rating", "timestamp"])
    data = loaded["ml-1m"]
    assert np.array_equal(data.test_items[ncf["user"].to_numpy()], ncf["item"].to_numpy())
    assert data.train.nnz == 994_169


def test_citeulike_train_is_users_dat_minus_the_test_pair(loaded):
    assert loaded["citeulike-a"].train.nnz == 199_435


def test_present_files_match_their_git_blob_ids():
    registry = default_registry()
    for entry in registry.datasets.values():
        for f in entry.files.values():
            path, _ = registry.locate(f)
            if path is not None and f.git_blob:
                assert file_digests(path)["git_blob"] == f.git_blob, f.relpath
