#!/usr/bin/env python3
"""Run every benchmark in tools/bench with the right interpreter, one after the other.

    python tools/bench/run_all.py [--quick] [--only torch tf tf_fit first_step pipeline import memory allocator]

Interpreters: `.venvs/fe` when it exists (it has both frameworks), else `.venvs/torch` for the torch benchmark,
`.venvs/tf` for the TensorFlow ones and `.venvs/core` for the pipeline; the import benchmark runs with `.venvs/fe` (or
`.venvs/torch`); the memory, allocator and first-step benchmarks start their own interpreters. (`python tools/test.py`
creates the venvs.) A benchmark whose interpreter is missing is skipped with a message. `--quick` runs fewer repeats (a smoke
test; the figures in README.md come from a full run).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from interpreters import ROOT, venv_python  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke test, not figures to report")
    parser.add_argument("--only", nargs="+", choices=["torch", "tf", "tf_fit", "first_step", "pipeline", "import",
                                                      "memory", "allocator", "augment", "dataset", "backend",
                                                      "tensorops", "ddp", "history", "workers",
                                                      "feed_forward", "ddp_input"])
    args = parser.parse_args()
    quick: Dict[str, List[str]] = {
        "torch": ["--repeats", "1", "--epochs", "3"],
        "tf": ["--repeats", "1", "--epochs", "3"],
        "tf_fit": ["--quick"],
        "first_step": ["--quick"],
        "pipeline": ["--samples", "10000", "--repeats", "2"],
        "import": ["--repeats", "2"],
        "memory": ["--epochs", "5"],
        "allocator": ["--runs", "1", "--epochs", "3"],
        "augment": ["--quick"],
        "dataset": ["--quick"],
        "backend": ["--quick"],
        "tensorops": ["--quick"],
        "ddp": ["--quick"],
        "history": ["--quick"],
        "workers": ["--quick"],
        "feed_forward": ["--quick"],
        "ddp_input": ["--quick"],
    }
    plan = {
        "torch": (venv_python("fe", "torch"), "bench_torch.py"),
        "tf": (venv_python("fe", "tf"), "bench_tf.py"),
        "tf_fit": (venv_python("fe", "tf"), "bench_tf_fit.py"),
        "first_step": (sys.executable, "bench_first_step.py"),
        "pipeline": (venv_python("fe", "core", "torch", "tf") or sys.executable, "bench_pipeline.py"),
        "import": (venv_python("fe", "torch", "core"), "bench_import.py"),
        "memory": (sys.executable, "bench_memory.py"),
        "allocator": (sys.executable, "bench_allocator.py"),
        "augment": (venv_python("fe", "core"), "bench_augment.py"),
        "dataset": (venv_python("fe", "core"), "bench_dataset.py"),
        "backend": (venv_python("fe", "torch"), "bench_backend_dispatch.py"),
        "tensorops": (venv_python("fe"), "bench_tensorops.py"),
        "ddp": (venv_python("fe", "torch"), "bench_ddp.py"),
        "history": (venv_python("fe", "torch"), "bench_history.py"),
        "workers": (venv_python("fe", "torch"), "bench_pipeline_workers.py"),
        "feed_forward": (venv_python("fe", "tf"), "bench_tf_feed_forward.py"),
        "ddp_input": (venv_python("fe", "torch"), "bench_ddp_input.py"),
    }
    failed = []
    for name, (python, script) in plan.items():
        if args.only and name not in args.only:
            continue
        print(f"\n===== {script}", flush=True)
        if not python:
            print(f"skipped: no interpreter for {name} (run `python tools/test.py` to create the .venvs)")
            continue
        command = [python, str(HERE / script)] + (quick[name] if args.quick else [])
        print("$ " + " ".join(command), flush=True)
        if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
