"""Issue 37 item 8: fe's own warnings print as fe's lines (`FastEstimator-Warn: ...`), not as a raw UserWarning with
fe's source path and line; they stay warnings (catchable, filterable), and other warnings print as before."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp
from fe_core.pipeline import Pipeline
from fe_core.warning_lines import FEWarning


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


SCRIPT = """
import sys, warnings
sys.path.insert(0, {tests!r})
import numpy as np
import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator, record_history
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp
from fe_core.pipeline import Pipeline
record_history(False)
nb.install()
x = np.random.default_rng(0).normal(size=(16, 2)).astype(np.float32)
model = nb.build(2, 1, name="forgotten")
network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                        MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")])
Estimator(pipeline=Pipeline(train_data=NumpyDataset({{"x": x, "y": x[:, :1]}}), batch_size=4, num_process=0),
          network=network, epochs=1, log_steps=None).fit()
warnings.warn("a user's own warning", UserWarning)
"""


def test_the_missing_update_op_warning_is_one_fe_line():
    code = SCRIPT.format(tests=str(Path(__file__).parent))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    fe_lines = [line for line in lines if "no UpdateOp updates it" in line]
    assert len(fe_lines) == 1 and fe_lines[0].startswith("FastEstimator-Warn: Model 'forgotten' was built"), lines
    assert not any(".py:" in line and "UpdateOp" in line for line in lines), lines  # no source path and line
    assert any(line.endswith("UserWarning: a user's own warning") for line in lines), lines  # others unchanged


def test_it_is_still_a_warning_that_can_be_caught_and_turned_into_an_error():
    assert issubclass(FEWarning, UserWarning)
    x = np.ones((8, 2), np.float32)
    model = nb.build(2, 1, name="forgotten")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")])
    estimator = Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": x[:, :1]}), batch_size=4,
                                            num_process=0), network=network, epochs=1, log_steps=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FEWarning)
        with pytest.raises(FEWarning, match="no UpdateOp updates it"):
            estimator.fit()
