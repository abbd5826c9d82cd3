"""FastEstimator's TFNetwork arguments (`postprocessing=`) and Pipeline.transform(target_type='tf')."""
from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import LambdaOp
from fe_core.op.tensorop import ModelOp
from fe_core.pipeline import Pipeline
from fe_tf.network import TFNetwork


def test_postprocessing_keyword_and_pops_alias():
    model = build(model_fn=lambda: keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]), optimizer_fn="sgd")
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred")]
    double = LambdaOp(fn=lambda y: y * 2, inputs="y_pred", outputs="y2")
    batch = {"x": np.ones((3, 2), dtype=np.float32)}
    for network in (TFNetwork(ops, postprocessing=double), TFNetwork(ops, pops=double)):
        out = network.transform(batch, mode="infer")
        np.testing.assert_allclose(out["y2"], out["y_pred"] * 2)
        many = network.transform(iter([batch, batch]), mode="infer")  # an iterable: graph mode
        np.testing.assert_allclose(many[1]["y2"], out["y2"], rtol=1e-6)
    with pytest.raises(ValueError, match="not both"):
        TFNetwork(ops, postprocessing=double, pops=double)


def test_pipeline_transform_to_tf_tensors():
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((4, 2), dtype=np.float32)}), batch_size=2)
    out = pipeline.transform({"x": np.ones(2, dtype=np.float32)}, mode="infer", target_type="tf")
    assert isinstance(out["x"], tf.Tensor) and out["x"].shape == (1, 2)
