"""MLflowLogger against real MLflow stores (a local file store and SQLite), with a framework-free numpy model."""
from __future__ import annotations

import json
import os
import warnings
from typing import Any, List, Optional

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.summary.run_arguments import set_run_arguments
from fe_core.trace import Trace
from fe_core.trace.io import BestModelSaver, MLflowLogger, RestoreWizard
from fe_core.trace.io.mlflow_logger import metric_name

mlflow_tracking = pytest.importorskip("mlflow.tracking")  # fe-core[mlflow] is part of fe-core[all]


@pytest.fixture(autouse=True)
def numpy_backend(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # MLflow's defaults and the unsent-values folder land in the test's folder
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 refuses file stores unless asked to
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()
    set_run_arguments(None)


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self):
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def estimator(logger: MLflowLogger, traces: Optional[List[Trace]] = None, epochs: int = 2) -> Estimator:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + 0.3).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:10], "y": y[:10]}),
                        test_data=NumpyDataset({"x": x[:10], "y": y[:10]}), batch_size=5)
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    return Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[*(traces or []), logger],
                     log_steps=4)


def history(client: Any, run_id: str, name: str) -> List[tuple]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, name))


def test_metric_names_follow_modes_and_ds_ids_with_characters_mlflow_accepts():
    assert metric_name("train", "ce") == "train/ce"
    assert metric_name("eval", "accuracy|ds1") == "eval/accuracy/ds1"
    assert metric_name("train", "epoch_time(sec)") == "train/epoch_time_sec"
    assert metric_name("train", "steps/sec") == "train/steps/sec"


# a new SQLite store runs MLflow's schema migrations (~20 s on a busy 2-core machine): slow
@pytest.mark.parametrize("store", ["file", pytest.param("sqlite", marks=pytest.mark.slow)])
def test_fit_and_test_log_metrics_params_and_summary_into_one_run(tmp_path, store):
    uri = (tmp_path / "mlruns").as_uri() if store == "file" else f"sqlite:///{tmp_path / 'mlflow.db'}"
    set_run_arguments({"epochs": 2, "lr": 0.05})  # what `fe train --epochs 2 --lr 0.05` records
    logger = MLflowLogger(tracking_uri=uri, experiment_name="exp", run_name="reg-run")
    est = estimator(logger)
    fitted = est.fit("run")
    est.test("run")
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("exp")
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 1 and runs[0].info.run_id == logger.run_id
    run = runs[0]
    assert run.info.run_name == "reg-run" and run.info.status == "FINISHED"
    # 8 steps per epoch, log_steps=4: training values at steps 1, 4, 8, 12, 16; eval at each epoch end (8, 16)
    assert [step for step, _ in history(client, logger.run_id, "train/mse")] == [1, 4, 8, 12, 16]
    recorded = fitted.history["train"]["mse"]
    logged = history(client, logger.run_id, "train/mse")
    assert [value for _, value in logged] == pytest.approx([value for _, value in sorted(recorded.items())])
    assert [step for step, _ in history(client, logger.run_id, "eval/mse")] == [8, 16]
    assert [step for step, _ in history(client, logger.run_id, "test/mse")] == [16]
    assert [value for _, value in history(client, logger.run_id, "epoch")] == [1, 2]
    assert "train/total_time_sec" in run.data.metrics and "train/reg_lr" in run.data.metrics
    assert "train/steps/sec" in run.data.metrics and "train/epoch_time_sec" in run.data.metrics
    params = run.data.params
    assert params["arg.epochs"] == "2" and params["arg.lr"] == "0.05"
    assert params["epochs"] == "2" and params["batch_size"] == "5" and params["log_steps"] == "4"
    assert params["data.train.size"] == "40" and params["model.reg.optimizer"] != ""
    artifacts = [item.path for item in client.list_artifacts(logger.run_id)]
    assert "fe_summary.json" in artifacts
    summary = json.load(open(client.download_artifacts(logger.run_id, "fe_summary.json", str(tmp_path))))
    assert "test" in summary["history"] and summary["name"] == "run"


def test_best_model_files_are_uploaded_with_log_models(tmp_path):
    uri = (tmp_path / "mlruns").as_uri()
    logger = MLflowLogger(tracking_uri=uri, log_models=True, log_params=False)
    est = estimator(logger)
    model = est.network.models[0]
    est.traces.insert(0, BestModelSaver(model=model, save_dir=str(tmp_path / "best"), metric="mse",
                                        save_best_mode="min"))
    est.fit()
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    uploaded = [item.path for item in client.list_artifacts(logger.run_id, "models")]
    assert uploaded and all(path.startswith("models/reg_best_mse") for path in uploaded)
    assert client.get_run(logger.run_id).data.params == {}  # log_params=False


def test_a_killed_and_resumed_run_continues_the_same_mlflow_run_without_duplicates(tmp_path):
    uri = (tmp_path / "mlruns").as_uri()
    checkpoints = str(tmp_path / "ckpt")
    first = MLflowLogger(tracking_uri=uri)
    with pytest.raises(Crash):
        estimator(first, [KillAt(11), RestoreWizard(checkpoints, frequency="5s")]).fit()
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    assert client.get_run(first.run_id).info.status == "FAILED"
    resumed = MLflowLogger(tracking_uri=uri)  # the same script again, in a fresh process
    est = estimator(resumed, [KillAt(None), RestoreWizard(checkpoints, frequency="5s")])
    est.fit()
    assert resumed.run_id == first.run_id
    experiment = client.get_experiment_by_name("fe")
    assert len(client.search_runs([experiment.experiment_id])) == 1
    assert client.get_run(first.run_id).info.status == "FINISHED"
    steps = [step for step, _ in history(client, first.run_id, "train/mse")]
    assert steps == [1, 4, 8, 12, 16]  # steps 1-8 from the first process (checkpoint at 10), 12 and 16 resumed
    assert [step for step, _ in history(client, first.run_id, "eval/mse")] == [8, 16]


def test_a_new_fit_opens_a_new_run(tmp_path):
    uri = (tmp_path / "mlruns").as_uri()
    logger = MLflowLogger(tracking_uri=uri)
    est = estimator(logger, epochs=1)
    est.fit()
    first = logger.run_id
    est.fit()
    assert logger.run_id != first


class StoreGoesAway(Trace):
    """Makes every MLflow request fail from a given step on, as a tracking server that went away does."""

    def __init__(self, logger: MLflowLogger, step: int) -> None:
        super().__init__(mode="train")
        self.logger, self.step = logger, step

    def get_state(self):
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            client = self.logger._mlflow_client()  # pylint: disable=protected-access

            def refuse(*args, **kwargs):
                raise ConnectionError("Connection refused")
            for name in ("log_batch", "set_terminated", "log_artifact", "update_run"):
                setattr(client, name, refuse)


def test_a_store_that_goes_away_warns_once_training_continues_and_values_are_kept(tmp_path):
    uri = (tmp_path / "mlruns").as_uri()
    logger = MLflowLogger(tracking_uri=uri)
    est = estimator(logger, [StoreGoesAway(logger, 6)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit()
    messages = [str(w.message) for w in caught if "MLflowLogger" in str(w.message)]
    assert len([m for m in messages if "training continues" in m]) == 1
    assert est.system.global_step == 16  # training went on
    unsent = tmp_path / "fe_mlflow_unsent" / f"{logger.run_id}.json"
    assert unsent.exists() and any(str(unsent) in m for m in messages)
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    assert [step for step, _ in history(client, logger.run_id, "train/mse")] == [1, 4]
    sent = MLflowLogger.send_unsent(str(unsent))
    assert sent > 0 and not unsent.exists()
    assert [step for step, _ in history(client, logger.run_id, "train/mse")] == [1, 4, 8, 12, 16]
    assert [step for step, _ in history(client, logger.run_id, "eval/mse")] == [8, 16]


def test_a_store_back_before_the_end_gets_every_value(tmp_path):
    uri = (tmp_path / "mlruns").as_uri()
    logger = MLflowLogger(tracking_uri=uri)

    class Outage(Trace):
        def get_state(self):
            return {}

        def on_batch_end(self, data):
            client = logger._mlflow_client()  # pylint: disable=protected-access
            if self.system.global_step == 2:
                def refuse(*args, **kwargs):
                    raise ConnectionError("Connection refused")
                client.log_batch = refuse
            elif self.system.global_step == 7:
                del client.log_batch  # the class's method again
    est = estimator(logger, [Outage(mode="train")])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        est.fit()
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    assert [step for step, _ in history(client, logger.run_id, "train/mse")] == [1, 4, 8, 12, 16]
    assert not (tmp_path / "fe_mlflow_unsent").exists()


def test_without_mlflow_one_line_names_the_extra(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.startswith("mlflow"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    import importlib
    monkeypatch.setattr(importlib, "import_module", lambda name, package=None: no_mlflow(name))
    with pytest.raises(ImportError, match=r"MLflowLogger needs mlflow.*\[mlflow\]"):
        estimator(MLflowLogger(tracking_uri="file:///nowhere")).fit()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="experiment_name"):
        MLflowLogger(experiment_name="")
    with pytest.raises(ValueError, match="log_params"):
        MLflowLogger(log_params="yes")


def test_only_rank_0_of_a_data_parallel_run_logs(tmp_path):
    from fe_core.data import Data
    from fe_core.distributed import get_communicator
    from fe_core.distributed.threads import ThreadGroup
    from trace_helpers import make_system
    uri = (tmp_path / "mlruns").as_uri()

    def one_rank():
        logger = MLflowLogger(tracking_uri=uri, log_params=False)
        system = make_system(logger, mode="eval")
        system.global_step = 8
        logger.on_begin(Data())
        end = Data()
        end.write_with_log("mse", 0.5 + get_communicator().rank)
        logger.on_epoch_end(end)
        logger.on_end(Data())
        return logger.run_id

    run_ids = ThreadGroup(2).run(one_rank)
    assert run_ids[0] and run_ids[1] == ""  # rank 1 opened nothing
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    assert len(client.search_runs([client.get_experiment_by_name("fe").experiment_id])) == 1
    assert history(client, run_ids[0], "eval/mse") == [(8, 0.5)]
