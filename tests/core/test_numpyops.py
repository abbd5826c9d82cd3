"""NumpyOps: FastEstimator signatures and semantics, and batch results equal to per-sample results."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.op.numpyop import Batch, Delete, FilteredData, LambdaOp, NumpyOp, RemoveIf
from fe_core.op.numpyop.batch import collate_samples
from fe_core.op.numpyop.meta import OneOf, Sometimes
from fe_core.op.numpyop.univariate import ExpandDims, Minmax, Normalize, Onehot, Reshape, ToFloat

STATE = {"mode": "train", "epoch": 1, "ds_id": ""}
RNG = np.random.default_rng(0)
IMAGES_U8 = RNG.integers(0, 256, size=(5, 4, 3, 3), dtype=np.uint8)


def per_sample_then_stack(op: NumpyOp, *columns: np.ndarray):
    """Run op.forward on each sample and stack each output."""
    results = [op.forward([column[i] for column in columns], STATE) for i in range(len(columns[0]))]
    return [np.stack([result[k] for result in results]) for k in range(len(op.outputs))]


BATCH_CAPABLE_CASES = [
    ("ExpandDims axis -1", ExpandDims("x", "x"), [IMAGES_U8]),
    ("ExpandDims axis 0", ExpandDims("x", "x", axis=0), [IMAGES_U8]),
    ("ExpandDims axis 1", ExpandDims("x", "x", axis=1), [IMAGES_U8]),
    ("ExpandDims axis -3", ExpandDims("x", "x", axis=-3), [IMAGES_U8]),
    ("Minmax uint8", Minmax("x", "x"), [IMAGES_U8]),
    ("Minmax float32", Minmax("x", "x"), [RNG.normal(size=(6, 7)).astype(np.float32)]),
    ("Minmax float64", Minmax("x", "x"), [RNG.normal(size=(6, 2, 5))]),
    ("Minmax constant sample", Minmax("x", "x"), [np.stack([np.full((3, 3), 7, np.uint8), IMAGES_U8[0, 0]])]),
    ("Minmax two keys", Minmax(["x", "z"], ["x2", "z2"]), [IMAGES_U8, RNG.normal(size=(5, 8))]),
    ("Normalize rgb", Normalize("x", "x"), [IMAGES_U8]),
    ("Normalize scalar stats", Normalize("x", "x", mean=0.5, std=0.25, max_pixel_value=1.0),
     [RNG.random(size=(4, 6)).astype(np.float32)]),
    ("Onehot", Onehot("y", "y", num_classes=5), [np.array([0, 4, 2, 2])]),
    ("Onehot (n, 1) labels smoothed", Onehot("y", "y", num_classes=3, label_smoothing=0.3),
     [np.array([[1], [0], [2]], dtype=np.int32)]),
    ("ToFloat uint8", ToFloat("x", "x"), [IMAGES_U8]),
    ("ToFloat uint16", ToFloat("x", "x"), [RNG.integers(0, 65535, size=(3, 4), dtype=np.uint16)]),
    ("ToFloat max_value", ToFloat("x", "x", max_value=10.0), [RNG.random(size=(3, 4)).astype(np.float32)]),
    ("Reshape", Reshape((3, -1), "x", "x"), [IMAGES_U8]),
    ("Reshape flat", Reshape(-1, "x", "x"), [IMAGES_U8]),
    ("Delete", Delete("x"), [IMAGES_U8]),
]


@pytest.mark.parametrize("name, op, columns", BATCH_CAPABLE_CASES, ids=[case[0] for case in BATCH_CAPABLE_CASES])
def test_batch_capable_ops_give_per_sample_results_on_a_batch(name, op, columns):
    assert op.batch_capable
    batched = op.forward_batch(list(columns), STATE)
    if not op.outputs:
        assert batched is None
        return
    expected = per_sample_then_stack(op, *columns)
    assert len(batched) == len(expected)
    for got, want in zip(batched, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_not_batch_capable_by_default():
    assert not NumpyOp.batch_capable
    assert not LambdaOp(fn=abs, inputs="x", outputs="x").batch_capable
    assert not RemoveIf(fn=bool, inputs="x").batch_capable


def test_expand_dims_adds_the_axis_within_the_sample():
    sample = np.zeros((28, 28))
    assert ExpandDims("x", "x").forward([sample], STATE)[0].shape == (28, 28, 1)
    assert ExpandDims("x", "x", axis=0).forward([sample], STATE)[0].shape == (1, 28, 28)
    assert ExpandDims("x", "x", axis=0).forward_batch([np.zeros((4, 28, 28))], STATE)[0].shape == (4, 1, 28, 28)


def test_minmax_scales_each_sample_by_its_own_range():
    batch = np.array([[0, 5, 10], [2, 3, 4]], dtype=np.uint8)
    out = Minmax("x", "x").forward_batch([batch], STATE)[0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0, 0.5, 1], [0, 0.5, 1]])
    constant = Minmax("x", "x").forward([np.full(4, 9, np.uint8)], STATE)[0]
    np.testing.assert_array_equal(constant, np.zeros(4, np.float32))


def test_normalize_matches_fastestimator_arithmetic():
    pixel = np.array([[[255, 0, 128]]], dtype=np.uint8)
    out = Normalize("x", "x").forward([pixel], STATE)[0]
    expected = (pixel / 255.0 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_to_float_divides_by_the_dtype_maximum():
    out = ToFloat("x", "x").forward([np.array([0, 255], dtype=np.uint8)], STATE)[0]
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0]
    floats = ToFloat("x", "x").forward([np.array([0.5, 2.0])], STATE)[0]
    assert floats.dtype == np.float32 and floats.tolist() == [0.5, 2.0]


def test_onehot_with_label_smoothing():
    out = Onehot("y", "y", num_classes=4, label_smoothing=0.2).forward([np.array([1])], STATE)[0]
    np.testing.assert_allclose(out, [0.05, 0.85, 0.05, 0.05], rtol=1e-6)
    assert out.dtype == np.float32


@pytest.mark.parametrize("label, message", [(5, r"in \[0, 5\)"), (-1, r"in \[0, 5\)"), (1.0, "integer labels"),
                                            (np.array([1, 7]), r"in \[0, 5\)")])
def test_onehot_rejects_bad_labels(label, message):
    with pytest.raises(ValueError, match=message):
        Onehot("y", "y", num_classes=5).forward([label], STATE)


def test_reshape_takes_the_shape_first():
    assert Reshape((2, 2), "x", "x").forward([np.arange(4)], STATE)[0].shape == (2, 2)


def test_fastestimator_positional_argument_order():
    minmax = Minmax("x", "y", "train", "ds1", 0.1)
    assert (minmax.inputs, minmax.outputs, minmax.mode, minmax.ds_id, minmax.epsilon) == (["x"], ["y"], {"train"},
                                                                                         {"ds1"}, 0.1)
    expand = ExpandDims("x", "x", "eval", None, 0)
    assert expand.mode == {"eval"} and expand.axis == 0
    onehot = Onehot("y", "y", 10, 0.1, "!infer")
    assert onehot.num_classes == 10 and onehot.label_smoothing == 0.1 and onehot.mode == {"train", "eval", "test"}
    normalize = Normalize("x", "x", None, None, 0.5, 0.5, 1.0)
    assert (normalize.mean, normalize.std, normalize.max_pixel_value) == (0.5, 0.5, 1.0)
    reshape = Reshape((2, 2), "x", "x", "test")
    assert reshape.shape == (2, 2) and reshape.mode == {"test"}
    remove = RemoveIf(bool, False, "x", "train")
    assert remove.replacement is False and remove.inputs == ["x"] and remove.mode == {"train"}
    batch = Batch(8, True, None, None, "train", "ds1")
    assert (batch.batch_size, batch.drop_last, batch.mode, batch.ds_id) == (8, True, {"train"}, {"ds1"})


def test_univariate_ops_need_matching_inputs_and_outputs():
    with pytest.raises(ValueError, match="as many outputs as inputs"):
        Minmax(["a", "b"], "c")


def test_lambda_op_calls_fn_with_one_argument_per_input():
    op = LambdaOp(fn=lambda a, b: (a + b, a - b), inputs=("a", "b"), outputs=("s", "d"))
    assert op.forward([5, 3], STATE) == (8, 2)
    np.testing.assert_array_equal(op.forward_batch([np.array([1, 2]), np.array([1, 1])], STATE)[0], [2, 3])
    with pytest.raises(TypeError, match="callable"):
        LambdaOp(fn=3, inputs="a", outputs="b")


def test_remove_if_returns_filtered_data_when_fn_is_true():
    op = RemoveIf(fn=lambda y: y > 2, replacement=False, inputs="y")
    filtered = op.forward([3], STATE)
    assert isinstance(filtered, FilteredData) and filtered.replacement is False
    assert op.forward([1], STATE) is None


def test_batch_validates_its_arguments():
    with pytest.raises(ValueError, match="positive integer"):
        Batch(batch_size=0)
    with pytest.raises(ValueError, match="either a pad_value or a collate_fn"):
        Batch(pad_value=0, collate_fn=list)
    assert Batch().stacks_by_default and not Batch(pad_value=0).stacks_by_default


def test_batch_collates_by_stacking_padding_or_custom_fn():
    samples = [{"x": np.array([1, 2, 3]), "y": 0}, {"x": np.array([4]), "y": 1}]
    padded = Batch(pad_value=-1).collate(samples)
    np.testing.assert_array_equal(padded["x"], [[1, 2, 3], [4, -1, -1]])
    np.testing.assert_array_equal(padded["y"], [0, 1])
    with pytest.raises(ValueError, match="key 'x'.*different shapes.*pad_value"):
        Batch().collate(samples)
    custom = Batch(collate_fn=lambda items: {"n": len(items)}).collate(samples)
    assert custom == {"n": 2}
    assert collate_samples([{"x": np.ones((2, 2))}] * 3)["x"].shape == (3, 2, 2)


def test_sometimes_runs_with_probability_and_passes_data_through_otherwise():
    op = LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")
    assert Sometimes(op, prob=1.0).forward([1], STATE) == [2]
    assert Sometimes(op, prob=0.0).forward([1], STATE) == [1]
    new_key = Sometimes(LambdaOp(fn=lambda x: x * 10, inputs="x", outputs="y"), prob=0.0)
    assert new_key.inputs == ["x", "y"]
    assert new_key.forward([1, "old y"], STATE) == ["old y"]
    with pytest.raises(ValueError, match="Batch"):
        Sometimes(Batch())


def test_one_of_picks_one_op_with_the_global_rng():
    ops = [LambdaOp(fn=lambda x, k=k: x + k, inputs="x", outputs="x") for k in (10, 20, 30)]
    np.random.seed(1)
    first = [OneOf(*ops).forward([0], STATE) for _ in range(20)]
    np.random.seed(1)
    second = [OneOf(*ops).forward([0], STATE) for _ in range(20)]
    assert first == second and set(first) == {10, 20, 30}
    with pytest.raises(ValueError, match="share inputs"):
        OneOf(ops[0], LambdaOp(fn=abs, inputs="z", outputs="x"))
