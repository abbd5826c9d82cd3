"""A FastEstimator-style script whose models are sharded (FSDP2) when it runs on several processes; run by
tests/torch/test_fsdp.py under torchrun (2 processes, gloo) and alone (1 process: the same models, unsharded).

Two models trained in one step: `net` (a classifier, Adam, a cosine LR schedule) and `head` (a regressor fed with
net's logits, so its loss's graph passes through net's, SGD with momentum, gradients accumulated over 2 steps).
Environment: FE_T_OUT (write `<out>/rank<R>.json`), FE_T_CKPT (RestoreWizard directory), FE_T_CRASH_AT (the
processes kill themselves with SIGKILL at this global step), FE_T_SAVE (BestModelSaver directory), FE_T_EPOCHS.
`fe test` runs `get_estimator()` in one process.
"""
import json
import os
import signal
import sys

import numpy as np
import torch

import fe_core.backend as fe_backend  # `fe.backend` (the `fe` package is not installed in the torch suite)
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.distributed import get_communicator
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy, MeanSquaredError
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.adapt import EarlyStopping, LRScheduler
from fe_core.trace.io import BestModelSaver, RestoreWizard
from fe_core.trace.metric import Accuracy
from fe_core.trace.trace import Trace
from fe_torch.network import TorchNetwork
from fe_torch.sharding import FSDP  # fe.distributed.FSDP


class Crash(Trace):
    """kill -9 of every process at a global step (after that step's checkpoint, if any)."""

    def __init__(self, step):
        super().__init__(mode="train")
        self.step = step

    def get_state(self):  # the harness's setting, not training state
        return {}

    def set_state(self, state):
        pass

    def on_batch_end(self, data):
        if self.step and self.system.global_step == self.step:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)


class Snapshot(Trace):
    """The weights and optimizer state when training begins (after RestoreWizard restored a checkpoint)."""

    def __init__(self):
        super().__init__(mode="train")
        self.begin = None
        self.last = None

    def get_state(self):
        return {}

    def set_state(self, state):
        pass

    def on_begin(self, data):
        models = {model.model_name: model for model in self.system.network.models}
        net, head = models["net"], models["head"]
        self.begin = {"net": full(net), "head": full(head), "net_opt": optimizer_state(net),
                      "head_opt": optimizer_state(head), "step": self.system.global_step}

    def on_epoch_end(self, data):  # the weights after the last training step (before BestModelSaver reloads its best)
        models = {model.model_name: model for model in self.system.network.models}
        self.last = {name: full(models[name]) for name in ("net", "head", "aux")}


def optimizer_state(model):
    """The whole value of every tensor of the model's optimizer state, by parameter name."""
    optimizer = model.current_optimizer
    return {name: {key: (value.full_tensor() if hasattr(value, "full_tensor") else value).cpu().numpy().ravel().tolist()
                   for key, value in sorted(optimizer.state.get(p, {}).items())}
            for name, p in model.named_parameters()}


def data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(24, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    yf = (x[:, 2:3] * 0.5).astype(np.float32)
    return x, y, yf


def sharding():
    """Sharded over several processes (a unit per Linear layer of at least 100 parameters, then the root)."""
    return FSDP(min_params=100) if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None


def get_estimator(epochs=3, save_dir=os.environ.get("FE_T_SAVE", ""), ckpt=os.environ.get("FE_T_CKPT", ""),
                  crash_at=int(os.environ.get("FE_T_CRASH_AT", "0")), weights=None):
    enable_deterministic(7)
    x, y, yf = data()
    train = NumpyDataset({"x": x[:16], "y": y[:16], "yf": yf[:16]})  # shuffled: the same order in 1 or N processes
    evaluation = NumpyDataset({"x": x[16:], "y": y[16:], "yf": yf[16:]})
    pipeline = Pipeline(train_data=train, eval_data=evaluation, test_data=evaluation,
                        batch_size=4)
    net = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                                                     torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                                     torch.nn.Linear(16, 2)),
                optimizer_fn=lambda params: torch.optim.Adam(params, lr=0.01), model_name="net",
                sharding=sharding(), weights_path=weights)
    head = build(model_fn=lambda: torch.nn.Linear(2, 1),
                 optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9), model_name="head",
                 sharding=sharding())
    # a third model, sharded with mixed precision (bf16 compute, fp32 slices and gradient reduction)
    aux = build(model_fn=lambda: torch.nn.Linear(6, 1), optimizer_fn=lambda params: torch.optim.Adam(params, lr=0.01),
                model_name="aux", sharding=FSDP(min_params=100, mixed_precision=True) if sharding() else None)
    network = TorchNetwork(ops=[
        ModelOp(model=aux, inputs="x", outputs="aux_pred"),
        MeanSquaredError(inputs=("aux_pred", "yf"), outputs="aux_mse"),
        UpdateOp(model=aux, loss_name="aux_mse"),
        ModelOp(model=net, inputs="x", outputs="logits"),
        CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True),
        ModelOp(model=head, inputs="logits", outputs="score"),
        MeanSquaredError(inputs=("score", "yf"), outputs="mse"),
        UpdateOp(model=net, loss_name="ce"),
        UpdateOp(model=head, loss_name="mse", merge_grad=2),
    ])
    traces = [Accuracy(true_key="y", pred_key="logits"),
              LRScheduler(model=net, lr_fn=lambda step: 0.01 / (1 + 0.1 * step)),
              EarlyStopping(monitor="ce", patience=5)]
    if save_dir:
        traces.append(BestModelSaver(model=net, save_dir=save_dir, load_best_final=True))
    if ckpt:
        traces.append(RestoreWizard(directory=ckpt, frequency=os.environ.get("FE_T_FREQ", "3s"),
                                    keep=int(os.environ.get("FE_T_KEEP", "2"))))
    traces.append(Crash(crash_at))
    traces.append(Snapshot())
    return Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=4)


def full(model):
    """Every parameter's whole value (a collective for a sharded model)."""
    return {name: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().cpu().numpy().ravel().tolist()
            for name, p in model.named_parameters()}


def test_weights(out, weights):
    """Test the weights a sharded run saved, loaded by build(weights_path=...) into an unsharded model."""
    estimator = get_estimator(save_dir="", ckpt="", crash_at=0, weights=weights)
    summary = estimator.test("test")
    with open(os.path.join(out, "tested.json"), "w") as file:
        json.dump({key: float(np.asarray(list(values.values())[-1]).ravel()[0])
                   for key, values in summary.history["test"].items() if key in ("ce", "accuracy")}, file)


def main():
    out = os.environ["FE_T_OUT"]
    estimator = get_estimator(epochs=int(os.environ.get("FE_T_EPOCHS", "3")))
    summary = estimator.fit("run")
    estimator.test()
    network = estimator.network
    net, head, aux = (next(model for model in network.models if model.model_name == name)
                      for name in ("net", "head", "aux"))
    communicator = get_communicator()
    snapshot = next(trace for trace in estimator.traces if isinstance(trace, Snapshot))
    result = {"rank": communicator.rank, "world_size": communicator.world_size, "begin": snapshot.begin, "last": snapshot.last,
              "net": full(net), "head": full(head), "aux": full(aux),
              "aux_dtypes": [str(p.dtype) for p in aux.parameters()],
              "aux_state_dtypes": sorted({str(value.dtype) for entry in aux.current_optimizer.state.values()
                                          for key, value in entry.items() if key != "step"}),
              "aux_output": str(aux(torch.zeros(2, 6)).dtype),
              "dtensor": [type(p).__name__ for p in net.parameters()],
              "local_rows": [int(p.to_local().shape[0]) if hasattr(p, "to_local") else int(p.shape[0])
                             for p in net.parameters()],
              "lr": fe_backend.get_lr(net),
              "test": {key: float(np.asarray(list(values.values())[-1]).ravel()[0])
                       for key, values in summary.history.get("test", {}).items() if key in ("ce", "accuracy")}}
    # fe.backend on the (sharded) model: feed_forward, set_lr, clipping across shards, save/load whole weights
    x, y, _ = data()
    logits = fe_backend.feed_forward(net, x[16:], training=False)
    result["feed_forward"] = logits.detach().cpu().numpy().ravel().tolist()
    transformed = network.transform({"x": x[16:], "y": y[16:], "yf": data()[2][16:]}, mode="test")
    result["transform_equal"] = torch.equal(transformed["logits"].detach().cpu(), logits.detach().cpu())
    fe_backend.set_lr(net, 0.5)
    result["set_lr"] = fe_backend.get_lr(net)
    loss = torch.nn.functional.cross_entropy(fe_backend.feed_forward(net, x[16:], training=True),
                                             torch.from_numpy(y[16:]))
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(list(net.parameters()), max_norm=0.01)
    result["grad_norm"] = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
    clipped = torch.nn.utils.get_total_norm([p.grad for p in net.parameters()])
    result["clipped_norm"] = float(clipped.full_tensor() if hasattr(clipped, "full_tensor") else clipped)
    for p in net.parameters():
        p.grad = None
    path = fe_backend.save_model(net, os.path.join(out, "saved"), model_name="again")
    before = full(net)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(0.0)
    real_load = torch.load

    def rank0_only(*args, **kwargs):  # whole weights are read by rank 0 alone; the others receive their slices
        if communicator.rank != 0:
            raise AssertionError(f"rank {communicator.rank} read a whole-weights file")
        return real_load(*args, **kwargs)

    torch.load = rank0_only
    try:
        fe_backend.load_model(net, path)
    finally:
        torch.load = real_load
    result["reloaded_equal"] = full(net) == before
    try:  # weights that do not fit: every process raises (none waits for rank 0 in a collective)
        fe_backend.load_model(head, path)
    except ValueError as error:
        result["misfit_error"] = str(error)
    # what a restore keeps to put the models back if loading a checkpoint fails: each process's own slices
    from fe_core.framework.registry import model_backend
    backup = os.path.join(out, f"backup{communicator.rank}")
    backend = model_backend(net)
    backend.save_model(net, backup, save_optimizer=True)
    before, before_opt = full(net), optimizer_state(net)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    for entry in net.current_optimizer.state.values():
        for value in entry.values():
            value.add_(1.0)
    backend.load_model(net, backup, load_optimizer=True)
    result["backup_restored"] = full(net) == before and optimizer_state(net) == before_opt
    # fe.backend.load_model(..., load_optimizer=True): a one-process model's weights and optimizer state into a
    # sharded model (each process keeps its slices), which then trains on
    plain = build(model_fn=lambda: torch.nn.Linear(6, 2), optimizer_fn=lambda p: torch.optim.Adam(p, lr=0.01),
                  model_name="plain")
    torch.nn.functional.mse_loss(plain(torch.ones(3, 6)), torch.zeros(3, 2)).backward()
    plain.current_optimizer.step()
    saved = fe_backend.save_model(plain, os.path.join(out, f"plain{communicator.rank}"), model_name="plain",
                                  save_optimizer=True)
    twin = build(model_fn=lambda: torch.nn.Linear(6, 2), optimizer_fn=lambda p: torch.optim.Adam(p, lr=0.01),
                 model_name="twin", sharding=sharding())
    try:
        fe_backend.load_model(twin, saved, load_optimizer=True)
        result["optimizer_loaded"] = full(twin) == full(plain) and optimizer_state(twin) == optimizer_state(plain)
        twin(torch.ones(3, 6)).sum().backward()
        twin.current_optimizer.step()
        result["optimizer_steps"] = True
    except Exception as error:  # pylint: disable=broad-except
        result["optimizer_steps"] = repr(error)[:500]
    if communicator.world_size > 1:  # an optimizer FSDP cannot shard: one line, before training
        try:
            build(model_fn=lambda: torch.nn.Linear(6, 2), optimizer_fn=lambda p: torch.optim.LBFGS(p),
                     sharding="fsdp")
        except ValueError as error:
            result["lbfgs_error"] = str(error)
        # precomputed gradients that do not fit a sharded model: refused on every process alike (none left waiting)
        g = build(model_fn=lambda: torch.nn.Linear(6, 1), optimizer_fn="sgd", model_name="g", sharding=sharding())
        bad = Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x[:16]}), batch_size=4), epochs=1,
                        network=TorchNetwork(ops=[ModelOp(model=g, inputs="x", outputs="p"),
                                                  UpdateOp(model=g, gradients="p")]), log_steps=None)
        try:
            bad.fit()
        except ValueError as error:
            result["gradients_error"] = str(error)
    with open(os.path.join(out, f"rank{communicator.rank}.json"), "w") as file:
        json.dump(result, file)
    if os.environ.get("FE_T_WEIGHTS") and communicator.world_size == 1:
        test_weights(out, os.environ["FE_T_WEIGHTS"])


if __name__ == "__main__":
    main()
