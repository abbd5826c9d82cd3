"""A torch DataLoader handed to the Pipeline in a data-parallel run must split the data between processes itself (a
DistributedSampler): without one every process would train on every sample, and fe says so once per loader."""
from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

import fe_core.pipeline.planner as pipeline_module
from fe_core.distributed import get_communicator
from fe_core.distributed.threads import ThreadGroup
from fe_core.pipeline import Pipeline


class Samples(Dataset):
    """Eight samples, each a dict (what the Pipeline takes from a native loader)."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int):
        return {"x": torch.full((2,), float(index)), "y": torch.tensor(index)}


def _dataset() -> Samples:
    return Samples()


def _first_batch(loader: DataLoader) -> int:
    pipeline = Pipeline(train_data=loader)
    with pipeline(mode="train", epoch=1) as batches:
        batch = next(iter(batches))
    return len(np.asarray(batch["x"]))


def test_a_plain_dataloader_warns_once_per_loader_in_a_data_parallel_run(monkeypatch):
    seen = []
    monkeypatch.setattr(pipeline_module.warnings, "warn", lambda message, *args, **kwargs: seen.append(str(message)))

    def work():
        loader = DataLoader(_dataset(), batch_size=4)
        _first_batch(loader)
        _first_batch(loader)  # the same loader again: no second warning
        return True

    assert ThreadGroup(2).run(work) == [True, True]
    assert len(seen) == 2
    assert all("every process would train on every sample" in message and "DistributedSampler" in message
               for message in seen)


def test_a_distributed_sampler_or_one_process_raises_no_warning(monkeypatch):
    seen = []
    monkeypatch.setattr(pipeline_module.warnings, "warn", lambda message, *args, **kwargs: seen.append(str(message)))

    def work():
        comm = get_communicator()
        dataset = _dataset()
        sampler = DistributedSampler(dataset, num_replicas=comm.world_size, rank=comm.rank, shuffle=False)
        return _first_batch(DataLoader(dataset, batch_size=2, sampler=sampler))

    assert ThreadGroup(2).run(work) == [2, 2]
    assert _first_batch(DataLoader(_dataset(), batch_size=4)) == 4  # one process: a plain loader is right
    assert seen == []
