"""With torch and TensorFlow both installed: get_results hands out torch tensors (as FastEstimator's pipeline) except
for a tf.data source, transform hands out the network's own framework's tensors, and traces and backend functions
acting on a model go through the model's own framework, whatever framework the System's Network uses."""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

tf = pytest.importorskip("tensorflow")
torch = pytest.importorskip("torch")
keras = pytest.importorskip("keras")

import fe  # noqa: E402


def data(n: int = 16) -> dict:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return {"x": x, "y": x.sum(axis=1, keepdims=True)}


def tf_network() -> tuple:
    model = fe.build(model_fn=lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)]),
                     optimizer_fn=lambda: keras.optimizers.SGD(0.01), model_name="tf_reg")
    network = fe.Network(ops=[fe.op.tensorop.model.ModelOp(model=model, inputs="x", outputs="y_pred"),
                              fe.op.tensorop.loss.MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                              fe.op.tensorop.model.UpdateOp(model=model, loss_name="mse")])
    return model, network


def torch_model() -> torch.nn.Module:
    return fe.build(model_fn=lambda: torch.nn.Linear(3, 1), optimizer_fn=lambda p: torch.optim.SGD(p, lr=1.0),
                    model_name="torch_side")


def test_get_results_prefers_torch_but_a_tf_data_source_keeps_tf_tensors() -> None:
    batch = fe.Pipeline(train_data=fe.dataset.NumpyDataset(data()), batch_size=4).get_results()
    assert isinstance(batch["x"], torch.Tensor)
    source = tf.data.Dataset.from_tensor_slices(data()).batch(4)
    assert tf.is_tensor(fe.Pipeline(train_data=source).get_results()["x"])


def test_the_loader_user_code_gets_is_a_torch_dataloader_as_in_fastestimator() -> None:
    pipeline = fe.Pipeline(train_data=fe.dataset.NumpyDataset(data()), batch_size=4)
    with pipeline(mode="train") as loader:
        assert isinstance(loader, torch.utils.data.DataLoader) and loader.batch_size == 4 and len(loader) == 4
        assert all(isinstance(batch["x"], torch.Tensor) for batch in loader)
    source = tf.data.Dataset.from_tensor_slices(data()).batch(4)
    assert fe.Pipeline(train_data=source).get_loader(mode="train") is source  # a tf.data source: handed out as is


def test_transform_hands_out_the_networks_framework_tensors() -> None:
    _, network = tf_network()
    torch_batch = fe.Pipeline(eval_data=fe.dataset.NumpyDataset(data()), batch_size=16).get_results(mode="eval")
    result = network.transform(torch_batch, mode="eval")  # torch tensors in, the tf network's tensors out
    assert tf.is_tensor(result["y_pred"]) and tf.is_tensor(result["x"])


def test_backend_lr_functions_dispatch_on_the_model() -> None:
    torch_side = torch_model()
    tf_model, _ = tf_network()
    fe.backend.set_lr(torch_side, 0.25)
    fe.backend.set_lr(tf_model, 0.5)
    assert fe.backend.get_lr(torch_side) == pytest.approx(0.25)
    assert fe.backend.get_lr(tf_model) == pytest.approx(0.5)


def test_lr_traces_on_a_torch_model_under_a_tensorflow_system() -> None:
    torch_side = torch_model()
    _, network = tf_network()
    pipeline = fe.Pipeline(train_data=fe.dataset.NumpyDataset(data()), eval_data=fe.dataset.NumpyDataset(data()),
                           batch_size=8)
    scheduler = fe.trace.adapt.LRScheduler(model=torch_side, lr_fn=lambda epoch: 0.1 / epoch)
    plateau = fe.trace.adapt.ReduceLROnPlateau(model=torch_side, metric="mse", patience=0, factor=0.5)
    estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=2, traces=[scheduler, plateau],
                             log_steps=None)
    estimator.fit()
    # epoch 2 begins at 0.1 / 2; the plateau trace halves it when epoch 2's eval does not improve, or keeps it
    assert fe.backend.get_lr(torch_side) in (pytest.approx(0.05), pytest.approx(0.025))
    assert torch_side.current_optimizer.param_groups[0]["lr"] == pytest.approx(fe.backend.get_lr(torch_side))
