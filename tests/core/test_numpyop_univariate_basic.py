"""Univariate NumpyOps without random image augmentation: labels, text, arrays, files, calibration."""
import pickle

import numpy as np
import pytest

from fe_core.op.numpyop.univariate import (Binarize, Calibrate, ChannelTranspose, Hadamard, Minmax, Onehot, PadSequence,
                                           ReadImage, ToArray, Tokenize, WordtoId)
from fe_core.op.numpyop.univariate.hadamard import hadamard_code

STATE = {"mode": "train"}


def _batch_equals_samples(op, samples):
    """forward_batch on the stacked samples equals stacking forward on each sample."""
    per_sample = np.stack([op.forward([sample], STATE)[0] for sample in samples])
    batched = op.forward_batch([np.stack(samples)], STATE)[0]
    assert batched.dtype == per_sample.dtype
    np.testing.assert_array_equal(batched, per_sample)


def test_binarize_keeps_dtype_and_thresholds_inclusively():
    op = Binarize(threshold=0.5, inputs="x", outputs="x")
    out = op.forward([np.array([0.1, 0.5, 0.7], dtype=np.float32)], STATE)[0]
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 1.0]
    ints = Binarize(128, "x", "x").forward([np.array([[0, 127], [128, 255]], dtype=np.uint8)], STATE)[0]
    assert ints.dtype == np.uint8 and ints.tolist() == [[0, 0], [1, 1]]
    assert Binarize.batch_capable
    _batch_equals_samples(op, [np.random.rand(4, 4).astype(np.float32) for _ in range(3)])


def test_channel_transpose_default_is_hwc_to_chw_and_batches():
    image = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    op = ChannelTranspose(inputs="x", outputs="x")
    out = op.forward([image], STATE)[0]
    assert out.shape == (4, 2, 3) and out.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(out, np.transpose(image, (2, 0, 1)))
    assert ChannelTranspose("x", "x", axes=(1, 0, 2)).forward([image], STATE)[0].shape == (3, 2, 4)
    _batch_equals_samples(op, [image, image + 1])


def test_hadamard_codes_are_orthogonal_rows_with_alternating_first_column():
    op = Hadamard(inputs="y", outputs="y", n_classes=5)
    assert op.code_length == 8 and op.labels.shape == (5, 8) and op.labels.dtype == np.float32
    assert set(np.unique(op.labels)) == {-1.0, 1.0}
    assert op.labels[:, 0].tolist() == [-1, 1, -1, 1, -1]
    sylvester = op.labels.copy()
    sylvester[:, 0] = 1  # undo the alternation: the rows of a Hadamard matrix are orthogonal
    np.testing.assert_array_equal(sylvester @ sylvester.T, 8 * np.eye(5))
    out = op.forward([3, np.array([1])], STATE)
    np.testing.assert_array_equal(out[0], op.labels[3])
    np.testing.assert_array_equal(out[1], op.labels[1])
    assert Hadamard.batch_capable
    np.testing.assert_array_equal(op.forward_batch([np.array([[0], [4]])], STATE)[0], op.labels[[0, 4]])
    np.testing.assert_array_equal(hadamard_code(2, 4), Hadamard("y", "y", 2, code_length=4).labels)


@pytest.mark.parametrize("kwargs, message", [({"n_classes": 5, "code_length": 6}, "power of 2"),
                                             ({"n_classes": 5, "code_length": 4}, ">= n_classes"),
                                             ({"n_classes": 0}, "positive integer")])
def test_hadamard_rejects_bad_code_lengths(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Hadamard(inputs="y", outputs="y", **kwargs)


def test_hadamard_needs_as_many_outputs_as_inputs_and_valid_labels():
    with pytest.raises(ValueError, match="as many outputs as inputs"):
        Hadamard(inputs=["a", "b"], outputs="a", n_classes=4)
    with pytest.raises(ValueError, match=r"in \[0, 4\)"):
        Hadamard("y", "y", n_classes=4).forward([7], STATE)


def test_minmax_maps_to_new_range():
    op = Minmax(inputs="x", outputs="x", new_min=-1.0, new_max=1.0)
    out = op.forward([np.array([0, 5, 10], dtype=np.uint8)], STATE)[0]
    assert out.dtype == np.float32 and out.tolist() == [-1.0, 0.0, 1.0]
    _batch_equals_samples(op, [np.random.rand(3, 3) * scale for scale in (1, 10, 100)])
    assert Minmax("x", "x").forward([np.array([2.0, 4.0])], STATE)[0].tolist() == [0.0, 1.0]


def test_onehot_encodes_segmentation_masks():
    mask = np.array([[0, 1], [2, 1]], dtype=np.uint8)
    op = Onehot(inputs="mask", outputs="mask", num_classes=3)
    out = op.forward([mask], STATE)[0]
    assert out.shape == (2, 2, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out.argmax(-1), mask)
    np.testing.assert_array_equal(op.forward([mask[..., None]], STATE)[0], out)  # (H, W, 1) -> (H, W, C)
    _batch_equals_samples(op, [mask, mask[::-1], np.zeros_like(mask)])
    smooth = Onehot("m", "m", num_classes=4, label_smoothing=0.2).forward([mask], STATE)[0]
    assert np.allclose(smooth.sum(-1), 1.0) and np.isclose(smooth.max(), 0.85) and np.isclose(smooth.min(), 0.05)
    assert Onehot("y", "y", num_classes=3).forward([np.array([2])], STATE)[0].tolist() == [0.0, 0.0, 1.0]


def test_pad_sequence_pads_after_or_before_and_truncates():
    seq = np.array([3, 1, 4])
    assert PadSequence("x", "x", max_len=5).forward([seq], STATE)[0].tolist() == [3, 1, 4, 0, 0]
    assert PadSequence("x", "x", max_len=5, value=9, append=False).forward([seq], STATE)[0].tolist() == [9, 9, 3, 1, 4]
    assert PadSequence("x", "x", max_len=2).forward([seq], STATE)[0].tolist() == [3, 1]
    words = PadSequence("x", "x", max_len=3, value="<pad>").forward([np.array(["a"])], STATE)[0]
    assert words.tolist() == ["a", "<pad>", "<pad>"]


def test_to_array_converts_with_optional_dtype():
    out = ToArray(inputs="x", outputs="x").forward([[1, 2, 3]], STATE)[0]
    assert isinstance(out, np.ndarray) and out.tolist() == [1, 2, 3]
    typed = ToArray("x", "x", dtype="float16").forward([[1, 2]], STATE)[0]
    assert typed.dtype == np.float16
    assert ToArray("x", "x", dtype="int32").forward_batch([[[1, 2], [3, 4]]], STATE)[0].dtype == np.int32


def test_tokenize_splits_lowercases_or_uses_a_function():
    assert Tokenize("x", "x").forward(["The Big  cat"], STATE)[0] == ["The", "Big", "cat"]
    assert Tokenize("x", "x", to_lower_case=True).forward(["The Big"], STATE)[0] == ["the", "big"]
    assert Tokenize("x", "x", tokenize_fn=lambda s: s.split(",")).forward(["a,B"], STATE)[0] == ["a", "B"]


def test_word_to_id_with_dict_or_function():
    ids = WordtoId({"a": 1, "b": 2}, inputs="x", outputs="x").forward([["b", "a", "b"]], STATE)[0]
    assert isinstance(ids, np.ndarray) and ids.tolist() == [2, 1, 2]
    lengths = WordtoId(lambda words: [len(w) for w in words], "x", "x").forward([["ab", "c"]], STATE)[0]
    assert lengths.tolist() == [2, 1]
    with pytest.raises(KeyError, match="'z' is not in the mapping"):
        WordtoId({"a": 1}, "x", "x").forward([["z"]], STATE)
    with pytest.raises(ValueError, match="dict or a function"):
        WordtoId(3, "x", "x")


def _double(x):
    return x * 2


def test_calibrate_applies_a_function_or_a_pickled_file_lazily(tmp_path, capsys):
    op = Calibrate(inputs="pred", outputs="pred", calibration_fn=_double)
    assert op.mode == {"test", "infer"}
    assert op.forward_batch([np.array([[0.1, 0.2]])], STATE)[0].tolist() == [[0.2, 0.4]]
    assert op.forward([np.array([0.5, 0.25])], STATE)[0].tolist() == [1.0, 0.5]
    path = tmp_path / "calibration.pkl"
    from_file = Calibrate("pred", "pred", calibration_fn=str(path))  # the file may not exist yet
    assert from_file.forward_batch([np.ones(2)], {"mode": "test", "warmup": True})[0].tolist() == [1.0, 1.0]
    path.write_bytes(pickle.dumps(_double))
    assert from_file.forward_batch([np.ones(2)], {"mode": "test"})[0].tolist() == [2.0, 2.0]
    assert "calibration function loaded from" in capsys.readouterr().out


def test_read_image_reads_rgb_and_grey(tmp_path):
    cv2 = pytest.importorskip("cv2")
    image = np.zeros((4, 6, 3), dtype=np.uint8)
    image[..., 0] = 200  # red in RGB
    cv2.imwrite(str(tmp_path / "red.png"), image[..., ::-1])  # cv2 writes BGR
    color = ReadImage(inputs="path", outputs="image", parent_path=str(tmp_path)).forward(["red.png"], STATE)[0]
    assert color.shape == (4, 6, 3) and color.dtype == np.uint8
    np.testing.assert_array_equal(color, image)
    grey = ReadImage("path", "image", parent_path=str(tmp_path), color_flag="gray").forward(["red.png"], STATE)[0]
    assert grey.shape == (4, 6, 1)
    assert ReadImage("p", "i").color_flag == cv2.IMREAD_COLOR
    with pytest.raises(ValueError, match="missing.png"):
        ReadImage("p", "i", parent_path=str(tmp_path)).forward(["missing.png"], STATE)
    with pytest.raises(AssertionError, match="color_flag"):
        ReadImage("p", "i", color_flag="purple")
    with pytest.raises(AssertionError, match="lengths must match"):
        ReadImage(["a", "b"], "i")
