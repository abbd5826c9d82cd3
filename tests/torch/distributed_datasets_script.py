"""Pipelines over special datasets split across the processes of a torchrun (no model: the Pipeline alone).

Run by tests/torch/test_distributed.py. Writes `<FE_T_OUT>/rank<R>.json` with, per dataset kind and epoch, the
sample ids this process received, batch by batch.
"""
import json
import os

import numpy as np

from fe_core.dataset import BatchDataset, ExtendDataset, GeneratorDataset, InterleaveDataset, NumpyDataset
from fe_core.distributed import get_communicator
from fe_core.pipeline import Pipeline
from fe_torch import distributed


def ids(start, count):
    return NumpyDataset({"x": np.arange(start, start + count, dtype=np.int64)[:, None]})


def epochs(pipeline, count=2):
    seen = {}
    for epoch in range(1, count + 1):
        with pipeline(mode="train", epoch=epoch) as loader:
            seen[str(epoch)] = {"len": len(loader), "batches": [batch["x"][:, 0].tolist() for batch in loader]}
    return seen


def counting():
    """The same stream on every process: 0, 1, 2, ..."""
    count = 0
    while True:
        yield {"x": np.array([count], dtype=np.int64)}
        count += 1


def main():
    distributed.setup()
    np.random.seed(100 + get_communicator().rank)  # every process's own stream differs
    result = {
        "extend": epochs(Pipeline(train_data=ExtendDataset(ids(0, 10), spoof_length=16), batch_size=4)),
        "batch": epochs(Pipeline(train_data=BatchDataset([ids(0, 12), ids(100, 12)], num_samples=[2, 2]))),
        "batch_probability": epochs(Pipeline(train_data=BatchDataset([ids(0, 12), ids(100, 12)], num_samples=4,
                                                                     probability=[0.5, 0.5]))),
        "interleave": epochs(Pipeline(train_data=InterleaveDataset([ids(0, 8), ids(100, 12)], pattern=[0, 1]),
                                      batch_size=4)),
        "generator": epochs(Pipeline(train_data=GeneratorDataset(counting(), samples_per_epoch=8), batch_size=4)),
    }
    with open(os.path.join(os.environ["FE_T_OUT"], f"rank{get_communicator().rank}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
