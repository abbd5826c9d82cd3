"""Smoke tests of tools/bench: the input pipeline: ops, augmentation, datasets, worker processes, MixUp's TensorOp step
(bench_tensorops), with tiny sizes (no timing is asserted here, the figures come from full runs, see
tools/bench/README.md). The benchmark smoke tests are split into test_benchmarks*.py files of similar cost: pytest-xdist
runs whole files per process (--dist loadfile), so the longest file bounds the suite's wall time."""
from __future__ import annotations

import re

import pytest

from fe_helpers import RATIO, bench, rows

pytestmark = pytest.mark.slow


def test_pipeline_benchmark_compares_both_op_kinds_with_numpy():
    output = bench("bench_pipeline.py", "--samples", "2000", "--repeats", "1", "--batch-sizes", "32")
    assert len(rows(output, "batch 32")) == 3 and re.search(RATIO, output)


def test_augmentation_benchmark_compares_the_pipeline_with_albumentations_by_hand():
    output = bench("bench_augment.py", "--quick")
    assert len(rows(output, "vs (b)")) == 2 and len(rows(output, "vs (c)")) == 2 and re.search(RATIO, output)


def test_dataset_benchmark_compares_labeled_dir_loading_with_a_cv2_loop():
    output = bench("bench_dataset.py", "--quick")
    assert [row[1] for row in rows(output, "32x32 PNG")] == ["hand-written", "fe Pipeline"]


def test_pipeline_workers_benchmark_compares_num_process_with_a_torch_dataloader_and_times_the_overlap():
    output = bench("bench_pipeline_workers.py", "--quick")
    for workload in ("cifar", "decode"):  # the rate table (6 columns), not the CPU-per-sample table after it
        assert [row[1] for row in rows(output, workload) if len(row) == 6] == [
            "fe num_process=0", "fe num_process=1", "fe num_process=2", "torch DataLoader workers=0",
            "torch DataLoader workers=2"]
    assert [row[1] for row in rows(output, "fit overlap")] == [
        "pipeline alone (2 procs)", "step alone (5 ms)", "fit: both", "fit / slower alone"]
    assert re.search(RATIO, output) and "target >= 1.6x" in output


def test_tensorops_benchmark_pairs_a_mixup_gradient_step_with_the_hand_written_one():
    output = bench("bench_tensorops.py", "--quick", machine_line=False)
    assert "torch" in output and "tf" in output and re.search(r"\d+\.\d+", output)
