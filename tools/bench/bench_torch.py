#!/usr/bin/env python3
"""fe's `Estimator.fit` on PyTorch next to a hand-written torch training loop, in one process.

Run with an environment that has fe-core and fe-torch (from the repository root):

    .venvs/torch/bin/python tools/bench/bench_torch.py [--repeats 5] [--epochs 9] [--models mlp lenet] [--quick] [--amp]

Both sides train on fe's default device: the first CUDA GPU when there is one, else the CPU. With `--amp` both train
in mixed precision: fe with `build(..., mixed_precision=True)`, the hand-written loop with PyTorch's AMP recipe
(`torch.autocast`, float16 and a `GradScaler` on CUDA, bfloat16 on the CPU).

Workloads (synthetic data, same for both sides; both start from the same initial weights):

  mlp:   Linear(64, 32) - ReLU - Linear(32, 10) logits, batch 32, Adam(lr=1e-3), 4096 samples (128 steps/epoch);
  lenet: fe_torch's LeNet on 1x28x28 images (softmax output), batch 32, Adam(lr=1e-3), 512 samples (16 steps/epoch).

The hand-written loop is what a careful user writes: the data as tensors in host memory, a `torch.randperm` per
epoch, slicing (and `.to(device)` on a GPU), forward, cross entropy, `zero_grad(set_to_none=True)`, `backward`, `step`. fe runs `Estimator.fit` with the
data in a `NumpyDataset` (shuffled by its Pipeline), a Network of ModelOp -> CrossEntropy -> UpdateOp, no eval data,
and `log_steps=None` (no logging) or `log_steps=100` (FastEstimator's default: a log line every 100 steps), the latter
also with the ProgressBar a run in a terminal shows (drawn into a buffer; tqdm when installed).

Only steady-state training counts. fe's epochs are timed by a trace with epoch hooks only, which pairs each fe epoch
with one epoch of the hand-written loop (its own model and optimizer) run right after it, or right before it in every
other pair (see pairing.py: the second epoch of a back-to-back pair runs faster, whichever it is), so every pair sees
the same machine conditions and the position bias cancels. The first pair of every run (fe's warmup, first-epoch
allocations) is left out. The table shows, per configuration, the median and best epoch rate, the median of the
per-pair ratios fe / hand-written and best / best. Single-threaded (OMP_NUM_THREADS=1, torch.set_num_threads(1)).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Dict, List, Tuple  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

from fe_core.build import build  # noqa: E402
from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.estimator import Estimator  # noqa: E402
from fe_core.network import make_network  # noqa: E402
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402
from fe_core.trace import Trace  # noqa: E402
from fe_core.trace.progress_bar import ProgressBar  # noqa: E402
from fe_torch.architecture import LeNet  # noqa: E402
from fe_torch.devices import default_device  # noqa: E402

from bench_table import PAIRED_HEADER, machine_line, print_table, summarize_pairs  # noqa: E402
from pairing import PairedEpochs  # noqa: E402

BATCH = 32
DEVICE = default_device()  # where fe trains: the first CUDA GPU when there is one, else the CPU


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


WORKLOADS: Dict[str, Dict[str, object]] = {
    "mlp": {"model": mlp, "shape": (64,), "samples": 4096, "from_logits": True},
    "lenet": {"model": LeNet, "shape": (1, 28, 28), "samples": 512, "from_logits": False},
}


def make_data(shape: Tuple[int, ...], samples: int) -> Tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((samples, *shape)).astype(np.float32)
    y = rng.integers(0, 10, size=samples).astype(np.int64)
    return x, y


def synchronize() -> None:
    """Wait for the work queued on the device (CUDA runs asynchronously), so that a clock read after it is honest."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


class HandWrittenLoop:
    """The hand-written training loop, one epoch per call; returns that epoch's steps/sec.

    The data stays in host memory, as a data loader's would; on a GPU each batch is copied over with
    `.to(device, non_blocking=True)`. With `amp` the forward pass and the loss run under `torch.autocast` (float16 on
    CUDA, bfloat16 on the CPU) and, on CUDA, the update goes through a `GradScaler`: the recipe of PyTorch's AMP docs.
    """

    def __init__(self, workload: Dict[str, object], x: np.ndarray, y: np.ndarray,
                 state: Dict[str, torch.Tensor], amp: bool = False) -> None:
        self.model: torch.nn.Module = workload["model"]().to(DEVICE)  # type: ignore[operator]
        self.model.load_state_dict(state)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.from_logits = bool(workload["from_logits"])
        self.features, self.labels = torch.from_numpy(x), torch.from_numpy(y)
        self.amp = amp
        self.scaler = torch.amp.GradScaler("cuda") if amp and DEVICE.type == "cuda" else None

    def _loss(self, prediction: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.from_logits:
            return F.cross_entropy(prediction, labels)
        return F.nll_loss(torch.log(prediction.clamp(1e-7, 1.0)), labels)

    def __call__(self) -> float:
        self.model.train()
        synchronize()
        start = time.perf_counter()
        steps = self._amp_epoch() if self.amp else self._epoch()
        synchronize()
        return steps / (time.perf_counter() - start)

    def _epoch(self) -> int:
        model, optimizer, features, labels = self.model, self.optimizer, self.features, self.labels
        on_host = DEVICE.type == "cpu"
        size = len(features)
        order = torch.randperm(size)
        steps = 0
        for begin in range(0, size, BATCH):
            index = order[begin:begin + BATCH]
            if on_host:
                batch_x, batch_y = features[index], labels[index]
            else:
                batch_x = features[index].to(DEVICE, non_blocking=True)
                batch_y = labels[index].to(DEVICE, non_blocking=True)
            loss = self._loss(model(batch_x), batch_y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            steps += 1
        return steps

    def _amp_epoch(self) -> int:
        model, optimizer, features, labels, scaler = self.model, self.optimizer, self.features, self.labels, self.scaler
        dtype = torch.float16 if DEVICE.type == "cuda" else torch.bfloat16
        size = len(features)
        order = torch.randperm(size)
        steps = 0
        for begin in range(0, size, BATCH):
            index = order[begin:begin + BATCH]
            batch_x = features[index].to(DEVICE, non_blocking=True)
            batch_y = labels[index].to(DEVICE, non_blocking=True)
            with torch.autocast(DEVICE.type, dtype=dtype):
                loss = self._loss(model(batch_x), batch_y)
            optimizer.zero_grad(set_to_none=True)
            if scaler is None:
                loss.backward()
                optimizer.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            steps += 1
        return steps


def paired_rates(workload: Dict[str, object], x: np.ndarray, y: np.ndarray, state: Dict[str, torch.Tensor],
                 epochs: int, log_steps: object, progress_bar: bool = False,
                 amp: bool = False) -> List[Tuple[float, float]]:
    """(fe steps/sec, hand-written steps/sec) of every epoch after the first, fe epochs paired with hand-written
    ones; both start from the weights in `state`, both in mixed precision when `amp`."""
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=BATCH)
    model_fn: Callable[[], torch.nn.Module] = workload["model"]  # type: ignore[assignment]

    def model_with_weights() -> torch.nn.Module:
        model = model_fn()
        model.load_state_dict(state)
        return model

    model = build(model_fn=model_with_weights, optimizer_fn=lambda params: torch.optim.Adam(params, lr=1e-3),
                  mixed_precision=amp)
    network = make_network(ops=[
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=bool(workload["from_logits"])),
        UpdateOp(model=model, loss_name="ce"),
    ])
    timer = PairedEpochs(HandWrittenLoop(workload, x, y, state, amp), synchronize=synchronize)
    traces: List[Trace] = [timer]
    if progress_bar:  # what a run in a terminal shows; drawn into a buffer here
        traces.append(ProgressBar(file=io.StringIO()))
    with contextlib.redirect_stdout(io.StringIO()):  # log lines are produced (and cost their time), not shown
        estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=log_steps)
        estimator.fit()
    return timer.pairs[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="fe runs per configuration")
    parser.add_argument("--epochs", type=int, default=9,
                        help="epochs per run (the first pair is not counted; an odd number balances the pair order)")
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet"], choices=sorted(WORKLOADS))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 1 run of 3 epochs per configuration on 256 samples per workload")
    parser.add_argument("--amp", action="store_true",
                        help="mixed precision on both sides: build(mixed_precision=True) vs torch.autocast "
                             "(+ GradScaler on CUDA)")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.epochs = 1, 3
    device = torch.cuda.get_device_name(DEVICE) if DEVICE.type == "cuda" else "CPU, 1 thread"
    precision = ("float16 autocast + GradScaler" if DEVICE.type == "cuda" else "bfloat16 autocast") if args.amp \
        else "float32"
    print(machine_line(torch=torch.__version__))
    print(f"fe Estimator.fit vs a hand-written torch loop; batch {BATCH}, Adam, {device}, {precision}; "
          f"{args.repeats} runs x {args.epochs - 1} counted epoch pairs per configuration")
    rows = []
    for name in args.models:
        workload = WORKLOADS[name]
        x, y = make_data(workload["shape"], 256 if args.quick else workload["samples"])  # type: ignore[arg-type]
        torch.manual_seed(0)
        state = {k: v.clone() for k, v in workload["model"]().state_dict().items()}  # type: ignore[operator]
        configurations = {}
        for label, log_steps, progress_bar in (("fe log_steps=None", None, False), ("fe log_steps=100", 100, False),
                                               ("fe log_steps=100 + ProgressBar", 100, True)):
            pairs: List[Tuple[float, float]] = []
            for _ in range(args.repeats):
                pairs += paired_rates(workload, x, y, state, args.epochs, log_steps, progress_bar, args.amp)
            configurations[label] = pairs
        rows += summarize_pairs(name, configurations, "hand-written loop")
    print_table(rows, PAIRED_HEADER)


if __name__ == "__main__":
    main()
