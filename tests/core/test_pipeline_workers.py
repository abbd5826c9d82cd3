"""Pipeline worker processes (num_process): the same batches for every worker count, resume, faults, cleanup."""
from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from typing import Any, Dict, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp, NumpyOp, RemoveIf
from fe_core.op.numpyop.meta import Sometimes
from fe_core.op.numpyop.multivariate import HorizontalFlip, PadIfNeeded, RandomCrop
from fe_core.op.numpyop.univariate import ChannelTranspose, CoarseDropout, Normalize, Onehot
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.pipeline._workers import PipelineWorkerError
from fe_core.trace import Trace
from pipeline_layer_helpers import alive, interrupted_and_resumed, random_images, same


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")  # these tests' epochs are tiny on purpose


class Jitter(NumpyOp):
    """Draws from Python's random and numpy's global random state, as user ops do."""

    def forward(self, data, state):
        return data + np.float32(random.random() + np.random.rand())


def images(count: int = 48) -> NumpyDataset:
    rng = np.random.default_rng(0)
    return NumpyDataset({"x": rng.integers(0, 255, (count, 8, 8, 3), dtype=np.uint8),
                         "y": rng.integers(0, 10, (count,)), "z": np.zeros((count,), np.float32)})


def cifar_ops() -> List[NumpyOp]:
    return [Normalize(inputs="x", outputs="x", mean=(0.49, 0.48, 0.45), std=(0.25, 0.24, 0.26)),
            PadIfNeeded(min_height=12, min_width=12, image_in="x", image_out="x", border_mode=0),
            RandomCrop(8, 8, image_in="x", image_out="x"),
            Sometimes(HorizontalFlip(image_in="x", image_out="x", mode="train")),
            CoarseDropout(inputs="x", outputs="x", mode="train", max_holes=1, max_height=3, max_width=3),
            Jitter(inputs="z", outputs="z"),
            ChannelTranspose(inputs="x", outputs="x"),
            Onehot(inputs="y", outputs="y", mode="train", num_classes=10, label_smoothing=0.2)]


def run_epochs(pipeline: Pipeline, epochs=(1, 2), steps=None) -> List[Dict[str, np.ndarray]]:
    batches = []
    with pipeline.workers():
        for epoch in epochs:
            with pipeline(mode="train", epoch=epoch, steps_per_epoch=steps) as loader:
                batches += [{key: np.array(value) for key, value in batch.items()} for batch in loader]
    return batches


@pytest.mark.parametrize("steps", [None, 9], ids=["one-pass", "steps-repeat-the-data"])
def test_batches_are_bitwise_identical_for_0_1_and_2_worker_processes(steps):
    # Warm-up: the ops' libraries are imported here, not inside the first compared run (seen on a 16-core machine with
    # Python 3.12: a first import drew from Python's global `random`, changing only what the trainer draws after it).
    run_epochs(Pipeline(train_data=images(8), batch_size=8, ops=cifar_ops(), num_process=0), epochs=(1,))
    results = {}
    for num_process in (0, 1, 2):
        enable_deterministic(11)
        results[num_process] = run_epochs(Pipeline(train_data=images(), batch_size=8, ops=cifar_ops(),
                                                   num_process=num_process), steps=steps)
        results[num_process].append({"after": np.array([np.random.rand(), random.random()])})
    assert len(results[0]) == (13 if steps is None else 19)
    assert same(results[0], results[1]) and same(results[0], results[2])
    assert not np.array_equal(results[0][0]["x"], results[0][6]["x"])  # the augmentations do differ per batch


def test_filtered_samples_give_the_same_batches_with_workers():
    def build(num_process):
        return Pipeline(train_data=images(40), batch_size=6, num_process=num_process,
                        ops=[RemoveIf(fn=lambda y: y % 4 == 0, inputs="y"), Jitter(inputs="z", outputs="z")])

    enable_deterministic(5)
    expected = run_epochs(build(0))
    enable_deterministic(5)
    got = run_epochs(build(2))
    assert same(expected, got) and len(got) > 2


def test_workers_start_once_per_block_and_are_gone_after_it():
    pipeline = Pipeline(train_data=images(), batch_size=8, ops=[Jitter(inputs="z", outputs="z")], num_process=2)
    seen = []
    with pipeline.workers():
        for epoch in (1, 2, 3):
            with pipeline(mode="train", epoch=epoch) as loader:
                list(loader)
            seen.append(tuple(pipeline._worker_pool.pids()))
    assert len(set(seen)) == 1 and len(seen[0]) == 2
    assert pipeline._worker_pool is None
    for pid in seen[0]:
        assert not alive(pid)


def test_small_epochs_run_in_the_training_process(monkeypatch):
    monkeypatch.delenv("FE_PIPELINE_MIN_WORKER_SAMPLES")
    pipeline = Pipeline(train_data=images(), batch_size=8, ops=[Jitter(inputs="z", outputs="z")], num_process=2)
    with pipeline.workers():
        with pipeline(mode="train", epoch=1) as loader:
            list(loader)
        assert pipeline._worker_pool.pids() == []  # 48 samples: starting processes would cost more than it saves


class Explode(NumpyOp):
    def forward(self, data, state):
        if int(data) == 17:
            raise ZeroDivisionError("sample seventeen")
        return data


def test_an_error_in_a_worker_is_raised_with_the_in_process_context():
    def error_of(num_process):
        pipeline = Pipeline(train_data=NumpyDataset({"y": np.arange(40)}), batch_size=4, num_process=num_process,
                            ops=[Explode(inputs="y", outputs="y")])
        with pytest.raises(ZeroDivisionError, match="sample seventeen") as info:
            run_epochs(pipeline, epochs=(2,))
        return info.value

    local, remote = error_of(0), error_of(2)
    for error in (local, remote):
        notes = "\n".join(error.__notes__)
        assert "Explode(inputs=['y'], outputs=['y'])" in notes and "mode 'train' epoch 2 ds_id ''" in notes
        assert "sample index 17 of the dataset" in notes
    assert set(local.__notes__) < set(remote.__notes__)
    assert any("Pipeline worker" in note for note in remote.__notes__)
    assert "sample seventeen" in str(remote.__cause__)  # the worker's traceback


class Sleepy(NumpyOp):
    def forward(self, data, state):
        time.sleep(0.02)
        return data


def test_a_worker_killed_by_the_os_is_reported_not_waited_for():
    pipeline = Pipeline(train_data=NumpyDataset({"y": np.arange(400)}), batch_size=4, num_process=2,
                        ops=[Sleepy(inputs="y", outputs="y")])
    with pipeline.workers():
        with pipeline(mode="train", epoch=1) as loader:
            iterator = iter(loader)
            next(iterator)
            os.kill(pipeline._worker_pool.pids()[1], signal.SIGKILL)
            with pytest.raises(PipelineWorkerError, match="was killed by SIGKILL while preparing batches in mode "
                                                          "'train' epoch 1"):
                for _ in range(100):
                    next(iterator)


def test_a_value_that_cannot_leave_the_worker_is_named():
    pipeline = Pipeline(train_data=NumpyDataset({"y": np.arange(40)}), batch_size=4, num_process=1,
                        ops=[LambdaOp(fn=lambda y: (lambda: y), inputs="y", outputs="f")])
    with pytest.raises(TypeError, match="could not be sent from a worker process.*must be picklable"):
        run_epochs(pipeline, epochs=(1,))


def test_unpicklable_ops_with_a_spawn_start_fall_back_with_a_warning_naming_the_op(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_START_METHOD", "spawn")
    enable_deterministic(3)
    expected = run_epochs(Pipeline(train_data=images(), batch_size=8, num_process=0,
                                   ops=[LambdaOp(fn=lambda z: z + np.random.rand(), inputs="z", outputs="z")]))
    enable_deterministic(3)
    pipeline = Pipeline(train_data=images(), batch_size=8, num_process=2,
                        ops=[LambdaOp(fn=lambda z: z + np.random.rand(), inputs="z", outputs="z")])
    with pytest.warns(RuntimeWarning, match="op LambdaOp at position 0 cannot be pickled"):
        got = run_epochs(pipeline)
    assert same(expected, got)


def test_resume_mid_epoch_with_workers_gives_the_uninterrupted_batches():
    def build(num_process):
        return Pipeline(train_data=images(), batch_size=8, ops=cifar_ops(), num_process=num_process)

    enable_deterministic(2)
    expected = run_epochs(build(0))
    enable_deterministic(2)
    seen, resumed = interrupted_and_resumed(build)
    assert same(seen + run_epochs(resumed), expected)


# ---------------------------------------------------------------------------------------------------------- Estimator
@pytest.fixture
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Any) -> None:
        super().__init__(mode="train")
        self.step = step
        self.pids: List[int] = []

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_epoch_end(self, data) -> None:
        pool = getattr(self.system.pipeline, "_worker_pool", None)
        self.pids.append(tuple(pool.pids()) if pool is not None else ())

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash("killed")


def fit(num_process: int, directory: Any = None, kill_at: Any = None) -> Dict[str, Any]:
    from fe_core.trace.io import RestoreWizard
    enable_deterministic(4)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 2)).astype(np.float32)
    y = (x @ np.array([[1.0], [-1.0]])).astype(np.float32)
    noise = LambdaOp(lambda v: v + np.random.normal(size=v.shape).astype(np.float32) * 0.1, inputs="x", outputs="x")
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8, ops=[noise],
                        num_process=num_process)
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    kill = KillAt(kill_at)
    traces: List[Trace] = [kill]
    if directory is not None:
        traces.append(RestoreWizard(directory, frequency=1))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=None)
    estimator.fit()
    return {"W": model.W.copy(), "step": estimator.system.global_step, "pids": kill.pids}


def test_fit_with_workers_trains_exactly_as_in_process_and_starts_them_once(numpy_backend):
    reference = fit(0)
    with_workers = fit(2)
    np.testing.assert_array_equal(with_workers["W"], reference["W"])
    assert with_workers["step"] == reference["step"] == 24
    pids = with_workers["pids"]
    assert len(pids) == 3 and len(set(pids)) == 1 and len(pids[0]) == 2
    assert not any(alive(pid) for pid in pids[0])


def test_fit_killed_mid_epoch_resumes_bitwise_with_workers(tmp_path, numpy_backend):
    reference = fit(0)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        fit(2, directory, kill_at=13)
    assert not multiprocessing.active_children()  # an exception in the step stopped the workers
    resumed = fit(2, directory)
    assert resumed["step"] == 24
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_image_decoding_runs_in_the_workers_with_the_in_process_result(tmp_path):
    from fe_core.op.numpyop.univariate import Minmax, ReadImage
    paths = random_images(tmp_path, 24, (6, 5, 3), seed=3, alternate_jpg=True)

    def build(num_process):
        return Pipeline(train_data=NumpyDataset({"x": np.array(paths), "y": np.arange(24)}), batch_size=5,
                        ops=[ReadImage(inputs="x", outputs="x"), Minmax(inputs="x", outputs="x")],
                        num_process=num_process)

    np.random.seed(1)
    expected = run_epochs(build(0))
    np.random.seed(1)
    pipeline = build(2)
    pids = []
    with pipeline.workers():
        got = run_epochs(pipeline)
        pids = pipeline._worker_pool.pids()
    assert same(expected, got) and expected[0]["x"].shape == (5, 6, 5, 3)
    assert len(pids) == 2  # decoding file after file is worth the workers even with no per-sample op


def test_albumentations_ops_pickle_for_spawned_workers_and_still_draw_from_numpy():
    import pickle
    op = Sometimes(HorizontalFlip(image_in="x", image_out="x"))
    image = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    np.random.seed(3)
    expected = [op.forward([image], {})[0].copy() for _ in range(6)]
    copy = pickle.loads(pickle.dumps(op))
    np.random.seed(3)
    assert all(np.array_equal(a, copy.forward([image], {})[0]) for a in expected)
