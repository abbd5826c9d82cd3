#!/usr/bin/env python3
"""Does fe's memory grow over a run? Resident set size after epochs 1, 5, 10 and 20, on each backend.

Run from the repository root:

    python tools/bench/bench_memory.py [--epochs 20] [--torch-python PY] [--tf-python PY]

Each backend trains in its own subprocess (a fresh interpreter, so one framework's memory does not count against the
other): a small MLP (64 -> 32 -> 10) with Adam on 4096 training and 1024 evaluation samples, batch 32, with an
Accuracy trace and log_steps=100 (what a real run has), single-threaded. The RSS is read from /proc/self/status
(VmRSS; `resource`'s peak RSS where /proc is missing) at the end of every epoch's evaluation, without forcing a
garbage collection. The target is less than 5% growth from epoch 1 to epoch 20.

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
from typing import Any, Dict, List, Optional  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from bench_table import machine_line  # noqa: E402

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
def _torch_model() -> Any:
    import torch  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(1)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


def _tf_model() -> Any:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras  # pylint: disable=import-outside-toplevel
    return keras.Sequential([keras.Input(shape=(64,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(10)])


def worker(backend: str, epochs: int) -> None:
    """Train on `backend` and print one JSON line: {"versions": ..., "rss": {epoch: MiB}}."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    model_fn = _torch_model if backend == "torch" else _tf_model
    model_fn()  # import and configure the framework before fe sees it
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

    rng = np.random.default_rng(0)

    def dataset(size: int) -> Any:
        return NumpyDataset({"x": rng.standard_normal((size, 64)).astype(np.float32),
                             "y": rng.integers(0, 10, size=size).astype(np.int64)})

    pipeline = Pipeline(train_data=dataset(4096), eval_data=dataset(1024), batch_size=32)
    model = build(model_fn=model_fn, optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
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
    print(json.dumps({"versions": versions, "rss": recorder.rss}))


# ------------------------------------------------------------------------------------------------ driver
def default_python(framework: str) -> str:
    for venv in (".venvs/fe", f".venvs/{framework}"):
        candidate = ROOT / venv / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return sys.executable


def run_backend(python: str, backend: str, epochs: int) -> Optional[Dict[str, Any]]:
    module = "torch" if backend == "torch" else "tensorflow"
    probe = subprocess.run([python, "-c", f"import importlib.util, sys; "
                                          f"sys.exit(importlib.util.find_spec('{module}') is None)"], check=False)
    if probe.returncode != 0:
        return None
    result = subprocess.run([python, str(Path(__file__).resolve()), "--worker", backend, "--epochs", str(epochs)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the {backend} run failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--torch-python", default=None, help="interpreter with fe-core, fe-torch and torch")
    parser.add_argument("--tf-python", default=None, help="interpreter with fe-core, fe-tf and tensorflow")
    parser.add_argument("--worker", choices=("torch", "tf"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.epochs)
        return
    print(machine_line())
    epochs = [epoch for epoch in REPORT_EPOCHS if epoch <= args.epochs]
    if args.epochs not in epochs:
        epochs.append(args.epochs)
    print(f"RSS (MiB) at the end of epochs {epochs} of a small MLP (train 4096 + eval 1024 samples per epoch)")
    header = ["backend", "versions"] + [f"epoch {epoch}" for epoch in epochs] + [f"growth {epochs[0]}->{epochs[-1]}"]
    rows: List[List[str]] = []
    for backend, python in (("torch", args.torch_python or default_python("torch")),
                            ("tf", args.tf_python or default_python("tf"))):
        report = run_backend(python, backend, args.epochs)
        if report is None:
            rows.append([backend, "not installed"] + [""] * (len(header) - 2))
            continue
        rss = {int(epoch): value for epoch, value in report["rss"].items()}
        first, last = rss[epochs[0]], rss[epochs[-1]]
        rows.append([backend, report["versions"]] + [f"{rss[epoch]:.1f}" for epoch in epochs] +
                    [f"{100 * (last - first) / first:+.1f}%"])
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))


if __name__ == "__main__":
    main()
