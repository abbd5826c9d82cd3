"""TensorFlow: an optimizer_fn that builds no Keras optimizer (a torch-style function of the parameters, or one
returning something else) is a configuration error that FastEstimator code catches as AssertionError (FastEstimator
asserts the optimizer's type) and fe code as ValueError or TypeError."""
from __future__ import annotations

import keras
import pytest

from fe_core.build import build, reset_build_count
from fe_core.config_error import ConfigurationError


def dense() -> keras.Model:
    return keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


@pytest.mark.parametrize("optimizer_fn, match", [(lambda params: None, "must be callable without arguments"),
                                                 (lambda: "adam", "must return a Keras optimizer")])
def test_an_optimizer_fn_building_no_keras_optimizer(optimizer_fn, match):
    with pytest.raises(AssertionError, match=match) as caught:
        build(model_fn=dense, optimizer_fn=optimizer_fn)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)
    assert isinstance(caught.value, ConfigurationError)
