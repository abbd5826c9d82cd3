"""ModelSaver and BestModelSaver in real Estimator runs on the numpy test backend: file names, contents, deletion,
logged values, atomic writes and checkpoint state."""
from __future__ import annotations

import math
import os
from typing import Any, Dict, Sequence

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.checkpoint import get_object_state
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io.best_model_saver import BestModelSaver
from fe_core.trace.io.model_saver import ModelSaver


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def regression_data(n: int, seed: int = 0) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]]) + 0.5).astype(np.float32)
    return NumpyDataset({"x": x, "y": y})


def make_model(name: str = "model") -> Any:
    return nb.build(2, 1, lr=0.05, name=name)


def regression_network(model: Any) -> Any:
    return make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                         MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                         UpdateOp(model=model, loss_name="mse")])


def pipeline() -> Pipeline:
    """5 training steps and 2 eval steps per epoch."""
    return Pipeline(train_data=regression_data(10), eval_data=regression_data(4, seed=1), batch_size=2)


def saved_weights(path: str) -> np.ndarray:
    fresh = nb.build(2, 1, name="probe", seed=99)
    nb.NumpyBackend().load_weights(fresh, path)
    return fresh.W


class WeightLog(Trace):
    """Copies the model's weights at the end of every epoch of `mode` (and every train step), by epoch / step."""

    def __init__(self, model: Any, mode: str = "train") -> None:
        super().__init__(mode=mode)
        self.model = model
        self.by_epoch: Dict[int, np.ndarray] = {}
        self.by_step: Dict[int, np.ndarray] = {}

    def on_batch_end(self, data: Data) -> None:
        if self.system.mode == "train":
            self.by_step[self.system.global_step] = self.model.W.copy()

    def on_epoch_end(self, data: Data) -> None:
        self.by_epoch[self.system.epoch_idx] = self.model.W.copy()


class ScriptedMetric(Trace):
    """Writes `values[epoch - 1]` as `key` at the end of each eval epoch."""

    def __init__(self, values: Sequence[float], key: str = "score") -> None:
        super().__init__(outputs=key, mode="eval")
        self.values = list(values)
        self.key = key

    def on_epoch_end(self, data: Data) -> None:
        data.write_with_log(self.key, self.values[self.system.epoch_idx - 1])


# ---------------------------------------------------------------------------------------------------- ModelSaver
def test_model_saver_writes_one_file_per_epoch_with_that_epochs_weights(tmp_path, capsys):
    model = make_model()
    log = WeightLog(model)
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
              traces=[ModelSaver(model, save_dir=str(tmp_path)), log]).fit()
    assert sorted(os.listdir(tmp_path)) == ["model_epoch_1.npz", "model_epoch_2.npz", "model_epoch_3.npz"]
    for epoch in (1, 2, 3):
        np.testing.assert_array_equal(saved_weights(str(tmp_path / f"model_epoch_{epoch}.npz")), log.by_epoch[epoch])
    assert not np.array_equal(log.by_epoch[1], log.by_epoch[3])  # the files really differ
    assert f"FastEstimator-ModelSaver: Saved model to {tmp_path / 'model_epoch_2.npz'}" in capsys.readouterr().out


def test_model_saver_max_to_keep_deletes_the_oldest(tmp_path, capsys):
    model = make_model()
    saver = ModelSaver(model, save_dir=str(tmp_path / "new_dir"), max_to_keep=2)
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=4, log_steps=None, traces=saver).fit()
    assert sorted(os.listdir(tmp_path / "new_dir")) == ["model_epoch_3.npz", "model_epoch_4.npz"]
    out = capsys.readouterr().out
    for epoch in (1, 2):
        assert (f"FastEstimator-ModelSaver: Removed model {tmp_path / 'new_dir' / f'model_epoch_{epoch}.npz'} due to "
                f"file number exceeding max_to_keep") in out
    assert [files[0] for files in saver.saved_files] == [str(tmp_path / "new_dir" / f"model_epoch_{e}.npz")
                                                          for e in (3, 4)]


def test_model_saver_integer_frequency_counts_epochs(tmp_path):
    model = make_model()
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=5, log_steps=None,
              traces=ModelSaver(model, save_dir=str(tmp_path), frequency=2)).fit()
    assert sorted(os.listdir(tmp_path)) == ["model_epoch_2.npz", "model_epoch_4.npz"]


def test_model_saver_step_frequency_names_files_by_step(tmp_path):
    model = make_model()
    log = WeightLog(model)
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=2, log_steps=None,
              traces=[ModelSaver(model, save_dir=str(tmp_path), frequency="3s", max_to_keep=2), log]).fit()
    assert sorted(os.listdir(tmp_path)) == ["model_step_6.npz", "model_step_9.npz"]
    np.testing.assert_array_equal(saved_weights(str(tmp_path / "model_step_6.npz")), log.by_step[6])


def test_model_saver_epoch_string_frequency_and_no_save_dir(tmp_path):
    model = make_model()
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
              traces=[ModelSaver(model, save_dir=str(tmp_path), frequency="3e"), ModelSaver(model, save_dir=None)]
              ).fit()
    assert os.listdir(tmp_path) == ["model_epoch_3.npz"]


def test_model_saver_rejects_bad_arguments(tmp_path):
    model = make_model()
    with pytest.raises(ValueError, match="max_to_keep"):
        ModelSaver(model, str(tmp_path), max_to_keep=-1)
    with pytest.raises(ValueError, match="positive number of epochs"):
        ModelSaver(model, str(tmp_path), frequency=0)
    with pytest.raises(ValueError, match="'2x'"):
        ModelSaver(model, str(tmp_path), frequency="2x")


def test_model_saver_asked_for_an_architecture_the_backend_cannot_save_fails_before_training(tmp_path):
    model = make_model()
    with pytest.raises(ValueError, match="ModelSaver was asked to save_architecture, but the 'numpy' backend"):
        ModelSaver(model, str(tmp_path), save_architecture=True)  # at construction, as FastEstimator's (torch)
    with pytest.raises(ValueError, match="BestModelSaver was asked to save_architecture, but the 'numpy' backend"):
        BestModelSaver(model, str(tmp_path), metric="mse", save_architecture=True)
    saver = ModelSaver(model, str(tmp_path))
    saver.save_architecture = True  # set afterwards: still refused before the first step
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=1, log_steps=None,
                          traces=saver)
    with pytest.raises(ValueError, match="ModelSaver was asked to save_architecture, but the 'numpy' backend"):
        estimator.fit()
    assert estimator.system.global_step is None


def test_a_failed_save_leaves_the_previous_file_intact_and_no_temporary(tmp_path, numpy_backend, monkeypatch):
    model = make_model()
    log = WeightLog(model)
    scores = ScriptedMetric([1.0])
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=1, log_steps=None,
                          traces=[BestModelSaver(model, str(tmp_path), metric="score"), scores, log])
    estimator.fit()
    path = tmp_path / "model_best_score.npz"
    before, first_weights = path.read_bytes(), log.by_epoch[1]

    def broken_save(model, target):  # writes half a file, then the "disk" fails
        with open(target, "wb") as file:
            file.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(type(numpy_backend), "save_weights", staticmethod(broken_save))
    scores.values = [0.5]
    with pytest.raises(OSError, match="disk full"):
        estimator.fit()  # its eval epoch is a new best and tries to save
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model_best_score.npz"]
    np.testing.assert_array_equal(saved_weights(str(path)), first_weights)


# ---------------------------------------------------------------------------------------------------- BestModelSaver
def test_best_model_saver_saves_at_each_new_best_and_logs_since_best_and_best(tmp_path, capsys):
    model = make_model()
    log = WeightLog(model, mode="eval")
    saver = BestModelSaver(model, save_dir=str(tmp_path), metric="score")
    summary = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=5, log_steps=0,
                        traces=[ScriptedMetric([3.0, 1.0, 2.0, 0.5, 0.7]), saver, log]).fit("best")
    assert os.listdir(tmp_path) == ["model_best_score.npz"]
    np.testing.assert_array_equal(saved_weights(str(tmp_path / "model_best_score.npz")), log.by_epoch[4])
    history = summary.history["eval"]
    assert history["since_best_score"] == {5: 0, 10: 0, 15: 1, 20: 0, 25: 1}
    assert history["min_score"] == {5: 3.0, 10: 1.0, 15: 1.0, 20: 0.5, 25: 0.5}
    out = capsys.readouterr().out
    assert out.count(f"FastEstimator-BestModelSaver: Saved model to {tmp_path / 'model_best_score.npz'}") == 3
    assert "FastEstimator-Eval: step: 15; epoch: 3; min_score: 1.0;" in out
    assert (saver.best, saver.since_best) == (0.5, 1)


def test_best_model_saver_max_mode(tmp_path):
    model = make_model()
    log = WeightLog(model, mode="eval")
    summary = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=0,
                        traces=[ScriptedMetric([0.2, 0.9, 0.4]), log,
                                BestModelSaver(model, save_dir=str(tmp_path), metric="score", save_best_mode="max")]
                        ).fit("best")
    np.testing.assert_array_equal(saved_weights(str(tmp_path / "model_best_score.npz")), log.by_epoch[2])
    assert summary.history["eval"]["max_score"] == {5: 0.2, 10: 0.9, 15: 0.9}


def test_best_model_saver_defaults_to_the_models_loss_averaged_over_eval(tmp_path):
    model = make_model("regressor")
    saver = BestModelSaver(model, save_dir=str(tmp_path))
    summary = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
                        traces=saver).fit("best")
    assert (saver.metric, saver.outputs) == ("mse", ["since_best_mse", "min_mse"])
    assert os.listdir(tmp_path) == ["regressor_best_mse.npz"]
    eval_mse = summary.history["eval"]["mse"]
    assert summary.history["eval"]["min_mse"] == {step: min(v for s, v in eval_mse.items() if s <= step)
                                                   for step in eval_mse}


def test_best_model_saver_metric_is_monitored_so_the_eval_mean_is_used(tmp_path):
    # 'score' is a per-batch network output that nothing else monitors: the saver's monitor makes EvalEssential
    # average it over the eval epoch, which is the value the saver compares
    model = make_model()
    score = LambdaOp(fn=lambda y: np.float64(y.sum()), inputs="y", outputs="score", mode="eval")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"), score,
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    saver = BestModelSaver(model, save_dir=str(tmp_path), metric="score")
    assert "score" in saver.fe_monitor_names
    summary = Estimator(pipeline=pipeline(), network=network, epochs=2, log_steps=0, traces=saver).fit("best")
    eval_targets = regression_data(4, seed=1).data["y"]
    mean_batch_sum = float(eval_targets.sum()) / 2  # two eval batches of two
    assert summary.history["eval"]["min_score"] == {5: pytest.approx(mean_batch_sum), 10: pytest.approx(mean_batch_sum)}
    assert summary.history["eval"]["since_best_score"] == {5: 0, 10: 1}


def test_load_best_final_restores_the_best_weights_at_the_end(tmp_path, capsys):
    model = make_model()
    log = WeightLog(model, mode="eval")
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=4, log_steps=None,
              traces=[ScriptedMetric([3.0, 1.0, 2.0, 2.5]), log,
                      BestModelSaver(model, save_dir=str(tmp_path), metric="score", load_best_final=True)]).fit()
    assert not np.array_equal(log.by_epoch[2], log.by_epoch[4])
    np.testing.assert_array_equal(model.W, log.by_epoch[2])
    assert f"FastEstimator-BestModelSaver: Restoring model from {tmp_path / 'model_best_score.npz'}" in \
        capsys.readouterr().out


def test_without_load_best_final_the_final_weights_stay(tmp_path):
    model = make_model()
    log = WeightLog(model, mode="eval")
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
              traces=[ScriptedMetric([1.0, 2.0, 3.0]), log,
                      BestModelSaver(model, save_dir=str(tmp_path), metric="score")]).fit()
    np.testing.assert_array_equal(model.W, log.by_epoch[3])


def test_best_model_saver_errors():
    model = make_model()
    with pytest.raises(ValueError, match="save_best_mode must be 'min' or 'max'"):
        BestModelSaver(model, "/tmp/x", save_best_mode="best")
    unused = make_model("unused")
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=1, log_steps=None,
                          traces=BestModelSaver(unused, save_dir=None))
    with pytest.raises(ValueError, match="BestModelSaver cannot infer the loss of model 'unused'"):
        estimator.fit()


# ---------------------------------------------------------------------------------------------------- checkpoint state
def test_saver_state_round_trips_through_save_state_and_load_state(tmp_path):
    def build():
        model = make_model()
        savers = [BestModelSaver(model, save_dir=str(tmp_path / "best")),
                  ModelSaver(model, save_dir=str(tmp_path / "every"), max_to_keep=2)]
        estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
                              traces=[ScriptedMetric([0.0] * 3), *savers])
        return estimator, savers

    estimator, (best, every) = build()
    estimator.fit()
    state = get_object_state(best)
    assert set(state) == {"best", "since_best", "model_file"}  # names only: paths are the script's configuration
    assert "model" not in state and "system" not in state
    assert math.isfinite(best.best)
    estimator.system.save_state(str(tmp_path / "ckpt"))

    fresh, (fresh_best, fresh_every) = build()
    assert fresh_best.metric is None and fresh_best.best == math.inf and fresh_every.saved_files == []
    fresh.system.load_state(str(tmp_path / "ckpt"))
    assert (fresh_best.best, fresh_best.since_best, fresh_best.model_path) == (best.best, best.since_best,
                                                                               best.model_path)
    assert fresh_every.saved_files == every.saved_files
    assert [os.path.basename(files[0]) for files in fresh_every.saved_files] == ["model_epoch_2.npz",
                                                                                 "model_epoch_3.npz"]


def test_best_model_saver_restores_a_best_value_saved_as_a_0d_array(tmp_path):
    """A data-parallel eval mean was once a 0-d array: a checkpoint holding one restores as the number it is."""
    saver = BestModelSaver(model=make_model(), save_dir=str(tmp_path))
    saver.set_state({"best": np.array(0.25, dtype=np.float32), "since_best": 2, "model_file": None})
    assert saver.best == np.float32(0.25) and not isinstance(saver.best, np.ndarray) and saver.since_best == 2
    with pytest.raises(ValueError, match="not a number"):
        saver.check_state({"best": np.array([0.25, 0.5]), "since_best": 0, "model_file": None})
