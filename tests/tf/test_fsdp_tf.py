"""Sharding (FSDP2) is a torch feature: asking for it on a TensorFlow model is one line before training."""
import pytest

from fe_core.build import build
from fe_core.config_error import ConfigurationError


def test_sharding_a_tensorflow_model_is_refused_in_one_line():
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    with pytest.raises(ConfigurationError) as caught:
        build(model_fn=lambda: tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)]),
              optimizer_fn="adam", sharding="fsdp", model_name="tf_net")
    message = str(caught.value)
    assert "'tf_net'" in message and "torch models only" in message and "\n" not in message
