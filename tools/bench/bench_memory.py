#!/usr/bin/env python3
"""Does fe's memory grow over a run? Resident set size after epochs 1, 5, 10 and 20, on each backend.

Run from the repository root:

    python tools/bench/bench_memory.py [--epochs 20] [--models mlp lenet] [--torch-python PY] [--tf-python PY]

Each backend and model trains in its own subprocess (a fresh interpreter, so one run's memory does not count against
another), single-threaded, with Adam, batch 32, an Accuracy trace and log_steps=100 (what a real run has):

  mlp:   64 -> 32 -> 10 on 4096 training and 1024 evaluation samples;
  lenet: the backend's LeNet on 28x28 images, 512 training and 128 evaluation samples (MiB-sized activations: the
         case where fe keeps freed memory for reuse during the run, see fe_core.allocator).

The RSS is read from /proc/self/status (VmRSS; `resource`'s peak RSS where /proc is missing) at the end of every
epoch's evaluation, without forcing a garbage collection, and once more after `fit` returns (when fe has given the
kept memory back). The target is less than 5% growth from epoch 1 to epoch 20.

The interpreters default to .venvs/fe (which has both frameworks) or else .venvs/torch and .venvs/tf; a backend whose
interpreter lacks its framework is reported as not installed.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Optional, Tuple  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_table import machine_line, print_table  # noqa: E402
from interpreters import default_python, has_module  # noqa: E402

REPORT_EPOCHS = (1, 5, 10, 20)


def rss_mib() -> float:
    """The current resident set size in MiB (peak RSS where /proc is not available)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource  # pylint: disable=import-outside-toplevel
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# ------------------------------------------------------------------------------------------------ worker (one backend)
def _torch_model(name: str) -> Any:
    import torch  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(1)
    if name == "lenet":
        from fe_torch.architecture import LeNet  # pylint: disable=import-outside-toplevel
        return LeNet()
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


def _tf_model(name: str) -> Any:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if name == "lenet":
        from fe_tf.architecture import LeNet  # pylint: disable=import-outside-toplevel
        return LeNet()
    import keras  # pylint: disable=import-outside-toplevel
    return keras.Sequential([keras.Input(shape=(64,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(10)])


#: model -> (sample shape per backend, training samples, evaluation samples, whether it outputs logits)
MODELS: Dict[str, Tuple[Dict[str, Tuple[int, ...]], int, int, bool]] = {
    "mlp": ({"torch": (64,), "tf": (64,)}, 4096, 1024, True),
    "lenet": ({"torch": (1, 28, 28), "tf": (28, 28, 1)}, 512, 128, False),
}


def worker(backend: str, model_name: str, epochs: int) -> None:
    """Train on `backend` and print one JSON line: {"versions": ..., "rss": {epoch: MiB}, "after": MiB}."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    make_model = _torch_model if backend == "torch" else _tf_model
    make_model(model_name)  # import and configure the framework before fe sees it
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.trace import Trace  # pylint: disable=import-outside-toplevel
    from fe_core.trace.metric import Accuracy  # pylint: disable=import-outside-toplevel

    class RSSRecorder(Trace):
        """Reads the RSS at the end of each epoch's evaluation (epoch hooks only)."""

        def __init__(self) -> None:
            super().__init__(mode="eval")
            self.rss: Dict[int, float] = {}

        def on_epoch_end(self, data):  # type: ignore[no-untyped-def]
            self.rss[self.system.epoch_idx] = rss_mib()

    shapes, train_size, eval_size, from_logits = MODELS[model_name]
    rng = np.random.default_rng(0)

    def dataset(size: int) -> Any:
        return NumpyDataset({"x": rng.standard_normal((size, *shapes[backend])).astype(np.float32),
                             "y": rng.integers(0, 10, size=size).astype(np.int64)})

    pipeline = Pipeline(train_data=dataset(train_size), eval_data=dataset(eval_size), batch_size=32)
    model = build(model_fn=lambda: make_model(model_name), optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=from_logits),
                                UpdateOp(model=model, loss_name="ce")])
    recorder = RSSRecorder()
    estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, log_steps=100,
                          traces=[Accuracy(true_key="y", pred_key="y_pred"), recorder])
    with contextlib.redirect_stdout(io.StringIO()):
        estimator.fit()
    if backend == "torch":
        import torch  # pylint: disable=import-outside-toplevel
        versions = f"torch {torch.__version__}"
    else:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel
        versions = f"tensorflow {tf.__version__}"
    print(json.dumps({"versions": versions, "rss": recorder.rss, "after": rss_mib()}))


# ------------------------------------------------------------------------------------------------ driver
def run_backend(python: str, backend: str, model: str, epochs: int) -> Optional[Dict[str, Any]]:
    if not has_module(python, "torch" if backend == "torch" else "tensorflow"):
        return None
    result = subprocess.run([python, str(Path(__file__).resolve()), "--worker", backend, "--model", model,
                             "--epochs", str(epochs)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the {backend} {model} run failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet"], choices=sorted(MODELS))
    parser.add_argument("--torch-python", default=None, help="interpreter with fe-core, fe-torch and torch")
    parser.add_argument("--tf-python", default=None, help="interpreter with fe-core, fe-tf and tensorflow")
    parser.add_argument("--worker", choices=("torch", "tf"), help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model, args.epochs)
        return
    print(machine_line())
    epochs = [epoch for epoch in REPORT_EPOCHS if epoch <= args.epochs]
    if args.epochs not in epochs:
        epochs.append(args.epochs)
    print(f"RSS (MiB) at the end of epochs {epochs} (each after its evaluation), and after fit returned")
    header = (["backend", "model", "versions"] + [f"epoch {epoch}" for epoch in epochs] + ["after fit"] +
              [f"growth {epochs[0]}->{epochs[-1]}"])
    rows: List[List[str]] = []
    for backend, python in (("torch", args.torch_python or default_python("torch")),
                            ("tf", args.tf_python or default_python("tf"))):
        for model in args.models:
            report = run_backend(python, backend, model, args.epochs)
            if report is None:
                rows.append([backend, model, "not installed"] + [""] * (len(header) - 3))
                continue
            rss = {int(epoch): value for epoch, value in report["rss"].items()}
            first, last = rss[epochs[0]], rss[epochs[-1]]
            rows.append([backend, model, report["versions"]] + [f"{rss[epoch]:.1f}" for epoch in epochs] +
                        [f"{report['after']:.1f}", f"{100 * (last - first) / first:+.1f}%"])
    print_table(rows, header, text_columns=3)


if __name__ == "__main__":
    main()
