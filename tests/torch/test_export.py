"""fe.util.export_model for torch models: ONNX (checked with onnxruntime), TorchScript and torch.export programs."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from fe_core.util.export import ExportVerificationError, export_model
from fe_torch.architecture.lenet import LeNet


class BNDropoutNet(torch.nn.Module):
    """BatchNorm and Dropout: an export must use running statistics and no dropout (eval mode)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.5)
        self.fc = torch.nn.Linear(4 * 6 * 6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.conv(x)))
        return torch.softmax(self.fc(self.drop(torch.flatten(x, 1))), dim=-1)


def bn_net() -> BNDropoutNet:
    net = BNDropoutNet()
    net.train()
    with torch.no_grad():  # move the running statistics away from their initial values
        for _ in range(3):
            net(torch.randn(8, 1, 8, 8) * 2 + 1)
    return net


def run_onnx(path: str, x: np.ndarray) -> np.ndarray:
    import onnxruntime
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def expected(model: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return model(torch.as_tensor(x)).numpy()


@pytest.mark.slow  # the torch.export-based ONNX exporter takes several seconds per model
@pytest.mark.parametrize("make, shape", [(lambda: LeNet(input_shape=(1, 28, 28)), (2, 1, 28, 28)),
                                         (bn_net, (2, 1, 8, 8))])
def test_onnx_export_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    model = make()
    model.train()
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    result = export_model(model, str(tmp_path / "model.onnx"), x, format="onnx")
    assert result.format == "onnx" and result.path == str(tmp_path / "model.onnx") and os.path.isfile(result.path)
    assert 0 <= result.max_abs_diff <= 1e-4 and result.dynamic_batch
    assert model.training  # the model's mode is given back
    bigger = np.random.default_rng(1).normal(size=(5, *shape[1:])).astype(np.float32)  # another batch size
    np.testing.assert_allclose(run_onnx(result.path, bigger), expected(model, bigger), atol=1e-4)
    assert os.listdir(tmp_path) == ["model.onnx"]  # no temporary files left


@pytest.mark.parametrize("make, shape", [(lambda: LeNet(input_shape=(1, 28, 28)), (2, 1, 28, 28)),
                                         (bn_net, (2, 1, 8, 8))])
def test_torchscript_export_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    model = make()
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    result = export_model(model, str(tmp_path / "model.pt"), x, format="torchscript")
    assert result.max_abs_diff <= 1e-4
    loaded = torch.jit.load(result.path)
    bigger = np.random.default_rng(1).normal(size=(3, *shape[1:])).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(loaded(torch.as_tensor(bigger)).numpy(), expected(model, bigger), atol=1e-5)


@pytest.mark.slow  # torch.export traces the model through dynamo (a few seconds)
@pytest.mark.parametrize("make, shape", [(lambda: LeNet(input_shape=(1, 28, 28)), (2, 1, 28, 28)),
                                         (bn_net, (2, 1, 8, 8))])
def test_torch_export_program_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    model = make()
    x = torch.randn(*shape)  # a tensor works as well as an array
    result = export_model(model, str(tmp_path / "model.pt2"), x, format="torch.export")
    assert result.format == "torch.export" and result.max_abs_diff <= 1e-4
    program = torch.export.load(result.path).module()
    bigger = np.random.default_rng(1).normal(size=(4, *shape[1:])).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(program(torch.as_tensor(bigger)).numpy(), expected(model, bigger), atol=1e-5)


class Drifting(torch.nn.Module):
    """A model whose exported program computes something else than the model: python state frozen by tracing."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * self.calls


def test_an_export_beyond_the_tolerance_is_refused_and_leaves_nothing(tmp_path):
    # the model's own outputs are x*1 (example batch) and x*2 (doubled batch); the traced program computes x*3
    with pytest.raises(ExportVerificationError, match=r"differs from the model by up to 2 \(tolerance atol=0.0001\)"):
        export_model(Drifting(), str(tmp_path / "model.pt"), np.ones((2, 3), np.float32), format="torchscript")
    assert os.listdir(tmp_path) == []


def test_a_refused_export_keeps_an_existing_file_and_atol_sets_the_bar(tmp_path):
    target = tmp_path / "model.pt"
    target.write_bytes(b"previous")
    with pytest.raises(ExportVerificationError):
        export_model(Drifting(), str(target), np.ones((2, 3), np.float32), format="torchscript")
    assert target.read_bytes() == b"previous" and os.listdir(tmp_path) == ["model.pt"]
    result = export_model(Drifting(), str(target), np.ones((2, 3), np.float32), format="torchscript", atol=2.5)
    assert result.max_abs_diff == 2.0 and result.atol == 2.5 and target.read_bytes() != b"previous"


def test_unknown_formats_and_non_models_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'tflite' for a torch model"):
        export_model(LeNet(), str(tmp_path / "m"), np.zeros((1, 1, 28, 28), np.float32), format="tflite")
    with pytest.raises(ValueError, match="expected a torch.nn.Module or a tf.keras.Model"):
        export_model(object(), str(tmp_path / "m"), np.zeros((1, 2), np.float32))


# ---------------------------------------------------------------------------------------------- ModelExporter trace
def _fit(model, traces, epochs: int = 3) -> None:
    from fe_core.dataset import NumpyDataset
    from fe_core.estimator import Estimator
    from fe_core.network import make_network
    from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
    from fe_core.pipeline import Pipeline
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 3)).astype(np.float32)
    y = x[:, :1] - x[:, 1:2]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:8], "y": y[:8]}),
                        batch_size=8)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=4).fit()


def test_model_exporter_exports_the_best_model_at_the_end_and_mlflow_uploads_it(tmp_path, capsys, monkeypatch):
    from fe_core.build import build
    from fe_core.trace import Trace
    from fe_core.trace.io import BestModelSaver, MLflowLogger, ModelExporter
    mlflow_tracking = pytest.importorskip("mlflow.tracking")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")

    class BestWeights(Trace):  # remembers the weights of the epoch with the lowest eval mse
        def __init__(self, model):
            super().__init__(inputs="mse", mode="eval")
            self.model, self.best, self.weights = model, float("inf"), None

        def on_epoch_end(self, data):
            if float(data["mse"]) < self.best:
                self.best, self.weights = float(data["mse"]), self.model.weight.detach().clone()

    model = build(model_fn=lambda: torch.nn.Linear(3, 1), optimizer_fn=lambda p: torch.optim.SGD(p, lr=0.9),
                  model_name="reg")
    best = BestWeights(model)
    exporter = ModelExporter(model, str(tmp_path / "export"), np.zeros((2, 3), np.float32), format="torchscript")
    logger = MLflowLogger(tracking_uri=(tmp_path / "mlruns").as_uri(), log_models=True, log_params=False)
    _fit(model, [BestModelSaver(model, save_dir=str(tmp_path / "best"), metric="mse", load_best_final=True), best,
                 exporter, logger])
    assert exporter.export_path == str(tmp_path / "export" / "reg.pt") and os.path.isfile(exporter.export_path)
    assert exporter.result.max_abs_diff <= 1e-4
    out = capsys.readouterr().out
    assert "FastEstimator-ModelExporter: exported reg to" in out and "reg_export_diff" in out
    program = torch.jit.load(exporter.export_path)
    x = torch.randn(5, 3)
    with torch.no_grad():  # the exported program has the best epoch's weights
        np.testing.assert_allclose(program(x).numpy(), (x @ best.weights.T + model.bias).numpy(), atol=1e-5)
    client = mlflow_tracking.MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    uploaded = sorted(item.path for item in client.list_artifacts(logger.run_id, "models"))
    assert uploaded == ["models/reg.pt", "models/reg_best_mse.pt"]
