"""CUDA-only behaviour: placement, float16 autocast with GradScaler (and its saved state), and loading a GPU-trained
model on a CPU-only machine. Marked `gpu`: deselected by default and skipped without CUDA."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any, List

import numpy as np
import torch

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, LambdaOp, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_torch import LeNet
from torch_helpers import image_task, requires_gpu

pytestmark = requires_gpu

BACKEND = get_backend("torch")


def lenet_network(model: Any, record: List[Any]) -> Any:
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             LambdaOp(fn=lambda p: record.append((p.device.type, p.dtype)), inputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                             UpdateOp(model=model, loss_name="ce")])


def test_models_inputs_and_optimizer_state_live_on_cuda_and_predictions_come_back_as_numpy() -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam")
    assert all(p.device.type == "cuda" for p in model.parameters())
    record: List[Any] = []
    network = lenet_network(model, record)
    assert network.device.type == "cuda" and BACKEND.num_devices() == 1
    x, y = image_task(64, seed=0)
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16), network=network,
              epochs=1, log_steps=None).fit()
    assert record and all(device == "cuda" for device, _ in record)
    state = model.current_optimizer.state_dict()["state"]
    assert all(v.device.type == "cuda" for s in state.values() for k, v in s.items() if k != "step" and v.ndim)
    result = network.transform({"x": x[:8], "y": y[:8]}, mode="eval")
    # transform hands back host torch tensors, as FastEstimator
    assert isinstance(result["y_pred"], torch.Tensor) and result["y_pred"].device.type == "cpu"
    assert result["y_pred"].shape == (8, 10)
    assert len(BACKEND.get_rng_state()["cuda"]) == torch.cuda.device_count()


def test_fp16_autocast_with_grad_scaler_trains_and_saves_the_scaler(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", mixed_precision=True, model_name="amp")
    scaler = model.current_optimizer.scaler
    assert isinstance(scaler, torch.amp.GradScaler) and scaler.is_enabled()
    record: List[Any] = []
    network = lenet_network(model, record)
    x, y = image_task(256, seed=0)
    # warmup: no weight, optimizer or scaler change
    weights = [p.detach().clone() for p in model.parameters()]
    with network(mode="train", epoch=1, warmup=True):
        network.run_step({"x": x[:16], "y": y[:16]})
    assert all(torch.equal(a, b) for a, b in zip(weights, model.parameters()))
    assert model.current_optimizer.state_dict()["state"] == {}
    assert scaler._scale is None or float(scaler.get_scale()) == 65536.0
    # LeNet ends in a softmax, which autocast runs in float32: its hidden layer shows the float16 compute
    hidden: List[Any] = []
    hook = model.fc1.register_forward_hook(lambda module, args, out: hidden.append((out.device.type, out.dtype)))
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=32), network=network,
              epochs=1, log_steps=None).fit()
    hook.remove()
    assert hidden and all(entry == ("cuda", torch.float16) for entry in hidden)
    assert record and all(entry == ("cuda", torch.float32) for entry in record)  # the softmax output
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert not torch.equal(weights[0], model.conv1.weight.detach())
    scaler_state = scaler.state_dict()
    BACKEND.save_model(model, str(tmp_path), save_optimizer=True)
    saved = torch.load(tmp_path / "amp_opt.pt", weights_only=True)
    assert saved["scalers"][0]["scale"] == scaler_state["scale"]
    assert saved["scalers"][0]["_growth_tracker"] == scaler_state["_growth_tracker"]
    clone = build(model_fn=LeNet, optimizer_fn="adam", mixed_precision=True, model_name="amp")
    BACKEND.load_model(clone, str(tmp_path), load_optimizer=True)
    assert clone.current_optimizer.scaler.state_dict() == scaler_state


def test_a_gpu_trained_model_loads_on_a_cpu_only_machine(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="gpu_model")
    network = lenet_network(model, [])
    x, y = image_task(64, seed=0)
    with network(mode="train", epoch=1):
        for i in range(0, 64, 16):
            network.run_step({"x": x[i:i + 16], "y": y[i:i + 16]})
    BACKEND.save_model(model, str(tmp_path), save_optimizer=True)
    expected = network.transform({"x": x[:8], "y": y[:8]}, mode="eval")["y_pred"].numpy()
    np.save(tmp_path / "x.npy", x[:8])
    code = textwrap.dedent(f"""
        import numpy as np, torch
        assert not torch.cuda.is_available()
        from fe_core.framework import get_backend
        from fe_core.build import build
        from fe_torch import LeNet
        model = build(model_fn=LeNet, optimizer_fn="adam", model_name="gpu_model")
        get_backend("torch").load_model(model, {str(tmp_path)!r}, load_optimizer=True)
        state = model.current_optimizer.state_dict()["state"]
        assert state and all(v.device.type == "cpu" for s in state.values() for v in s.values())
        with torch.no_grad():
            np.save({str(tmp_path / "cpu.npy")!r}, model.eval()(torch.from_numpy(np.load({str(tmp_path / "x.npy")!r}))).numpy())
    """)
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1"))
    np.testing.assert_allclose(np.load(tmp_path / "cpu.npy"), expected, rtol=1e-4, atol=1e-5)
