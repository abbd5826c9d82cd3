"""Datasets (FastEstimator's `fastestimator.dataset`): `NumpyDataset`."""
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe.dataset import numpy_dataset

__all__ = ["NumpyDataset", "numpy_dataset"]
