"""Exact mid-epoch resume with every kind of dataset: a checkpoint (pipeline state + numpy random state) taken after
k batches, restored into freshly built objects, continues with the very batches an uninterrupted run produces."""
from __future__ import annotations

import os
from typing import Any, Dict, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.dataset import (BatchDataset, CombinedDataset, ExtendDataset, GeneratorDataset, InterleaveDataset,
                             LabeledDirDataset, NumpyDataset, SiameseDirDataset)
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp
from fe_core.op.numpyop.batch import Batch
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard


def noisy() -> LambdaOp:
    return LambdaOp(lambda v: v + np.random.randint(1000), inputs="x", outputs="x")


def tree(root: str) -> str:
    for label in range(3):
        os.makedirs(os.path.join(root, f"c{label}"), exist_ok=True)
        for index in range(4):
            open(os.path.join(root, f"c{label}", f"{index}.png"), "wb").close()
    return root


def numbered(size: int, offset: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(offset, offset + size), "y": np.arange(size) % 2})


def generator_dataset() -> GeneratorDataset:
    def draw():
        while True:
            yield {"x": np.random.randint(10 ** 6), "y": 0}
    return GeneratorDataset(draw(), samples_per_epoch=12)


def build(kind: str, root: str) -> Pipeline:
    """What the user's script builds (called again in the 'new process')."""
    if kind == "batch":
        return Pipeline(train_data=BatchDataset([numbered(10), numbered(7, 100)], num_samples=[2, 1]), ops=[noisy()])
    if kind == "batch_probability":
        return Pipeline(train_data=BatchDataset([numbered(10), numbered(7, 100)], num_samples=3,
                                                probability=[0.5, 0.5]), ops=[noisy()])
    if kind == "extend":
        return Pipeline(train_data=ExtendDataset(numbered(5), spoof_length=13), batch_size=2, ops=[noisy()])
    if kind == "combined":
        return Pipeline(train_data=CombinedDataset([numbered(5), ExtendDataset(numbered(4, 50), 6)]), batch_size=3)
    if kind == "interleave":
        return Pipeline(train_data=InterleaveDataset({"a": numbered(9), "b": numbered(8, 100)}, pattern=["a", "b", "b"]),
                        ops=[noisy(), Batch(batch_size=2, ds_id="a"), Batch(batch_size=1, ds_id="b")])
    if kind == "siamese":
        return Pipeline(train_data=SiameseDirDataset(tree(root)), batch_size=2,
                        ops=[LambdaOp(lambda a, b: np.array([len(a), len(b)]), inputs=("x_a", "x_b"), outputs="x")])
    if kind == "labeled_dir":
        return Pipeline(train_data=LabeledDirDataset(tree(root)), batch_size=5,
                        ops=[LambdaOp(lambda path: np.array(len(path) + np.random.randint(99)), inputs="x",
                                      outputs="x")])
    if kind == "generator":
        return Pipeline(train_data=generator_dataset(), batch_size=4)
    raise ValueError(kind)


def epoch(pipeline: Pipeline, number: int, steps: Any = None) -> List[Dict[str, np.ndarray]]:
    with pipeline(mode="train", epoch=number, steps_per_epoch=steps) as loader:
        return [{key: np.asarray(value).copy() for key, value in batch.items()} for batch in loader]


def same(first: List[Dict[str, np.ndarray]], second: List[Dict[str, np.ndarray]]) -> bool:
    return len(first) == len(second) and all(
        a.keys() == b.keys() and all(np.array_equal(a[key], b[key]) for key in a) for a, b in zip(first, second))


@pytest.mark.parametrize("kind", ["batch", "batch_probability", "extend", "combined", "interleave", "siamese",
                                  "labeled_dir", "generator"])
@pytest.mark.parametrize("steps", [None, 7])
def test_resume_after_k_batches_continues_with_identical_batches(tmp_path, kind, steps):
    root = str(tmp_path / "files")
    np.random.seed(0)
    reference = build(kind, root)
    expected = epoch(reference, 1, steps) + epoch(reference, 2, steps)
    count = len(epoch(build(kind, root), 1, steps))
    assert count >= 3
    np.random.seed(0)
    interrupted = build(kind, root)
    with interrupted(mode="train", epoch=1, steps_per_epoch=steps) as loader:
        iterator = iter(loader)
        seen = [{key: np.asarray(value).copy() for key, value in next(iterator).items()} for _ in range(2)]
        checkpoint = interrupted.get_state()
        random_state = np.random.get_state()
    assert same(seen, expected[:2])

    np.random.seed(12345)  # a new process starts from other random state and builds everything again
    resumed = build(kind, root)
    resumed.set_state(checkpoint)
    np.random.set_state(random_state)
    rest = epoch(resumed, 1, steps) + epoch(resumed, 2, steps)
    assert same(seen + rest, expected)


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Any) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash("killed")


@pytest.fixture
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


def fit(directory: Any, kill_at: Any = None, kind: str = "batch") -> Dict[str, Any]:
    np.random.seed(0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 2)).astype(np.float32)
    y = (x @ np.array([[1.0], [-1.0]])).astype(np.float32)
    halves = [NumpyDataset({"x": x[:20], "y": y[:20]}), NumpyDataset({"x": x[20:], "y": y[20:]})]
    noise = LambdaOp(lambda v: v + np.random.normal(size=v.shape).astype(np.float32) * 0.1, inputs="x", outputs="x")
    if kind == "batch":
        pipeline = Pipeline(train_data=BatchDataset(halves, num_samples=[3, 1]), ops=[noise])
    else:  # 10 steps per epoch: 5 repetitions of (a batch of 2 from the first half, a batch of 2 from the second)
        pipeline = Pipeline(train_data=InterleaveDataset({"a": halves[0], "b": halves[1]}, pattern=["a", "b"]),
                            ops=[noise, Batch(batch_size=2, ds_id="a"), Batch(batch_size=2, ds_id="b")])
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    traces: List[Trace] = [KillAt(kill_at)]
    if directory is not None:
        traces.append(RestoreWizard(directory, frequency=1))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=None)
    estimator.fit()
    return {"W": model.W.copy(), "step": estimator.system.global_step}


@pytest.mark.parametrize("kind", ["batch", "interleave"])
@pytest.mark.parametrize("kill_at", [7, 13])
def test_killed_estimator_run_with_batch_or_interleave_datasets_resumes_bitwise(tmp_path, numpy_backend, kill_at,
                                                                                 kind):
    reference = fit(None, kind=kind)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        fit(directory, kill_at=kill_at, kind=kind)
    resumed = fit(directory, kind=kind)
    # 10 steps per epoch: max(ceil(20 / 3), ceil(10 / 1)) batches, or 5 repetitions of the pattern ["a", "b"]
    assert resumed["step"] == reference["step"] == 20
    np.testing.assert_array_equal(resumed["W"], reference["W"])
