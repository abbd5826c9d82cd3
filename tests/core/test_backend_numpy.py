"""`fe.backend` on numpy arrays: the shared value table, dtypes, errors, collections and the dispatcher."""
from __future__ import annotations

import collections
import math
import sys

import numpy as np
import pytest

import fe_core.backend as fb
from fe_core.backend.dispatch import Dispatch, framework_of
from backend_cases import Case, case_id, cases_for

NUMPY_CASES = cases_for("last")


@pytest.mark.parametrize("case", NUMPY_CASES, ids=[case_id(case) for case in NUMPY_CASES])
def test_numpy_values_match_the_reference(case: Case) -> None:
    result = getattr(fb, case.function)(*case.args, **case.kwargs)
    np.testing.assert_allclose(np.asarray(result, dtype=np.float64), np.asarray(case.expected, dtype=np.float64),
                               atol=case.atol, rtol=1e-4)
    if case.expected_dtype:
        assert np.asarray(result).dtype == np.dtype(case.expected_dtype)


def test_every_documented_function_is_exported_with_its_fe_path() -> None:
    assert len(fb.__all__) == 66  # the 63 of the export list, l2_regularization, get_framework, get_scaled_data
    for name in fb.__all__:
        assert getattr(fb, name).__fe_paths__[0] == f"fe.backend.{name}"  # then private/other module paths


def test_unknown_types_raise_value_error_naming_the_function() -> None:
    with pytest.raises(ValueError, match=r"fe\.backend\.reduce_mean .*list"):
        fb.reduce_mean([1.0, 2.0])
    with pytest.raises(ValueError, match="feed_forward needs a torch.nn.Module or a Keras model"):
        fb.feed_forward(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="numpy values carry no gradients"):
        fb.get_gradient(np.ones(2), np.ones(2))
    with pytest.raises(AssertionError):
        fb.categorical_crossentropy("pred", np.ones(2))


def test_argument_errors() -> None:
    with pytest.raises(ValueError, match="beta"):
        fb.huber(np.ones(2), np.ones(2), beta=0.0)
    with pytest.raises(ValueError, match="beta"):
        fb.smooth_l1_loss(np.ones(2), np.ones(2), beta=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        fb.focal_loss(np.ones((2, 1)), np.ones((2, 1)), gamma=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        fb.focal_loss(np.ones((2, 1)), np.ones((2, 1)), alpha=2.0)
    with pytest.raises(ValueError, match="shape_reduction"):
        fb.focal_loss(np.ones((2, 1)), np.ones((2, 1)), shape_reduction="max")
    with pytest.raises(ValueError, match="shift and axis"):
        fb.roll(np.ones((2, 2)), shift=[1, 1], axis=0)
    with pytest.raises(ValueError, match="target_type"):
        fb.to_tensor(np.ones(2), "jax")
    with pytest.raises(ValueError, match="3 sizes"):
        fb.resize_3d(np.ones((1, 2, 2, 2, 1)), [4, 4])
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        fb.get_image_dims(np.ones((2, 2)))


def test_numpy_scalars_and_python_numbers_are_numpy_data() -> None:
    assert fb.check_nan(float("nan")) is True
    assert fb.check_nan(3) is False
    assert float(fb.abs(np.float32(-2.5))) == 2.5
    assert fb.maximum(2, 3) == 3


def test_percentile_takes_the_lower_value() -> None:
    assert fb.percentile(np.array([1, 2, 3, 4]), 50, keepdims=False) == 2  # between 2 and 3: the lower


def test_lambertw_inverts_w_exp_w() -> None:
    w = np.linspace(-1.0, 4.0, 41)
    np.testing.assert_allclose(fb.lambertw(w * np.exp(w)), w, atol=1e-7)
    assert fb.lambertw(np.array([0, 1], dtype="int32")).dtype == np.float32


def test_shapes_and_image_dims() -> None:
    assert fb.get_shape(np.zeros((3, 2, 2))) == (3, 2, 2)
    assert fb.get_image_dims(np.random.random((2, 12, 10, 3))) == (3, 12, 10)
    assert fb.concat([]) is None
    volume = np.arange(8, dtype="float32").reshape((1, 2, 2, 2, 1))
    resized = fb.resize_3d(volume, [4, 4, 4])
    assert resized.shape == (1, 4, 4, 4, 1)
    np.testing.assert_array_equal(resized[0, ::2, ::2, ::2, 0], volume[0, :, :, :, 0])
    with pytest.raises(ValueError, match="nearest"):
        fb.resize_3d(volume, [4, 4, 4], resize_mode="trilinear")


def test_random_like_uses_numpys_global_generator() -> None:
    np.random.seed(3)
    first = fb.random_normal_like(np.zeros((2, 3)), mean=5.0, std=0.1)
    np.random.seed(3)
    again = fb.random_normal_like(np.zeros((2, 3)), mean=5.0, std=0.1)
    np.testing.assert_array_equal(first, again)
    assert first.dtype == np.float32 and abs(float(first.mean()) - 5.0) < 0.2
    uniform = fb.random_uniform_like(np.zeros(1000), minval=-5.0, maxval=-3, dtype="float64")
    assert uniform.dtype == np.float64 and uniform.min() >= -5.0 and uniform.max() < -3.0


def test_collections_keep_their_structure() -> None:
    data = {"x": np.ones((10, 15)), "y": [np.ones(4), np.ones((5, 3))], "z": {"key": np.ones((2, 2))}}
    assert fb.to_type(fb.cast(data, "float16")) == {"x": np.dtype("float16"), "y": [np.dtype("float16")] * 2,
                                                    "z": {"key": np.dtype("float16")}}
    assert fb.to_type(fb.cast(data, np.ones(1, dtype="int8")))["x"] == np.dtype("int8")
    assert fb.to_shape(data) == {"x": (10, 15), "y": [(4,), (5, 3)], "z": {"key": (2, 2)}}
    assert fb.to_shape(data, add_batch=True)["y"] == [(None, 4), (None, 5, 3)]
    assert fb.to_shape(data, exact_shape=False)["x"] == (None, None)
    converted = fb.to_tensor({"a": 1.5, "b": None, "c": (np.ones(2), "text")}, "np")
    assert converted["a"].shape == () and converted["b"] is None and converted["c"][1] == "text"
    assert fb.convert_tensor_precision(np.ones(2)).dtype == np.float32
    ordered = collections.OrderedDict(a=np.ones(2, dtype="int64"))
    cast = fb.cast(ordered, "int8")
    assert type(cast) is collections.OrderedDict and cast["a"].dtype == np.int8 and ordered["a"].dtype == np.int64
    pair = collections.namedtuple("pair", "x y")(np.ones(1), 2)
    assert type(fb.to_tensor(pair, "np")).__name__ == "pair"


def test_dispatch_caches_per_type_and_imports_no_framework() -> None:
    before = {name for name in sys.modules if name.split(".")[0] in ("torch", "tensorflow", "keras")}
    dispatch = Dispatch("reductions")
    assert dispatch(np.ones(2), "f") is None and dispatch(np.float16(1), "f") is None
    assert dispatch(np.ma.masked_array([1.0]), "f") is None  # ndarray subclasses are numpy data too
    assert framework_of(np.ndarray) is None
    # (other tests may have put stand-ins for a framework in sys.modules: only what dispatching added counts)
    assert {name for name in sys.modules if name.split(".")[0] in ("torch", "tensorflow", "keras")} == before


def test_sample_losses_are_one_value_per_sample_and_reshape_labels() -> None:
    pred = np.array([[0.5], [1.5]], dtype="float32")
    assert fb.mean_squared_error(np.array([1, 1]), pred).tolist() == [0.25, 0.25]  # labels (2,) vs (2, 1)
    assert fb.l1_loss(np.ones((2, 1)), pred).dtype == np.float32
    assert math.isclose(float(fb.reduce_mean(fb.hinge(np.ones((2, 3)), np.zeros((2, 3))))), 1.0)
