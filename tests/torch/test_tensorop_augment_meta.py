"""Torch: MixUpBatch, CutMixBatch and the meta TensorOps (Sometimes, OneOf, Repeat, Fuse): values, determinism
under enable_deterministic, and exact replay from a saved random state."""
from __future__ import annotations

from typing import Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.determinism import enable_deterministic
from fe_core.framework import get_backend
from fe_core.network import make_network
from fe_core.op.tensorop import (CrossEntropy, CutMixBatch, Fuse, LambdaOp, MixUpBatch, ModelOp, OneOf, Repeat,
                                 Sometimes, TensorOp, UpdateOp)


def _images() -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.uniform(size=(6, 1, 8, 8)).astype(np.float32),
            "y": np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)]}


def _steps(ops: List[TensorOp], batch: Dict[str, np.ndarray], steps: int = 3) -> List[Dict[str, np.ndarray]]:
    network = make_network(ops=ops, default_backend="torch")
    results = []
    with network(mode="train", epoch=1):
        for _ in range(steps):
            result = network.run_step(dict(batch))
            results.append({key: np.array(result[key]) for key in result})
    return results


def test_mixup_mixes_each_sample_with_the_previous_one() -> None:
    batch = _images()
    (result, ) = _steps([MixUpBatch(inputs=("x", "y"), outputs=("x_mix", "y_mix"), shared_beta=False)], batch, 1)
    lam = result["y_mix"][np.arange(6), batch["y"].argmax(-1)]  # not exact when neighbours share a class
    rolled_y = np.roll(batch["y"], 1, axis=0)
    # recover each sample's lam from the label mix where the two classes differ, and check the images with it
    for index in range(6):
        if batch["y"][index].argmax() == rolled_y[index].argmax():
            continue
        expected = lam[index] * batch["x"][index] + (1 - lam[index]) * np.roll(batch["x"], 1, axis=0)[index]
        np.testing.assert_allclose(result["x_mix"][index], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["y_mix"].sum(axis=-1), 1.0, rtol=1e-6)
    (shared, ) = _steps([MixUpBatch(inputs=("x", "y"), outputs=("x", "y"), shared_beta=True)], batch, 1)
    ratios = (shared["x"] - np.roll(batch["x"], 1, 0)) / (batch["x"] - np.roll(batch["x"], 1, 0))
    assert np.nanstd(ratios) < 1e-3  # one lam for the whole batch
    with pytest.raises(ValueError, match="alpha"):
        MixUpBatch(inputs=("x", "y"), outputs=("x", "y"), alpha=0.0)
    with pytest.raises(ValueError, match="images, labels"):
        MixUpBatch(inputs="x", outputs="x")


def test_cutmix_pastes_one_box_and_mixes_labels_by_its_area() -> None:
    batch = _images()
    for result in _steps([CutMixBatch(inputs=("x", "y"), outputs=("x", "y"))], batch, 4):
        pasted = np.all(result["x"] == np.roll(batch["x"], 1, axis=0), axis=1)[0]  # (8, 8) where the box is
        kept = np.all(result["x"] == batch["x"], axis=1)[0]
        assert np.all(pasted | kept)
        rows, cols = np.nonzero(pasted & ~kept)
        area = 0 if rows.size == 0 else (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
        assert rows.size == area  # a rectangle
        lam = 1.0 - pasted.sum() / 64.0
        expected = lam * batch["y"] + (1 - lam) * np.roll(batch["y"], 1, axis=0)
        np.testing.assert_allclose(result["y"], expected, rtol=1e-5, atol=1e-6)


def test_random_ops_repeat_under_enable_deterministic() -> None:
    batch = _images()

    def ops() -> List[TensorOp]:
        return [MixUpBatch(inputs=("x", "y"), outputs=("x1", "y1")),
                CutMixBatch(inputs=("x", "y"), outputs=("x2", "y2")),
                LambdaOp(fn=lambda x: x, inputs="x", outputs="x3"),
                Sometimes(LambdaOp(fn=lambda x: x * 0, inputs="x", outputs="x3"), prob=0.5),
                OneOf(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x4"),
                      LambdaOp(fn=lambda x: x - 1, inputs="x", outputs="x4"))]

    enable_deterministic(7)
    first = _steps(ops(), batch, 4)
    enable_deterministic(7)
    second = _steps(ops(), batch, 4)
    for a, b in zip(first, second):
        for key in ("x1", "y1", "x2", "y2", "x3", "x4"):
            np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(first[0]["x1"], first[1]["x1"])  # but each step draws anew


def test_restoring_the_random_state_replays_the_draws() -> None:
    batch = _images()
    network = make_network(ops=[MixUpBatch(inputs=("x", "y"), outputs=("x1", "y1")),
                                Sometimes(LambdaOp(fn=lambda x: x * 0, inputs="x", outputs="x"), prob=0.5)],
                           default_backend="torch")
    backend = get_backend("torch")
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
        saved = backend.get_rng_state()
        expected = [dict(network.run_step(dict(batch))) for _ in range(3)]
        backend.set_rng_state(saved)
        replayed = [dict(network.run_step(dict(batch))) for _ in range(3)]
    for a, b in zip(expected, replayed):
        np.testing.assert_array_equal(np.asarray(a["x1"]), np.asarray(b["x1"]))
        np.testing.assert_array_equal(np.asarray(a["x"]), np.asarray(b["x"]))


def test_sometimes_runs_about_prob_of_the_time_and_passes_through_otherwise() -> None:
    batch = {"x": np.ones((2, 2), np.float32)}
    results = _steps([Sometimes(LambdaOp(fn=lambda x: x * 3, inputs="x", outputs="x"), prob=0.3)], batch, 200)
    ran = [float(result["x"][0, 0]) == 3.0 for result in results]
    assert all(float(result["x"][0, 0]) in (1.0, 3.0) for result in results)
    assert 0.2 < np.mean(ran) < 0.4
    always = _steps([Sometimes(LambdaOp(fn=lambda x: x * 3, inputs="x", outputs="x"), prob=1.0)], batch, 1)
    assert float(always[0]["x"][0, 0]) == 3.0
    with pytest.raises(ValueError, match="prob"):
        Sometimes(LambdaOp(fn=lambda x: x, inputs="x", outputs="x"), prob=1.5)


def test_one_of_follows_its_probabilities() -> None:
    batch = {"x": np.zeros((1, ), np.float32)}
    op = OneOf(*[LambdaOp(fn=lambda x, v=value: x + v, inputs="x", outputs="x") for value in (1.0, 2.0, 3.0)],
               probs=[0.1, 0.0, 0.9])
    picks = [float(result["x"][0]) for result in _steps([op], batch, 200)]
    assert 2.0 not in picks and 0.8 < picks.count(3.0) / 200 < 0.97
    with pytest.raises(ValueError, match="share inputs"):
        OneOf(LambdaOp(fn=lambda x: x, inputs="x", outputs="x"), LambdaOp(fn=lambda x: x, inputs="x", outputs="z"))
    with pytest.raises(ValueError, match="probs"):
        OneOf(LambdaOp(fn=lambda x: x, inputs="x", outputs="x"), probs=[0.5])


def test_repeat_static_and_dynamic() -> None:
    add_one = LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z")
    ops = [LambdaOp(fn=lambda: torch.tensor(0.0), outputs="z"), Repeat(add_one, repeat=5)]
    assert float(_steps(ops, {}, 1)[0]["z"]) == 5.0
    ops = [LambdaOp(fn=lambda: torch.tensor(0.0), outputs="z"),
           Repeat(LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z"), repeat=lambda z: z < 6.5)]
    assert float(_steps(ops, {}, 1)[0]["z"]) == 7.0
    ops = [LambdaOp(fn=lambda: torch.tensor(0.0), outputs="z"),
           Repeat(LambdaOp(fn=lambda z: z + 1, inputs="z", outputs="z"), repeat=lambda z: z < 100, max_iter=4)]
    assert float(_steps(ops, {}, 1)[0]["z"]) == 4.0
    with pytest.raises(ValueError, match="repeat"):
        Repeat(add_one, repeat=0)


def test_fuse_runs_a_model_loss_and_update_as_one_op() -> None:
    torch.manual_seed(0)
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Softmax(dim=-1)),
                  optimizer_fn="sgd")
    fused = Fuse([ModelOp(model=model, inputs="x", outputs="y_pred", mode="train"),
                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce", mode="train"),
                  UpdateOp(model=model, loss_name="ce")])
    assert fused.inputs == ["x", "y"] and fused.outputs == ["y_pred", "ce"]
    assert fused.get_fe_models() == {model} and fused.get_fe_loss_keys() == {"ce"}
    rng = np.random.default_rng(0)
    batch = {"x": rng.normal(size=(4, 4)).astype(np.float32), "y": rng.integers(0, 3, 4)}
    before = [p.detach().clone() for p in model.parameters()]
    network = make_network(ops=[fused])
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    assert np.isfinite(result["ce"])
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    with pytest.raises(ValueError, match="share one mode"):
        Fuse([LambdaOp(fn=lambda x: x, inputs="x", outputs="y", mode="train"),
              LambdaOp(fn=lambda x: x, inputs="x", outputs="y")])


def test_mixup_and_cutmix_under_autocast_mixed_precision() -> None:
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3),
                                                       torch.nn.Softmax(dim=-1)),
                  optimizer_fn="adam", mixed_precision=True)
    network = make_network(ops=[MixUpBatch(inputs=("x", "y"), outputs=("x", "y")),
                                CutMixBatch(inputs=("x", "y"), outputs=("x", "y")),
                                ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    with network(mode="train", epoch=1):
        result = network.run_step(dict(_images()))
    assert np.isfinite(result["ce"])
