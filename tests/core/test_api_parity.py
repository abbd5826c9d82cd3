"""FastEstimator API details of Pipeline, Network and Estimator: get_results' return shape, transform's
target_type and iterables, Estimator defaults (eval_log_steps, monitor_names with None), EarlyStop, record_history."""
from __future__ import annotations

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import EarlyStop, Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.slicer import forward_slicers, reverse_slicers, sanity_assert_slicers
from fe_core.trace import Trace


@pytest.fixture(autouse=True)
def numpy_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("FE_HISTORY_DB", str(tmp_path / "history.db"))
    backend = nb.install()
    yield backend
    nb.uninstall()


def dataset(n: int = 10) -> NumpyDataset:
    x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    return NumpyDataset({"x": x, "y": x[:, :1]})


def network():
    model = nb.build(2, 1)
    return make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                         MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                         UpdateOp(model=model, loss_name="mse")])


def test_get_results_is_a_dict_for_one_batch_and_a_list_otherwise():
    pipeline = Pipeline(train_data=dataset(4), batch_size=4)
    assert isinstance(pipeline.get_results(), dict)
    assert isinstance(pipeline.get_results(num_steps=3), dict)  # only one batch exists: a dict, as FastEstimator
    several = Pipeline(train_data=dataset(4), batch_size=1).get_results(num_steps=3)
    assert isinstance(several, list) and len(several) == 3
    with pytest.raises(ValueError, match="num_steps"):
        pipeline.get_results(num_steps=0)


def test_pipeline_transform_target_type():
    pipeline = Pipeline(train_data=dataset(), batch_size=2)
    out = pipeline.transform({"x": np.ones(2, dtype=np.float32)}, mode="infer", target_type="np")
    assert isinstance(out["x"], np.ndarray) and out["x"].shape == (1, 2)
    with pytest.raises(ValueError, match="target_type must be 'np', 'torch' or 'tf'"):
        pipeline.transform({"x": np.ones(2)}, mode="infer", target_type="jax")


def test_network_transform_takes_any_iterable_of_batches():
    net = network()
    batches = ({"x": np.ones((n, 2), dtype=np.float32)} for n in (1, 3))
    results = net.transform(batches, mode="infer")
    assert [r["y_pred"].shape for r in results] == [(1, 1), (3, 1)]
    with pytest.raises(TypeError, match="element 0 of the data is a int"):
        net.transform([1, 2], mode="infer")
    with pytest.raises(TypeError, match="got int"):
        net.transform(5, mode="infer")


def test_get_loss_keys_and_scheduled_items():
    net = network()
    assert net.get_loss_keys() == {"mse"}
    assert len(net.get_scheduled_items("train")) == 4  # 3 ops + the optimizer
    assert len(net.get_scheduled_items("eval")) == 3


class Stopper(Trace):
    def on_batch_end(self, data):
        self.system.stop_training = True


def test_estimator_defaults_and_early_stop(capsys):
    estimator = Estimator(pipeline=Pipeline(train_data=dataset(), eval_data=dataset(4), batch_size=2),
                          network=network(), epochs=3, monitor_names=[None, "mse"], traces=Stopper(mode="train"))
    assert estimator.system.eval_log_steps_request == []  # FastEstimator's default: no eval progress lines
    assert estimator.monitor_names == {"mse"}
    assert estimator.filepath.endswith("test_api_parity.py")
    estimator.fit()
    assert estimator.system.global_step == 1  # stopped after the first step
    assert "Eval Progress" not in capsys.readouterr().out
    assert issubclass(EarlyStop, Exception)


def test_slicer_runner_functions_are_public():
    assert callable(forward_slicers) and callable(reverse_slicers)
    sanity_assert_slicers([])
