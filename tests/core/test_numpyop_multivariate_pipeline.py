"""Augmentation chains in the Pipeline: repeatable under enable_deterministic, and exact across a mid-epoch resume."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np
import pytest

pytest.importorskip("albumentations")

import numpy_backend as nb  # noqa: E402
from fe_core.build import reset_build_count  # noqa: E402
from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.determinism import enable_deterministic  # noqa: E402
from fe_core.estimator import Estimator  # noqa: E402
from fe_core.network import make_network  # noqa: E402
from fe_core.op.numpyop import LambdaOp  # noqa: E402
from fe_core.op.numpyop.meta import OneOf, Sometimes  # noqa: E402
from fe_core.op.numpyop.multivariate import HorizontalFlip, PadIfNeeded, RandomCrop, Rotate  # noqa: E402
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402
from fe_core.trace import Trace  # noqa: E402
from fe_core.trace.io import RestoreWizard  # noqa: E402


def images(count: int = 40) -> np.ndarray:
    return np.random.default_rng(3).integers(0, 255, (count, 8, 8, 3)).astype(np.uint8)


def features(image: np.ndarray) -> np.ndarray:
    """Two numbers that change with every crop, flip and rotation of the image."""
    return np.array([image[0].mean() / 255.0, image[:, 0].mean() / 255.0], dtype=np.float32)


def augmentations() -> List[Any]:
    return [PadIfNeeded(min_height=10, min_width=10, border_mode=0, image_in="image", mode="train"),
            RandomCrop(height=8, width=8, image_in="image", mode="train"),
            Sometimes(HorizontalFlip(image_in="image", mode="train"), prob=0.5),
            OneOf(Rotate(limit=30, image_in="image", mode="train"), HorizontalFlip(image_in="image", mode="train")),
            LambdaOp(fn=features, inputs="image", outputs="x")]


def epoch_batches(seed: int) -> List[Dict[str, Any]]:
    enable_deterministic(seed)
    pipeline = Pipeline(train_data=NumpyDataset({"image": images(), "y": np.zeros((40, 1), np.float32)}),
                        batch_size=4, ops=augmentations())
    return pipeline.get_results(mode="train", epoch=1, num_steps=5, shuffle=True)


def test_enable_deterministic_repeats_the_augmented_batches():
    first, again, other = epoch_batches(11), epoch_batches(11), epoch_batches(12)
    assert len(first) == 5
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a["image"], b["image"])
        np.testing.assert_array_equal(a["x"], b["x"])
    assert any(not np.array_equal(a["image"], c["image"]) for a, c in zip(first, other))


def test_the_augmentations_are_random_per_sample():
    batch = epoch_batches(11)[0]
    unshuffled = images()
    augmented = 0
    for image in batch["image"]:
        augmented += not any(np.array_equal(image, original) for original in unshuffled)
    assert augmented >= 2


# ------------------------------------------------------------------------------------------- kill and resume
@pytest.fixture()
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    """Raises at the end of a given training step, like a killed process."""

    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def train(directory: Optional[str], kill_at: Optional[int] = None) -> Dict[str, Any]:
    """The user's script: everything built from scratch (a fresh process each time), then fit."""
    enable_deterministic(7)
    data = images()
    y = np.random.default_rng(4).normal(size=(40, 1)).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"image": data, "y": y}), batch_size=5, ops=augmentations())
    model = nb.build(2, 1, lr=0.1, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    traces: List[Trace] = [KillAt(kill_at)]
    if directory is not None:
        traces.append(RestoreWizard(directory, frequency="3s"))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=None)
    estimator.fit()
    return {"W": model.W.copy(), "b": model.b.copy(), "step": estimator.system.global_step}


@pytest.mark.parametrize("kill_at", [5, 11])
def test_a_run_killed_mid_epoch_resumes_to_identical_weights(tmp_path, numpy_backend, kill_at):
    reference = train(None)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(directory, kill_at=kill_at)  # checkpoints at steps 3 (epoch 1) and 9 (epoch 2): mid-epoch
    resumed = train(directory)
    assert resumed["step"] == reference["step"] == 16
    np.testing.assert_array_equal(resumed["W"], reference["W"])
    np.testing.assert_array_equal(resumed["b"], reference["b"])


def test_resume_depends_on_restoring_the_random_state(tmp_path, numpy_backend):
    """The check above is not vacuous: a different augmentation stream gives different weights."""
    reference = train(None)
    enable_deterministic(8)
    data = images()
    y = np.random.default_rng(4).normal(size=(40, 1)).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"image": data, "y": y}), batch_size=5, ops=augmentations())
    model = nb.build(2, 1, lr=0.1, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None).fit()
    assert not np.array_equal(model.W, reference["W"])
