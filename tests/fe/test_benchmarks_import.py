"""Smoke tests of tools/bench: fresh-process import times, memory growth and the backend dispatch overhead, with tiny
sizes (no timing is asserted here, the figures come from full runs, see tools/bench/README.md). The benchmark smoke
tests are split into test_benchmarks*.py files of similar cost: pytest-xdist runs whole files per process (--dist
loadfile), so the longest file bounds the suite's wall time."""
from __future__ import annotations

import re
import sys

import pytest

from fe_helpers import bench, rows

pytestmark = pytest.mark.slow


def test_import_benchmark_times_fe_and_both_frameworks():
    output = bench("bench_import.py", "--quick")
    cases = [row[0] for row in rows(output, "")]
    assert {"fe_core", "fe", "fe + torch model", "fe + keras model"} <= set(cases)


def test_memory_benchmark_reports_growth_per_backend_and_model():
    output = bench("bench_memory.py", "--epochs", "2", "--models", "mlp", "--torch-python", sys.executable,
                   "--tf-python", sys.executable)
    table = rows(output, "torch") + rows(output, "tf")
    assert [row[:2] for row in table] == [["torch", "mlp"], ["tf", "mlp"]]
    assert all(re.fullmatch(r"[+-]\d+\.\d%", row[-1]) for row in table)


def test_backend_dispatch_benchmark_reports_the_overhead_per_call():
    output = bench("bench_backend_dispatch.py", "--quick", "--frameworks", "torch", machine_line=False)
    assert re.search(r"torch\s+reduce_mean\(x\)\s+[\d.]+\s+[\d.]+\s+-?[\d.]+", output)
