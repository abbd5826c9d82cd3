"""Smoke tests of tools/bench: PyTorch: fe next to hand-written loops (bench_torch, bench_allocator, bench_history),
with tiny sizes (no timing is asserted here, the figures come from full runs, see tools/bench/README.md). The benchmark
smoke tests are split into test_benchmarks*.py files of similar cost: pytest-xdist runs whole files per process (--dist
loadfile), so the longest file bounds the suite's wall time."""
from __future__ import annotations

import re
import sys

import pytest

from fe_helpers import RATIO, bench, rows

pytestmark = pytest.mark.slow


def test_torch_benchmark_pairs_fe_with_the_hand_written_loop_in_full_and_mixed_precision():
    for extra in ([], ["--amp"]):
        output = bench("bench_torch.py", "--quick", *extra)
        table = rows(output, "mlp") + rows(output, "lenet")
        assert [row[1] for row in table[:4]] == ["hand-written loop", "fe log_steps=None", "fe log_steps=100",
                                                 "fe log_steps=100 + ProgressBar"]
        assert len(table) == 8
        for row in table:
            if row[1] != "hand-written loop":
                assert re.fullmatch(RATIO, row[4]) and re.fullmatch(r"\d+\.\d{3}-\d+\.\d{3}", row[5]), row
    assert "bfloat16 autocast" in output or "GradScaler" in output


def test_allocator_benchmark_runs_the_loops_with_both_malloc_settings():
    output = bench("bench_allocator.py", "--runs", "1", "--epochs", "2", "--torch-python", sys.executable,
                   "--tf-python", sys.executable)
    table = rows(output, "torch") + rows(output, "tf")
    assert [row[1] for row in table] == ["glibc defaults", "kept (fe during fit/test)"] * 2



def test_history_benchmark_times_fits_with_and_without_the_run_history():
    output = bench("bench_history.py", "--quick", machine_line=False)
    assert re.search(r"torch Linear, \d+ steps", output)
