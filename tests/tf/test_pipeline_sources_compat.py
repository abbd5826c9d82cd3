"""A tf.data.Dataset as Pipeline data, as FastEstimator users write it: `get_loader` hands the user's own dataset
back, and the Pipeline's batch_size / ops / num_process (which tf.data never runs) are refused with FastEstimator's
AssertionError."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.pipeline import Pipeline


def _dataset() -> tf.data.Dataset:
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    return tf.data.Dataset.from_tensor_slices({"x": x, "y": np.arange(6)}).batch(4)


def test_get_loader_returns_the_users_tf_dataset_unchanged() -> None:
    dataset = _dataset()
    pipeline = Pipeline(train_data=dataset, test_data={"a": dataset})
    assert pipeline.get_loader("train") is dataset
    assert pipeline.get_loader(mode="test", ds_id="a") is dataset
    batch = next(iter(pipeline.get_loader("train")))
    assert isinstance(batch["x"], tf.Tensor) and tuple(batch["x"].shape) == (4, 2)


def test_a_tf_dataset_is_iterated_in_a_pipeline_context() -> None:
    pipeline = Pipeline(train_data=_dataset())
    with pipeline as loader:
        sizes = [len(batch["y"]) for batch in loader]
    assert sizes == [4, 2]


@pytest.mark.parametrize("argument", [{"batch_size": 2}, {"ops": [LambdaOp(fn=lambda x: x, inputs="x", outputs="x")]},
                                      {"num_process": 0}])
def test_batch_size_ops_and_num_process_with_only_tf_datasets_are_refused(argument) -> None:
    with pytest.raises(AssertionError, match="only appl"):
        Pipeline(train_data=_dataset(), **argument)
    with pytest.raises(ValueError):  # also fe's ValueError
        Pipeline(train_data=_dataset(), eval_data=_dataset(), **argument)


def test_with_an_fe_dataset_beside_the_tf_dataset_they_only_warn() -> None:
    dataset = NumpyDataset({"x": np.zeros((4, 2), dtype=np.float32), "y": np.arange(4)})
    with pytest.warns(UserWarning, match="ops only applies to the fe datasets"):
        pipeline = Pipeline(train_data=dataset, eval_data=_dataset(),
                            ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")])
    assert float(np.asarray(pipeline.get_results(mode="train")["x"]).min()) == 1.0
    assert pipeline.get_loader("eval") is pipeline.data["eval"][""]
