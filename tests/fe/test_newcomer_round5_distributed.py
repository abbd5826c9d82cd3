"""Issue 45, a newcomer scaling a script out: the digits MLP of `newcomer_round5_script.py` trained in one process,
then tested and broken under torchrun (2 gloo processes on 127.0.0.1; three launches run side by side):

1. one process and 2 processes (replicated, and sharded with FSDP2) log the same test loss for the same weights on
   a test set of 270 samples in batches of 32 (FastEstimator's value: the mean of the batches' means);
2. a ValueError raised on rank 1 only, and a kill -9 of rank 1, are reported by rank 0 as what they are;
3. `fe test` logs the test at the step and epoch the training ended, in its line and its CSVLogger row;
4. `fe test` under torchrun says once which weights it loaded;
5. sharding in one process is refused with one line;
7. `fe history` names the experiments, marks `fe test` runs, and marks a killed run 'Killed'.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

from fe.cli.main import main
from process_helpers import free_ports, run_processes, PORT_TAKEN

SCRIPT = Path(__file__).with_name("newcomer_round5_script.py")
TORCHRUN = Path(sys.executable).with_name("torchrun")
TEST_LINE = re.compile(r"FastEstimator-Test: step: (\d+); epoch: (\d+); accuracy: [0-9.]+; ce: ([0-9.]+);")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """`fe train` in one process (1 epoch, 40 steps) with its own history database; then `fe test` of it."""
    root = tmp_path_factory.mktemp("round5")
    saved = root / "saved"
    previous = os.environ.get("FE_HISTORY_DB")
    os.environ["FE_HISTORY_DB"] = str(root / "history.db")
    try:
        assert main(["train", str(SCRIPT), "--save_dir", str(saved), "--summary", "digits"]) == 0
        assert main(["test", str(SCRIPT), "--save_dir", str(saved)]) == 0
    finally:
        if previous is None:
            os.environ.pop("FE_HISTORY_DB")
        else:
            os.environ["FE_HISTORY_DB"] = previous
    with open(saved / "log.csv", newline="", encoding="utf-8") as file:
        (root / "rows.txt").write_text("\n".join(",".join(row[:3]) for row in csv.reader(file)))
    return root


@pytest.fixture(scope="module")
def launches(trained, tmp_path_factory) -> Dict[str, str]:
    """Three torchrun launches at once: `fe test` (replicated, then sharded) of the trained weights; training in
    which rank 1 raises; training in which rank 1 is killed. Returns each one's output."""
    out = tmp_path_factory.mktemp("launches")
    shutil.copytree(trained / "saved", out / "saved")  # its fe test appends to a log.csv of its own
    scenarios = {"test": str(out / "saved"), "fail": str(out / "fail"), "kill": str(out / "kill")}
    env = dict(os.environ, OMP_NUM_THREADS="1", FE_HISTORY_DB="off")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)

    def start():
        ports = free_ports(len(scenarios))
        commands = [[str(TORCHRUN), "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port",
                     str(port), str(SCRIPT), scenario, save_dir]
                    for port, (scenario, save_dir) in zip(ports, scenarios.items())]
        return run_processes(commands, [env] * len(commands), 240, cwd=str(out), what="torchrun")

    codes, outputs = start()
    if any(marker in output for output in outputs for marker in PORT_TAKEN):
        codes, outputs = start()  # a port was taken between picking and binding it
    results = dict(zip(scenarios, outputs))
    assert codes[0] == 0, results["test"][-3000:]
    assert codes[1] != 0 and codes[2] != 0
    return results


def _test_lines(output: str) -> List[tuple]:
    return [match.groups() for match in TEST_LINE.finditer(output)]


@pytest.mark.slow
def test_one_process_and_two_log_the_same_test_loss_replicated_and_sharded(trained, launches, capsys):
    assert main(["test", str(SCRIPT), "--save_dir", str(trained / "saved")]) == 0
    (single,) = _test_lines(capsys.readouterr().out)
    replicated, sharded = _test_lines(launches["test"])  # rank 0 alone prints
    for step, epoch, ce in (replicated, sharded):
        assert (step, epoch) == single[:2] == ("40", "1")
        assert float(ce) == pytest.approx(float(single[2]), rel=2e-6), (ce, single[2])


@pytest.mark.slow
def test_fe_test_under_torchrun_says_once_which_weights_it_loaded(launches):
    loaded = [line for line in launches["test"].splitlines() if line.startswith("fe test: loaded model 'mlp'")]
    assert len(loaded) == 2 and loaded[0] == loaded[1]
    assert loaded[0].endswith("mlp_epoch_1.pt (saved by ModelSaver)")  # once per `fe test` (replicated, sharded), not once per process


@pytest.mark.slow
def test_a_failure_on_rank_1_is_reported_on_rank_0_as_what_it_is(launches):
    output = launches["fail"]
    # rank 0 learns it in step 4's gradient all-reduce, or from torchrun's SIGTERM if that comes first (step 3 or 4)
    assert re.search(r"FastEstimator-Failed: step [34] \(train epoch 1\): rank 1 failed: ValueError: rank 1's trace "
                     r"broke at step 3\n", output), output[-4000:]
    assert "PeerFailure: rank 1 failed: ValueError: rank 1's trace broke at step 3" in output
    assert "UpdateOp (model" not in output and "by RuntimeError" not in output


@pytest.mark.slow
def test_rank_1_killed_is_reported_on_rank_0_as_a_dead_peer(launches):
    output = launches["kill"]
    assert re.search(r"FastEstimator-Failed: step [34] \(train epoch 1\): rank 1 died \(killed by a signal, or out "
                     r"of memory\)\n", output), output[-4000:]
    assert "UpdateOp (model" not in output and "Connection reset by peer" not in output


def test_fe_test_logs_the_step_and_epoch_training_ended_at(trained):
    # the fit's eval row, then fe test's row (not `test,0,1`)
    assert (trained / "rows.txt").read_text().splitlines() == ["mode,step,epoch", "eval,40,1", "test,40,1"]


def test_sharding_in_one_process_is_refused_with_one_line(tmp_path, capsys):
    assert main(["train", str(SCRIPT), "--save_dir", str(tmp_path), "--sharding", "fsdp"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("fe train: error: ConfigurationError: build(sharding=...) of torch model 'mlp' "
                                   "needs several processes: start the script with `torchrun --nproc_per_node N`")
    line = next(number for number, text in enumerate(SCRIPT.read_text().splitlines(), 1) if "fe.build(" in text)
    assert captured.err.endswith(f"({SCRIPT}, line {line})\n") and captured.err.count("\n") == 1  # the user's line


def _history(db: Path) -> List[tuple]:
    import sqlite3  # pylint: disable=import-outside-toplevel
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT experiment, status FROM history ORDER BY train_start").fetchall()


KILLED = textwrap.dedent("""
    import os, signal, sqlite3, time
    from fe_core.summary.history import HistoryRecorder
    from fe_core.summary.system import System

    system = System(network=None, pipeline=None, traces=[], mode="train")
    with HistoryRecorder(system, "killed.py", db_path=os.environ["FE_HISTORY_DB"]):
        for _ in range(200):  # the run's row is written in the background: kill once it is there
            with sqlite3.connect(os.environ["FE_HISTORY_DB"]) as db:
                if db.execute("SELECT 1 FROM history WHERE experiment = 'killed'").fetchone():
                    break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9 in the middle of the run
""")


def test_fe_history_names_experiments_marks_test_runs_and_killed_runs(trained, tmp_path, capsys):
    db = trained / "history.db"
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    env = dict(os.environ, FE_HISTORY_DB=str(db))
    assert subprocess.run([sys.executable, str(script)], env=env, timeout=60).returncode == -9
    assert _history(db)[-1] == ("killed", "Launched")  # the killed process never said how it ended
    previous = os.environ.get("FE_HISTORY_DB")
    os.environ["FE_HISTORY_DB"] = str(db)
    try:
        assert main(["history"]) == 0
    finally:
        os.environ.pop("FE_HISTORY_DB")
        if previous is not None:
            os.environ["FE_HISTORY_DB"] = previous
    listing = capsys.readouterr().out
    assert re.search(r"\| killed +\| Killed ", listing), listing
    assert _history(db) == [("digits", "Completed"), ("newcomer_round5_script (test)", "Completed"),
                            ("killed", "Killed")]
