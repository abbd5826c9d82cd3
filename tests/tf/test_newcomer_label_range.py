"""Issue 30 item 4 (TensorFlow): a label out of range in a later batch of a traced step gives the warmup check's
one-line named error (the batch is re-run eagerly with the warmup checks) instead of a graph node's message."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_tf.network import TFNetwork


def test_a_stray_label_in_a_later_batch_is_named_like_in_warmup():
    y = (np.arange(32) % 10).astype(np.int64)
    y[20] = 10  # not in the warmup's (first, unshuffled) batch
    x = np.random.RandomState(0).normal(size=(32, 4)).astype(np.float32)
    model = build(model_fn=lambda: tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(10)]),
                  optimizer_fn="sgd", model_name="clf")
    network = TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                             UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8)
    with pytest.raises(ValueError) as info:
        Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None).fit()
    message = str(info.value)
    assert message.startswith("CrossEntropy (inputs ['y_pred', 'y']) got label 10 in 'y'")
    assert "for 10 classes" in message and "mode 'train', epoch 1" in message and "\n" not in message
    assert info.value.__suppress_context__  # the graph's node error is not printed above it
