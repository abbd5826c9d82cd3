"""TensorFlow: MixUpBatch, CutMixBatch and the meta TensorOps inside the traced step (tf.cond, tf.switch_case,
tf.while_loop): values, determinism under enable_deterministic, exact replay from a saved random state."""
from __future__ import annotations

from typing import Dict, List

import keras
import numpy as np
import pytest

from fe_core.build import build
from fe_core.determinism import enable_deterministic
from fe_core.framework import get_backend
from fe_core.network import make_network
from fe_core.op.tensorop import (CrossEntropy, CutMixBatch, Fuse, LambdaOp, MixUpBatch, ModelOp, OneOf, Repeat,
                                 Sometimes, TensorOp, UpdateOp)


def _images() -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.uniform(size=(6, 8, 8, 1)).astype(np.float32),
            "y": np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)]}


def _steps(ops: List[TensorOp], batch: Dict[str, np.ndarray], steps: int = 3,
           eager: bool = False) -> List[Dict[str, np.ndarray]]:
    network = make_network(ops=ops, default_backend="tf")
    results = []
    with network(mode="train", epoch=1, eager=eager):
        for _ in range(steps):
            result = network.run_step(dict(batch))
            results.append({key: np.array(result[key]) for key in result})
    if not eager:
        assert network.trace_count == 1  # one trace serves every step
    return results


def test_mixup_mixes_each_sample_with_the_previous_one() -> None:
    batch = _images()
    (shared, ) = _steps([MixUpBatch(inputs=("x", "y"), outputs=("x", "y"), shared_beta=True)], batch, 1)
    ratios = (shared["x"] - np.roll(batch["x"], 1, 0)) / (batch["x"] - np.roll(batch["x"], 1, 0))
    lam = np.nanmedian(ratios)
    assert np.nanstd(ratios) < 1e-3 and 0.0 <= lam <= 1.0
    np.testing.assert_allclose(shared["y"], lam * batch["y"] + (1 - lam) * np.roll(batch["y"], 1, 0), atol=1e-4)
    (per_sample, ) = _steps([MixUpBatch(inputs=("x", "y"), outputs=("x", "y"))], batch, 1)
    np.testing.assert_allclose(per_sample["y"].sum(axis=-1), 1.0, rtol=1e-6)
    sample_lams = [np.nanmedian((per_sample["x"][i] - np.roll(batch["x"], 1, 0)[i]) /
                                (batch["x"][i] - np.roll(batch["x"], 1, 0)[i])) for i in range(6)]
    assert np.std(sample_lams) > 1e-3  # one lam per sample


def test_cutmix_pastes_one_box_and_mixes_labels_by_its_area() -> None:
    batch = _images()
    for result in _steps([CutMixBatch(inputs=("x", "y"), outputs=("x", "y"))], batch, 4):
        pasted = np.all(result["x"] == np.roll(batch["x"], 1, axis=0), axis=-1)[0]
        kept = np.all(result["x"] == batch["x"], axis=-1)[0]
        assert np.all(pasted | kept)
        rows, cols = np.nonzero(pasted & ~kept)
        area = 0 if rows.size == 0 else (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
        assert rows.size == area
        lam = 1.0 - pasted.sum() / 64.0
        np.testing.assert_allclose(result["y"], lam * batch["y"] + (1 - lam) * np.roll(batch["y"], 1, 0),
                                   rtol=1e-5, atol=1e-6)


def _random_ops() -> List[TensorOp]:
    return [MixUpBatch(inputs=("x", "y"), outputs=("x1", "y1")),
            CutMixBatch(inputs=("x", "y"), outputs=("x2", "y2")),
            LambdaOp(fn=lambda x: x, inputs="x", outputs="x3"),
            Sometimes(LambdaOp(fn=lambda x: x * 0, inputs="x", outputs="x3"), prob=0.5),
            OneOf(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x4"),
                  LambdaOp(fn=lambda x: x - 1, inputs="x", outputs="x4"))]


def test_random_ops_repeat_under_enable_deterministic() -> None:
    batch = _images()
    enable_deterministic(7)
    first = _steps(_random_ops(), batch, 4)
    enable_deterministic(7)
    second = _steps(_random_ops(), batch, 4)
    for a, b in zip(first, second):
        for key in ("x1", "y1", "x2", "y2", "x3", "x4"):
            np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(first[0]["x1"], first[1]["x1"])


def test_restoring_the_random_state_replays_the_draws() -> None:
    enable_deterministic(3)
    batch = _images()
    network = make_network(ops=_random_ops(), default_backend="tf")
    backend = get_backend("tf")
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
        saved = backend.get_rng_state()
        expected = [{k: np.array(v) for k, v in network.run_step(dict(batch)).items()} for _ in range(3)]
        backend.set_rng_state(saved)
        replayed = [{k: np.array(v) for k, v in network.run_step(dict(batch)).items()} for _ in range(3)]
    for a, b in zip(expected, replayed):
        for key in ("x1", "x2", "x3", "x4"):
            np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("eager", [False, True])
def test_sometimes_and_one_of_follow_their_probabilities(eager: bool) -> None:
    batch = {"x": np.ones((2, 2), np.float32)}
    ops = [Sometimes(LambdaOp(fn=lambda x: x * 3, inputs="x", outputs="x"), prob=0.3),
           OneOf(*[LambdaOp(fn=lambda x, v=value: x + v, inputs="x", outputs="z") for value in (1.0, 2.0, 3.0)],
                 probs=[0.1, 0.0, 0.9])]
    results = _steps(ops, batch, 100, eager)
    ran = [float(result["x"][0, 0]) == 3.0 for result in results]
    assert all(float(result["x"][0, 0]) in (1.0, 3.0) for result in results)
    assert 0.15 < np.mean(ran) < 0.45
    added = [float(result["z"][0, 0] - result["x"][0, 0]) for result in results]
    assert 2.0 not in added and 0.75 < added.count(3.0) / 100 < 0.99


@pytest.mark.parametrize("eager", [False, True])
def test_repeat_static_and_dynamic(eager: bool) -> None:
    batch = {"z": np.zeros((1, ), np.float32)}
    assert float(_steps([Repeat(LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z"), repeat=5)], batch, 1,
                        eager)[0]["z"][0]) == 5.0
    dynamic = Repeat(LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z"), repeat=lambda z: z < 6.5)
    assert float(_steps([dynamic], batch, 1, eager)[0]["z"][0]) == 7.0
    limited = Repeat(LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z"), repeat=lambda z: z < 100, max_iter=4)
    assert float(_steps([limited], batch, 1, eager)[0]["z"][0]) == 4.0


def test_fuse_runs_a_model_loss_and_update_as_one_op() -> None:
    keras.utils.set_random_seed(0)
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4, )), keras.layers.Dense(3, activation="softmax")]),
                  optimizer_fn="sgd")
    fused = Fuse([ModelOp(model=model, inputs="x", outputs="y_pred", mode="train"),
                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce", mode="train"),
                  UpdateOp(model=model, loss_name="ce")])
    rng = np.random.default_rng(0)
    batch = {"x": rng.normal(size=(4, 4)).astype(np.float32), "y": rng.integers(0, 3, 4)}
    before = [v.numpy().copy() for v in model.trainable_variables]
    network = make_network(ops=[fused])
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    assert np.isfinite(result["ce"])
    assert all(not np.array_equal(a, v.numpy()) for a, v in zip(before, model.trainable_variables))


def test_mixup_feeds_a_mixed_precision_model() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(),
                                                     keras.layers.Dense(3),
                                                     keras.layers.Activation("softmax", dtype="float32")]),
                  optimizer_fn="adam", mixed_precision=True)
    network = make_network(ops=[MixUpBatch(inputs=("x", "y"), outputs=("x", "y")),
                                ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    with network(mode="train", epoch=1):
        result = network.run_step(dict(_images()))
    assert np.isfinite(result["ce"])
