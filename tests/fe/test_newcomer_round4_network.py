"""Issue 37 item 5: a model of one framework in the other framework's Network is refused when the Network is made
(not with torch's "forward() got an unexpected keyword argument 'training'" in the first step), naming the model
and the Network to use, as fe.Network does for mixed frameworks."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("tensorflow")

import fe  # noqa: E402  pylint: disable=wrong-import-position
from fe.op.tensorop.model import ModelOp  # noqa: E402  pylint: disable=wrong-import-position


def test_a_torch_model_in_a_tfnetwork_is_refused_naming_model_and_network(fresh_build_names):
    model = fe.build(lambda: torch.nn.Linear(2, 1), "adam", model_name="torchy")
    with pytest.raises(ValueError) as error:
        fe.network.TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y")])
    message = str(error.value)
    assert "TFNetwork" in message and "'torchy'" in message and "torch model" in message
    assert "fe.Network(ops=...)" in message and "fe.network.TorchNetwork" in message


def test_a_tf_model_in_a_torchnetwork_is_refused_naming_model_and_network(fresh_build_names):
    model = fe.build(lambda: tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)]), "adam",
                     model_name="kerasy")
    with pytest.raises(ValueError) as error:
        fe.network.TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y")])
    message = str(error.value)
    assert "TorchNetwork" in message and "'kerasy'" in message and "tf model" in message
    assert "fe.network.TFNetwork" in message
