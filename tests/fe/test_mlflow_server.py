"""MLflowLogger against a real `mlflow server` on 127.0.0.1: a torch model trained through the `fe` namespace logs its
run, metrics, parameters and model files there; a server that goes away mid-run costs one warning and nothing else."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from typing import Iterator, Tuple

import numpy as np
import pytest

mlflow_tracking = pytest.importorskip("mlflow.tracking")

pytestmark = pytest.mark.slow  # starting an MLflow server takes ~10-30 s

START_TIMEOUT = 120  # seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(root: str, port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{os.path.join(root, 'mlflow.db')}",
               "--artifacts-destination", os.path.join(root, "artifacts")]
    log = open(os.path.join(root, f"server-{port}.log"), "ab")  # pylint: disable=consider-using-with
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mlflow server exited with {process.returncode}: "
                               f"{open(os.path.join(root, f'server-{port}.log')).read()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                healthy = response.status == 200
            if healthy:  # the tracking API's first request loads the store: wait for it too
                url = f"http://127.0.0.1:{port}/api/2.0/mlflow/experiments/get-by-name?experiment_name=Default"
                with urllib.request.urlopen(url, timeout=max(1.0, deadline - time.monotonic())) as response:
                    if response.status == 200:
                        return process
        except OSError:
            time.sleep(0.5)
    stop_server(process)
    raise RuntimeError(f"mlflow server did not answer within {START_TIMEOUT} s")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # the server's own process group (its workers too)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


@pytest.fixture
def server(tmp_path) -> Iterator[Tuple[str, int, subprocess.Popen]]:
    root, port = str(tmp_path / "server"), free_port()
    os.makedirs(root)
    process = start_server(root, port)
    holder = [process]
    yield root, port, holder
    for proc in holder:
        stop_server(proc)


def train(uri: str, tmp_path, traces_before=()) -> Tuple[object, object]:
    import torch

    import fe
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 3)).astype(np.float32)
    y = x[:, :1] - x[:, 1:2]
    pipeline = fe.Pipeline(train_data=fe.dataset.NumpyDataset({"x": x, "y": y}),
                           eval_data=fe.dataset.NumpyDataset({"x": x[:8], "y": y[:8]}), batch_size=4)
    model = fe.build(model_fn=lambda: torch.nn.Linear(3, 1), optimizer_fn="sgd", model_name="reg")
    network = fe.Network(ops=[fe.op.tensorop.model.ModelOp(model=model, inputs="x", outputs="y_pred"),
                              fe.op.tensorop.loss.MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                              fe.op.tensorop.model.UpdateOp(model=model, loss_name="mse")])
    logger = fe.trace.io.MLflowLogger(tracking_uri=uri, experiment_name="served", run_name="linear", log_models=True)
    traces = [*traces_before,
              fe.trace.io.BestModelSaver(model=model, save_dir=str(tmp_path / "best"), metric="mse"),
              fe.trace.io.ModelExporter(model, str(tmp_path / "export"), x[:2], format="torchscript"), logger]
    estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=3)
    estimator.fit()
    return logger, estimator


def test_a_run_logs_metrics_params_and_models_to_a_local_server(server, tmp_path, fresh_build_names, monkeypatch):
    monkeypatch.chdir(tmp_path)  # values a failed run keeps land in the test's folder
    _, port, _ = server
    uri = f"http://127.0.0.1:{port}"
    logger, _ = train(uri, tmp_path)
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    run = client.get_run(logger.run_id)
    assert run.info.run_name == "linear" and run.info.status == "FINISHED"
    steps = [m.step for m in client.get_metric_history(logger.run_id, "train/mse")]
    assert steps == [1, 3, 6, 9, 12, 15, 18, 21, 24]
    assert [m.step for m in client.get_metric_history(logger.run_id, "eval/mse")] == [12, 24]
    assert run.data.params["epochs"] == "2" and run.data.params["batch_size"] == "4"
    assert run.data.params["framework"] == "torch"
    assert sorted(item.path for item in client.list_artifacts(logger.run_id, "models")) == \
        ["models/reg.pt", "models/reg_best_mse.pt"]
    assert "fe_summary.json" in [item.path for item in client.list_artifacts(logger.run_id)]


def test_a_server_that_goes_away_mid_run_warns_once_and_loses_nothing(server, tmp_path, fresh_build_names,
                                                                      monkeypatch):
    import fe
    root, port, holder = server
    uri = f"http://127.0.0.1:{port}"
    monkeypatch.chdir(tmp_path)

    class KillServer(fe.trace.Trace):
        def on_batch_end(self, data):
            if self.system.global_step == 7:
                stop_server(holder[0])

    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        logger, estimator = train(uri, tmp_path, [KillServer(mode="train")])
    assert time.monotonic() - started < 60  # no long retries while the server is gone
    assert estimator.system.global_step == 24  # training went on to the end
    messages = [str(w.message) for w in caught if "MLflowLogger" in str(w.message)]
    assert len([m for m in messages if "training continues" in m]) == 1
    unsent = tmp_path / "fe_mlflow_unsent" / f"{logger.run_id}.json"
    assert unsent.exists()
    holder.append(start_server(root, port))  # the server comes back: the kept values are sent
    assert fe.trace.io.MLflowLogger.send_unsent(str(unsent)) > 0
    client = mlflow_tracking.MlflowClient(tracking_uri=uri)
    steps = [m.step for m in client.get_metric_history(logger.run_id, "train/mse")]
    assert steps == [1, 3, 6, 9, 12, 15, 18, 21, 24]
    assert [m.step for m in client.get_metric_history(logger.run_id, "eval/mse")] == [12, 24]
