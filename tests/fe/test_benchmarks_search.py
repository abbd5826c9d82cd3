"""Smoke test of tools/bench/bench_search.py (tiny sizes, no timing asserted; the figures come from full runs, see
tools/bench/README.md): a grid serially and on a local Ray, and an Optuna search with pruning."""
from __future__ import annotations

import re

import pytest

from fe_helpers import bench, rows

pytestmark = pytest.mark.slow


def test_search_benchmark_times_a_serial_and_a_parallel_search_with_equal_results_and_counts_pruned_epochs():
    output = bench("bench_search.py", "--quick", machine_line=False)
    table = rows(output, "| (")
    assert [row[1][:3] for row in table] == ["(a)", "(b)", "(c)"]
    assert all(re.fullmatch(r"\d+\.\d\dx", row[4]) for row in table)
    assert "Same summaries as serial: True." in output  # per-trial seeds: Ray's trials give the serial results
    assert re.search(r"OptunaSearch, 2 trials on Ray, .*; \d+ completed, \d+ pruned", output)
    assert re.search(r"Epochs run: \d of 2 \(\d saved by pruning", output)
