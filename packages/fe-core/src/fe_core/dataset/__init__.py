"""Datasets the Pipeline reads: any map-style object (`__len__` + `__getitem__` returning a dict) works;
`NumpyDataset` adds a fast `get_batch` for whole-batch fetching."""
from fe_core.dataset.numpy_dataset import NumpyDataset

__all__ = ["NumpyDataset"]
