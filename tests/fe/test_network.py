"""`fe.Network` picks the backend that owns the models and refuses what cannot work; `fe.build` names and counts
models. (Which frameworks get imported is checked in fresh processes by test_import_isolation.py.)"""
from __future__ import annotations

import pytest

import fe
from fe.op.tensorop import LambdaOp
from fe.op.tensorop.loss import CrossEntropy
from fe.op.tensorop.model import ModelOp, UpdateOp


def torch_model(name=None):
    from fe.architecture.pytorch import LeNet
    return fe.build(model_fn=LeNet, optimizer_fn="adam", model_name=name)


def tf_model(name=None):
    from fe.architecture.tensorflow import LeNet
    return fe.build(model_fn=LeNet, optimizer_fn="adam", model_name=name)


def train_ops(model, suffix=""):
    return [ModelOp(model=model, inputs="x", outputs="y_pred" + suffix),
            CrossEntropy(inputs=("y_pred" + suffix, "y"), outputs="ce" + suffix),
            UpdateOp(model=model, loss_name="ce" + suffix)]


@pytest.mark.parametrize("make_model, network_type", [(torch_model, "TorchNetwork"), (tf_model, "TFNetwork")])
def test_the_network_belongs_to_the_models_framework(make_model, network_type):
    network = fe.Network(ops=train_ops(make_model()))
    assert type(network).__name__ == network_type
    assert network is not None and type(network) is getattr(fe.network, network_type)


def test_mixing_frameworks_is_refused():
    with pytest.raises(ValueError, match=r"cannot mix frameworks.*tf, torch"):
        fe.Network(ops=train_ops(torch_model()) + train_ops(tf_model(), suffix="2"))


@pytest.mark.parametrize("make_model", [torch_model, tf_model])
def test_model_names_must_differ_case_insensitively(make_model):
    first, second = make_model("Classifier"), make_model("classifier")
    with pytest.raises(ValueError, match=r"unique \(case-insensitive\).*'Classifier' and 'classifier'"):
        fe.Network(ops=train_ops(first) + train_ops(second, suffix="2"))


def test_without_models_and_without_backends_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(fe.network, "available_backends", lambda: [])
    with pytest.raises(ImportError, match=r"pip install ./packages/fe-torch.*pip install ./packages/fe-tf"):
        fe.Network(ops=[LambdaOp(fn=lambda x: x, inputs="x", outputs="y")])


def test_without_models_the_first_installed_backend_is_used(monkeypatch):
    monkeypatch.setattr(fe.network, "available_backends", lambda: ["tf"])
    assert fe.network.default_backend_name() == "tf"
    monkeypatch.setattr(fe.network, "available_backends", lambda: ["tf", "torch"])
    # both frameworks are loaded in this process: the preference order decides
    assert fe.network.default_backend_name() == "torch"


def test_build_names_models_model_model1_across_calls(fresh_build_names):
    first, second = torch_model(), tf_model()
    assert (first.model_name, second.model_name) == ("model", "model1")
    assert torch_model("mine").model_name == "mine"
    assert torch_model().model_name == "model2"


def test_build_returns_a_list_for_several_models_and_checks_list_lengths(fresh_build_names):
    import torch
    models = fe.build(model_fn=lambda: [torch.nn.Linear(2, 2), torch.nn.Linear(2, 3)], optimizer_fn=["adam", "sgd"])
    assert isinstance(models, list) and [m.model_name for m in models] == ["model", "model1"]
    with pytest.raises(ValueError, match=r"one optimizer, weights path and name per model; got 2 models, "
                                         r"1 optimizers"):
        fe.build(model_fn=lambda: [torch.nn.Linear(2, 2), torch.nn.Linear(2, 3)], optimizer_fn=["adam"])
    with pytest.raises(ValueError, match=r"2 models.*3 model names"):
        fe.build(model_fn=lambda: [torch.nn.Linear(2, 2), torch.nn.Linear(2, 3)], optimizer_fn="adam",
                 model_name=["a", "b", "c"])
