"""Datasets (FastEstimator's `fe.dataset`): map-style objects whose `ds[i]` is a dict of one sample's values.

`NumpyDataset` holds arrays in memory (and fetches whole batches at once); `CSVDataset`, `DirDataset`,
`LabeledDirDataset`, `SiameseDirDataset` and `PickleDataset` index files; `GeneratorDataset` draws from a generator;
`BatchDataset`, `InterleaveDataset`, `CombinedDataset` and `ExtendDataset` combine datasets. `fe_core.dataset.data`
holds the loaders of public data sets (`fe_core.dataset.data.mnist.load_data()`, ...), imported on use.
"""
from fe_core.dataset.batch_dataset import BatchDataset
from fe_core.dataset.combined_dataset import CombinedDataset
from fe_core.dataset.csv_dataset import CSVDataset
from fe_core.dataset.dataloader import FEDataLoader, InfiniteSampler
from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, FEDataset, InMemoryDataset, KeySummary
from fe_core.dataset.dir_dataset import DirDataset
from fe_core.dataset.extend_dataset import ExtendDataset
from fe_core.dataset.generator_dataset import GeneratorDataset
from fe_core.dataset.interleave_dataset import InterleaveDataset
from fe_core.dataset.labeled_dir_dataset import LabeledDirDataset
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.dataset.op_dataset import OpDataset
from fe_core.dataset.pickle_dataset import PickleDataset
from fe_core.dataset.siamese_dir_dataset import SiameseDirDataset

__all__ = ["BatchDataset", "CombinedDataset", "CSVDataset", "DatasetArgumentError", "DatasetSummary", "DirDataset",
           "ExtendDataset", "FEDataLoader", "FEDataset", "GeneratorDataset", "InfiniteSampler", "InMemoryDataset",
           "InterleaveDataset", "KeySummary", "LabeledDirDataset", "NumpyDataset", "OpDataset", "PickleDataset",
           "SiameseDirDataset"]
