"""Review of issues 36/37 on torch, as a FastEstimator user's code meets them: BestModelSaver / ReduceLROnPlateau
take the model's loss when created (UpdateOp records it in `model.loss_name`), and the hand-iterated loader hands
torch tensors over several epochs, in eval per ds_id, with `len(loader)`."""
import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.network import make_network
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.adapt import ReduceLROnPlateau
from fe_core.trace.io import BestModelSaver


def _model(name):
    return build(lambda: torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(-1)), "adam", model_name=name)


def test_savers_take_the_models_one_loss_when_created(tmp_path):
    model = _model("review_a")
    make_network([ModelOp(model, "x", "p"), CrossEntropy(("p", "y"), "myloss"), UpdateOp(model, "myloss")])
    assert model.loss_name == {"myloss"}
    saver = BestModelSaver(model=model, save_dir=str(tmp_path))
    assert saver.metric == "myloss" and saver.model_name == "review_a_best_myloss"
    assert saver.inputs == ["myloss"] and saver.outputs == ["since_best_myloss", "min_myloss"]
    assert ReduceLROnPlateau(model).metric == "myloss"


def test_a_model_with_several_losses_still_needs_the_network_or_a_metric(tmp_path):
    model = _model("review_b")
    UpdateOp(model, "l1")
    UpdateOp(model, "l2")
    assert model.loss_name == {"l1", "l2"}
    assert BestModelSaver(model=model, save_dir=str(tmp_path)).metric is None  # decided from the network later
    assert BestModelSaver(model=model, save_dir=str(tmp_path), metric="l2").metric == "l2"


def test_loader_batches_are_torch_tensors_every_epoch_and_per_ds_id():
    data = NumpyDataset({"x": np.arange(40, dtype=np.float32).reshape(10, 4),
                                    "y": np.arange(10, dtype=np.int64)})
    pipeline = Pipeline(train_data=data, eval_data={"a": data, "b": data}, batch_size=4, num_process=0)
    for epoch in (1, 2):
        with pipeline(mode="train", epoch=epoch) as loader:
            assert len(loader) == 3
            batches = list(loader)
        assert len(batches) == 3 and all(isinstance(batch["x"], torch.Tensor) for batch in batches)
        assert batches[0]["x"].dtype == torch.float32 and batches[0]["y"].dtype == torch.int64
        assert sorted(int(v) for batch in batches for v in batch["y"].numpy()) == list(range(10))
    with pipeline(mode="eval", ds_id="b", shuffle=False) as loader:
        assert next(iter(loader))["y"].numpy().tolist() == [0, 1, 2, 3]


def test_the_logger_prints_torch_tensors_a_trace_logs_grad_and_all(capsys):
    from fe_core.summary.logs import parse_log_text
    from logger_helpers import log_eval_epoch
    system = log_eval_epoch({"weighted": torch.ones(1, requires_grad=True) * 0.25, "plain": torch.tensor(2.5)}, step=4)
    line = capsys.readouterr().out.strip()
    assert line == "FastEstimator-Eval: step: 4; epoch: 1; plain: 2.5; weighted: 0.25;"
    assert parse_log_text(line + "\n").history["eval"]["weighted"][4] == 0.25
    assert system.summary.history["eval"]["weighted"][4] == 0.25


def test_a_models_own_loss_name_attribute_is_left_alone(tmp_path):
    class Named(torch.nn.Linear):
        loss_name = "mine"

    model = build(lambda: Named(4, 2), "adam", model_name="review_c")
    UpdateOp(model, "ce")
    assert model.loss_name == "mine"
    assert BestModelSaver(model=model, save_dir=str(tmp_path)).metric is None  # decided from the network later
