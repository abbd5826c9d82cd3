"""Issue 37 item 8: the noise fe used to let through. `fe train` of a TensorFlow script prints none of TensorFlow's
start-up lines (absl's "All log messages before absl::InitializeLog()", cudart's "Could not find cuda drivers",
twice); an ONNX export of a torch model prints no "torchvision is not installed" line and no FutureWarning from
torch's internals."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from fe_helpers import child_env

TF_SCRIPT = textwrap.dedent('''
    import numpy as np
    import tensorflow as tf
    import fe
    from fe.op.tensorop.loss import CrossEntropy
    from fe.op.tensorop.model import ModelOp, UpdateOp


    def get_estimator():
        x = np.random.rand(32, 4).astype("float32")
        y = np.random.randint(0, 2, 32)
        model = fe.build(lambda: tf.keras.Sequential([tf.keras.Input((4,)),
                                                      tf.keras.layers.Dense(2, activation="softmax")]), "adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="p"),
                                  CrossEntropy(inputs=("p", "y"), outputs="ce"), UpdateOp(model=model, loss_name="ce")])
        pipeline = fe.Pipeline(train_data=fe.dataset.NumpyDataset({"x": x, "y": y}), batch_size=16, num_process=0)
        return fe.Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=1)
''')


@pytest.mark.slow  # a fresh process importing TensorFlow (~10 s here)
def test_fe_train_of_a_tensorflow_script_prints_no_tensorflow_start_lines(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    script = tmp_path / "tf_script.py"
    script.write_text(TF_SCRIPT)
    env = child_env()
    env.pop("TF_CPP_MIN_LOG_LEVEL")  # as a newcomer's shell: nothing chosen
    env["FE_HISTORY_DB"] = str(tmp_path / "history.db")
    console = Path(sys.executable).parent / "fe"
    command = [str(console)] if console.exists() else [sys.executable, "-m", "fe.cli"]
    result = subprocess.run([*command, "train", str(script)], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "FastEstimator-Finish" in result.stdout
    assert "absl::InitializeLog" not in result.stderr and "Could not find cuda drivers" not in result.stderr, \
        result.stderr


def test_torch_onnx_export_prints_no_exporter_noise(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    pytest.importorskip("onnxruntime")
    from fe.util import export_model  # pylint: disable=import-outside-toplevel
    model = torch.nn.Sequential(torch.nn.Linear(4, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = export_model(model, str(tmp_path / "model.onnx"), np.ones((2, 4), np.float32), format="onnx")
    assert os.path.isfile(result.path)
    output = capfd.readouterr()
    assert "torchvision is not installed" not in output.err + output.out
    assert not [w for w in caught if issubclass(w.category, FutureWarning)], [str(w.message) for w in caught]
