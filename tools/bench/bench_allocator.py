#!/usr/bin/env python3
"""What keeping freed memory (fe_core.allocator, on during fe's fit/test) is worth to a CPU training loop.

Run from the repository root:

    python tools/bench/bench_allocator.py [--runs 4] [--epochs 12] [--torch-python PY] [--tf-python PY]

The hand-written LeNet loops of bench_torch.py and bench_tf.py (batch 32, Adam, 512 samples = 16 steps per epoch,
single-threaded) run in fresh processes, alternately with glibc's default malloc settings and with the settings fe
applies during a run (`keep_freed_memory()` called first). No fe code runs in the loop itself, so the difference is
the allocator's alone. Each process reports its median epoch rate and page faults (minor faults, from getrusage)
per epoch over all epochs but the first; the table shows the medians over the runs and the ratio of the medians.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List, Optional  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_table import machine_line, print_table  # noqa: E402
from interpreters import default_python, has_module  # noqa: E402


def worker(backend: str, keep: bool, epochs: int) -> None:
    """Run the hand-written LeNet loop for `epochs` epochs; print {"rate": median steps/s, "faults": per epoch}."""
    if keep:
        from fe_core.allocator import keep_freed_memory  # pylint: disable=import-outside-toplevel
        if not keep_freed_memory():
            raise SystemExit("fe leaves the allocator alone here (not glibc, or the user chose); nothing to compare")
    if backend == "torch":
        import torch  # pylint: disable=import-outside-toplevel

        import bench_torch as bench  # pylint: disable=import-outside-toplevel
        workload = bench.WORKLOADS["lenet"]
        torch.manual_seed(0)
        initial = workload["model"]().state_dict()
    else:
        import keras  # pylint: disable=import-outside-toplevel

        import bench_tf as bench  # type: ignore[no-redef]  # pylint: disable=import-outside-toplevel
        workload = bench.WORKLOADS["lenet"]
        keras.utils.set_random_seed(0)
        initial = workload["model"]().get_weights()
    x, y = bench.make_data(workload["shape"], workload["samples"])
    loop = bench.HandWrittenLoop(workload, x, y, initial)
    rates: List[float] = []
    faults: List[int] = []
    for _ in range(epochs):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        rates.append(loop())
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    print(json.dumps({"rate": statistics.median(rates[1:]), "faults": statistics.median(faults[1:])}))


def run_worker(python: str, backend: str, keep: bool, epochs: int) -> Optional[Dict[str, float]]:
    if not has_module(python, "torch" if backend == "torch" else "tensorflow"):
        return None
    env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
    env.pop("FE_KEEP_FREED_MEMORY", None)
    command = [python, str(Path(__file__).resolve()), "--worker", backend, "--epochs", str(epochs)]
    result = subprocess.run(command + (["--keep"] if keep else []), capture_output=True, text=True, check=False,
                            env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the {backend} run failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4, help="processes per setting and backend")
    parser.add_argument("--epochs", type=int, default=12, help="epochs per process (the first is not counted)")
    parser.add_argument("--torch-python", default=None, help="interpreter with fe-core and torch")
    parser.add_argument("--tf-python", default=None, help="interpreter with fe-core, fe-tf and tensorflow")
    parser.add_argument("--worker", choices=("torch", "tf"), help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.keep, args.epochs)
        return
    print(machine_line())
    print(f"hand-written LeNet loop (batch 32, Adam, 16 steps/epoch, 1 thread), glibc malloc defaults vs fe's settings;"
          f" {args.runs} processes each, alternating, {args.epochs - 1} counted epochs per process")
    header = ("backend", "malloc settings", "steps/s (median)", "page faults/epoch", "ratio")
    rows: List[List[str]] = []
    for backend, python in (("torch", args.torch_python or default_python("torch")),
                            ("tf", args.tf_python or default_python("tf"))):
        results: Dict[bool, List[Dict[str, float]]] = {False: [], True: []}
        for _ in range(args.runs):
            for keep in (False, True):
                report = run_worker(python, backend, keep, args.epochs)
                if report is not None:
                    results[keep].append(report)
        if not results[False]:
            rows.append([backend, "not installed", "", "", ""])
            continue
        default_rate = statistics.median(r["rate"] for r in results[False])
        for keep, label in ((False, "glibc defaults"), (True, "kept (fe during fit/test)")):
            rate = statistics.median(r["rate"] for r in results[keep])
            faults = statistics.median(r["faults"] for r in results[keep])
            rows.append([backend, label, f"{rate:.1f}", f"{faults:,.0f}", f"{rate / default_rate:.3f}x"])
    print_table(rows, header)


if __name__ == "__main__":
    main()
