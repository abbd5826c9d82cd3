"""`fe.backend` across frameworks in one process: conversions between torch and TensorFlow tensors, dtype references
from the other framework, and each framework's tensors staying with their own backend."""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

tf = pytest.importorskip("tensorflow")
torch = pytest.importorskip("torch")

import fe_core.backend as fb  # noqa: E402


def test_to_tensor_moves_collections_between_torch_and_tf() -> None:
    data = {"x": torch.ones((2, 3)), "y": [tf.ones(4, dtype=tf.int8)], "z": None}
    as_tf = fb.to_tensor(data, "tf")
    assert tf.is_tensor(as_tf["x"]) and as_tf["x"].dtype == tf.float32 and as_tf["y"][0].dtype == tf.int8
    as_torch = fb.to_tensor(as_tf, "torch")
    assert isinstance(as_torch["x"], torch.Tensor) and as_torch["y"][0].dtype == torch.int8
    assert as_torch["z"] is None
    np.testing.assert_array_equal(fb.to_tensor(as_torch, "np")["x"], np.ones((2, 3), dtype="float32"))


def test_dtype_references_from_the_other_framework() -> None:
    assert fb.cast(tf.ones(2), torch.ones(1, dtype=torch.int16)).dtype == tf.int16
    assert fb.cast(torch.ones(2), tf.ones(1, dtype=tf.float16)).dtype == torch.float16
    assert fb.to_type({"a": tf.ones(1), "b": torch.ones(1)}) == {"a": tf.float32, "b": torch.float32}


def test_each_framework_keeps_its_own_results() -> None:
    assert isinstance(fb.reduce_mean(torch.ones(3)), torch.Tensor)
    assert tf.is_tensor(fb.reduce_mean(tf.ones(3)))
    assert isinstance(fb.reduce_mean(np.ones(3)), np.floating)
    assert isinstance(fb.gather(torch.arange(4), tf.constant([3, 0])), torch.Tensor)
    np.testing.assert_array_equal(fb.gather(tf.range(4), torch.tensor([3, 0])), [3, 0])
    with pytest.raises(ValueError, match="same kind"):
        fb.matmul(tf.ones((2, 2)), torch.ones((2, 2)))
