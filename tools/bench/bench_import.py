#!/usr/bin/env python3
"""How long importing fe takes, each case in a fresh Python process (best and median of N).

Run with the environment to measure (from the repository root), for example:

    .venvs/fe/bin/python tools/bench/bench_import.py [--repeats 7] [--quick]

Cases (each in a new subprocess of this interpreter, timing only the statements, not the interpreter's start):

  numpy                     `import numpy` (the floor: fe-core depends on it)
  fe_core                   `import fe_core` (target < 0.3 s)
  fe                        `import fe` ('fe not installed' when it is missing); fe loads its names lazily
  fe, first use             `import fe` and touching fe.Estimator, fe.Pipeline, fe.build, fe.Network
  torch                     `import torch` (reference)
  torch model + Adam, no fe a Linear and its Adam without fe (reference: creating a torch optimizer imports
                            torch._dynamo, which costs more than torch itself)
  fe + torch model          `import fe` (or fe_core) then `build(model_fn=<a torch Linear>, optimizer_fn="adam")`;
                            checks that TensorFlow was not imported
  keras model + Adam, no fe the Keras equivalent (reference)
  fe + keras model          the same with a Keras model; checks that torch was not imported

A case whose framework is not installed is reported as such. The last column is the time beyond `numpy`.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List, Optional  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import machine_line  # noqa: E402

_TIMER = """
import json, sys, time
start = time.perf_counter()
{body}
elapsed = time.perf_counter() - start
{check}
print(json.dumps({{"seconds": elapsed}}))
"""

_BUILD = """
try:
    import fe
    build = fe.build
except ImportError:
    from fe_core.build import build
"""

CASES: Dict[str, Dict[str, str]] = {
    "numpy": {"body": "import numpy", "needs": "numpy"},
    "fe_core": {"body": "import fe_core", "needs": "fe_core",
                "check": "assert 'torch' not in sys.modules and 'tensorflow' not in sys.modules"},
    "fe": {"body": "import fe", "needs": "fe",
           "check": "assert 'torch' not in sys.modules and 'tensorflow' not in sys.modules"},
    "fe, first use": {"body": "import fe\nfe.Estimator, fe.Pipeline, fe.build, fe.Network", "needs": "fe",
                      "check": "assert 'torch' not in sys.modules and 'tensorflow' not in sys.modules"},
    "torch": {"body": "import torch", "needs": "torch"},
    "torch model + Adam, no fe": {
        "body": "import torch\nmodel = torch.nn.Linear(4, 2)\noptimizer = torch.optim.Adam(model.parameters())",
        "needs": "torch"},
    "fe + torch model": {
        "body": _BUILD + "import torch\nmodel = build(model_fn=lambda: torch.nn.Linear(4, 2), optimizer_fn='adam')",
        "needs": "fe_torch",
        "check": "assert 'tensorflow' not in sys.modules, 'building a torch model imported TensorFlow'"},
    "keras model + Adam, no fe": {
        "body": "import keras\nmodel = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])\n"
                "optimizer = keras.optimizers.Adam()\noptimizer.build(model.trainable_variables)",
        "needs": "keras"},
    "fe + keras model": {
        "body": _BUILD + "import keras\nmodel = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), "
                         "keras.layers.Dense(2)]), optimizer_fn='adam')",
        "needs": "fe_tf",
        "check": "assert 'torch' not in sys.modules, 'building a Keras model imported torch'"},
}


def run_case(case: Dict[str, str]) -> float:
    code = _TIMER.format(body=case["body"], check=case.get("check", ""))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"case failed:\n{code}\n{result.stderr[-2000:]}")
    return float(json.loads(result.stdout.strip().splitlines()[-1])["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: each case once, without the untimed first run")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    print(machine_line())
    print(f"import times in fresh processes of {sys.executable}; best and median of {args.repeats}")
    results: Dict[str, Optional[List[float]]] = {}
    for name, case in CASES.items():
        if importlib.util.find_spec(case["needs"]) is None:
            results[name] = None
            continue
        if not args.quick:
            run_case(case)  # once untimed: the files are in the page cache for every timed run
        results[name] = [run_case(case) for _ in range(args.repeats)]
    floor = min(results["numpy"]) if results.get("numpy") else 0.0
    header = ("case", "best", "median", "beyond numpy (best)")
    rows = []
    for name, times in results.items():
        if times is None:
            rows.append([name, f"{CASES[name]['needs'].replace('_', '-')} not installed", "", ""])
            continue
        best = min(times)
        rows.append([name, f"{best:.3f} s", f"{statistics.median(times):.3f} s",
                     "" if name == "numpy" else f"{best - floor:+.3f} s"])
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))


if __name__ == "__main__":
    main()
