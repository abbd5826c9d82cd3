"""Smoke tests of tools/bench: fresh processes to the first training step of each framework (bench_first_step), with
tiny sizes (no timing is asserted here, the figures come from full runs, see tools/bench/README.md). The benchmark smoke
tests are split into test_benchmarks*.py files of similar cost: pytest-xdist runs whole files per process (--dist
loadfile), so the longest file bounds the suite's wall time."""
from __future__ import annotations

import re
import sys

import pytest

from fe_helpers import RATIO, bench, rows

pytestmark = pytest.mark.slow


def test_first_step_benchmark_times_fresh_processes_of_both_frameworks():
    output = bench("bench_first_step.py", "--quick", "--tf-python", sys.executable, "--torch-python", sys.executable)
    table = rows(output, "tf") + rows(output, "torch")
    assert [row[:2] for row in table] == [["tf", "mlp"], ["torch", "mlp"]]
    assert all(re.fullmatch(RATIO, row[4]) for row in table)
