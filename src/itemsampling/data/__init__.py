"""Datasets: registry, loaders, leave-one-out splits and a synthetic generator."""

from .dataset import Dataset

__all__ = ["Dataset"]
