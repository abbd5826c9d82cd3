"""`fe train` under torchrun: the CLI runs an unchanged example data-parallel (2 gloo processes on 127.0.0.1)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from process_helpers import launch, run_processes

TORCHRUN = Path(sys.executable).with_name("torchrun")


@pytest.mark.slow
def test_fe_train_under_torchrun_trains_and_tests_once(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1", FE_HISTORY_DB=str(tmp_path / "history.db"))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)

    def start(ports):
        command = [str(TORCHRUN), "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port",
                   str(ports[0]), "-m", "fe.cli", "train", "fe.examples.digits_torch_mlp", "--epochs", "1",
                   "--then_test"]
        return run_processes([command], [env], 300, cwd=str(tmp_path), what="torchrun")

    (code,), (output,) = launch(start)  # on a new port once more if the first was taken meanwhile
    assert code == 0, output[-3000:]
    assert output.count("FastEstimator-Start:") == 1 and "num_device: 2;" in output  # rank 0 alone prints
    assert output.count("FastEstimator-Test:") == 1
    saved = list((tmp_path / "fe_runs").rglob("*.pt"))
    assert saved, "rank 0 writes the best model"
