"""Pipeline worker processes on 2 TensorFlow workers (MultiWorkerMirroredStrategy from TF_CONFIG, 127.0.0.1 ports):
with Pipeline(num_process=2) each worker runs its own 2 worker processes over its part of every global batch and
receives bitwise the batches (random augmentation included) of num_process=0; nothing outlives the job."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Dict, List

import pytest

import test_distributed
from fe_core.pipeline._transport import shared_directory
from process_helpers import alive

SCRIPT = Path(__file__).with_name("distributed_workers_script.py")


def run_workers(out: Path, num_process: int, timeout: float = 300) -> List[Dict]:
    """Start 2 TensorFlow workers (bounded, retried once on a taken port: test_distributed.run_workers)."""
    codes, outputs = test_distributed.run_workers(out, timeout, script=SCRIPT, FE_T_NP=str(num_process),
                                                  FE_PIPELINE_MIN_WORKER_SAMPLES="0")
    assert codes == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(2)]


@pytest.mark.slow
def test_each_tf_worker_runs_its_own_pipeline_workers_with_the_in_process_batches(tmp_path):
    expected = run_workers(tmp_path / "np0", 0)
    got = run_workers(tmp_path / "np2", 2)
    for before, after in zip(expected, got):
        assert not before["pids"] and len(after["pids"]) == 2
        assert after["batches"] == before["batches"]  # bitwise: sha256 of each batch, sample ids
        assert after["weights"] == before["weights"]
    ids = [i for rank in got for batch in rank["batches"]["1"] for i in batch[1]]
    assert sorted(ids) == list(range(32))
    time.sleep(1)
    assert not any(alive(pid) for rank in got for pid in rank["pids"])
    assert not [name for name in os.listdir(shared_directory()) for rank in got if name.startswith(rank["prefix"])]
