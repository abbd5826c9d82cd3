"""User mistakes fail before training with a message naming the op, key or model, mode, epoch, ds_id and what was
expected (numpy test backend): an op returning None, a failing model call, MSE on class labels, a ds_id naming no
dataset, a missing key (with every available key and the closest one)."""
from __future__ import annotations

import re
from typing import Any, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import NumpyOp
from fe_core.op.tensorop import CrossEntropy, LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace import Trace


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


class StartRecorder(Trace):
    """Records whether training began (on_begin runs after the warmup)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: List[str] = []

    def on_begin(self, data: Data) -> None:
        self.events.append("begin")

    def on_batch_end(self, data: Data) -> None:
        self.events.append("batch")


class ReturnsNothing(NumpyOp):
    """Computes its result and forgets to return it."""

    def forward(self, data: Any, state: Any) -> Any:
        data * 2  # pylint: disable=pointless-statement


def dataset(n: int = 8, width: int = 2, classes: int = 0) -> NumpyDataset:
    rng = np.random.default_rng(0)
    y = rng.integers(0, classes, size=n) if classes else rng.normal(size=(n, 1)).astype(np.float32)
    return NumpyDataset({"x": rng.normal(size=(n, width)).astype(np.float32), "y": y})


def fit(ops: List[Any], train: Any = None, eval_data: Any = None, pipeline_ops: Any = None, epochs: int = 1,
        traces: Any = None) -> StartRecorder:
    """Fit and return the recorder; the caller expects an error from inside."""
    recorder = StartRecorder()
    pipeline = Pipeline(train_data=train if train is not None else dataset(), eval_data=eval_data, batch_size=4,
                        ops=pipeline_ops)
    estimator = Estimator(pipeline, make_network(ops), epochs=epochs, log_steps=None,
                          traces=[recorder] + list(traces or []))
    try:
        estimator.fit()
    finally:
        fit.recorder = recorder  # type: ignore[attr-defined]
    return recorder


def regression_ops(model: Any, loss_inputs=("y_pred", "y")) -> List[Any]:
    return [ModelOp(model=model, inputs="x", outputs="y_pred"),
            MeanSquaredError(inputs=loss_inputs, outputs="mse"),
            UpdateOp(model=model, loss_name="mse")]


def assert_not_trained(model: Any, weights: np.ndarray) -> None:
    np.testing.assert_array_equal(model.W, weights)
    assert fit.recorder.events == []  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------------- 1: None output
def test_pipeline_op_returning_none_fails_in_warmup_naming_op_mode_epoch_ds_id() -> None:
    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    # The op only runs from epoch 2 on: the warmup still checks it (one step per configuration) before training.
    with pytest.raises(ValueError) as info:
        fit(regression_ops(model), pipeline_ops=[EpochScheduler({1: None, 2: ReturnsNothing(inputs="x", outputs="x")})],
            epochs=2)
    message = str(info.value)
    assert "ReturnsNothing" in message and "returned None" in message and "outputs ['x']" in message
    assert "mode 'train', epoch 2, ds_id ''" in message
    assert_not_trained(model, before)


def test_batch_op_returning_none_names_forward_batch() -> None:
    class BatchReturnsNothing(NumpyOp):
        def forward_batch(self, data: Any, state: Any) -> Any:
            return None

    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    from fe_core.op.numpyop import Batch  # pylint: disable=import-outside-toplevel
    with pytest.raises(ValueError, match=r"BatchReturnsNothing .*returned None from forward_batch"):
        fit(regression_ops(model), pipeline_ops=[Batch(batch_size=4), BatchReturnsNothing(inputs="x", outputs="x")])
    assert_not_trained(model, before)


def test_tensor_op_returning_none_fails_in_warmup() -> None:
    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    ops = [LambdaOp(fn=lambda x: None, inputs="x", outputs="x2")] + regression_ops(model)
    with pytest.raises(ValueError, match=r"LambdaOp \(inputs \['x'\], outputs \['x2'\]\) returned None in mode "
                                         r"'train', epoch 1, ds_id ''"):
        fit(ops)
    assert_not_trained(model, before)


# ---------------------------------------------------------------------------------------------------- 3: model call
def test_failing_model_call_names_model_op_keys_shapes_and_chains_the_error() -> None:
    model = nb.build(3, 1, name="wide")  # expects 3 features; the data has 2
    before = model.W.copy()
    with pytest.raises(ValueError) as info:
        fit(regression_ops(model), eval_data={"ev": dataset()})
    message = str(info.value)
    assert message.startswith("ModelOp (model 'wide', inputs ['x'], outputs ['y_pred']) failed in mode 'train', "
                              "epoch 1, ds_id ''")
    assert "'x' shape (4, 2) float32" in message
    assert isinstance(info.value.__cause__, ValueError)  # numpy's matmul error, chained
    assert str(info.value.__cause__) in message
    assert_not_trained(model, before)


def test_failing_model_call_in_eval_names_eval_ds_id() -> None:
    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    bad_eval = NumpyDataset({"x": np.zeros((4, 5), dtype=np.float32), "y": np.zeros((4, 1), dtype=np.float32)})
    with pytest.raises(ValueError, match=r"ModelOp \(model 'lin'.*failed in mode 'eval', epoch 1, ds_id 'bad' on "
                                         r"inputs 'x' shape \(4, 5\)"):
        fit(regression_ops(model), eval_data={"good": dataset(), "bad": bad_eval})
    assert_not_trained(model, before)


# ---------------------------------------------------------------------------------------------------- 4: MSE on labels
def test_mse_on_class_labels_names_loss_keys_shapes_and_suggests_cross_entropy() -> None:
    model = nb.build(2, 3, name="clf")
    before = model.W.copy()
    with pytest.raises(ValueError) as info:
        fit(regression_ops(model), train=dataset(classes=3))
    message = str(info.value)
    assert "MeanSquaredError (inputs ['y_pred', 'y'])" in message
    assert "'y_pred' (shape (4, 3))" in message and "'y' (shape (4,) int64)" in message
    assert "mode 'train', epoch 1, ds_id ''" in message
    assert "CrossEntropy(inputs=('y_pred', 'y'))" in message
    assert_not_trained(model, before)


def test_mse_accepts_matching_and_broadcastable_targets() -> None:
    op = MeanSquaredError(inputs=("p", "t"), outputs="l")
    state = {"mode": "train", "epoch": 1, "ds_id": ""}
    for pred, true in (((4, 3), (4, 3)), ((4,), (4, 1)), ((4, 1), (4,)), ((4, 3), (4, 1)), ((None, 3), (None, 3))):
        op.fe_check_inputs([np.empty([d or 2 for d in pred]), np.empty([d or 2 for d in true])], state)
    with pytest.raises(ValueError, match=r"compares y_pred 'p' \(shape \(4, 3\) float64\) with y_true 't' \(shape "
                                         r"\(4, 2\) float64\)"):
        op.fe_check_inputs([np.empty((4, 3)), np.empty((4, 2))], state)


# ---------------------------------------------------------------------------------------------------- 5: ds_id typos
def test_network_op_on_unknown_ds_id_fails_naming_op_and_existing_ds_ids() -> None:
    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    ops = regression_ops(model) + [LambdaOp(fn=lambda x: x, inputs="y_pred", outputs="copy", ds_id="ds_2")]
    with pytest.raises(ValueError) as info:
        fit(ops, train={"ds1": dataset(), "ds2": dataset()})
    message = str(info.value)
    assert "Network op LambdaOp (inputs ['y_pred'], outputs ['copy']) runs only on ds_id ['ds_2']" in message
    assert "no dataset 'ds_2'" in message and "never run" in message and "['ds1', 'ds2']" in message
    assert_not_trained(model, before)


def test_pipeline_op_and_trace_on_unknown_ds_id_fail() -> None:
    model = nb.build(2, 1, name="lin")
    with pytest.raises(ValueError, match=r"Pipeline op ReturnsNothing .*ds_id \['evl'\].*the pipeline's ds_ids are "
                                         r"\['ev', 'tr'\]"):
        fit(regression_ops(model), train={"tr": dataset()}, eval_data={"ev": dataset()},
            pipeline_ops=[ReturnsNothing(inputs="x", outputs="x", ds_id="evl")])
    with pytest.raises(ValueError, match=r"Trace StartRecorder runs only on ds_id \['other'\].*datasets have no ds_id"):
        recorder = StartRecorder()
        recorder.ds_id = {"other"}
        fit(regression_ops(model), traces=[recorder])


def test_ds_id_of_another_mode_or_negated_is_accepted() -> None:
    model = nb.build(2, 1, name="lin")
    ops = regression_ops(model) + [LambdaOp(fn=lambda x: x, inputs="y_pred", outputs="copy", ds_id="ev"),
                                   LambdaOp(fn=lambda x: x, inputs="y_pred", outputs="copy2", ds_id="!nothing")]
    recorder = fit(ops, train={"tr": dataset()}, eval_data={"ev": dataset()})
    assert "begin" in recorder.events


# ---------------------------------------------------------------------------------------------------- 7: missing keys
def test_missing_label_key_lists_every_available_key_and_suggests_the_label() -> None:
    model = nb.build(2, 3, name="clf")
    before = model.W.copy()
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
           CrossEntropy(inputs=("y_pred", "label"), outputs="ce", from_logits=True),
           UpdateOp(model=model, loss_name="ce")]
    with pytest.raises(KeyError) as info:
        fit(ops, train=dataset(classes=3))
    message = info.value.args[0]
    assert "CrossEntropy (inputs ['y_pred', 'label'], outputs ['ce']) reads key 'label'" in message
    assert "mode 'train', epoch 1, ds_id ''" in message
    assert "pipeline ['x', 'y']" in message and "earlier network ops ['y_pred']" in message  # not only ['x']
    assert message.endswith("Did you mean 'y'?")
    assert_not_trained(model, before)


def test_missing_loss_key_suggests_the_computed_loss() -> None:
    model = nb.build(2, 3, name="clf")
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
           CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
           UpdateOp(model=model, loss_name="loss")]
    with pytest.raises(KeyError) as info:
        fit(ops, train=dataset(classes=3))
    message = info.value.args[0]
    assert "UpdateOp (model 'clf', inputs ['loss']) reads key 'loss'" in message
    assert "earlier network ops ['y_pred', 'ce']" in message
    assert message.endswith("Did you mean 'ce'?")


def test_misspelled_key_and_key_made_by_a_later_op() -> None:
    model = nb.build(2, 1, name="lin")
    with pytest.raises(KeyError, match=re.escape("Did you mean 'y_pred'?")):
        fit(regression_ops(model, loss_inputs=("y_prd", "y")))
    ops = [MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"), ModelOp(model=model, inputs="x", outputs="y_pred"),
           UpdateOp(model=model, loss_name="mse")]
    with pytest.raises(KeyError, match=r"ModelOp produces 'y_pred' later: ops run in the order given"):
        fit(ops)


def test_network_transform_missing_key_names_op_and_suggests() -> None:
    model = nb.build(2, 1, name="lin")
    network = make_network(regression_ops(model, loss_inputs=("y_pred", "target")))
    with pytest.raises(KeyError) as info:
        network.transform({"x": np.zeros((2, 2), np.float32), "y": np.zeros((2, 1), np.float32)}, mode="eval")
    message = info.value.args[0]
    assert message.startswith("MeanSquaredError read(s) key 'target', which the batch does not have in mode 'eval', "
                              "epoch 1, ds_id ''; batch keys: ['x', 'y'], earlier network ops' outputs: ['y_pred']")
    assert message.endswith("Did you mean 'y'?")


def test_ordinary_training_is_unaffected() -> None:
    model = nb.build(2, 1, name="lin")
    before = model.W.copy()
    recorder = fit(regression_ops(model), eval_data=dataset())
    assert recorder.events[0] == "begin" and "batch" in recorder.events
    assert not np.array_equal(model.W, before)


def test_an_error_type_that_takes_no_message_keeps_its_type_and_gets_a_note() -> None:
    class PickyError(Exception):
        def __init__(self, code: int, detail: str) -> None:
            super().__init__(f"code {code}: {detail}")

    def fail(x: Any) -> Any:
        raise PickyError(7, "broken")

    model = nb.build(2, 1, name="lin")
    with pytest.raises(PickyError) as info:
        fit([LambdaOp(fn=fail, inputs="x", outputs="x2")] + regression_ops(model))
    assert str(info.value) == "code 7: broken"
    assert any("LambdaOp (inputs ['x'], outputs ['x2']) failed in mode 'train', epoch 1, ds_id ''" in note
               for note in info.value.__notes__)


def test_estimator_test_checks_ds_ids_too() -> None:
    model = nb.build(2, 1, name="lin")
    ops = regression_ops(model) + [LambdaOp(fn=lambda x: x, inputs="y_pred", outputs="copy", ds_id="tst")]
    estimator = Estimator(Pipeline(test_data={"test1": dataset()}, batch_size=4), make_network(ops), epochs=1,
                          log_steps=None)
    with pytest.raises(ValueError, match=r"no dataset 'tst'.*\['test1'\]"):
        estimator.test()


def test_interleave_dataset_member_names_are_known_ds_ids() -> None:
    from fe_core.dataset import InterleaveDataset  # pylint: disable=import-outside-toplevel
    model = nb.build(2, 1, name="lin")
    train = InterleaveDataset(datasets={"a": dataset(), "b": dataset()})
    recorder = fit(regression_ops(model), train=train, pipeline_ops=[PassThrough(inputs="x", outputs="x",
                                                                                    ds_id="b")])
    assert "begin" in recorder.events
    with pytest.raises(ValueError, match=r"no dataset 'c'"):
        fit(regression_ops(model), train=InterleaveDataset(datasets={"a": dataset(), "b": dataset()}),
            pipeline_ops=[PassThrough(inputs="x", outputs="x", ds_id="a"),
                          PassThrough(inputs="x", outputs="x", ds_id="c")])


class PassThrough(NumpyOp):
    """Returns its input unchanged."""

    def forward(self, data: Any, state: Any) -> Any:
        return data
