"""Smoke tests of tools/bench: data-parallel and sharded training (bench_ddp, bench_ddp_input, bench_fsdp) and the
frozen-encoder pattern; the other benchmarks' smoke tests are in test_benchmarks_*.py, with tiny sizes (no timing is
asserted here, the figures come from full runs, see tools/bench/README.md). The benchmark smoke tests are split into
test_benchmarks*.py files of similar cost: pytest-xdist runs whole files per process (--dist loadfile), so the longest
file bounds the suite's wall time."""
from __future__ import annotations

import re

import pytest

from fe_helpers import RATIO, bench, rows

pytestmark = pytest.mark.slow


def test_ddp_benchmark_runs_fe_and_a_hand_written_ddp_loop_under_two_processes():
    output = bench("bench_ddp.py", "--quick", machine_line=False)
    assert re.search(RATIO, output) or re.search(r"ratio", output, re.I)


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
    # sharded over 2 processes: each holds half the parameters, gradients and Adam state, DDP all of them (plus its
    # gradient buckets) - the "about half of DDP's" (byte counts of tensors: exact, not timing-dependent)
    memory = float(re.search(r"fe sharded / DDP \(params \+ grads \+ optimizer, rank 0\): ([0-9.]+)x", output).group(1))
    assert memory <= 0.55
