"""Issue 45 items 2 and 5, without a framework: which rank failed is said by the logging rank (ranks simulated by
threads; the real torchrun launches are in tests/fe/test_newcomer_round5_distributed.py), and a ConfigurationError
that stops a script is one line naming the user's line."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from fe_core.distributed import get_communicator
from fe_core.distributed.failure import PeerFailure, peer_failure, record_failure, report_failure
from fe_core.distributed.threads import ThreadGroup
from fe_core.trace.abort import abort_message


def test_rank_zero_says_which_rank_failed_and_why():
    seen = {}

    def work():  # rank 1 raises its own error; rank 0, waiting in a collective, sees the broken connection
        comm = get_communicator()
        try:
            if comm.rank == 1:
                raise ValueError("the saver could not write\nsecond line")
            comm.all_reduce(np.zeros(1))
        except Exception as error:  # pylint: disable=broad-except
            seen[comm.rank] = report_failure(error, lambda reported: seen.setdefault(f"report{comm.rank}", reported))
            raise

    with pytest.raises(ValueError, match="the saver could not write"):  # the rank that failed raises its own error
        ThreadGroup(2, timeout=10).run(work)
    assert seen[1] is None and isinstance(seen["report1"], ValueError)
    assert isinstance(seen[0], PeerFailure) and seen["report0"] is seen[0]
    assert str(seen[0]) == "rank 1 failed: ValueError: the saver could not write"
    system = type("S", (), {"global_step": 4, "mode": "train", "epoch_idx": 1})()
    assert abort_message([], system, "failed", seen[0]) == \
        "FastEstimator-Failed: step 4 (train epoch 1): rank 1 failed: ValueError: the saver could not write"


def test_an_error_of_its_own_is_not_blamed_on_a_peer():
    def work():
        try:
            raise KeyError("x")
        except KeyError as error:
            return peer_failure(error)
    assert ThreadGroup(2).run(work) == [None, None]
    assert peer_failure(RuntimeError("Connection reset by peer")) is None  # one process: nobody else to blame


def test_a_lost_connection_with_no_report_says_so(monkeypatch):
    monkeypatch.setattr("fe_core.distributed.failure.LOST_PEER_WAIT_S", 0.2)  # how long it looks for a report
    def work():
        comm = get_communicator()
        if comm.rank == 0:
            return str(peer_failure(threading.BrokenBarrierError()))
        return str(peer_failure(KeyboardInterrupt(), terminated=True))  # a SIGTERM with nobody failed: no blame
    lost, terminated = ThreadGroup(2).run(work)
    assert lost.startswith("rank 0 lost its connection to another process of the run (it died, or its machine was "
                           "lost; see that process's output)")
    assert terminated == "None"


SCRIPT = textwrap.dedent("""
    from fe_core.config_error import ConfigurationError

    def build(sharding):
        raise ConfigurationError("build(sharding=...) needs several processes:\\nstart it with torchrun")

    build("fsdp")
""")


@pytest.mark.parametrize("traceback", ["", "1"])
def test_a_script_stopped_by_a_configuration_error_prints_one_line(tmp_path, traceback):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, FE_TRACEBACK=traceback)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    if traceback:
        assert "Traceback (most recent call last)" in done.stderr
    else:
        assert done.stderr == ("ConfigurationError: build(sharding=...) needs several processes: start it with "
                               f"torchrun ({script}, line 5)\n")


def test_a_rank_stopped_on_purpose_is_not_reported_as_failed():
    def work():
        comm = get_communicator()
        if comm.rank == 1:
            record_failure(KeyboardInterrupt())  # Ctrl-C / SIGTERM reached every process of the job
            comm.barrier()
            return None
        comm.barrier()
        return str(peer_failure(KeyboardInterrupt(), terminated=True))
    assert ThreadGroup(2).run(work) == ["None", None]
