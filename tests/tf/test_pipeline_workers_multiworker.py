"""Pipeline worker processes on 2 TensorFlow workers (MultiWorkerMirroredStrategy from TF_CONFIG, 127.0.0.1 ports):
with Pipeline(num_process=2) each worker runs its own 2 worker processes over its part of every global batch and
receives bitwise the batches (random augmentation included) of num_process=0; nothing outlives the job."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

from fe_core.pipeline._transport import shared_directory

SCRIPT = Path(__file__).with_name("distributed_workers_script.py")


def free_ports(count: int) -> List[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def run_workers(out: Path, num_process: int, timeout: float = 300) -> List[Dict]:
    """Start 2 TensorFlow workers; kill both (their process groups) if they overrun."""
    out.mkdir(parents=True, exist_ok=True)
    hosts = [f"127.0.0.1:{port}" for port in free_ports(2)]
    processes = []
    for index in range(2):
        config = {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}}
        env = dict(os.environ, TF_CONFIG=json.dumps(config), OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2",
                   FE_T_OUT=str(out), FE_HISTORY_DB=str(out / "history.db"), FE_T_NP=str(num_process),
                   FE_PIPELINE_MIN_WORKER_SAMPLES="0")
        processes.append(subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, start_new_session=True))
    outputs = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        for process in processes:
            os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the TensorFlow workers did not finish in time")
    assert [process.returncode for process in processes] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(2)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


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
    assert not any(_alive(pid) for rank in got for pid in rank["pids"])
    assert not [name for name in os.listdir(shared_directory()) for rank in got if name.startswith(rank["prefix"])]
