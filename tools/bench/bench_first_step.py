#!/usr/bin/env python3
"""Time to the first training step: from `fit()` to the end of fe's first training batch, next to a hand-written
loop's first step (its `tf.function` trace included), on TensorFlow and on PyTorch, each in a fresh process.

Run from the repository root with any Python (it starts the framework interpreters itself):

    python tools/bench/bench_first_step.py [--repeats 7] [--frameworks tf torch] [--models mlp lenet] [--quick]

Workloads: the MLP (64 -> 32 -> 10 logits) and LeNet (28x28 images, softmax output) of bench_tf.py / bench_torch.py,
batch 32, Adam(1e-3), synthetic data in memory (4096 training samples and 256 eval samples).

What the clock covers, in a process that has already imported everything and built the model and optimizer:
  hand-written: one batch picked from a fresh permutation, then the training step: on TensorFlow the first call of an
      `@tf.function` step (GradientTape, model, Keras sparse categorical cross entropy, `apply_gradients`), so its
      AutoGraph conversion and trace; on torch forward, cross entropy, `zero_grad`, `backward`, `step`;
  fe: `Estimator.fit()` (Pipeline with train and eval data, ModelOp -> CrossEntropy -> UpdateOp, `log_steps=None`)
      up to the end of the first training batch (a trace's `on_batch_end`): the run history, fe's warmup (one step
      of each mode), the pipeline's start and tracing included.
On CUDA (torch) both clocks stop after `torch.cuda.synchronize()`.

Every measurement is a new interpreter, so neither side profits from the other's warm caches (TensorFlow's kernels,
torch's allocator, lazily imported modules). One unmeasured process per side runs first, so that the OS file cache and
Python's bytecode cache are warm for all measured ones, as on a user's machine: when PYTHONDONTWRITEBYTECODE is set,
it is lifted for the children with PYTHONPYCACHEPREFIX pointing into a temporary directory (nothing is written into
the tree). The run history goes to a temporary database (created by the unmeasured processes). Sides alternate within
each repeat. Reported: median seconds of each side and the median of the per-repeat ratios fe / hand-written (time:
below 1 fe is faster). The torch rows add fe with the run history off (`FE_HISTORY_DB=off`), to show what its first
database transaction costs on a step of a few milliseconds. Single-threaded (OMP_NUM_THREADS=1; TensorFlow intra/inter-op threads 1; torch threads 1).
"""
from __future__ import annotations

import argparse
import json
import os

os.environ["OMP_NUM_THREADS"] = "1"
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_table import machine_line, print_table  # noqa: E402
from interpreters import ROOT, default_python  # noqa: E402

BATCH = 32
TRAIN_SAMPLES = 4096
EVAL_SAMPLES = 256
SIDES = ("hand-written", "fe")
NO_HISTORY = "fe, FE_HISTORY_DB=off"  # what the run history's first transaction costs (torch rows)


# ---------------------------------------------------------------------------------------------------- children
def _data(shape: Tuple[int, ...], samples: int, seed: int) -> Tuple[Any, Any]:
    import numpy as np  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((samples, *shape)).astype(np.float32),
            rng.integers(0, 10, size=samples).astype(np.int64))


def _fe_first_step(network_ops: Any, x: Any, y: Any, shape: Tuple[int, ...], synchronize: Any) -> float:
    """Seconds from `fit()` to the end of the first training batch."""
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.trace import Trace  # pylint: disable=import-outside-toplevel

    class FirstBatchEnd(Trace):
        def __init__(self) -> None:
            super().__init__(mode="train")
            self.at = None

        def on_batch_end(self, data: Any) -> None:
            if self.at is None:
                synchronize()
                self.at = time.perf_counter()

    eval_x, eval_y = _data(shape, EVAL_SAMPLES, seed=1)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}),
                        eval_data=NumpyDataset({"x": eval_x, "y": eval_y}), batch_size=BATCH)
    first = FirstBatchEnd()
    estimator = Estimator(pipeline=pipeline, network=make_network(ops=network_ops), epochs=1,
                          train_steps_per_epoch=2, traces=[first], log_steps=None)
    start = time.perf_counter()
    estimator.fit()
    return first.at - start


def child_tf(side: str, model_name: str) -> float:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_tf.architecture import LeNet  # pylint: disable=import-outside-toplevel
    from tf_workloads import hand_written_step, mlp  # pylint: disable=import-outside-toplevel

    model_fn, shape, from_logits = (mlp, (64,), True) if model_name == "mlp" else (LeNet, (28, 28, 1), False)
    x, y = _data(shape, TRAIN_SAMPLES, seed=0)
    if side == "fe":
        model = build(model_fn=model_fn, optimizer_fn=lambda: keras.optimizers.Adam(learning_rate=1e-3))
        ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
               CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=from_logits),
               UpdateOp(model=model, loss_name="ce")]
        return _fe_first_step(ops, x, y, shape, lambda: None)
    model = model_fn()
    train_step = hand_written_step(model, keras.optimizers.Adam(learning_rate=1e-3), from_logits)

    start = time.perf_counter()
    index = np.random.permutation(len(x))[:BATCH]
    train_step(x[index], y[index])
    return time.perf_counter() - start


def child_torch(side: str, model_name: str) -> float:
    import torch  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    import torch.nn.functional as F  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_torch.architecture import LeNet  # pylint: disable=import-outside-toplevel
    from fe_torch.devices import default_device  # pylint: disable=import-outside-toplevel

    device = default_device()

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def mlp() -> Any:
        return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

    model_fn, shape, from_logits = (mlp, (64,), True) if model_name == "mlp" else (LeNet, (1, 28, 28), False)
    x, y = _data(shape, TRAIN_SAMPLES, seed=0)
    if side == "fe":
        model = build(model_fn=model_fn, optimizer_fn=lambda params: torch.optim.Adam(params, lr=1e-3))
        ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
               CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=from_logits),
               UpdateOp(model=model, loss_name="ce")]
        return _fe_first_step(ops, x, y, shape, synchronize)
    model = model_fn().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    features, labels = torch.from_numpy(x), torch.from_numpy(y)
    synchronize()
    start = time.perf_counter()
    model.train()
    index = torch.randperm(len(features))[:BATCH]
    batch_x, batch_y = features[index].to(device), labels[index].to(device)
    prediction = model(batch_x)
    loss = F.cross_entropy(prediction, batch_y) if from_logits else F.nll_loss(
        torch.log(prediction.clamp(1e-7, 1.0)), batch_y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    synchronize()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------------------- driver
def run_child(python: str, framework: str, side: str, model: str, env: Dict[str, str]) -> float:
    if side == NO_HISTORY:
        side, env = "fe", dict(env, FE_HISTORY_DB="off")
    command = [python, str(Path(__file__).resolve()), "--child", framework, side, model]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-2000:]}"
                           f"{result.stderr[-4000:]}")
    return float(json.loads(lines[-1])["seconds"])


def child_env(scratch: str) -> Dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2",
               FE_HISTORY_DB=os.path.join(scratch, "history.db"))
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None or "PYTHONPYCACHEPREFIX" not in env:
        env["PYTHONPYCACHEPREFIX"] = os.path.join(scratch, "pycache")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="measured processes per side and workload")
    parser.add_argument("--frameworks", nargs="+", default=["tf", "torch"], choices=["tf", "torch"])
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet"], choices=["mlp", "lenet"])
    parser.add_argument("--tf-python", default=None, help="interpreter for the TensorFlow processes")
    parser.add_argument("--torch-python", default=None, help="interpreter for the torch processes")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 1 repeat of the MLP, without the unmeasured warm-up processes")
    parser.add_argument("--child", nargs=3, metavar=("FRAMEWORK", "SIDE", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        framework, side, model = args.child
        seconds = (child_tf if framework == "tf" else child_torch)(side, model)
        print(json.dumps({"seconds": seconds}))
        return 0
    if args.quick:
        args.repeats, args.models = 1, ["mlp"]
    pythons = {"tf": args.tf_python or default_python("tf"), "torch": args.torch_python or default_python("torch")}
    print(machine_line())
    print(f"time from the start of training to the end of the first training batch; batch {BATCH}, Adam, "
          f"{args.repeats} fresh processes per side" + ("" if args.quick else " (after one unmeasured one)")
          + ", sides alternating")
    header = ("framework", "workload", "hand-written first step (median)", "fe fit() to first batch end (median)",
              "fe / hand-written (median)")
    rows: List[List[str]] = []
    with tempfile.TemporaryDirectory(prefix="fe_bench_first_step_") as scratch:
        env = child_env(scratch)
        for framework in args.frameworks:
            python = pythons[framework]
            for model in args.models:
                for side in SIDES if not args.quick else ():  # unmeasured: warm file and bytecode caches,
                    run_child(python, framework, side, model, env)  # create the history database
                sides = SIDES + ((NO_HISTORY, ) if framework == "torch" and not args.quick else ())
                times: Dict[str, List[float]] = {side: [] for side in sides}
                for repeat in range(args.repeats):
                    for side in sides if repeat % 2 == 0 else sides[::-1]:
                        times[side].append(run_child(python, framework, side, model, env))
                for side in sides[1:]:
                    ratios = [own / hand for own, hand in zip(times[side], times["hand-written"])]
                    rows.append([framework, model if side == "fe" else f"{model} ({side})",
                                 f"{statistics.median(times['hand-written']):.3f} s",
                                 f"{statistics.median(times[side]):.3f} s", f"{statistics.median(ratios):.3f}x"])
    print_table(rows, header)
    return 0


if __name__ == "__main__":
    sys.exit(main())
