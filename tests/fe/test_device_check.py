"""tools/device_check.sh runs on a CPU-only machine (`--cpu`, tiny sizes) and writes its markdown report with every
section, so the script prepared for a lent GPU machine keeps working (its GPU figures come from such a machine, see
tools/bench/README.md)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (shutil.which("bash") and shutil.which("timeout") and sys.platform == "linux"),
                                 reason="the device check is a bash script for Linux machines (coreutils timeout)")]

SECTIONS = ["# fe device check", "## Machine", "## GPU tests",
            "## fit vs a hand-written loop (ResNet9, batch 512, AMP)",
            "## fit fed by the CIFAR-recipe Pipeline with workers vs the slower alone",
            "## Pipeline scaling vs a torch DataLoader", "## Summary"]


def test_the_device_check_writes_every_section_of_its_report_on_the_cpu(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable)
    result = subprocess.run(["bash", str(ROOT / "tools" / "device_check.sh"), "--cpu", str(tmp_path / "report")],
                            capture_output=True, text=True, env=env, timeout=400, cwd=tmp_path)
    report_path = tmp_path / "report" / "device_check.md"
    assert report_path.exists(), result.stdout[-2000:] + result.stderr[-2000:]
    report = report_path.read_text()
    assert result.returncode == 0, report[-4000:]
    headings = [line for line in report.splitlines() if line.startswith("#")]
    assert headings == SECTIONS, headings
    assert "FAILED" not in report and "- sections failed: 0" in report
    assert "CUDA available: False" in report and "skipped" in report  # the gpu tests ran, and skipped on the CPU
    assert "| fe fit |" in report and "| hand-written loop (data on the device) |" in report
    assert "| fit: pipeline and step |" in report and "(2 worker processes seen)" in report
    assert "fe num_process=2 / torch DataLoader workers=2" in report and "idle % mean" in report
    assert report.count("not judged (--cpu smoke run") >= 2  # in its section and in the summary
