"""The example scripts in fe.examples train each backend's CNN and MLP to a good test accuracy on the digits data,
and each imports only its own framework."""
from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from fe.examples import EXAMPLES
from fe.examples.digits import UpscaleDigits, load_digits_datasets
from fe_helpers import child_env, run_python


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


@pytest.mark.parametrize("names, unwanted", [(("digits_torch_cnn", "digits_torch_mlp"), "tensorflow"),
                                             (("digits_tf_cnn", "digits_tf_mlp"), "torch")], ids=["torch", "tf"])
def test_each_example_imports_only_its_framework(names, unwanted):
    """One fresh interpreter per framework: after each example's import, the other framework is still absent."""
    code = "import importlib, sys\n" + "".join(
        f"importlib.import_module('fe.examples.{name}')\n"
        f"assert {unwanted!r} not in sys.modules, 'fe.examples.{name} imported {unwanted}'\n" for name in names)
    result = run_python(code)
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


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_saves_under_the_working_directory_by_default_not_in_the_temp_dir(name, tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    estimator = importlib.import_module(f"fe.examples.{name}").get_estimator()
    savers = [trace for trace in estimator.traces if type(trace).__name__ == "BestModelSaver"]
    assert [saver.save_dir for saver in savers] == [f"fe_runs/{name}"]
    # torch itself may make its (reused) compile cache dir 'torchinductor_<user>' there; fe makes nothing
    assert [path.name for path in temp.iterdir() if not path.name.startswith("torchinductor_")] == []
    assert not (work / "fe_runs").exists()  # nothing is written before training


@pytest.mark.slow
def test_a_whole_example_run_leaves_nothing_in_the_temp_dir(tmp_path):
    def run(args, temp, work):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=work,
                              env=dict(child_env(), TMPDIR=str(temp)), timeout=300)

    baseline = tmp_path / "baseline"  # what importing torch itself creates there (its compile cache dir)
    baseline.mkdir()
    assert run(["-c", "import torch"], baseline, tmp_path).returncode == 0
    temp = tmp_path / "tmp"
    temp.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    result = run(["-m", "fe.examples.digits_torch_mlp", "--epochs", "1", "--train_steps_per_epoch", "2",
                  "--eval_steps_per_epoch", "1", "--log_steps", "0"], temp, work)
    assert result.returncode == 0, result.stderr
    assert "FastEstimator-Test" in result.stdout
    assert sorted(path.name for path in temp.iterdir()) == sorted(path.name for path in baseline.iterdir())
    assert not any(path.name.startswith("fe") for path in temp.iterdir())
    assert sorted(path.relative_to(work).as_posix() for path in work.rglob("*")) == [
        "fe_runs", "fe_runs/digits_torch_mlp", "fe_runs/digits_torch_mlp/model_best_accuracy.pt"]
