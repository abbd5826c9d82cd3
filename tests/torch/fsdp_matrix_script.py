"""Every FSDP option against one process, in one launch: run by tests/torch/test_fsdp_matrix.py in one process
(the models unsharded) and under torchrun with 2 processes (the models sharded), each configuration from its own
seed, so the two runs' initial and final weights can be compared configuration by configuration.

Environment: FE_T_OUT (results: `<out>/rank<R>.json`, rewritten after every configuration), FE_T_CKPT (RestoreWizard
directories), FE_T_PHASE ('all': every configuration, then the BatchNorm run killed with SIGKILL at step 5;
'resume': that BatchNorm run resumed from its checkpoint).
"""
import json
import os
import sys
import warnings

import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.op.tensorop import TensorOp
from fe_core.op.tensorop import GradientOp
from fe_core.op.tensorop.loss import CrossEntropy, MeanSquaredError
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace.adapt import LRScheduler
from fe_core.trace.io import RestoreWizard
from fsdp_script import Crash  # kill -9 at a global step (this directory is on the path of a script run)
from fe_torch.network import TorchNetwork
from fe_torch.sharding import FSDP  # fe.distributed.FSDP

WORLD = int(os.environ.get("WORLD_SIZE", "1"))
SHARDED = WORLD > 1


class Block(torch.nn.Module):
    """A residual MLP block (the unit class of the policies)."""

    def __init__(self, width):
        super().__init__()
        self.inner = torch.nn.Linear(width, width)
        self.outer = torch.nn.Linear(width, width)

    def forward(self, x):
        return x + self.outer(torch.relu(self.inner(x)))


def mlp(norm=False):
    layers = [torch.nn.Linear(8, 16), torch.nn.ReLU()]
    if norm:
        layers.append(torch.nn.BatchNorm1d(16))
    return torch.nn.Sequential(*layers, Block(16), Block(16), torch.nn.Linear(16, 3))


def custom_init():
    """A model initialised after construction (replayed from model_fn's own calls, not reset_parameters()): also
    through `.data` (DCGAN's and Hugging Face's idiom) and by orthogonal_ (which does nothing on the meta device)."""
    model = mlp()
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.xavier_normal_(module.weight)
    model[0].weight.data.normal_(0.0, 0.05)
    torch.nn.init.orthogonal_(model[-1].weight)
    return model


def copied_init():
    """A model whose weights are copied from another tensor (not replayable: rank 0 builds it whole)."""
    model = mlp()
    with torch.no_grad():
        model[0].weight.copy_(torch.linspace(-0.3, 0.3, 128).reshape(16, 8))
    return model


def data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(16, 8)).astype(np.float32)
    y = (np.abs(x[:, 0] + x[:, 1]) * 1.5).astype(np.int64).clip(0, 2)
    return x, y


def adam(params):
    return torch.optim.Adam(params, lr=0.01)


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


class Halve(TensorOp):
    """Edits gradients between a GradientOp and UpdateOp(gradients=...)."""

    def forward(self, data, state):
        return [gradient * 0.5 for gradient in data]


def whole(model):
    """Every parameter's and buffer's whole value (a collective for a sharded model)."""
    values = {}
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        tensor = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
        values[name] = tensor.detach().float().cpu().numpy().ravel().tolist()
    return values


def classifier(name, spec, model_fn=mlp, optimizer=adam, mixed=False, merge=1, traces=(), grad_op=False,
               epochs=2, ddp=False):
    model = build(model_fn=model_fn, optimizer_fn=optimizer, model_name=name, mixed_precision=mixed,
                  sharding=spec if SHARDED and not ddp else None)
    begin = whole(model)
    x, y = data()
    ops = [ModelOp(model=model, inputs="x", outputs="logits"),
           CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True)]
    if grad_op:
        ops += [GradientOp(finals="ce", outputs="grads", model=model), Halve(inputs="grads", outputs="grads"),
                UpdateOp(model=model, gradients="grads")]
    else:
        ops.append(UpdateOp(model=model, loss_name="ce", merge_grad=merge))
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=4)
    estimator = Estimator(pipeline=pipeline, network=TorchNetwork(ops=ops), epochs=epochs,
                          traces=list(traces(model) if callable(traces) else traces),
                          log_steps=None)
    return estimator, {name: model}, begin


def gan(spec):
    g = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)),
              optimizer_fn=adam, model_name="gan_g", sharding=spec if SHARDED else None)
    d = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)),
              optimizer_fn=sgd, model_name="gan_d", sharding=spec if SHARDED else None)
    begin = {"gan_g": whole(g), "gan_d": whole(d)}
    x, _ = data()
    z = np.random.RandomState(1).normal(size=(16, 4)).astype(np.float32)
    ones = np.ones((16, 1), dtype=np.float32)
    ops = [ModelOp(model=g, inputs="z", outputs="fake"),
           ModelOp(model=d, inputs="fake", outputs="fake_score"),
           ModelOp(model=d, inputs="x", outputs="real_score"),
           MeanSquaredError(inputs=("fake_score", "one"), outputs="g_loss"),
           MeanSquaredError(inputs=("real_score", "one"), outputs="real_loss"),
           UpdateOp(model=g, loss_name="g_loss"),
           UpdateOp(model=d, loss_name="real_loss")]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "z": z, "one": ones}), batch_size=4)
    estimator = Estimator(pipeline=pipeline, network=TorchNetwork(ops=ops), epochs=2, log_steps=None)
    return estimator, {"gan_g": g, "gan_d": d}, begin


def bn_run(name, ckpt, crash_at=0, ddp=False):
    traces = [RestoreWizard(directory=ckpt, frequency="2s")] if ckpt else []
    traces.append(Crash(crash_at))
    return classifier(name, FSDP(min_params=100), model_fn=lambda: mlp(norm=True), traces=traces, ddp=ddp)


CONFIGS = {
    "reshard_true": lambda: classifier("reshard_true", FSDP(min_params=100)),
    "reshard_false": lambda: classifier("reshard_false", FSDP(min_params=100, reshard_after_forward=False)),
    "bf16": lambda: classifier("bf16", FSDP(min_params=100, mixed_precision=True), mixed=True),
    "class_policy": lambda: classifier("class_policy", FSDP(policy=[Block], activation_checkpointing=[Block])),
    "callable_policy": lambda: classifier(
        "callable_policy", FSDP(policy=lambda m: isinstance(m, torch.nn.Linear) and m.in_features == 16,
                                reshard_after_forward=False)),
    "gan": lambda: gan(FSDP(min_params=100)),
    "accumulate_lr": lambda: classifier("accumulate_lr", FSDP(min_params=100), merge=2, traces=lambda model: [
        LRScheduler(model=model, lr_fn=lambda step: 0.01 / (1 + 0.2 * step))]),
    "epoch_optimizers": lambda: classifier("epoch_optimizers", FSDP(min_params=100),
                                           optimizer=EpochScheduler({1: adam, 2: sgd})),
    "gradient_op": lambda: classifier("gradient_op", FSDP(min_params=100), grad_op=True),
    "custom_init": lambda: classifier("custom_init", FSDP(min_params=100), model_fn=custom_init, epochs=1),
    "copied_init": lambda: classifier("copied_init", FSDP(min_params=100), model_fn=copied_init, epochs=1),
    # a model_fn that cannot run on the meta device (it copies weights to the CPU): every process builds it whole
    "not_meta": lambda: classifier("not_meta", FSDP(min_params=100), model_fn=lambda: mlp().to("cpu"), epochs=1),
}


def run(name, make, results, out, rank):
    enable_deterministic(11)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator, models, begin = make()
    if len(models) == 1:
        begin = {next(iter(models)): begin}
    estimator.fit()
    results[name] = {"begin": begin, "end": {key: whole(model) for key, model in models.items()},
                     "warnings": [str(w.message) for w in caught if "Sharded torch model" in str(w.message) or
                                  "build(sharding=...)" in str(w.message)]}
    with open(os.path.join(out, f"rank{rank}.json"), "w") as file:
        json.dump(results, file)


def peak_mib():
    import resource  # pylint: disable=import-outside-toplevel
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def build_memory(results, out, rank):
    """Peak memory added by building a sharded model of 128 MiB (64 layers of 2 MiB): each process should hold its
    half and one layer's whole weights while initialising them, never the whole model."""
    build(model_fn=lambda: torch.nn.Linear(4, 4), optimizer_fn=None, model_name="warm",  # the process group, imports
          sharding=FSDP(min_params=1))
    enable_deterministic(11)
    before = peak_mib()
    model = build(model_fn=lambda: torch.nn.Sequential(*[torch.nn.Linear(1024, 512, bias=False) for _ in range(64)]),
                  optimizer_fn=None, model_name="big", sharding=FSDP(min_params=1))
    results["memory"] = {"added_mib": peak_mib() - before, "model_mib": 128.0,
                         "local_mib": sum(p.to_local().numel() for p in model.parameters()) * 4 / 2 ** 20}
    del model
    with open(os.path.join(out, f"rank{rank}.json"), "w") as file:
        json.dump(results, file)


def main():
    out, ckpt = os.environ["FE_T_OUT"], os.environ.get("FE_T_CKPT", "")
    rank = int(os.environ.get("RANK", "0"))
    phase = os.environ.get("FE_T_PHASE", "all")
    results = {}
    if phase == "resume":
        run("bn_resumed", lambda: bn_run("bn", os.path.join(ckpt, "crash")), results, out, rank)
        return
    if SHARDED:
        build_memory(results, out, rank)
    only = os.environ.get("FE_T_ONLY")  # a comma-separated selection (for debugging one configuration)
    for name, make in CONFIGS.items():
        if not only or name in only.split(","):
            run(name, make, results, out, rank)
    if SHARDED:
        run("bn", lambda: bn_run("bn", os.path.join(ckpt, "clean")), results, out, rank)
        run("bn_ddp", lambda: bn_run("bn", "", ddp=True), results, out, rank)
        run("bn_crash", lambda: bn_run("bn", os.path.join(ckpt, "crash"), crash_at=5), results, out, rank)


if __name__ == "__main__":
    main()
