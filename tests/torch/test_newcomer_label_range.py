"""Issue 30 item 4 (torch): a label out of range in a later batch gives the warmup check's one-line named error."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_torch.network import TorchNetwork


def _fit(y):
    x = np.random.RandomState(0).normal(size=(len(y), 4)).astype(np.float32)
    model = build(model_fn=lambda: torch.nn.Linear(4, 10), optimizer_fn="sgd", model_name="clf")
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8)
    Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None).fit()


def test_a_stray_label_in_a_later_batch_is_named_like_in_warmup():
    y = (np.arange(32) % 10).astype(np.int64)
    y[20] = 10  # not in the warmup's (first, unshuffled) batch
    with pytest.raises(ValueError) as info:
        _fit(y)
    message = str(info.value)
    assert message.startswith("CrossEntropy (inputs ['y_pred', 'y']) got label 10 in 'y'")
    assert "for 10 classes" in message and "mode 'train', epoch 1" in message and "0..9" in message
    assert "\n" not in message


def test_the_warmup_gives_the_same_message():
    y = (np.arange(32) % 10).astype(np.int64)
    y[3] = 10
    with pytest.raises(ValueError, match=r"^CrossEntropy \(inputs \['y_pred', 'y'\]\) got label 10 in 'y'"):
        _fit(y)
