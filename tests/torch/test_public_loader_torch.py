"""The loader `with pipeline(mode) as loader:` and `Pipeline.get_loader` hand to user code under torch: a
`torch.utils.data.DataLoader`, as FastEstimator's loader is, still yielding fe's batches as torch tensors, with
`len`, DataLoader's `dataset` / `batch_size` / `drop_last` answered from the Pipeline, attribute forwarding to the
epoch loader, and pickling / copying."""
from __future__ import annotations

import copy
import pickle
from typing import Any, Dict, List

import numpy as np
import torch
from torch.utils.data import DataLoader

from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import Batch
from fe_core.pipeline import Pipeline
from semantics4_pipeline_helpers import ListItems


def columns() -> Dict[str, np.ndarray]:
    return {"x": np.arange(20, dtype=np.float32).reshape(10, 2), "y": np.arange(10)}


def values(loader: Any) -> List[List[int]]:
    batches = list(loader)
    assert all(isinstance(batch["x"], torch.Tensor) and isinstance(batch["y"], torch.Tensor) for batch in batches)
    return [batch["y"].tolist() for batch in batches]


def test_context_and_get_loader_hand_out_torch_dataloaders_of_fe_batches() -> None:
    dataset = NumpyDataset(columns())
    pipeline = Pipeline(train_data=dataset, batch_size=4)
    expected = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pipeline(mode="train", shuffle=False) as loader:
        assert isinstance(loader, DataLoader)
        assert len(loader) == 3 and values(loader) == expected
        assert loader.dataset is dataset and loader.batch_size == 4 and loader.get_batch_size() == 4
        assert loader.drop_last is False and loader.num_workers == 0
        assert loader.shuffle is False  # forwarded to fe's epoch loader
        for clone in (pickle.loads(pickle.dumps(loader)), copy.copy(loader), copy.deepcopy(loader)):
            assert isinstance(clone, DataLoader) and len(clone) == 3 and values(clone) == expected
    loader = pipeline.get_loader(mode="train", shuffle=False)
    assert isinstance(loader, DataLoader) and values(loader) == expected


def test_a_torch_dataset_as_train_data_gives_a_dataloader_whose_dataset_it_is() -> None:
    class Squares(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return 6

        def __getitem__(self, index: int) -> Dict[str, Any]:
            return {"y": np.int64(index * index)}

    dataset = Squares()
    pipeline = Pipeline(train_data=dataset, ops=[Batch(batch_size=4, drop_last=True)])
    loader = pipeline.get_loader(mode="train", shuffle=False)
    assert isinstance(loader, DataLoader) and loader.dataset is dataset
    assert loader.batch_size == 4 and loader.drop_last is True and len(loader) == 1
    assert [batch["y"].tolist() for batch in loader] == [[0, 1, 4, 9]]


def test_a_dataset_of_whole_batches_has_no_batch_size_and_is_the_users() -> None:
    dataset = ListItems(3)  # every item a list of 5 samples
    with Pipeline(train_data=dataset)(mode="train", shuffle=False) as loader:
        assert isinstance(loader, DataLoader) and loader.dataset is dataset
        assert loader.batch_size is None and len(loader) == 3
        assert [tuple(batch["x"].shape) for batch in loader] == [(5, 2)] * 3
