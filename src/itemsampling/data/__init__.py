"""Datasets: registry, loaders, leave-one-out splits and a synthetic generator.

=============================================== ==============================================
``load_dataset(name, **opts)``                   a registered dataset as a :class:`Dataset`
``make_synthetic(n_users, n_items, ...)``        synthetic implicit feedback, no download
``dataset_summary(datasets)``                    interactions / users / items / density table
``default_registry()`` / ``Registry(spec)``      files, checksums and sources of each dataset
=============================================== ==============================================

Files are looked up in ``data/raw/<folder>/<path>`` of the repository, then in
``$ITEMSAMPLING_DATA/<folder>/<path>``, then downloaded (see :mod:`.registry`).
"""

from .dataset import Dataset
from .loaders import load_dataset
from .registry import ChecksumError, Registry, default_registry
from .summary import dataset_summary
from .synthetic import make_synthetic

__all__ = ["ChecksumError", "Dataset", "Registry", "dataset_summary", "default_registry", "load_dataset", "make_synthetic"]
