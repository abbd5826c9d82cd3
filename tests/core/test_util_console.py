"""fe.util console helpers: warn, draw, LogSplicer, Suppressor, Timer, in_notebook; and the device/CPU counts."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from contextlib import redirect_stdout

import pytest

from fe_core.util import LogSplicer, Suppressor, Timer, cpu_count, draw, in_notebook, warn
from fe_core.util import devices


def test_warn_prints_a_yellow_fastestimator_warning():
    out = io.StringIO()
    with redirect_stdout(out):
        warn("careful")
    assert out.getvalue() == "\033[93mFastEstimator-Warn: careful\033[00m\n"


def test_draw_prints_the_name():
    out = io.StringIO()
    with redirect_stdout(out):
        draw()
    assert "F a s t   E s t i m a t o r" in out.getvalue()


def test_in_notebook_is_false_outside_jupyter():
    assert in_notebook() is False


def test_log_splicer_copies_stdout_into_a_file(tmp_path):
    log = tmp_path / "logs" / "run.log"
    out = io.StringIO()
    with redirect_stdout(out):
        print("before")
        with LogSplicer(str(log)) as splicer:
            print("inside")
            assert splicer.getvalue() == "before\ninside\n"  # the wrapped StringIO's value
        print("after")
    assert log.read_text() == "inside\n" and out.getvalue() == "before\ninside\nafter\n"
    with redirect_stdout(io.StringIO()):
        with LogSplicer(str(log)):
            print("again")
    assert log.read_text() == "inside\nagain\n"  # appended


def test_timer_as_context_and_decorator():
    out = io.StringIO()
    with redirect_stdout(out):
        with Timer() as timer:
            time.sleep(0.01)

        @Timer("T2")
        def work():
            return 3

        assert work() == 3
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Task took ") and lines[0].endswith(" seconds") and timer.elapsed >= 0.01
    assert lines[1].startswith("T2 took ")


_SUPPRESSOR_SCRIPT = textwrap.dedent("""
    import ctypes, os, sys
    from fe_core.util import Suppressor
    libc = ctypes.CDLL(None)
    def native(text):  # what a C library does: write straight to file descriptor 1
        libc.write(1, text, len(text))
    print("py-before", flush=True); native(b"c-before\\n")
    with Suppressor():
        print("py-hidden"); native(b"c-hidden\\n"); print("err-hidden", file=sys.stderr)
    with Suppressor(allow_pyprint=True):
        print("py-allowed", flush=True); native(b"c-hidden2\\n")
    try:
        with Suppressor(show_if_exception=True):
            print("py-shown-on-error"); native(b"c-shown-on-error\\n")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    with Suppressor(show_if_exception=True):
        print("py-hidden3")
    print("py-after", flush=True); native(b"c-after\\n")
    print("stash-left", Suppressor._stash_files, flush=True)
""")


def test_suppressor_silences_python_and_native_output():
    result = subprocess.run([sys.executable, "-c", _SUPPRESSOR_SCRIPT], capture_output=True, text=True, timeout=60,
                            check=True)
    lines = result.stdout.splitlines()
    assert lines[:3] == ["py-before", "c-before", "py-allowed"]
    assert "c-shown-on-error" in lines and "py-shown-on-error" in lines
    assert lines[-3:] == ["py-after", "c-after", "stash-left set()"]
    assert "hidden" not in result.stdout and "hidden" not in result.stderr


def test_suppressor_in_process_restores_streams():
    before = sys.stdout
    with Suppressor() as suppressor:
        print("nothing")
        assert sys.stdout is suppressor
    assert sys.stdout is before
    suppressor.write("dropped")
    suppressor.flush()
    Suppressor.teardown()


def test_cpu_count_respects_affinity_and_enforces_one_limit(monkeypatch):
    monkeypatch.setattr(devices, "_cpu_limit", None)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                 "TF_NUM_INTEROP_THREADS"):
        monkeypatch.setenv(name, os.environ.get(name, "1"))
    available = len(os.sched_getaffinity(0))
    assert 1 <= cpu_count() <= available
    monkeypatch.setattr(devices, "_available_cpus", lambda: 8)
    assert cpu_count() == 8
    assert cpu_count(limit=16) == 8  # a limit cannot raise the count
    assert os.environ["OMP_NUM_THREADS"] == "8" and cpu_count() == 8
    assert cpu_count(limit=8) == 8
    with pytest.raises(ValueError, match="already enforced"):
        cpu_count(limit=2)
    monkeypatch.setattr(devices, "_cpu_limit", None)
    with pytest.raises(ValueError, match="positive int"):
        cpu_count(limit=0)


def test_cgroup_quota_is_read(monkeypatch, tmp_path):
    real_open = open

    def fake_open(path, *args, **kwargs):
        if path == "/sys/fs/cgroup/cpu.max":
            return io.StringIO("150000 100000\n")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    assert devices._cgroup_cpus() == 1.5
    assert devices._available_cpus() == 1


def test_gpu_counts_without_a_framework(monkeypatch):
    monkeypatch.setattr(devices, "loaded_util_modules", lambda module: [])
    monkeypatch.setattr(devices, "_driver_gpu_indices", lambda: [0, 1, 2])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert devices.get_num_gpus() == 3 and devices.get_num_devices() == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    assert devices.get_num_gpus() == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert devices.get_num_gpus() == 0 and devices.get_num_devices() == 1
    monkeypatch.setattr(devices, "_driver_gpu_indices", lambda: [])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert devices.get_num_gpus() == 0 and devices.get_num_devices() == 1


def test_gpu_info_from_nvidia_smi(monkeypatch):
    monkeypatch.setattr(devices, "_nvidia_smi", lambda *query: ["0, NVIDIA H100 80GB HBM3, 81559 MiB",
                                                                "1, NVIDIA H100 80GB HBM3, 81559 MiB"])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert devices.get_gpu_info() == ["GPU 1: NVIDIA H100 80GB HBM3 (81559MiB)"]
    monkeypatch.setattr(devices, "_nvidia_smi", lambda *query: None)
    monkeypatch.setattr(devices, "loaded_util_modules", lambda module: [])
    assert devices.get_gpu_info() == []
