"""forward_numpyop on a batch of torch tensors: ops get numpy arrays, the batch keeps torch tensors."""
from __future__ import annotations

import numpy as np
import torch

from fe_core.op.numpyop import LambdaOp, forward_numpyop
from fe_core.op.numpyop.meta import Sometimes


def test_batched_torch_ops_see_numpy_and_write_torch_tensors():
    seen = []

    def double(x):
        seen.append(type(x))
        return x * 2

    data = {"x": torch.tensor([1.0, 2.0])}
    forward_numpyop([LambdaOp(fn=double, inputs="x", outputs="y"), Sometimes(LambdaOp(fn=double, inputs="y",
                                                                                         outputs="y"), prob=1.0)],
                    data, {"mode": "train"}, batched="torch")
    assert seen == [np.ndarray, np.ndarray]
    assert isinstance(data["y"], torch.Tensor) and data["y"].device.type == "cpu"
    assert data["y"].tolist() == [4.0, 8.0]
