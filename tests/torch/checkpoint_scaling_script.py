"""Run by tests/torch/test_checkpoint_scaling.py under torchrun (2 processes, gloo): checkpoints never change
training, and their files are hashed and verified by the processes that write and read them.

For each kind of model (`fsdp`: sharded; `ddp`: replicated), in these same processes, one after the other:

- `clean`: 2 epochs, no checkpoint.
- `saved`: the same with RestoreWizard saving after each epoch (its first checkpoint is taken before the second
  optimizer of `net`'s EpochScheduler and before `late`'s first update).
- `resumed`: 2 epochs with RestoreWizard in a new directory holding only `saved`'s checkpoint of epoch 1.

Each run's final whole weights go to `<FE_T_OUT>/rank<R>.json`, with which files each process hashed while saving
and restoring, and whether a restore copied the models aside.
"""
import json
import os
import shutil

import numpy as np
import torch

import fe_core.checkpoint.checkpoint_dir as checkpoint_dir
import fe_core.checkpoint.model_restore as model_restore
import fe_torch.sharded_checkpoint as sharded_checkpoint
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.distributed import get_communicator
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy, MeanSquaredError
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace.io import RestoreWizard
from fe_torch.network import TorchNetwork
from fe_torch.sharding import FSDP

HASHED = []  # (phase, file name) of every file hashed by reading it back
PHASE = ["none"]


def _recording(function):
    def hashed(path):
        HASHED.append((PHASE[0], os.path.basename(path)))
        return function(path)
    return hashed


COPIES = []  # the phases in which a restore made a temporary copy of the models


def instrument():
    checkpoint_dir.file_sha256 = _recording(checkpoint_dir.file_sha256)
    sharded_checkpoint.file_sha256 = _recording(sharded_checkpoint.file_sha256)
    mkdtemp = model_restore.tempfile.mkdtemp
    model_restore.tempfile.mkdtemp = lambda *args, **kwargs: COPIES.append(PHASE[0]) or mkdtemp(*args, **kwargs)


def estimator(kind, epochs, ckpt=None):
    """Two models: `net` with an EpochScheduler of two Adams, `late` first updated in epoch 2 (`kind`: 'fsdp',
    'ddp', or None in one process)."""
    enable_deterministic(3)
    rng = np.random.RandomState(0)
    x = rng.normal(size=(16, 6)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": (x[:, 0] > 0).astype(np.int64), "yf": x[:, 1:2]})
    sharding = FSDP(min_params=50) if kind == "fsdp" else None
    net = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)),
                optimizer_fn=EpochScheduler({1: lambda p: torch.optim.Adam(p, lr=0.01),
                                             2: lambda p: torch.optim.Adam(p, lr=0.02)}),
                model_name="net", sharding=sharding)
    late = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Linear(16, 1)),
                 optimizer_fn=lambda p: torch.optim.Adam(p, lr=0.01), model_name="late", sharding=sharding)
    network = TorchNetwork(ops=[
        ModelOp(model=net, inputs="x", outputs="logits"),
        CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True),
        UpdateOp(model=net, loss_name="ce"),
        ModelOp(model=late, inputs="x", outputs="pred"),
        MeanSquaredError(inputs=("pred", "yf"), outputs="mse"),
        EpochScheduler({1: None, 2: UpdateOp(model=late, loss_name="mse")}),  # first updated in epoch 2
    ])
    traces = [RestoreWizard(directory=ckpt, frequency="1e", keep=3)] if ckpt else []
    return Estimator(pipeline=Pipeline(train_data=data, batch_size=4), network=network, epochs=epochs,
                     traces=traces, log_steps=None)


def whole(model):
    return {name: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().cpu().numpy().ravel().tolist()
            for name, p in model.named_parameters()}


def weights(est):
    return {model.model_name: whole(model) for model in est.network.models}


def main():
    instrument()
    out = os.environ["FE_T_OUT"]
    result = {}
    for kind in ("fsdp", "ddp"):
        runs = {}
        PHASE[0] = f"{kind}-clean"
        est = estimator(kind, 2)
        est.fit()
        runs["clean"] = weights(est)
        PHASE[0] = f"{kind}-saved"
        est = estimator(kind, 2, os.path.join(out, f"{kind}-saved"))
        est.fit()
        runs["saved"] = weights(est)
        if torch.distributed.get_rank() == 0:  # the checkpoint taken after epoch 1, alone in a new directory
            shutil.copytree(os.path.join(out, f"{kind}-saved", "step-4"), os.path.join(out, f"{kind}-resumed", "step-4"))
        torch.distributed.barrier()
        PHASE[0] = f"{kind}-resumed"
        est = estimator(kind, 2, os.path.join(out, f"{kind}-resumed"))
        est.fit()
        runs["resumed"] = weights(est)
        result[kind] = runs
    result["hashed"] = HASHED
    result["copies"] = COPIES
    communicator = get_communicator()  # the process group's, once build has joined it
    result["rank"] = communicator.rank
    with open(os.path.join(out, f"rank{communicator.rank}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
