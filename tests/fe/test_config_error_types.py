"""With both frameworks installed: models of two frameworks in one Network, and a TensorFlow model given a torch
optimizer, fail with fe's message as an exception FastEstimator code catches (`except AssertionError`, as FastEstimator
asserts) and fe code catches (`except ValueError` / `TypeError`)."""
from __future__ import annotations

import keras
import pytest
import torch

import fe
from fe.op.tensorop.model import ModelOp
from fe_core.build import reset_build_count


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


def test_a_network_mixing_torch_and_tensorflow_models():
    torch_model = fe.build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn="adam", model_name="t")
    tf_model = fe.build(model_fn=lambda: keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)]),
                        optimizer_fn="adam", model_name="k")
    ops = [ModelOp(model=torch_model, inputs="x", outputs="a"), ModelOp(model=tf_model, inputs="x", outputs="b")]
    with pytest.raises(AssertionError, match="cannot mix frameworks") as caught:
        fe.Network(ops=ops)
    assert isinstance(caught.value, ValueError)


def test_a_tensorflow_model_with_a_torch_optimizer():
    def torch_optimizer():
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

    with pytest.raises(AssertionError, match="must return a Keras optimizer, got torch.optim") as caught:
        fe.build(model_fn=lambda: keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)]),
                 optimizer_fn=torch_optimizer)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)
    with pytest.raises(AssertionError, match="callable without arguments"):  # a torch-style function of the params
        fe.build(model_fn=lambda: keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)]),
                 optimizer_fn=lambda params: torch.optim.Adam(params))
