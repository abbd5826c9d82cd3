"""Patterns of FastEstimator's application scripts that fe must run (small equivalents written for fe, numpy only)."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import Delete, LambdaOp
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def _data(n: int = 16) -> NumpyDataset:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return NumpyDataset({"x": x, "y": x.sum(axis=1, keepdims=True), "keypoint": rng.random((n, 2)),
                         "mask_left": rng.random((n, 3))})


def _fit(pipeline: Pipeline) -> Estimator:
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    estimator = Estimator(pipeline, network, epochs=1, log_steps=None, train_steps_per_epoch=2,
                          eval_steps_per_epoch=1)
    estimator.fit()
    return estimator


def test_a_pipeline_deleting_a_key_nobody_reads_runs_in_warmup_and_training() -> None:
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="x"), Delete("keypoint")])
    assert sorted(pipeline.get_results()) == ["mask_left", "x", "y"]
    _fit(pipeline)


def test_a_deleted_key_read_by_an_op_nobody_needs_is_not_demanded() -> None:
    """An op whose outputs nobody reads is skipped; the key it read, deleted afterwards, is never fetched."""
    reads: List[int] = []
    unused = LambdaOp(fn=lambda mask: reads.append(1) or mask.sum(axis=-1), inputs="mask_left", outputs="area")
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[unused, Delete(["mask_left", "area"]), Delete("keypoint", mode="train")])
    _fit(pipeline)
    with pipeline(mode="train", epoch=1, ds_id="", shuffle=False, steps_per_epoch=1,
                  output_keys={"x", "y"}, warmup=True) as loader:
        batch: Dict[str, Any] = next(iter(loader))
    assert sorted(batch) == ["x", "y"] and not reads


def test_a_key_read_before_its_delete_is_still_fetched() -> None:
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[LambdaOp(fn=lambda x, k: x + k, inputs=("x", "keypoint"), outputs="x"),
                             Delete(["keypoint", "mask_left"])])
    with pipeline(mode="train", epoch=1, ds_id="", shuffle=False, steps_per_epoch=1,
                  output_keys={"x", "y"}, warmup=True) as loader:
        batch = next(iter(loader))
    data = _data()
    np.testing.assert_allclose(batch["x"], data["x"][:4] + data["keypoint"][:4])
    _fit(pipeline)


def test_a_network_delete_of_a_pipeline_key_runs_in_warmup_and_training() -> None:
    from fe_core.op.tensorop import Delete as TensorDelete
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"), TensorDelete("keypoint"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4, ops=[Delete("mask_left")])
    Estimator(pipeline, network, epochs=1, log_steps=None, train_steps_per_epoch=2, eval_steps_per_epoch=1).fit()


# ------------------------------------------------------------------ flips of volumes (UNet 3D)
def _volume(shape=(8, 6, 3, 5)) -> np.ndarray:
    return np.random.default_rng(1).random(shape).astype(np.float32)


@pytest.mark.parametrize("op_name,expected", [("VerticalFlip", lambda v: v[::-1]),
                                               ("HorizontalFlip", lambda v: v[:, ::-1])])
def test_flips_move_volumes_and_their_masks(op_name: str, expected: Any) -> None:
    from fe_core.op.numpyop import multivariate
    volume, mask = _volume(), (_volume((8, 6, 3, 6)) > 0.5).astype(np.uint8)  # more than 4 channels
    image_out, mask_out = getattr(multivariate, op_name)(image_in="x", mask_in="y").forward([volume, mask], {})
    np.testing.assert_array_equal(image_out, expected(volume))
    np.testing.assert_array_equal(mask_out, expected(mask))
    assert image_out.flags.c_contiguous and mask_out.dtype == np.uint8


def test_flip_of_a_volume_draws_what_it_draws_for_an_image_of_that_size() -> None:
    from fe_core.op.numpyop.multivariate import Flip
    volume = _volume()
    op = Flip(image_in="x")
    for seed in range(6):
        np.random.seed(seed)
        [moved] = op.forward([volume], {})
        np.random.seed(seed)
        [plain] = op.forward([np.ascontiguousarray(volume[..., 0, 0])], {})
        np.testing.assert_array_equal(moved[..., 0, 0], plain)
        assert moved.shape == volume.shape


def test_flips_of_ordinary_images_are_albumentations_results() -> None:
    import albumentations as A
    from fe_core.op.numpyop.multivariate import HorizontalFlip, VerticalFlip
    image = (np.random.default_rng(2).random((7, 5, 3)) * 255).astype(np.uint8)
    assert np.array_equal(VerticalFlip(image_in="x").forward([image], {})[0], A.VerticalFlip(p=1)(image=image)["image"])
    assert np.array_equal(HorizontalFlip(image_in="x").forward([image], {})[0],
                          A.HorizontalFlip(p=1)(image=image)["image"])


def test_a_pipeline_of_volumes_with_sometimes_flips_runs() -> None:
    from fe_core.op.numpyop.meta import Sometimes
    from fe_core.op.numpyop.multivariate import HorizontalFlip, VerticalFlip
    rng = np.random.default_rng(0)
    data = NumpyDataset({"image": rng.random((4, 8, 8, 3, 6)).astype(np.float32),
                         "label": rng.integers(0, 2, (4, 8, 8, 3, 6)).astype(np.uint8)})
    pipeline = Pipeline(train_data=data, batch_size=2,
                        ops=[Sometimes(VerticalFlip(image_in="image", mask_in="label", mode="train")),
                             Sometimes(HorizontalFlip(image_in="image", mask_in="label", mode="train"))])
    batch = pipeline.get_results()
    assert tuple(batch["image"].shape) == (2, 8, 8, 3, 6) and tuple(batch["label"].shape) == (2, 8, 8, 3, 6)
