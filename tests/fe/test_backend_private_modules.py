"""FastEstimator's scripts import its private backend modules (`from fastestimator.backend._reduce_mean import
reduce_mean`): `fe.backend` is a package whose `_name` modules resolve to fe's functions, while `fe.backend.reduce_mean`
keeps working, those modules stay out of `fe.backend.__all__`, and importing them imports no framework."""
from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import fe
import fe.backend

# FastEstimator 1.x's backend modules (its fe.backend __init__, plus the helpers documented beside them).
MODULES = {
    "_abs": ["abs"], "_argmax": ["argmax"], "_binary_crossentropy": ["binary_crossentropy"], "_cast": ["cast"],
    "_categorical_crossentropy": ["categorical_crossentropy"], "_check_nan": ["check_nan"],
    "_clip_by_value": ["clip_by_value"], "_concat": ["concat"], "_convert_tensor_precision": ["convert_tensor_precision"],
    "_dice_score": ["dice_score"], "_exp": ["exp"], "_expand_dims": ["expand_dims"], "_feed_forward": ["feed_forward"],
    "_flip": ["flip"], "_focal_loss": ["focal_loss", "pytorch_focal_loss", "tf_focal_loss"], "_gather": ["gather"],
    "_gather_from_batch": ["gather_from_batch"], "_get_gradient": ["get_gradient"],
    "_get_image_dims": ["get_image_dims"], "_get_lr": ["get_lr"], "_get_shape": ["get_shape"], "_hinge": ["hinge"],
    "_huber": ["huber"], "_iwd": ["iwd"], "_l1_loss": ["l1_loss"], "_l2_regularization": ["l2_regularization"],
    "_lambertw": ["lambertw"], "_load_model": ["load_model", "preprocess_torch_weights"], "_matmul": ["matmul"],
    "_maximum": ["maximum"], "_mean_squared_error": ["mean_squared_error"], "_ones_like": ["ones_like"],
    "_percentile": ["percentile"], "_permute": ["permute"], "_pow": ["pow"],
    "_random_normal_like": ["random_normal_like"], "_random_uniform_like": ["random_uniform_like"],
    "_reduce_max": ["reduce_max"], "_reduce_mean": ["reduce_mean"], "_reduce_min": ["reduce_min"],
    "_reduce_std": ["reduce_std"], "_reduce_sum": ["reduce_sum"], "_reshape": ["reshape"],
    "_resize3d": ["resize_3d", "resize_tensorflow_tensor"], "_roll": ["roll"],
    "_save_model": ["save_model", "pickle_mirroredstrategy"], "_set_lr": ["set_lr"], "_sign": ["sign"],
    "_smooth_l1_loss": ["smooth_l1_loss"], "_sparse_categorical_crossentropy": ["sparse_categorical_crossentropy"],
    "_squeeze": ["squeeze"], "_tensor_normalize": ["normalize", "get_framework", "get_scaled_data"],
    "_tensor_pow": ["tensor_pow"], "_tensor_round": ["tensor_round"], "_tensor_sqrt": ["tensor_sqrt"],
    "_to_shape": ["to_shape"], "_to_tensor": ["to_tensor"], "_to_type": ["to_type"], "_transpose": ["transpose"],
    "_update_model": ["update_model"], "_watch": ["watch"], "_where": ["where"], "_zeros_like": ["zeros_like"],
    "_zscore": ["zscore"],
}
FRAMEWORK_FREE = [(module, name) for module, names in MODULES.items() for name in names
                  if name not in ("pytorch_focal_loss", "preprocess_torch_weights", "tf_focal_loss",
                                  "resize_tensorflow_tensor", "pickle_mirroredstrategy")]


@pytest.mark.parametrize("module,name", FRAMEWORK_FREE)
def test_each_private_backend_module_resolves_to_fe_s_function(module: str, name: str) -> None:
    private = importlib.import_module(f"fe.backend.{module}")
    assert getattr(private, name) is getattr(fe.backend, name)


def test_fastestimator_style_imports_of_private_modules_work_and_compute() -> None:
    from fe.backend._reduce_mean import reduce_mean
    from fe.backend._tensor_round import tensor_round
    assert float(reduce_mean(np.array([1.0, 2.0, 6.0]))) == 3.0
    assert tensor_round(np.array([0.4, 1.6])).tolist() == [0.0, 2.0]
    assert fe.backend._reduce_sum.reduce_sum is fe.backend.reduce_sum  # attribute access, as `fe.backend._x.y`


def test_private_modules_are_not_public_names() -> None:
    assert not [name for name in fe.backend.__all__ if name.startswith("_")]
    assert "reduce_mean" in fe.backend.__all__ and "feed_forward" in dir(fe.backend)


def test_importing_private_backend_modules_imports_no_framework() -> None:
    code = ("import sys, fe.backend; from fe.backend._reduce_mean import reduce_mean; "
            "from fe.backend._feed_forward import feed_forward; import fe.backend._get_gradient; "
            "print(sorted(m for m in ('torch', 'tensorflow', 'keras') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module,name", [("_focal_loss", "pytorch_focal_loss"), ("_focal_loss", "tf_focal_loss"),
                                         ("_load_model", "preprocess_torch_weights"),
                                         ("_resize3d", "resize_tensorflow_tensor"),
                                         ("_save_model", "pickle_mirroredstrategy")])
def test_framework_helpers_live_beside_their_functions(module: str, name: str) -> None:
    assert getattr(importlib.import_module(f"fe.backend.{module}"), name) is getattr(fe.backend, name)
