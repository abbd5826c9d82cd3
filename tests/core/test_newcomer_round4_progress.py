"""Issue 37 item 10: on a terminal, no blank line before the end-of-epoch Train line or the Eval lines. Run under a
real pseudo-terminal, as a newcomer's shell runs it, both one that reports its size and one that reports none (0
rows: what made tqdm hide the bar yet still end it with a newline)."""
from __future__ import annotations

import os
import select
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

pty = pytest.importorskip("pty")
pytest.importorskip("tqdm")  # the bar the Estimator shows on a terminal (a plain one without tqdm)

SCRIPT = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    import numpy_backend as nb
    from fe_core.dataset import NumpyDataset
    from fe_core.estimator import Estimator, record_history
    from fe_core.network import make_network
    from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
    from fe_core.pipeline import Pipeline
    record_history(False)
    nb.install()
    x = np.random.default_rng(1).normal(size=(40, 2)).astype(np.float32)
    y = x[:, :1] * 2
    pipeline = Pipeline(train_data=NumpyDataset({{"x": x, "y": y}}),
                        eval_data=NumpyDataset({{"x": x[:10], "y": y[:10]}}), batch_size=5, num_process=0)
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=4).fit()
''')


def run_in_terminal(script: Path, rows: int, columns: int) -> str:
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout and stderr are the terminal
        os.environ["OMP_NUM_THREADS"] = "1"
        os.execv(sys.executable, [sys.executable, str(script)])
    if rows:
        import fcntl, struct, termios  # pylint: disable=import-outside-toplevel,multiple-imports
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    output = b""
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, output.decode(errors="replace")
    return output.decode(errors="replace")


def screen_lines(output: str) -> List[str]:
    """What each line shows on the terminal: the text after the last carriage return that left some."""
    shown = []
    for line in output.replace("\r\n", "\n").split("\n"):
        parts = [part for part in line.split("\r") if part.strip()]
        shown.append(parts[-1] if parts else "")
    return shown


@pytest.mark.skipif(os.name == "nt", reason="POSIX pseudo-terminal")
@pytest.mark.parametrize("rows", [0, 24])
def test_no_blank_line_before_epoch_lines_on_a_terminal(tmp_path, rows):
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    shown = screen_lines(run_in_terminal(script, rows, 100))
    epoch_lines = [index for index, line in enumerate(shown)
                   if line.startswith("FastEstimator-Eval") or " epoch_time(sec)" in line]
    assert len(epoch_lines) == 4, shown
    for index in epoch_lines:
        assert shown[index - 1].strip(), shown  # the line above is the bar or a log line, never empty
