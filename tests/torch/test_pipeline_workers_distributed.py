"""Pipeline worker processes in a data-parallel run (torchrun, 2 processes on gloo, 127.0.0.1, bounded in time).

Each rank runs its own worker pool over its part of every global batch: with Pipeline(num_process=2) each rank
starts 2 workers during fit, and receives bitwise the batches (random augmentation included) of num_process=0; a
run whose rank 1 is killed with SIGKILL mid-epoch resumes exactly; no worker or /dev/shm file outlives the job.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Dict, List

import pytest

from fe_core.pipeline._transport import shared_directory

from process_helpers import alive
from torch_helpers import torchrun

SCRIPT = Path(__file__).with_name("distributed_workers_script.py")
ENV = {"FE_PIPELINE_MIN_WORKER_SAMPLES": "0"}  # 48 samples: workers anyway


def ranks(out: Path) -> List[Dict]:
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(2)]


def torchrun_workers(out: Path, **env: str):
    return torchrun(out, SCRIPT, timeout=240, **env)  # retried once on a taken port by torchrun itself


def assert_nothing_left(out: Path) -> None:
    """No worker process of any rank alive and no shared-memory file of theirs. Orphaned workers leave within a
    second on an idle machine; the grace is generous because CI runs two test files at once on two cores, and it
    costs nothing when everything is gone already."""
    records = [json.loads(path.read_text()) for path in sorted(out.glob("pids*.json"))]
    assert records
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        living = [pid for record in records for pid in record["pids"] if alive(pid)]
        files = [name for name in os.listdir(shared_directory()) for record in records
                 if name.startswith(record["prefix"])]
        if not living and not files:
            return
        time.sleep(0.2)
    pytest.fail(f"left behind: processes {living}, files {files}")


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> List[Dict]:
    out = tmp_path_factory.mktemp("np0")
    code, output = torchrun_workers(out, FE_T_NP="0", **ENV)
    assert code == 0, output[-3000:]
    return ranks(out)


@pytest.mark.slow
def test_each_rank_runs_its_own_workers_with_the_in_process_batches(in_process, tmp_path):
    code, output = torchrun_workers(tmp_path, FE_T_NP="2", **ENV)
    assert code == 0, output[-3000:]
    with_workers = ranks(tmp_path)
    for expected, got in zip(in_process, with_workers):
        assert not expected["pids"] and len(got["pids"]) == 2  # 2 workers per rank during fit
        assert got["batches"] == expected["batches"]  # bitwise: sha256 of each batch, sample ids
        assert got["weights"] == expected["weights"]
    assert set(with_workers[0]["pids"]).isdisjoint(with_workers[1]["pids"])
    for expected, got in zip(in_process, with_workers):  # a BatchDataset: each item a global batch
        assert not expected["items"]["pids"] and len(got["items"]["pids"]) == 2
        assert got["items"]["batches"] == expected["items"]["batches"]
    parts = [rank["items"]["batches"]["1"] for rank in with_workers]
    assert all(len(a[1]) == 3 and len(b[1]) == 3 and not set(a[1]) & set(b[1]) for a, b in zip(*parts))
    ids = {rank["rank"]: [i for batch in rank["batches"]["1"] for i in batch[1]] for rank in with_workers}
    assert sorted(ids[0] + ids[1]) == list(range(48))  # each sample once per epoch across the ranks
    assert_nothing_left(tmp_path)


@pytest.mark.slow
def test_a_rank_killed_mid_epoch_resumes_exactly_with_workers(in_process, tmp_path):
    crashed = tmp_path / "crashed"
    code, output = torchrun_workers(crashed, FE_T_NP="2", FE_T_CKPT=str(tmp_path / "ckpt"), FE_T_KILL_AT="5", **ENV)
    assert code != 0
    assert_nothing_left(crashed)
    for path in crashed.glob("pids*.json"):
        path.unlink()
    code, output = torchrun_workers(crashed, FE_T_NP="2", FE_T_CKPT=str(tmp_path / "ckpt"), **ENV)
    assert code == 0, output[-3000:]
    assert "restored" in output
    for expected, got in zip(in_process, ranks(crashed)):
        assert got["weights"] == expected["weights"]  # bitwise, as if never killed
        assert len(got["batches"]["1"]) == 2  # resumed after step 4 of 6
        assert got["batches"]["1"] == expected["batches"]["1"][4:]  # the rest of the killed epoch, exactly
        assert got["batches"]["2"] == expected["batches"]["2"]
        assert len(got["pids"]) == 2
    assert_nothing_left(crashed)
