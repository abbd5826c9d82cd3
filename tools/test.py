#!/usr/bin/env python3
"""Run fe's test suites, each in its own virtual environment. Standard library only; any Python >= 3.10.

Usage:
    python tools/test.py [--fast] [--gpu] [suite ...] [-- extra pytest args]

Suites (default: all, in this order):
    core       fe-core alone; neither torch nor tensorflow is installed
    torch      fe-core + fe-torch (torch)
    tf         fe-core + fe-tf (tensorflow, Keras 3)
    tf-keras2  fe-core + fe-tf[keras2] (tensorflow with tf-keras, TF_USE_LEGACY_KERAS=1): the Keras 2 idioms
               (tests marked `keras2`) and the tf tests of KERAS2_DEFAULT_FILES; `--full` runs all of tests/tf
    fe         all four distributions, both frameworks

Each suite gets `.venvs/<suite>`, created with `python -m venv` and filled by pip (editable installs of the suite's
packages, pinned by `tools/constraints.txt`). A stamp file inside the venv records a hash of everything that went
into the install, so a re-run with nothing changed skips pip. Tests marked `gpu` are deselected unless `--gpu`;
`--fast` also deselects tests marked `slow`. Tests marked `keras2` (Keras 2 model code) run only in the tf-keras2 suite.
The last line printed is `N passed, N failed[, N skipped]`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
CONSTRAINTS = ROOT / "tools" / "constraints.txt"
STAMP_NAME = "fe-install.stamp"

# Packages (directories under packages/, optionally with extras: "fe[examples]") installed editable into each suite's
# venv. fe's `examples` extra brings scikit-learn (the examples' data) and matplotlib (`fe logs`), which tests/fe use.
# fe-core's optional extras (image, table, plot, report, data) bring no framework, so every suite tests them.
# Hyperparameter search on Ray/Optuna (fe-core[search], ~250 MB with Ray) is framework-free: the core suite tests it and
# the fe suite runs its benchmark; the framework suites install every other extra.
CORE_EXTRAS_BUT_SEARCH = "fe-core[image,table,plot,report,data,mlflow,export]"
SUITE_PACKAGES: Dict[str, List[str]] = {
    "core": ["fe-core[all]"],
    "torch": [CORE_EXTRAS_BUT_SEARCH, "fe-torch"],
    "tf": [CORE_EXTRAS_BUT_SEARCH, "fe-tf"],
    "tf-keras2": [CORE_EXTRAS_BUT_SEARCH, "fe-tf[keras2]"],
    "fe": ["fe-core[all]", "fe-torch", "fe-tf", "fe[examples]"],
}
# Suites that run another suite's tests (tests/<dir>) in their own environment, with extra environment variables.
SUITE_TESTS: Dict[str, str] = {"tf-keras2": "tf"}
SUITE_ENV: Dict[str, Dict[str, str]] = {"tf-keras2": {"TF_USE_LEGACY_KERAS": "1"}}
# Marker expressions (joined with `and`) each suite adds: tests marked keras2 need tf-keras, keras3 need Keras 3.
SUITE_MARKERS: Dict[str, List[str]] = {"tf": ["not keras2"], "tf-keras2": ["not keras3"], "fe": ["not keras2"]}
# The tf tests the tf-keras2 suite runs by default: the Keras 2 idioms (test_keras2_idioms.py) and the files covering
# what differs between Keras 3 and tf-keras in fe_tf (building, the traced step, optimizers, learning rates, mixed
# precision, checkpoints and exact resume, MirroredStrategy, layers, the `.h5` files Keras' own load_weights reads).
# Measured on the 2-core dev VM: these 73 tests take 1.1-2.4 min (plus ~3.5 min to create the venv), where all of
# tests/tf (437 tests) would add well over 8 min to CI. The
# GitHub workflow's tf-keras cells (hatch test-tf.py<python>-<tf>-tf-keras) and `tools/test.py --full tf-keras2` run
# all of tests/tf; tests marked keras3 (Keras 3's own names) are left out there.
KERAS2_DEFAULT_FILES: List[str] = [
    "test_keras2_idioms.py", "test_tf_build.py", "test_tf_update.py", "test_tf_precision.py", "test_tf_checkpoint.py",
    "test_tf_resume.py", "test_tf_model_op.py", "test_layers.py", "test_tf_distribute.py",
    "test_keras2_import_order.py", "test_keras_h5_weights.py",
]
# What the tests themselves need on top (the frameworks come with fe-torch / fe-tf, pinned by the constraints).
# pytest-xdist runs a suite's test files on several cores (`--jobs`).
TEST_REQUIREMENTS = ["pytest", "pytest-xdist", "pyyaml", "tomli; python_version < '3.11'"]
# The documentation tools (tools/docs.py). The docs build needs exactly the fe suite's packages, so it shares the fe
# suite's venv instead of building a second one with both frameworks (about 2-3 minutes of CI on 2 cores).
DOCS_REQUIREMENTS = ["mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings[python]==1.0.8",
                     "mkdocstrings-python==2.0.11", "mkdocs-gen-files==0.6.1", "markdown-exec[ansi]==1.12.6"]
# Extra requirements of a suite's venv on top of TEST_REQUIREMENTS.
SUITE_REQUIREMENTS: Dict[str, List[str]] = {"fe": DOCS_REQUIREMENTS}


def suite_requirements(suite: str) -> List[str]:
    """Everything a suite's venv installs besides its packages (the test tools, and the docs tools for fe)."""
    return TEST_REQUIREMENTS + SUITE_REQUIREMENTS.get(suite, [])


def default_jobs() -> int:
    """Worker processes per suite: FE_TEST_JOBS, else the CPUs (at most 4: the multi-process tests start their own)."""
    value = os.environ.get("FE_TEST_JOBS")
    if value:
        return max(1, int(value))
    return max(1, min(4, os.cpu_count() or 1))

# Why tests of each marker are left out, for the closing lines.
DESELECT_REASONS = {"gpu": "they need a CUDA GPU; run with --gpu on a GPU machine",
                    "slow": "--fast leaves them out",
                    "keras2": "Keras 2 code: the tf-keras2 suite runs them",
                    "keras3": "they need Keras 3: left out under tf-keras"}

_COUNT_RE = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")
_SUMMARY_RE = re.compile(r"\b\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b.* in [\d.]+s|"
                         r"no tests ran in [\d.]+s")


def venv_python(env_dir: Path) -> Path:
    """The interpreter inside a venv created by `venv`, on POSIX or Windows."""
    if os.name == "nt":
        return env_dir / "Scripts" / "python.exe"
    return env_dir / "bin" / "python"


def _venv_usable(env_dir: Path, python: Path) -> bool:
    """Whether `env_dir` is a working venv made from this interpreter's Python version (else it is re-created)."""
    cfg = env_dir / "pyvenv.cfg"
    if not python.exists() or not cfg.exists():
        return False
    version = dict(line.split("=", 1) for line in cfg.read_text().splitlines() if "=" in line)
    if {k.strip(): v.strip() for k, v in version.items()}.get("version") != platform.python_version():
        return False
    return subprocess.run([str(python), "-c", "import sys"], capture_output=True).returncode == 0


def _install_stamp(packages: Sequence[str], requirements: Sequence[str]) -> str:
    """Hash of everything an install depends on: pyprojects, constraints, requirements, interpreter, location."""
    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{sys.executable}|{ROOT}".encode())
    for name in packages:
        digest.update(name.encode())
        digest.update((ROOT / "packages" / name.partition("[")[0] / "pyproject.toml").read_bytes())
    digest.update(CONSTRAINTS.read_bytes())
    digest.update("\n".join(requirements).encode())
    return digest.hexdigest()


def ensure_venv(name: str, packages: Sequence[str], requirements: Sequence[str] = (), quiet: bool = False) -> Path:
    """Create (or reuse) `.venvs/<name>` holding `packages` editable plus `requirements`; return its python.

    pip runs only when the stamp (see `_install_stamp`) differs from the one the last successful install wrote.
    Raises subprocess.CalledProcessError when venv creation or pip fails.
    """
    env_dir = VENVS / name
    python = venv_python(env_dir)
    stamp_file = env_dir / STAMP_NAME
    stamp = _install_stamp(packages, requirements)
    if stamp_file.exists() and stamp_file.read_text().strip() == stamp and _venv_usable(env_dir, python):
        return python
    if not _venv_usable(env_dir, python):
        print(f"[{name}] creating virtual environment {env_dir.relative_to(ROOT)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(env_dir)], check=True)
    stamp_file.unlink(missing_ok=True)
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off",
           "-c", str(CONSTRAINTS)]
    if quiet:
        cmd.append("-q")
    for package in packages:
        directory, bracket, extras = package.partition("[")
        cmd += ["-e", str(ROOT / "packages" / directory) + bracket + extras]
    cmd += list(requirements)
    print(f"[{name}] pip install {' '.join(packages + list(requirements))} (constrained by tools/constraints.txt)",
          flush=True)
    env = dict(os.environ, PIP_NO_INPUT="1")
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    stamp_file.write_text(stamp + "\n")
    return python


def _parse_counts(lines: Sequence[str]) -> Dict[str, int]:
    """Counts from pytest's closing summary line (the last line that looks like one)."""
    for line in reversed(lines):
        if _SUMMARY_RE.search(line):
            counts: Dict[str, int] = {}
            for number, word in _COUNT_RE.findall(line):
                key = "errors" if word.startswith("error") else word
                counts[key] = counts.get(key, 0) + int(number)
            return counts
    return {}


def suite_targets(suite: str, full: bool) -> List[str]:
    """What pytest collects for a suite: tests/<dir>, or for tf-keras2 (unless `full`) its default files."""
    directory = Path("tests") / SUITE_TESTS.get(suite, suite)
    if suite == "tf-keras2" and not full:
        return [str(directory / name) for name in KERAS2_DEFAULT_FILES]
    return [str(directory)]


def suite_marker_args(suite: str, deselect: Sequence[str]) -> List[str]:
    """The `-m` expression of a suite: the deselected markers plus the suite's own (see SUITE_MARKERS)."""
    terms = [f"not {marker}" for marker in deselect] + SUITE_MARKERS.get(suite, [])
    return ["-m", " and ".join(terms)] if terms else []


def run_pytest(python: Path, suite: str, pytest_args: Sequence[str], targets: Optional[Sequence[str]] = None
               ) -> Tuple[int, Dict[str, int]]:
    """Run pytest on `targets` (default tests/<suite>) with the venv's python and the suite's environment variables,
    echoing its output; return (exit code, counts)."""
    cmd = [str(python), "-m", "pytest", *(targets or [str(Path("tests") / suite)]), *pytest_args]
    env = dict(os.environ)
    env.update(SUITE_ENV.get(suite, {}))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    print(f"[{suite}] {shlex.join(cmd[1:])}", flush=True)
    tail: List[str] = []
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            tail.append(line.rstrip("\n"))
            del tail[:-200]
        code = proc.wait()
    sys.stdout.flush()
    return code, _parse_counts(tail)


def _split_argv(argv: Sequence[str]) -> Tuple[List[str], List[str]]:
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def main(argv: Optional[Sequence[str]] = None) -> int:
    own, extra = _split_argv(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="python tools/test.py [--fast] [--gpu] [suite ...] [-- pytest args]")
    parser.add_argument("suites", nargs="*", metavar="suite", help=f"any of {', '.join(SUITE_PACKAGES)}")
    parser.add_argument("--fast", action="store_true", help="deselect tests marked slow")
    parser.add_argument("--gpu", action="store_true", help="also run tests marked gpu")
    parser.add_argument("--full", action="store_true", help="tf-keras2: run all of tests/tf, not its default files")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes per suite (pytest-xdist, whole files per process); default FE_TEST_JOBS, "
                             "else the CPUs, at most 4; 1 runs in one process")
    args = parser.parse_args(own)
    unknown = [s for s in args.suites if s not in SUITE_PACKAGES]
    if unknown:
        parser.error(f"unknown suite(s) {unknown}; choose from {list(SUITE_PACKAGES)}")
    suites = [s for s in SUITE_PACKAGES if s in args.suites] if args.suites else list(SUITE_PACKAGES)

    deselect = [] if args.gpu else ["gpu"]
    if args.fast:
        deselect.append("slow")

    run_started = time.monotonic()
    jobs = args.jobs if args.jobs is not None else default_jobs()
    parallel = ["-n", str(jobs), "--dist", "loadfile"] if jobs > 1 else []
    timing = ["--durations=15", "--durations-min=2"]

    results: List[Tuple[str, str]] = []
    totals = {"passed": 0, "failed": 0, "skipped": 0, "deselected": 0}
    any_failed = False
    for suite in suites:
        print(f"\n===== suite {suite} =====", flush=True)
        started = time.monotonic()
        try:
            python = ensure_venv(suite, SUITE_PACKAGES[suite], suite_requirements(suite))
        except (subprocess.CalledProcessError, OSError) as err:
            print(f"[{suite}] environment setup failed: {err}", flush=True)
            results.append((suite, "FAILED (environment setup)"))
            totals["failed"] += 1
            any_failed = True
            continue
        installed = time.monotonic()
        code, counts = run_pytest(python, suite, suite_marker_args(suite, deselect) + parallel + timing + extra,
                                  suite_targets(suite, args.full))
        seconds = f"environment {installed - started:.0f} s, tests {time.monotonic() - installed:.0f} s"
        print(f"[{suite}] {seconds}", flush=True)
        totals["passed"] += counts.get("passed", 0) + counts.get("xpassed", 0)
        totals["skipped"] += counts.get("skipped", 0) + counts.get("xfailed", 0)
        totals["deselected"] += counts.get("deselected", 0)
        failed = counts.get("failed", 0) + counts.get("errors", 0)
        detail = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no counts"
        detail += f"; {seconds}"
        if code == 0:
            results.append((suite, f"ok ({detail})"))
        elif code == 5:
            print(f"[{suite}] note: no tests collected in tests/{SUITE_TESTS.get(suite, suite)} (pytest exit code 5); "
                  "counted as ok",
                  flush=True)
            results.append((suite, "ok (no tests collected)"))
        else:
            any_failed = True
            if failed == 0:
                failed = 1  # interrupted, usage or internal error: count the suite itself as one failure
            results.append((suite, f"FAILED (pytest exit code {code}; {detail})"))
        totals["failed"] += failed

    print("\n===== summary =====")
    for suite, outcome in results:
        print(f"{suite:9s} {outcome}")
    print(f"all suites: {time.monotonic() - run_started:.0f} s ({jobs} process{'es' if jobs > 1 else ''} per suite)")
    if totals["deselected"]:
        markers = list(deselect)
        for suite, _ in results:  # and the markers suites leave out on their own (keras2, keras3)
            for marker in SUITE_MARKERS.get(suite, []):
                if marker.split()[-1] not in markers:
                    markers.append(marker.split()[-1])
        why = " and ".join(f"marked {marker} ({DESELECT_REASONS[marker]})" for marker in markers)
        print(f"{totals['deselected']} deselected: tests {why}")
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped", flush=True)
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
