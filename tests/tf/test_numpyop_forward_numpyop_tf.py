"""forward_numpyop on a batch of tf tensors: ops get numpy arrays, the batch keeps tf tensors."""
from __future__ import annotations

import numpy as np
import tensorflow as tf

from fe_core.op.numpyop import LambdaOp, forward_numpyop


def test_batched_tf_ops_see_numpy_and_write_tf_tensors():
    seen = []

    def double(x):
        seen.append(type(x))
        return x * 2

    data = {"x": tf.constant([1.0, 2.0])}
    forward_numpyop([LambdaOp(fn=double, inputs="x", outputs="y")], data, {"mode": "eval"}, batched="tf")
    assert seen == [np.ndarray]
    assert tf.is_tensor(data["y"]) and data["y"].numpy().tolist() == [2.0, 4.0]
