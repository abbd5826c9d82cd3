"""fe_core.allocator: during fit/test glibc keeps freed memory for reuse, and gives it back when the run ends.

glibc's settings cannot be undone inside a process, so every case runs in a fresh interpreter.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from typing import Dict, Optional

import numpy_backend as nb
import pytest
from fe_core import allocator
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# A training step's pattern: a few MiB-sized buffers alive together, then all freed; counts the page faults of 50
# steps after 3 to settle.
STEPS = """
import resource
import numpy as np
def step():
    buffers = [np.ones(n, dtype=np.uint8) for n in (3 << 20, 2 << 20, 3 << 20, 1 << 20)]
    return sum(int(b[0]) for b in buffers)
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print("faults", resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def run(code: str, env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """Run `code` in a fresh interpreter; its 'name value' output lines as a dict."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("MALLOC_") and key not in ("FE_KEEP_FREED_MEMORY", "LD_PRELOAD")}
    environment.update(env or {})
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


KEEP = "from fe_core.allocator import keep_freed_memory\nprint('kept', keep_freed_memory())\n"


def test_kept_memory_is_reused_instead_of_faulted_in_again():
    default = run(STEPS)
    kept = run(KEEP + STEPS)
    if not GLIBC:
        assert kept["kept"] == "False"  # nothing to configure elsewhere
        return
    assert kept["kept"] == "True"
    assert int(default["faults"]) > 20_000  # glibc hands the buffers back and faults them in at every step
    assert int(kept["faults"]) < 500


@pytest.mark.parametrize("env", [{"FE_KEEP_FREED_MEMORY": "0"}, {"MALLOC_TRIM_THRESHOLD_": "1000000"},
                                 {"MALLOC_MMAP_THRESHOLD_": "1000000"}, {"LD_PRELOAD": "libjemalloc.so.2"}])
def test_the_users_own_allocator_choice_is_left_alone(env):
    assert run(KEEP, env)["kept"] == "False"


def test_release_gives_the_kept_memory_back_to_the_system():
    result = run(KEEP + textwrap.dedent("""
        import os
        import numpy as np
        from fe_core.allocator import release_freed_memory
        def rss_mib():
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        blocks = [np.ones(8 << 20, dtype=np.uint8) for _ in range(24)]  # 192 MiB in heap-sized blocks
        del blocks
        print("kept_mib", rss_mib())
        release_freed_memory()
        print("released_mib", rss_mib())
    """)) if GLIBC else None
    if result is None:
        assert allocator.keep_freed_memory() is False
        return
    assert float(result["kept_mib"]) - float(result["released_mib"]) > 150


@pytest.fixture()
def allocator_calls(monkeypatch: pytest.MonkeyPatch):
    calls = []
    monkeypatch.setattr("fe_core.estimator.keep_freed_memory", lambda: calls.append("keep") or True)
    monkeypatch.setattr("fe_core.estimator.release_freed_memory", lambda: calls.append("release"))
    nb.install()
    yield calls
    nb.uninstall()


def _estimator(fail: bool = False) -> Estimator:
    def step(x):
        if fail:
            raise RuntimeError("step failed")
        return x

    model = nb.build(2, 1)
    network = make_network([LambdaOp(fn=step, inputs="x", outputs="x"),
                            ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    data = NumpyDataset({"x": nb.np.ones((4, 2), dtype="float32"), "y": nb.np.ones((4, 1), dtype="float32")})
    return Estimator(pipeline=Pipeline(train_data=data, test_data=data, batch_size=2), network=network, epochs=1,
                     log_steps=None)


def test_fit_and_test_keep_freed_memory_while_they_run_and_release_it_after(allocator_calls):
    estimator = _estimator()
    estimator.fit()
    estimator.test()
    assert allocator_calls == ["keep", "release", "keep", "release"]


def test_a_failing_run_still_releases_the_memory(allocator_calls):
    with pytest.raises(RuntimeError, match="step failed"):
        _estimator(fail=True).fit()
    assert allocator_calls == ["keep", "release"]
