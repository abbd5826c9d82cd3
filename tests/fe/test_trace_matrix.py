"""Every public trace of fe in every execution mode (issue 41 item 3; issue 41's ModelSaver crash; issue 45 item 6).

One run per mode trains a tiny model for 2 epochs with every trace of `trace_matrix_script.TRACE_ARGS` together (and
RestoreWizard checkpointing each epoch, so every trace's state is saved), then tests it:

- torch in one process, torch DDP and torch sharded (FSDP2) with 2 gloo processes under torchrun (one launch runs
  both), TensorFlow in one process and TensorFlow MultiWorkerMirroredStrategy with 2 workers (TF_CONFIG).

Each data-parallel run must finish, log the one-process run's metrics (same data and seed), write the same files
(once: a second process writing, or making a directory, under the run's folder is recorded and fails the test) and
print each trace message once (rank 1 prints none). A trace whose state a checkpoint would miss ("... is not saved in
checkpoints ... Give X get_state()/set_state()") fails the run: the script turns that warning into an error.

The list of public traces comes from the generated `fe.trace` namespace, so a new trace fails
`test_every_public_trace_is_in_the_matrix_or_excluded` until it is added to the table or excluded with a reason.
"""
from __future__ import annotations

import collections
import importlib
import inspect
import json
import os
import pkgutil
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

from process_helpers import launch, run_processes
from trace_matrix_script import EXCLUDED, TRACE_ARGS

SCRIPT = Path(__file__).with_name("trace_matrix_script.py")
TORCHRUN = Path(sys.executable).with_name("torchrun")
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TF_CONFIG")
#: The data-parallel modes, each with the framework and the one-process run it must match.
MODES = {"ddp": "torch", "sharded": "torch", "multiworker": "tf"}
#: Logged values that measure time or the machine, not training.
NOT_COMPARED = {"steps/sec", "epoch_time(sec)", "total_time(sec)", "num_device"}
TOLERANCE = dict(rtol=1e-5, atol=1e-6)
#: Parts of the traces' checkpoint states that are not the same as one process's, by design.
STATE_NOT_COMPARED = {
    "stats": "a metric's statistics of this process's own samples (the reduced metric is compared as a metric)",
    "reduced": "which of a metric's statistics were reduced across processes already",
    "y_true": "PBMCalibrator's labels of this process's own samples (the fitted calibrator is compared)",
    "y_pred": "PBMCalibrator's predictions of this process's own samples (the fitted calibrator is compared)",
    "run_id": "MLflow's random run id",
}


def public_traces() -> Dict[str, type]:
    """Every Trace class reachable in the generated `fe.trace` namespace, by class name."""
    import fe.trace  # pylint: disable=import-outside-toplevel
    from fe_core.trace.trace import Trace  # pylint: disable=import-outside-toplevel
    found: Dict[str, type] = {}
    for module_info in pkgutil.walk_packages(fe.trace.__path__, "fe.trace."):
        module = importlib.import_module(module_info.name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, Trace):
                found[value.__name__] = value
    return found


def test_every_public_trace_is_in_the_matrix_or_excluded():
    public = public_traces()
    assert "ModelSaver" in public and "Accuracy" in public and "Saliency" in public  # the walk reaches every package
    missing = sorted(set(public) - set(TRACE_ARGS) - set(EXCLUDED))
    assert not missing, (f"public traces {missing} are neither run by tests/fe/trace_matrix_script.py (TRACE_ARGS) nor "
                         f"excluded there with a reason (EXCLUDED)")
    assert not set(TRACE_ARGS) & set(EXCLUDED)
    assert not (set(TRACE_ARGS) | set(EXCLUDED)) - set(public), "the table names traces that are not public"
    assert all(len(reason) > 20 for reason in EXCLUDED.values())


# ---------------------------------------------------------------------------------------------------- the runs
def _environ(out: Path) -> Dict[str, str]:
    environ = dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1",
                   FE_T_OUT=str(out), FE_HISTORY_DB="off", MPLBACKEND="Agg")
    for name in LAUNCHER_VARIABLES:
        environ.pop(name, None)
    return environ


def _single(out: Path, framework: str) -> Tuple[List[int], List[str]]:
    return run_processes([[sys.executable, str(SCRIPT), framework, "single"]], [_environ(out)], timeout=240,
                         what=f"the one-process {framework} run")


def _torchrun(out: Path) -> Tuple[List[int], List[str]]:
    def start(ports: List[int]) -> Tuple[List[int], List[str]]:
        command = [str(TORCHRUN), "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port",
                   str(ports[0]), "--tee", "3", "--log-dir", str(out / "torchrun-logs"), str(SCRIPT), "torch",
                   "ddp,sharded"]
        return run_processes([command], [_environ(out)], timeout=300, what="torchrun")
    return launch(start)


def _workers(out: Path) -> Tuple[List[int], List[str]]:
    def start(ports: List[int]) -> Tuple[List[int], List[str]]:
        hosts = [f"127.0.0.1:{port}" for port in ports]
        envs = [dict(_environ(out), TF_CONFIG=json.dumps({"cluster": {"worker": hosts},
                                                          "task": {"type": "worker", "index": index}}))
                for index in range(2)]
        return run_processes([[sys.executable, str(SCRIPT), "tf", "multiworker"]] * 2, envs, timeout=300,
                             what="the TensorFlow workers")
    return launch(start, ports=2)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """Run every mode once (two at a time: the one-process runs, then the data-parallel ones); return
    {mode: {"codes", "output", "rank_outputs", "ranks", "root"}} with mode 'single-torch' / 'single-tf' for the
    one-process runs."""
    base = tmp_path_factory.mktemp("trace_matrix")
    dirs = {name: base / name for name in ("torch1", "tf1", "torch2", "tf2")}
    for folder in dirs.values():
        folder.mkdir()
    with ThreadPoolExecutor(2) as pool:
        singles = [pool.submit(_single, dirs["torch1"], "torch"), pool.submit(_single, dirs["tf1"], "tf")]
        torch1, tf1 = [future.result() for future in singles]
        parallel = [pool.submit(_torchrun, dirs["torch2"]), pool.submit(_workers, dirs["tf2"])]
        torch2, tf2 = [future.result() for future in parallel]
    rank_logs = {rank: sorted((dirs["torch2"] / "torchrun-logs").glob(f"**/attempt_*/{rank}/stdout.log"))
                 for rank in (0, 1)}
    torch_ranks = [log[-1].read_text() if log else "" for log in (rank_logs[0], rank_logs[1])]
    runs = {"single-torch": (torch1, dirs["torch1"], "single", torch1[1]),
            "single-tf": (tf1, dirs["tf1"], "single", tf1[1]),
            "ddp": (torch2, dirs["torch2"], "ddp", torch_ranks),
            "sharded": (torch2, dirs["torch2"], "sharded", torch_ranks),
            "multiworker": (tf2, dirs["tf2"], "multiworker", tf2[1])}
    result = {}
    for mode, ((codes, outputs), folder, name, rank_outputs) in runs.items():
        ranks = [json.loads(path.read_text()) for path in sorted((folder / name).glob("rank*.json"))]
        result[mode] = {"codes": codes, "output": "\n".join(outputs), "rank_outputs": rank_outputs, "ranks": ranks,
                        "root": folder / name / "run"}
    return result


def _finished(run: dict, processes: int) -> None:
    assert run["codes"] and not any(run["codes"]), run["output"][-6000:]
    assert [rank["rank"] for rank in run["ranks"]] == list(range(processes)), run["output"][-3000:]


def _compared(history: dict, leave_out: set) -> Dict[Tuple[str, str], dict]:
    """{(mode, key): {step: value}} of a history, without the keys of NOT_COMPARED or `leave_out`."""
    return {(mode, key): values for mode, keys in history.items() for key, values in keys.items()
            if key not in NOT_COMPARED | leave_out}


def _assert_same_history(single: dict, other: dict, leave_out: set) -> None:
    expected, got = _compared(single, leave_out), _compared(other, leave_out)
    assert sorted(got) == sorted(expected)
    for entry, values in expected.items():
        assert sorted(got[entry]) == sorted(values), entry
        for step, value in values.items():
            np.testing.assert_allclose(got[entry][step], value, err_msg=str((entry, step)), **TOLERANCE)


# ---------------------------------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("framework", ["torch", "tf"])
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_one_process_run_of_every_trace_finishes_without_checkpoint_warnings(matrix, framework):
    run = matrix[f"single-{framework}"]
    _finished(run, 1)
    assert "is not saved in checkpoints" not in run["output"]
    assert (run["root"] / "ckpt" / "step-8").is_dir()  # RestoreWizard saved every trace's state (at each epoch)
    assert sorted(run["ranks"][0]["fit"]["eval"]) and "accuracy" in run["ranks"][0]["fit"]["eval"]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_run_of_every_trace_finishes(matrix, mode):
    run = matrix[mode]
    _finished(run, 2)
    assert "is not saved in checkpoints" not in run["output"]
    assert (run["root"] / "ckpt" / "step-8").is_dir()
    saver = run["root"] / "saver" / f"net_epoch_2.{'pt' if MODES[mode] == 'torch' else 'h5'}"
    assert saver.is_file() and not (run["root"] / "saver" / saver.name.replace("epoch_2", "epoch_1")).exists()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_metrics_equal_the_one_process_run(matrix, mode):
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(single, 1)
    _finished(run, 2)
    leave_out = set()
    if mode == "sharded":
        leave_out.add("net_export_diff")  # a sharded model is not exported (ModelExporter says so)
    for phase in ("fit", "test"):
        expected = {mode_: keys for mode_, keys in single["ranks"][0][phase].items() if mode_ != "train"}
        got = {mode_: keys for mode_, keys in run["ranks"][0][phase].items() if mode_ != "train"}
        _assert_same_history(expected, got, set())  # eval and test: every metric, the loss included
        _assert_same_history({"train": single["ranks"][0][phase]["train"]},
                             {"train": run["ranks"][0][phase]["train"]}, leave_out)  # loss, learning rates, export


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_training_loss_equals_the_one_process_run(matrix, mode):
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(run, 2)
    expected = single["ranks"][0]["fit"]["train"]["ce"]
    got = run["ranks"][0]["fit"]["train"]["ce"]
    assert sorted(got) == sorted(expected)
    for step, value in expected.items():
        np.testing.assert_allclose(got[step], value, err_msg=step, **TOLERANCE)


def _assert_same_state(expected, got, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected), where
        for key in expected:
            if key not in STATE_NOT_COMPARED:
                _assert_same_state(expected[key], got[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for index, (left, right) in enumerate(zip(expected, got)):
            _assert_same_state(left, right, f"{where}[{index}]")
    elif isinstance(expected, float) or (isinstance(expected, int) and not isinstance(expected, bool)):
        np.testing.assert_allclose(got, expected, err_msg=where, **TOLERANCE)
    elif isinstance(expected, str) and isinstance(got, str) and _number(expected) is not None:
        assert _number(got) is not None, where  # a number written as text (a CSVLogger row): compared as a number
        np.testing.assert_allclose(_number(got), _number(expected), err_msg=where, **TOLERANCE)
    else:
        assert got == expected, where


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_trace_states_equal_the_one_process_run(matrix, mode):
    """What each trace keeps (its checkpoint state after fit: best values, counters, saved file names, the trackers'
    histories, the calibrator) is the one-process run's: each trace saw every rank's samples."""
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(single, 1)
    _finished(run, 2)
    expected, got = single["ranks"][0]["states"], run["ranks"][0]["states"]
    assert sorted(got) == sorted(expected) == sorted(TRACE_ARGS)
    # MLflowLogger's copy of the logged history (JSON): every value, the training loss of each log step included
    leave_out = NOT_COMPARED | ({"net_export_diff"} if mode == "sharded" else set())
    expected, got = [dict(states, MLflowLogger=dict(states["MLflowLogger"], record=_compared(
        json.loads(states["MLflowLogger"]["record"]), leave_out))) for states in (expected, got)]  # (copies)
    assert expected["MLflowLogger"]["record"][("train", "ce")]
    for name in expected:
        _assert_same_state(expected[name], got[name], name)
    assert got["InstanceTracker"]["history"] and got["LabelTracker"]["history"] and got["PBMCalibrator"]["calibrator"]
    reports = [json.loads((folder / "report" / "matrix_TestReport.json").read_text())
               for folder in (single["root"], run["root"])]
    for report in reports:
        report.pop("timestamp"), report.pop("execution_time(s)")
    assert reports[1] == reports[0]
    assert reports[0]["tests"][1]["fail_number"] == 2  # the test set's 2 samples of class 2, counted over the ranks


def _files(root: Path, leave_out: str) -> collections.Counter:
    """The files under `root` as a multiset of names with run-specific parts (times, ids, pids) made generic; names
    matching the regular expression `leave_out` (when not empty) are left out."""
    names: collections.Counter = collections.Counter()
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if path.is_dir() or (leave_out and re.match(leave_out, relative)):
            continue
        names[re.sub(r"\d+", "N", re.sub(r"[0-9a-f]{32}", "ID", relative))] += 1
    return names


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_files_are_written_once_by_rank_0(matrix, mode):
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(run, 2)
    assert run["ranks"][1]["rank_writes"] == []  # rank 1 opened no file for writing, made no folder
    # sharded: a checkpoint layout of its own (each rank writes its slices) and no export (ModelExporter says so)
    leave_out = r"ckpt/|export/|mlruns/.*/net_export_diff$" if mode == "sharded" else ""
    expected, got = _files(single["root"], leave_out), _files(run["root"], leave_out)
    assert got == expected, (sorted((got - expected).items()), sorted((expected - got).items()))


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_explanations_show_the_samples_one_process_shows(matrix, mode):
    """GradCAM and EigenCAM keep the epoch's first 3 samples: with 2 of them per rank in a batch, those are rank 0's
    2 and rank 1's first one; the figures (drawn from the data alone) are the one-process run's, byte for byte."""
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(run, 2)
    figures = sorted(path.name for path in (single["root"] / "images").glob("*cam_*.png"))
    assert len(figures) == 6  # gradcam and eigencam: eval epochs 1 and 2, test
    for name in figures:
        assert (run["root"] / "images" / name).read_bytes() == (single["root"] / "images" / name).read_bytes(), name


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.slow  # 5 launches, 7 processes: ~60 s of CPU for the whole matrix
def test_data_parallel_trace_messages_are_printed_once_by_rank_0(matrix, mode):
    single, run = matrix[f"single-{MODES[mode]}"], matrix[mode]
    _finished(run, 2)

    def messages(text: str) -> collections.Counter:
        return collections.Counter(re.findall(r"FastEstimator-[A-Za-z]+:", text))

    assert not messages(run["rank_outputs"][1]), run["rank_outputs"][1][-3000:]
    expected = messages(single["output"])
    runs = 2 if mode in ("ddp", "sharded") else 1  # one torchrun launch runs both the ddp and the sharded fit
    assert messages(run["rank_outputs"][0]) == collections.Counter({key: runs * count
                                                                    for key, count in expected.items()})


def test_traces_left_out_of_the_runs_have_no_state_a_checkpoint_would_miss():
    """Issue 45 item 6 for the public traces the runs leave out: RestoreWizard saves their state without the
    "... is not saved in checkpoints ... Give X get_state()/set_state()" warning (the runs check the others)."""
    import warnings  # pylint: disable=import-outside-toplevel
    import fe  # pylint: disable=import-outside-toplevel
    from fe_core.checkpoint.object_state import get_object_state  # pylint: disable=import-outside-toplevel
    traces = [fe.trace.metric.BleuScore(true_key="y", pred_key="y_pred"),
              fe.trace.metric.MeanAveragePrecision(num_classes=3)]
    assert sorted(type(trace).__name__ for trace in traces) == sorted(
        name for name, reason in EXCLUDED.items() if "user data" in reason)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*is not saved in checkpoints.*")
        for trace in traces:
            assert isinstance(get_object_state(trace), dict)
