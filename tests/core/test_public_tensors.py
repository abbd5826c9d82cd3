"""What fe hands back to user code where no framework is installed: numpy (Pipeline.get_results, slicers called
directly), with FastEstimator's get_results semantics (num_steps, mode, epoch, ds_id, shuffle)."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset
from fe_core.framework.public import public_framework, to_public
from fe_core.op.numpyop import LambdaOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.slicer import AxisSlicer, MeanUnslicer, SlidingSlicer, forward_slicers, reverse_slicers


def dataset(n: int = 10) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "y": np.arange(n)})


def test_without_a_framework_results_are_numpy() -> None:
    assert public_framework() is None  # (tests/torch is on sys.path as a bare directory: it is not torch)
    batch = Pipeline(train_data=dataset(), batch_size=4).get_results()
    assert isinstance(batch["x"], np.ndarray) and batch["y"].tolist() == [0, 1, 2, 3]
    assert to_public({"x": np.ones(2)}, None)["x"].tolist() == [1.0, 1.0]


def test_get_results_follows_fastestimator_num_steps_semantics() -> None:
    pipeline = Pipeline(train_data=dataset(10), batch_size=4)
    assert isinstance(pipeline.get_results(), dict)
    several = pipeline.get_results(num_steps=2)
    assert isinstance(several, list) and [b["y"].tolist() for b in several] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    every = pipeline.get_results(num_steps=100)  # at most one epoch
    assert [len(b["y"]) for b in every] == [4, 4, 2]
    single_batch = Pipeline(train_data=dataset(3), batch_size=4).get_results(num_steps=5)
    assert isinstance(single_batch, dict) and single_batch["y"].tolist() == [0, 1, 2]  # one batch: the dict


def test_get_results_mode_epoch_ds_id_and_shuffle() -> None:
    pipeline = Pipeline(train_data=dataset(8), eval_data={"a": dataset(4), "b": dataset(6)}, batch_size=8,
                        ops=EpochScheduler({1: LambdaOp(fn=lambda y: y * 0, inputs="y", outputs="y"), 2: None}))
    assert pipeline.get_results(mode="eval", ds_id="b")["y"].tolist() == [0] * 6  # epoch 1 runs the op
    assert pipeline.get_results(mode="eval", ds_id="b", epoch=2)["y"].tolist() == list(range(6))
    assert pipeline.get_results(epoch=2)["y"].tolist() == list(range(8))  # shuffle defaults to False, even in train
    np.random.seed(0)
    shuffled = pipeline.get_results(epoch=2, shuffle=True)["y"].tolist()
    assert sorted(shuffled) == list(range(8)) and shuffled != list(range(8))
    with pytest.raises(KeyError):
        pipeline.get_results(mode="test")
    with pytest.raises(KeyError):
        pipeline.get_results(mode="eval", ds_id="c")


def test_get_results_of_an_epoch_without_data_is_an_empty_list() -> None:
    pipeline = Pipeline(train_data=EpochScheduler({1: dataset(4), 2: None}), batch_size=2)
    assert pipeline.get_results(epoch=2) == []


def test_builtin_slicers_called_on_numpy_return_numpy() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    pieces = AxisSlicer(axis=1, slice="x")._slice_batch(x)  # pylint: disable=protected-access
    assert len(pieces) == 3 and all(isinstance(piece, np.ndarray) for piece in pieces)
    windows = SlidingSlicer(window_size=[-1, -1, 2], slice="x")._slice_batch(x)  # pylint: disable=protected-access
    assert [w.shape for w in windows] == [(2, 3, 2), (2, 3, 2)]
    mean = MeanUnslicer("loss")._unslice_batch((np.float32(1.0), np.float32(3.0)), key="loss")  # pylint: disable=W0212
    assert float(mean) == 2.0
    slicers = [AxisSlicer(axis=0, slice="x", minibatch_size=1)]
    minibatches = forward_slicers(slicers, {"x": x})
    fused = reverse_slicers(slicers, minibatches, {"x": x})
    assert isinstance(fused["x"], np.ndarray) and np.array_equal(fused["x"], x)
