"""`fe.backend` on torch tensors: the shared value table, gradients through the functions, autocast, the model
functions on fe-built models, conversions and random tensors."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import fe_core.backend as fb
from fe_core.build import build
from torch_helpers import requires_gpu


def _load_cases() -> Any:
    name = "fe_backend_cases"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "core" / "backend_cases.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


cases = _load_cases()
TORCH_CASES = cases.cases_for("first")


def to_torch(value: Any) -> Any:
    return cases.convert_arrays(value, torch.from_numpy)


def to_numpy(value: Any) -> np.ndarray:
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


@pytest.mark.parametrize("case", TORCH_CASES, ids=[cases.case_id(case) for case in TORCH_CASES])
def test_torch_values_match_the_reference(case: Any) -> None:
    result = getattr(fb, case.function)(*to_torch(case.args), **case.kwargs)
    if case.function != "check_nan":
        assert isinstance(result, torch.Tensor)
    np.testing.assert_allclose(to_numpy(result).astype(np.float64), np.asarray(case.expected, dtype=np.float64),
                               atol=case.atol, rtol=1e-4)
    if case.expected_dtype:
        assert result.dtype == getattr(torch, case.expected_dtype)


@pytest.mark.parametrize("function, args", [
    ("reduce_mean", ()), ("reduce_sum", ()), ("reduce_max", ()), ("reduce_std", ()), ("exp", ()), ("abs", ()),
    ("tensor_sqrt", ()), ("zscore", ()), ("iwd", ()), ("lambertw", ()), ("clip_by_value", (0.2, 0.8)),
    ("maximum", (0.5,)), ("pow", (2,)), ("normalize", (0.5, 0.25, 1.0)), ("roll", (1, 0)), ("flip", ([1],)),
])
def test_gradients_flow_through_tensor_functions(function: str, args: tuple) -> None:
    x = torch.tensor([[0.3, 0.6], [0.9, 0.45]], requires_grad=True)
    out = getattr(fb, function)(x, *args)
    weights = torch.tensor([[1.0, 2.0], [3.0, 5.0]])  # not a plain sum: z-scores and iwd rows sum to constants
    (gradient,) = torch.autograd.grad((out * weights).sum(), x)
    assert gradient.shape == x.shape and torch.isfinite(gradient).all() and gradient.abs().sum() > 0


@pytest.mark.parametrize("loss, kwargs", [
    ("mean_squared_error", {}), ("l1_loss", {}), ("huber", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.5}),
    ("hinge", {}), ("focal_loss", {}), ("binary_crossentropy", {}),
])
def test_gradients_flow_through_losses(loss: str, kwargs: dict) -> None:
    pred = torch.tensor([[0.2, 0.7], [0.6, 0.3]], requires_grad=True)
    true = torch.tensor([[0, 1], [1, 0]])
    args = (pred, true) if loss == "binary_crossentropy" else (true, pred)
    value = getattr(fb, loss)(*args, **kwargs)
    (gradient,) = torch.autograd.grad(value.sum(), pred)
    assert torch.isfinite(gradient).all() and gradient.abs().sum() > 0


def test_crossentropy_from_logits_gradient_is_softmax_minus_label() -> None:
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)
    labels = torch.tensor([1, 2])
    for loss in (fb.sparse_categorical_crossentropy(logits, labels, from_logits=True),
                 fb.categorical_crossentropy(logits, torch.nn.functional.one_hot(labels, 3), from_logits=True)):
        (gradient,) = torch.autograd.grad(loss, logits)
        expected = (torch.softmax(logits, dim=1) - torch.nn.functional.one_hot(labels, 3)) / 2
        torch.testing.assert_close(gradient, expected.detach())


def test_crossentropy_uses_axis_1_for_classes_of_dense_predictions() -> None:
    probs = torch.softmax(torch.randn(2, 3, 4, 4), dim=1)  # (batch, classes, h, w)
    labels = torch.randint(0, 3, (2, 4, 4))
    loss = fb.sparse_categorical_crossentropy(probs, labels, average_loss=False)
    assert loss.shape == (2, 4, 4)
    expected = -torch.log(probs.gather(1, labels[:, None]))[:, 0]
    torch.testing.assert_close(loss, expected)
    categorical = fb.categorical_crossentropy(probs, torch.nn.functional.one_hot(labels, 3).permute(0, 3, 1, 2),
                                              average_loss=False)
    torch.testing.assert_close(categorical, expected)


def test_losses_of_half_precision_predictions_are_float32() -> None:
    pred = torch.tensor([[0.2, 0.8], [0.6, 0.4]], dtype=torch.bfloat16)
    true = torch.tensor([1, 0])
    assert fb.sparse_categorical_crossentropy(pred, true).dtype == torch.float32
    assert fb.mean_squared_error(torch.ones(2, 2), pred).dtype == torch.float32
    assert fb.dice_score(pred, torch.ones(2, 2)).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = torch.nn.Linear(3, 2)(torch.ones(4, 3))
        assert logits.dtype == torch.bfloat16
        assert fb.sparse_categorical_crossentropy(logits, torch.tensor([0, 1, 0, 1]), from_logits=True).dtype \
            == torch.float32


def test_get_gradient_single_list_and_higher_order() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    torch.testing.assert_close(fb.get_gradient(y, x), torch.tensor([2.0, 4.0, 6.0]))
    first = fb.get_gradient(y, [x], higher_order=True)
    assert isinstance(first, list) and first[0].requires_grad
    torch.testing.assert_close(fb.get_gradient(first[0], x), torch.tensor([2.0, 2.0, 2.0]))
    with pytest.raises(RuntimeError):
        fb.get_gradient(fb.get_gradient(x * x, x), x)  # a first-order gradient has no graph
    unused = torch.tensor(1.0, requires_grad=True)
    assert fb.get_gradient((x * 2).sum(), [x, unused])[1] is None


def test_watch_makes_a_tensor_require_gradients() -> None:
    x = torch.ones((3, 1, 2, 2))
    watched = fb.watch(x)
    assert watched is x and x.requires_grad
    torch.testing.assert_close(fb.get_gradient(fb.reduce_sum(watched * 3.0), watched), torch.full_like(x, 3.0))


def _linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5), torch.nn.Linear(4, 2))


def test_feed_forward_converts_numpy_inputs_and_sets_the_mode() -> None:
    model = build(_linear, "sgd")
    out = fb.feed_forward(model, np.ones((5, 3), dtype="float32"), training=False)
    assert out.shape == (5, 2) and not model.training
    again = fb.feed_forward(model, torch.ones((5, 3)), training=False)
    torch.testing.assert_close(out, again)
    fb.feed_forward(model, torch.ones((5, 3)))
    assert model.training

    class TwoInputs(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a - b
    torch.testing.assert_close(fb.feed_forward(TwoInputs(), torch.ones(2), torch.ones(2)), torch.zeros(2))


def test_update_model_applies_an_sgd_step_and_can_be_deferred() -> None:
    model = build(_linear, "sgd")
    x, y = torch.ones((4, 3)), torch.tensor([0, 1, 0, 1])
    loss = fb.sparse_categorical_crossentropy(fb.feed_forward(model, x, training=False), y, from_logits=True)
    params = [p for p in model.parameters() if p.requires_grad]
    gradients = fb.get_gradient(loss, params)
    before = [p.detach().clone() for p in params]
    deferred: dict = {}
    fb.update_model(model, gradients, defer=True, deferred=deferred)
    assert list(deferred) == ["model"] and all(torch.equal(p, b) for p, b in zip(params, before))
    deferred["model"][0]()
    for parameter, old, gradient in zip(params, before, gradients):
        torch.testing.assert_close(parameter.detach(), old - 0.01 * gradient)
        assert parameter.grad is None
    with pytest.raises(ValueError, match="gradients"):
        fb.update_model(model, gradients[:1])
    with pytest.raises(AssertionError, match="current_optimizer"):
        fb.update_model(_linear(), gradients)


def test_learning_rates() -> None:
    model = build(_linear, "adam")
    assert fb.get_lr(model) == pytest.approx(0.001)
    fb.set_lr(model, 0.8, weight_decay=0.1)
    assert fb.get_lr(model) == pytest.approx(0.8)
    assert model.current_optimizer.param_groups[0]["weight_decay"] == 0.1
    with pytest.raises(ValueError):
        fb.get_lr(build(_linear, None))


def test_save_and_load_model_with_optimizer(tmp_path: Path) -> None:
    model = build(_linear, "adam", model_name="net")
    loss = fb.reduce_sum(fb.feed_forward(model, torch.ones((2, 3))))
    fb.update_model(model, fb.get_gradient(loss, list(model.parameters())))
    path = fb.save_model(model, str(tmp_path / "out"), model_name="test", save_optimizer=True)
    assert path == str(tmp_path / "out" / "test.pt") and model.model_name == "net"
    assert sorted(os.listdir(tmp_path / "out")) == ["test.pt", "test_opt.pt"]
    fresh = build(_linear, "adam", model_name="other")
    with torch.no_grad():
        for parameter in fresh.parameters():
            parameter.add_(1.0)
    fb.load_model(fresh, path, load_optimizer=True)
    for mine, theirs in zip(model.state_dict().values(), fresh.state_dict().values()):
        torch.testing.assert_close(mine, theirs)
    assert fresh.current_optimizer.state_dict()["state"][0]["step"] == 1
    assert fresh.model_name == "other"
    with pytest.raises(ValueError, match="only available for TensorFlow"):
        fb.save_model(model, str(tmp_path), save_architecture=True)
    with pytest.raises(FileNotFoundError):
        fb.load_model(fresh, str(tmp_path / "missing.pt"))


def test_load_model_strips_data_parallel_prefixes(tmp_path: Path) -> None:
    model = _linear()
    torch.save({f"module.{key}": value for key, value in model.state_dict().items()}, tmp_path / "dp.pt")
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5), torch.nn.Linear(4, 2))
    fb.load_model(fresh, str(tmp_path / "dp.pt"))
    torch.testing.assert_close(fresh[0].weight, model[0].weight)


def test_l2_regularization_is_half_the_squared_norm_times_beta() -> None:
    model = build(_linear, "sgd")
    value = fb.l2_regularization(model, beta=0.1)
    expected = 0.1 * sum(float((p.detach()**2).sum()) for p in model.parameters()) / 2
    assert float(value.detach()) == pytest.approx(expected, rel=1e-5)
    (gradient,) = torch.autograd.grad(value, [model[0].weight])
    torch.testing.assert_close(gradient, 0.1 * model[0].weight.detach())


def test_conversions_between_numpy_and_torch() -> None:
    data = {"x": np.ones((10, 15)), "y": [np.ones(4, dtype="int8"), 2.5], "z": None}
    tensors = fb.to_tensor(data, "torch")
    assert isinstance(tensors["x"], torch.Tensor) and tensors["y"][0].dtype == torch.int8 and tensors["z"] is None
    assert tensors["y"][1].shape == () and fb.to_type(tensors)["x"] == torch.float64
    shared = fb.to_tensor(np.ones(3, dtype="float32"), "torch", shared_memory=True)
    assert shared.is_shared()
    back = fb.to_tensor(tensors, "np")
    assert isinstance(back["x"], np.ndarray) and back["y"][0].dtype == np.int8
    cast = fb.cast(tensors, "float16")
    assert cast["z"] is None and [cast["x"].dtype, cast["y"][0].dtype, cast["y"][1].dtype] == [torch.float16] * 3
    assert fb.cast(torch.ones(2), torch.ones(1, dtype=torch.int32)).dtype == torch.int32
    assert fb.cast(np.ones(2), torch.ones(1, dtype=torch.int16)).dtype == np.int16
    assert fb.to_shape({"a": torch.ones(2, 3)}, add_batch=True) == {"a": (None, 2, 3)}
    assert fb.convert_tensor_precision(torch.ones(2, dtype=torch.float64)).dtype == torch.float32


def test_random_tensors_follow_torch_seeding() -> None:
    like = torch.zeros(2, 3)
    torch.manual_seed(1)
    first = fb.random_normal_like(like, mean=5.0, std=0.1)
    torch.manual_seed(1)
    torch.testing.assert_close(fb.random_normal_like(like, mean=5.0, std=0.1), first)
    assert first.dtype == torch.float32 and abs(float(first.mean()) - 5.0) < 0.2
    uniform = fb.random_uniform_like(torch.zeros(1000), minval=-5.0, maxval=-3.0, dtype="float64")
    assert uniform.dtype == torch.float64 and uniform.min() >= -5.0 and uniform.max() < -3.0


def test_shapes_indexing_and_resizing() -> None:
    image = torch.rand((2, 3, 12, 10))
    assert fb.get_shape(image) == (2, 3, 12, 10) and fb.get_image_dims(image) == (3, 12, 10)
    torch.testing.assert_close(fb.gather(torch.arange(6).reshape(3, 2), np.array([2, 0])),
                               torch.tensor([[4, 5], [0, 1]]))
    volume = torch.arange(8, dtype=torch.float32).reshape(1, 1, 2, 2, 2)
    nearest = fb.resize_3d(volume, [4, 4, 4])
    assert nearest.shape == (1, 1, 4, 4, 4)
    torch.testing.assert_close(nearest[0, 0, ::2, ::2, ::2], volume[0, 0])
    np.testing.assert_array_equal(nearest.numpy()[:, 0, ..., None], fb.resize_3d(volume.numpy()[:, 0, ..., None],
                                                                                 [4, 4, 4])[..., 0][:, None][:, 0,
                                                                                                            ..., None])
    assert fb.resize_3d(volume.half(), [3, 3, 3], resize_mode="trilinear").dtype == torch.float16


def test_matmul_refuses_mixed_kinds() -> None:
    with pytest.raises(ValueError, match="same kind"):
        fb.matmul(torch.ones(2, 2), np.ones((2, 2)))


def test_model_functions_on_a_mixed_precision_model() -> None:
    model = build(_linear, "sgd", mixed_precision=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):  # what the Network does for a mixed-precision model on a CPU
        pred = fb.feed_forward(model, torch.ones((4, 3)))
        loss = fb.sparse_categorical_crossentropy(pred, torch.tensor([0, 1, 0, 1]), from_logits=True)
    assert pred.dtype == torch.bfloat16 and loss.dtype == torch.float32
    params = [p for p in model.parameters() if p.requires_grad]
    gradients = fb.get_gradient(loss, params)
    before = [p.detach().clone() for p in params]
    fb.update_model(model, gradients)
    for parameter, old, gradient in zip(params, before, gradients):
        torch.testing.assert_close(parameter.detach(), old - 0.01 * gradient)


@requires_gpu[0]
@requires_gpu[1]
def test_model_functions_on_cuda_with_a_grad_scaler() -> None:
    model = build(_linear, "sgd", mixed_precision=True)
    assert next(model.parameters()).is_cuda and model.current_optimizer.scaler is not None
    with torch.autocast("cuda", dtype=torch.float16):
        pred = fb.feed_forward(model, np.ones((4, 3), dtype="float32"))  # numpy goes to the model's device
        host = fb.feed_forward(model, torch.ones((4, 3)), training=False)  # and so do host tensors
        torch.testing.assert_close(host, fb.feed_forward(model, np.ones((4, 3), dtype="float32"), training=False))
        assert host.is_cuda
        loss = fb.sparse_categorical_crossentropy(pred, torch.tensor([0, 1, 0, 1], device="cuda"), from_logits=True)
    assert pred.is_cuda and pred.dtype == torch.float16 and loss.dtype == torch.float32
    params = [p for p in model.parameters() if p.requires_grad]
    gradients = fb.get_gradient(loss, params)
    before = [p.detach().clone() for p in params]
    fb.update_model(model, gradients)  # true gradients: applied as given, not unscaled by the GradScaler
    for parameter, old, gradient in zip(params, before, gradients):
        torch.testing.assert_close(parameter.detach(), old - 0.01 * gradient)
    assert fb.random_normal_like(pred).is_cuda
    volume = torch.rand((1, 1, 2, 2, 2), device="cuda", dtype=torch.float16)
    assert fb.resize_3d(volume, [4, 4, 4], resize_mode="trilinear").dtype == torch.float16
