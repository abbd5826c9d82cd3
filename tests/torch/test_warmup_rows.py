"""The Estimator's warmup on torch runs models on two samples of the batch (their outputs' rows repeated back to the
batch's length), so a warmup step costs a fraction of a forward pass; whatever fails on the few samples runs again on
the whole batch, so checks, errors and batch-size-dependent code behave as with the whole batch."""
from __future__ import annotations

from typing import Any, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.op.tensorop import LambdaOp as TensorLambdaOp
from fe_core.pipeline import Pipeline

BATCH = 8


class Recording(torch.nn.Module):
    """A classifier that records the batch size of every call (and may insist on the whole batch)."""

    def __init__(self, needs_batch: int = 0, flatten: bool = False) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                                        torch.nn.Linear(8, 3))
        self.sizes: List[int] = []
        self.needs_batch = needs_batch
        self.flatten = flatten

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.sizes.append(int(x.shape[0]))
        if self.needs_batch:
            x = x.reshape(self.needs_batch, 4)  # code written for one batch size only
        out = self.body(x)
        return out.reshape(-1) if self.flatten else out


def data(n: int = 16, labels: Any = None) -> NumpyDataset:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=n) if labels is None else np.asarray(labels)
    return NumpyDataset({"x": rng.random((n, 4)).astype(np.float32), "y": y, "t": rng.random((n, 3)).astype(np.float32)})


def classifier(model: Any) -> List[Any]:
    return [ModelOp(model=model, inputs="x", outputs="y_pred"),
            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
            UpdateOp(model=model, loss_name="ce")]


def fit(ops: List[Any], train: Any = None, steps: int = 1, **kwargs: Any) -> Estimator:
    pipeline = Pipeline(train_data=train or data(), eval_data=data(), batch_size=BATCH)
    estimator = Estimator(pipeline, make_network(ops), epochs=1, log_steps=None, train_steps_per_epoch=steps,
                          eval_steps_per_epoch=1)
    estimator.fit(**kwargs)
    return estimator


def test_warmup_runs_models_on_two_samples_and_training_on_the_batch() -> None:
    recording = Recording()
    model = build(lambda: recording, "adam", model_name="rec")
    fit(classifier(model), steps=2)
    assert recording.sizes == [2, 2, BATCH, BATCH, BATCH]  # warmup train, warmup eval; 2 train steps, 1 eval step


def test_without_warmup_every_call_sees_the_whole_batch() -> None:
    recording = Recording()
    model = build(lambda: recording, "adam", model_name="rec")
    fit(classifier(model), warmup=False)
    assert recording.sizes == [BATCH, BATCH]


def test_a_model_that_needs_the_whole_batch_passes_warmup_on_it() -> None:
    recording = Recording(needs_batch=BATCH)
    model = build(lambda: recording, "adam", model_name="rigid")
    before = [p.detach().clone() for p in model.parameters()]
    fit(classifier(model))
    assert recording.sizes == [2, BATCH, 2, BATCH, BATCH, BATCH]  # each warmup: two samples fail, the batch passes
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before))


def test_a_later_op_failing_on_the_few_rows_reruns_the_step_on_the_batch() -> None:
    """A model flattening the batch into one axis: its output is not per-sample, so it is not repeated back, and the
    loss subtracting the flattened targets fails on it; the whole step runs again on the whole batch, which passes."""
    recording = Recording(flatten=True)
    model = build(lambda: recording, "adam", model_name="flat")
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
           TensorLambdaOp(fn=lambda p, t: ((p - t.reshape(-1)) ** 2).mean(), inputs=("y_pred", "t"), outputs="mse"),
           UpdateOp(model=model, loss_name="mse")]
    pipeline = Pipeline(train_data=data(), batch_size=BATCH)
    Estimator(pipeline, make_network(ops), epochs=1, log_steps=None, train_steps_per_epoch=1).fit()
    assert recording.sizes == [2, BATCH, BATCH]  # warmup: two samples, then the batch; one training step


def test_errors_name_the_whole_batch_shapes() -> None:
    model = build(lambda: torch.nn.Linear(5, 3), "adam", model_name="wide")
    with pytest.raises(RuntimeError, match=r"'x' shape \(8, 4\) float32"):
        fit(classifier(model))


def test_label_checks_see_every_label_of_the_batch() -> None:
    labels = [0, 1, 2, 0, 1, 7, 2, 0] * 2  # the bad label is beyond the two samples the model runs on
    model = build(lambda: Recording(), "adam", model_name="rec")
    with pytest.raises(ValueError, match="got label 7 in 'y'"):
        fit(classifier(model), train=data(labels=labels))


def test_transform_predicts_every_sample() -> None:
    model = build(lambda: torch.nn.Linear(4, 3), "adam", model_name="lin")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred")])
    x = np.random.default_rng(0).random((BATCH, 4)).astype(np.float32)
    predicted = network.transform({"x": x}, mode="infer")["y_pred"]
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(predicted, expected, rtol=1e-6)
    assert len({tuple(row) for row in np.round(predicted, 6)}) == BATCH


def test_a_compiled_model_warms_up_on_the_whole_batch() -> None:
    """torch.compile would compile a second graph for a second batch size: compiled models are left whole."""
    recording = Recording()

    class Compiled(torch.nn.Module):  # what torch.compile returns exposes the original module as `_orig_mod`
        def __init__(self) -> None:
            super().__init__()
            self._orig_mod = recording

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self._orig_mod(x)

    model = build(Compiled, "adam", model_name="compiled")
    fit(classifier(model))
    assert recording.sizes == [BATCH, BATCH, BATCH, BATCH]


def test_an_odd_batch_size_is_repeated_to_its_exact_length() -> None:
    recording = Recording()
    model = build(lambda: recording, "adam", model_name="odd")
    pipeline = Pipeline(train_data=data(14), eval_data=data(14), batch_size=7)
    Estimator(pipeline, make_network(classifier(model)), epochs=1, log_steps=None, train_steps_per_epoch=1,
              eval_steps_per_epoch=1).fit()
    assert recording.sizes == [2, 2, 7, 7]  # no rerun: the loss saw 7 predictions for 7 labels in warmup
