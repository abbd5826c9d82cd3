"""The scripts in tools/bench run and print their tables (a smoke test with tiny sizes: no timing is asserted here;
the figures come from full runs, see tools/bench/README.md)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

BENCH = Path(__file__).resolve().parents[2] / "tools" / "bench"
RATIO = r"\d+\.\d{3}x"

pytestmark = pytest.mark.slow


def bench(script: str, *args: str, machine_line: bool = True) -> str:
    """Run a benchmark with this interpreter (both frameworks installed); return its output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    result = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    if machine_line:
        assert result.stdout.startswith("machine: "), result.stdout[:500]
    return result.stdout


def rows(output: str, first_column: str) -> List[List[str]]:
    return [[cell.strip() for cell in line.split("|")] for line in output.splitlines()
            if line.startswith(first_column) and "|" in line]


def test_torch_benchmark_pairs_fe_with_the_hand_written_loop_in_full_and_mixed_precision():
    for extra in ([], ["--amp"]):
        output = bench("bench_torch.py", "--repeats", "1", "--epochs", "3", *extra)
        table = rows(output, "mlp") + rows(output, "lenet")
        assert [row[1] for row in table[:4]] == ["hand-written loop", "fe log_steps=None", "fe log_steps=100",
                                                 "fe log_steps=100 + ProgressBar"]
        assert len(table) == 8
        for row in table:
            if row[1] != "hand-written loop":
                assert re.fullmatch(RATIO, row[4]) and re.fullmatch(r"\d+\.\d{3}-\d+\.\d{3}", row[5]), row
    assert "bfloat16 autocast" in output or "GradScaler" in output


def test_tf_benchmark_compares_fe_with_the_loop_and_with_keras_fit():
    output = bench("bench_tf.py", "--repeats", "1", "--epochs", "3", "--models", "mlp")
    assert [row[1] for row in rows(output, "mlp")] == ["hand-written tf.function loop",
                                                       "hand-written, concrete function", "keras fit",
                                                       "fe log_steps=None", "fe log_steps=100"]
    assert re.search(rf"mlp: fe log_steps=None / keras fit = {RATIO}", output)


def test_tf_fit_benchmark_times_whole_runs_of_the_loop_keras_and_fe():
    output = bench("bench_tf_fit.py", "--quick", "--models", "mlp")
    table = rows(output, "mlp")
    assert [row[1].split(",")[0] for row in table] == ["hand-written tf.function loop", "keras fit", "fe fit",
                                                       "fe fit vs keras fit"]
    assert all(re.fullmatch(RATIO, row[4]) for row in table)


def test_first_step_benchmark_times_fresh_processes_of_both_frameworks():
    output = bench("bench_first_step.py", "--quick", "--tf-python", sys.executable, "--torch-python", sys.executable)
    table = rows(output, "tf") + rows(output, "torch")
    assert [row[:2] for row in table] == [["tf", "mlp"], ["torch", "mlp"]]
    assert all(re.fullmatch(RATIO, row[4]) for row in table)


def test_pipeline_benchmark_compares_both_op_kinds_with_numpy():
    output = bench("bench_pipeline.py", "--samples", "2000", "--repeats", "1", "--batch-sizes", "32")
    assert len(rows(output, "batch 32")) == 3 and re.search(RATIO, output)


def test_import_benchmark_times_fe_and_both_frameworks():
    output = bench("bench_import.py", "--repeats", "1")
    cases = [row[0] for row in rows(output, "")]
    assert {"fe_core", "fe", "fe + torch model", "fe + keras model"} <= set(cases)


def test_memory_benchmark_reports_growth_per_backend_and_model():
    output = bench("bench_memory.py", "--epochs", "2", "--models", "mlp", "--torch-python", sys.executable,
                   "--tf-python", sys.executable)
    table = rows(output, "torch") + rows(output, "tf")
    assert [row[:2] for row in table] == [["torch", "mlp"], ["tf", "mlp"]]
    assert all(re.fullmatch(r"[+-]\d+\.\d%", row[-1]) for row in table)


def test_allocator_benchmark_runs_the_loops_with_both_malloc_settings():
    output = bench("bench_allocator.py", "--runs", "1", "--epochs", "2", "--torch-python", sys.executable,
                   "--tf-python", sys.executable)
    table = rows(output, "torch") + rows(output, "tf")
    assert [row[1] for row in table] == ["glibc defaults", "kept (fe during fit/test)"] * 2


def test_augmentation_benchmark_compares_the_pipeline_with_albumentations_by_hand():
    output = bench("bench_augment.py", "--quick")
    assert len(rows(output, "vs (b)")) == 2 and len(rows(output, "vs (c)")) == 2 and re.search(RATIO, output)


def test_dataset_benchmark_compares_labeled_dir_loading_with_a_cv2_loop():
    output = bench("bench_dataset.py", "--quick")
    assert [row[1] for row in rows(output, "32x32 PNG")] == ["hand-written", "fe Pipeline"]


def test_backend_dispatch_benchmark_reports_the_overhead_per_call():
    output = bench("bench_backend_dispatch.py", "--quick", "--frameworks", "torch", machine_line=False)
    assert re.search(r"torch\s+reduce_mean\(x\)\s+[\d.]+\s+[\d.]+\s+-?[\d.]+", output)


def test_tensorops_benchmark_pairs_a_mixup_gradient_step_with_the_hand_written_one():
    output = bench("bench_tensorops.py", "--quick", machine_line=False)
    assert "torch" in output and "tf" in output and re.search(r"\d+\.\d+", output)


def test_ddp_benchmark_runs_fe_and_a_hand_written_ddp_loop_under_two_processes():
    output = bench("bench_ddp.py", "--quick", machine_line=False)
    assert re.search(RATIO, output) or re.search(r"ratio", output, re.I)


def test_history_benchmark_times_fits_with_and_without_the_run_history():
    output = bench("bench_history.py", "--quick", machine_line=False)
    assert re.search(r"torch Linear, \d+ steps", output)


def test_pipeline_workers_benchmark_compares_num_process_with_a_torch_dataloader_and_times_the_overlap():
    output = bench("bench_pipeline_workers.py", "--quick")
    for workload in ("cifar", "decode"):  # the rate table (6 columns), not the CPU-per-sample table after it
        assert [row[1] for row in rows(output, workload) if len(row) == 6] == [
            "fe num_process=0", "fe num_process=1", "fe num_process=2", "torch DataLoader workers=0",
            "torch DataLoader workers=2"]
    assert [row[1] for row in rows(output, "fit overlap")] == [
        "pipeline alone (2 procs)", "step alone (5 ms)", "fit: both", "fit / slower alone"]
    assert re.search(RATIO, output) and "target >= 1.6x" in output


def test_ddp_input_benchmark_times_each_rank_against_a_distributed_sampler_dataloader():
    output = bench("bench_ddp_input.py", "--quick", machine_line=False)
    table = [row for row in rows(output, "fe num_process") + rows(output, "DistributedSampler") if len(row) == 7]
    assert sorted((row[0], row[1]) for row in table) == sorted(
        (name, rank) for name in ("fe num_process=0", "fe num_process=2", "DistributedSampler + DataLoader workers=0",
                                  "DistributedSampler + DataLoader workers=2") for rank in ("0", "1"))
    assert all(row[4] == "256" for row in table)  # each rank gets half of the 512 samples
    assert all(row[5] == "2" for row in table if row[0] == "DistributedSampler + DataLoader workers=2")
    assert re.search(r"rank 0: fe num_process=2 ran (\d+ worker processes|NO worker process)", output)
    assert re.search(r"fe num_process=2 / DistributedSampler \+ DataLoader workers=2: \d+\.\d\dx", output)


def test_tf_feed_forward_benchmark_compares_fe_with_an_eager_call_and_a_tf_function():
    output = bench("bench_tf_feed_forward.py", "--quick")
    assert len(rows(output, "(")) == 3 and len(re.findall(RATIO, output)) == 2


def test_frozen_encoder_benchmark_pairs_fe_with_the_hand_written_lora_loop_and_counts_passes():
    output = bench("bench_frozen_encoder.py", "--quick")
    assert [row[1] for row in rows(output, "LoRA on frozen encoder")] == ["hand-written loop", "fe fit"]
    assert re.search(RATIO, output)
    assert re.search(r"fe warmup 1 forward, 0 backward; per training step fe 1\.00 forward, 1\.00 backward; "
                     r"hand-written 1\.00 forward, 1\.00 backward", output)


def test_fsdp_benchmark_measures_ddp_and_fsdp_memory_and_pairs_fe_with_a_hand_written_fsdp2_loop():
    output = bench("bench_fsdp.py", "--quick", machine_line=False)
    assert [row[1] for row in rows(output, "| ")][1:] == ["DDP", "FSDP2", "fe sharded"]
    assert len(re.findall(RATIO, output)) == 3  # memory fe / DDP, step time median and best/best
