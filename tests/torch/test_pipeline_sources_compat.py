"""A torch DataLoader as Pipeline data, as FastEstimator users write it: `get_loader` hands the user's own loader back,
and the Pipeline's batch_size / ops / num_process (which a DataLoader never runs) are refused with FastEstimator's
AssertionError."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.pipeline import Pipeline


class Samples(Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int):
        return {"x": torch.full((2,), float(index)), "y": torch.tensor(index)}


def _loader() -> DataLoader:
    return DataLoader(Samples(), batch_size=4, shuffle=False)


def test_get_loader_returns_the_users_dataloader_unchanged() -> None:
    loader = _loader()
    pipeline = Pipeline(train_data=loader, eval_data={"a": loader})
    assert pipeline.get_loader("train") is loader
    assert pipeline.get_loader(mode="eval", ds_id="a") is loader
    batch = next(iter(pipeline.get_loader("train")))
    assert isinstance(batch["x"], torch.Tensor) and batch["x"].shape == (4, 2)


def test_a_dataloader_is_iterated_in_a_pipeline_context() -> None:
    pipeline = Pipeline(train_data=_loader())
    with pipeline as loader:
        sizes = [len(batch["y"]) for batch in loader]
    assert sizes == [4, 2]


@pytest.mark.parametrize("argument", [{"batch_size": 2}, {"ops": [LambdaOp(fn=lambda x: x, inputs="x", outputs="x")]},
                                      {"num_process": 0}])
def test_batch_size_ops_and_num_process_with_only_dataloaders_are_refused(argument) -> None:
    with pytest.raises(AssertionError, match="only appl"):
        Pipeline(train_data=_loader(), **argument)
    with pytest.raises(ValueError):  # also fe's ValueError
        Pipeline(train_data=_loader(), eval_data=_loader(), **argument)


def test_with_an_fe_dataset_beside_the_dataloader_they_only_warn() -> None:
    dataset = NumpyDataset({"x": np.zeros((4, 2), dtype=np.float32), "y": np.arange(4)})
    with pytest.warns(UserWarning, match="batch_size only applies to the fe datasets"):
        pipeline = Pipeline(train_data=dataset, eval_data=_loader(), batch_size=2)
    assert [len(batch["y"]) for batch in pipeline.get_results(mode="train", num_steps=2)] == [2, 2]
    assert pipeline.get_loader("eval") is pipeline.data["eval"][""]


def test_a_torch_dataset_of_sample_lists_is_batched_per_item_without_shifting_torch_random() -> None:
    class Pairs(Dataset):
        def __len__(self) -> int:
            return 3

        def __getitem__(self, index: int):
            noise = torch.rand(1)  # a dataset drawing from torch's generator
            return [{"x": np.full(2, index, dtype=np.float32) + 0 * noise.numpy(), "y": index},
                    {"x": np.full(2, index + 10, dtype=np.float32), "y": index + 10}]

    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    pipeline = Pipeline(train_data=Pairs())
    with pipeline(mode="train", shuffle=False) as loader:
        assert torch.equal(torch.rand(1), expected)  # looking at the first item drew nothing from torch's stream
        assert [batch["y"].tolist() for batch in loader] == [[0, 10], [1, 11], [2, 12]]
