"""FastEstimator's TorchNetwork arguments (`postprocessing=`) and Pipeline.transform(target_type='torch')."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import LambdaOp
from fe_core.op.tensorop import ModelOp
from fe_core.pipeline import Pipeline
from fe_torch.network import TorchNetwork


def test_postprocessing_keyword_and_pops_alias():
    model = build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn="sgd")
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred")]
    double = LambdaOp(fn=lambda y: y * 2, inputs="y_pred", outputs="y2")
    batch = {"x": np.ones((3, 2), dtype=np.float32)}
    for network in (TorchNetwork(ops, postprocessing=double), TorchNetwork(ops, pops=double)):
        out = network.transform(batch, mode="infer")
        np.testing.assert_allclose(out["y2"], out["y_pred"] * 2)
    with pytest.raises(ValueError, match="not both"):
        TorchNetwork(ops, postprocessing=double, pops=double)


def test_pipeline_transform_to_torch_tensors():
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((4, 2), dtype=np.float32)}), batch_size=2)
    out = pipeline.transform({"x": np.ones(2, dtype=np.float32)}, mode="infer", target_type="torch")
    assert isinstance(out["x"], torch.Tensor) and tuple(out["x"].shape) == (1, 2)
