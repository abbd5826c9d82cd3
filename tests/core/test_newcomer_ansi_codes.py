"""Issue 30 item 11: terminal colour codes that a framework puts into its error (Keras makes names bold) do not end
up inside fe's wrapped op message."""
from __future__ import annotations

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.network import make_network
from fe_core.op.tensorop import TensorOp


@pytest.fixture(autouse=True)
def numpy_backend():
    nb.install()
    yield
    nb.uninstall()


class KerasLike(TensorOp):
    def forward(self, data, state):
        raise ValueError("Input 0 of layer \x1b[1m\"dense\"\x1b[0m is incompatible with the layer: expected axis -1 "
                         "of input shape to have value 4, but received input with shape (2, 3)")


def test_wrapped_op_errors_carry_no_ansi_codes():
    network = make_network([KerasLike(inputs="x", outputs="y")], default_backend="numpy")
    with network(mode="train", epoch=1, ds_id="", desired_output_keys={"y"}):
        with pytest.raises(ValueError) as info:
            network.run_step({"x": np.zeros((2, 3), dtype=np.float32)})
    message = str(info.value)
    assert "KerasLike" in message and 'layer "dense" is incompatible' in message
    assert "\x1b" not in message
