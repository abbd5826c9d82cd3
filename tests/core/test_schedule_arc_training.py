"""LRScheduler(model, lr_fn=ARC(...)) in a real fit: ARC reads the train/eval losses and changes the learning rate
every `frequency` epochs by one of its multipliers."""
from __future__ import annotations

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import ARC
from fe_core.schedule.arc import ArcNetwork
from fe_core.trace import Trace
from fe_core.trace.adapt import LRScheduler


@pytest.fixture(autouse=True)
def numpy_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("FE_HISTORY_DB", "off")
    backend = nb.install()
    yield backend
    nb.uninstall()


class LrLog(Trace):
    def __init__(self, model, lrs):
        super().__init__(mode="train")
        self.model, self.lrs = model, lrs

    def on_epoch_begin(self, data):
        self.lrs.append(self.system.network.backend.get_lr(self.model))


def test_arc_changes_the_rate_every_frequency_epochs(tmp_path):
    rng = np.random.default_rng(0)
    weights = [rng.normal(scale=0.2, size=shape) for shape in ArcNetwork.SHAPES]
    weights[-1] = np.array([20.0, 0.0, 0.0])  # the output bias makes the network always pick 'raise' (x1.618)
    np.savez(tmp_path / "arc.npz", *weights)
    arc = ARC(frequency=2, weights_path=str(tmp_path / "arc.npz"))
    x = rng.normal(size=(32, 2)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": x[:, :1] * 2})
    model = nb.build(2, 1, lr=0.1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    lrs = []
    estimator = Estimator(pipeline=Pipeline(train_data=data, eval_data=data, batch_size=8), network=network,
                          epochs=5, traces=[LRScheduler(model=model, lr_fn=arc), LrLog(model, lrs)], log_steps=None)
    estimator.fit()
    assert lrs == pytest.approx([0.1, 0.1, 0.1618, 0.1618, 0.1618 * 1.618], rel=1e-5)  # ARC acts at epochs 3, 5
    assert len(arc.all_train_loss) == 3 and arc.all_train_loss[-1] and len(arc.all_train_loss[-1]) == 8  # 2 epochs x 4
    assert arc.all_eval_loss[-1] and len(arc.all_eval_loss[-1]) == 2
    assert arc.all_train_lr[-1] == pytest.approx(lrs[-1])


def test_arc_needs_an_update_op_for_its_model():
    model = nb.build(2, 1)
    other = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    x = np.zeros((8, 2), dtype=np.float32)
    estimator = Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": x[:, :1]}), batch_size=4),
                          network=network, epochs=1, traces=LRScheduler(model=other, lr_fn=ARC()), log_steps=None)
    with pytest.raises(ValueError, match="no UpdateOp updates model"):
        estimator.fit(warmup=False)
