"""MLflowLogger as a newcomer meets it (issue 37): the `fe_summary.json` artifact holds the whole history of an
unnamed run, a local directory works as a tracking URI without MLFLOW_ALLOW_FILE_STORE, and creating a SQLite store
prints none of MLflow's INFO lines."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.io import MLflowLogger

mlflow_tracking = pytest.importorskip("mlflow.tracking")


@pytest.fixture(autouse=True)
def numpy_backend(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


def estimator(logger: MLflowLogger) -> Estimator:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + 0.3).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:10], "y": y[:10]}),
                        test_data=NumpyDataset({"x": x[:10], "y": y[:10]}), batch_size=5)
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    return Estimator(pipeline=pipeline, network=network, epochs=2, traces=[logger], log_steps=4)


def summary_artifact(client, run_id: str, tmp_path) -> dict:
    with open(client.download_artifacts(run_id, "fe_summary.json", str(tmp_path)), encoding="utf-8") as file:
        return json.load(file)



def test_an_unnamed_run_uploads_its_whole_history_and_sqlite_setup_prints_nothing(tmp_path, capfd):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    logger = MLflowLogger(tracking_uri=uri, log_params=False)
    est = estimator(logger)
    assert est.fit() is None  # unnamed: fit returns no Summary, yet MLflow gets the history
    est.test()
    output = capfd.readouterr()
    assert "Creating initial MLflow database tables" not in output.err + output.out
    assert "Updating database tables" not in output.err + output.out
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    summary = summary_artifact(client, logger.run_id, tmp_path)
    history = summary["history"]
    assert summary["name"] is None
    assert sorted(history["train"]["mse"], key=int) == ["1", "4", "8", "12", "16"]
    assert sorted(history["eval"]["mse"], key=int) == ["8", "16"]
    assert list(history["test"]["mse"]) == ["16"]
    assert history["train"]["epoch"] == {"8": 1, "16": 2}
    logged = sorted((m.step, m.value) for m in client.get_metric_history(logger.run_id, "train/mse"))
    assert [history["train"]["mse"][str(step)] for step, _ in logged] == pytest.approx([v for _, v in logged])


def test_a_local_directory_is_a_tracking_uri_without_mlflow_allow_file_store(tmp_path):
    logger = MLflowLogger(tracking_uri="./mlfs", log_params=False)  # `fe train mlt.py --tracking_uri ./mlfs`
    est = estimator(logger)
    est.fit("named")
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # set only while fe opens the store
    assert (tmp_path / "mlfs").is_dir()
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # to read it back here
    try:
        client = mlflow_tracking.MlflowClient(tracking_uri="./mlfs")
        assert client.get_run(logger.run_id).info.status == "FINISHED"
        summary = summary_artifact(client, logger.run_id, tmp_path)
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]
    assert summary["name"] == "named" and "16" in summary["history"]["train"]["mse"]


def test_the_unnamed_history_is_part_of_the_checkpointed_state():
    logger = MLflowLogger(tracking_uri="sqlite:///unused.db")
    logger.record = {"train": {"mse": {"1": 0.5, "4": 0.25}}}
    restored = MLflowLogger(tracking_uri="sqlite:///unused.db")
    restored.set_state(json.loads(json.dumps(logger.get_state())))
    assert restored.record == {"train": {"mse": {"1": 0.5, "4": 0.25}}}
