"""The example scripts in fe.examples train each backend's CNN and MLP to a good test accuracy on the digits data,
and each imports only its own framework."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from fe.examples import EXAMPLES
from fe.examples.digits import UpscaleDigits, load_digits_datasets
from fe_helpers import run_python


@pytest.mark.parametrize("name, epochs, min_accuracy", [
    ("digits_torch_cnn", 3, 0.85),
    ("digits_torch_mlp", 20, 0.9),
    ("digits_tf_cnn", 3, 0.85),
    ("digits_tf_mlp", 20, 0.9),
])
def test_example_reaches_its_accuracy(name, epochs, min_accuracy, tmp_path):
    module = importlib.import_module(f"fe.examples.{name}")
    estimator = module.get_estimator(epochs=epochs, save_dir=str(tmp_path), log_steps=0)
    estimator.fit()
    summary = estimator.test(summary=name)
    accuracy = float(next(iter(summary.history["test"]["accuracy"].values())))
    assert accuracy >= min_accuracy, f"{name}: test accuracy {accuracy:.3f} after {epochs} epochs"
    assert any(path.name.startswith("model") and "_best_accuracy" in path.name for path in tmp_path.iterdir())


@pytest.mark.parametrize("name, unwanted", [("digits_torch_cnn", "tensorflow"), ("digits_torch_mlp", "tensorflow"),
                                            ("digits_tf_cnn", "torch"), ("digits_tf_mlp", "torch")])
def test_each_example_imports_only_its_framework(name, unwanted):
    result = run_python(f"import sys, fe.examples.{name}; assert {unwanted!r} not in sys.modules, 'imported'")
    assert result.returncode == 0, result.stderr


def test_the_example_list_matches_the_modules():
    for name in EXAMPLES:
        assert callable(importlib.import_module(f"fe.examples.{name}").get_estimator)


def test_digits_are_split_without_overlap_and_reproducibly():
    train, evaluation, test = load_digits_datasets(seed=3)
    assert (len(train), len(evaluation), len(test)) == (1257, 270, 270)
    assert train[0]["x"].shape == (8, 8) and train[0]["x"].dtype == np.float32
    again = load_digits_datasets(seed=3)[2]
    np.testing.assert_array_equal(test.data["x"], again.data["x"])
    from sklearn.datasets import load_digits
    everything = sorted(row.tobytes() for ds in (train, evaluation, test) for row in ds.data["x"])
    assert everything == sorted(row.astype(np.float32).tobytes() for row in load_digits().images)  # a partition
    assert load_digits_datasets(flatten=True)[0][0]["x"].shape == (64, )


def test_upscale_digits_repeats_pixels_and_pads_the_same_on_samples_and_batches():
    images = np.arange(2 * 64, dtype=np.float32).reshape(2, 8, 8)
    op = UpscaleDigits(inputs="x", outputs="x")
    batch = op.forward_batch([images], {})[0]
    assert batch.shape == (2, 28, 28)
    np.testing.assert_array_equal(batch[1], op.forward([images[1]], {})[0])
    np.testing.assert_array_equal(batch[:, :2], 0)
    np.testing.assert_array_equal(batch[:, 2:5, 2:5], images[:, :1, :1] * np.ones((1, 3, 3)))
    np.testing.assert_array_equal(batch[0, 23:26, 23:26], np.full((3, 3), images[0, 7, 7]))
