"""Review of issues 36/37 on TensorFlow, as a FastEstimator user's code meets them: BestModelSaver /
ReduceLROnPlateau take the model's loss when created (UpdateOp records it in `model.loss_name`, a Keras model
included), and the hand-iterated loader hands tensors over several epochs, in eval per ds_id, with `len(loader)`."""
import numpy as np
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.network import make_network
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.adapt import ReduceLROnPlateau
from fe_core.trace.io import BestModelSaver
from fe_core.types import Tensor


def _model(name):
    return build(lambda: tf.keras.Sequential([tf.keras.Input((4, )), tf.keras.layers.Dense(2, activation="softmax")]),
                 "adam", model_name=name)


def test_savers_take_the_models_one_loss_when_created(tmp_path):
    model = _model("review_tf_a")
    make_network([ModelOp(model, "x", "p"), CrossEntropy(("p", "y"), "myloss"), UpdateOp(model, "myloss")])
    assert set(model.loss_name) == {"myloss"}
    saver = BestModelSaver(model=model, save_dir=str(tmp_path), save_best_mode="max")
    assert saver.metric == "myloss" and saver.model_name == "review_tf_a_best_myloss"
    assert saver.outputs == ["since_best_myloss", "max_myloss"]
    assert ReduceLROnPlateau(model).metric == "myloss"
    UpdateOp(model, "other")
    assert set(model.loss_name) == {"myloss", "other"}
    assert BestModelSaver(model=model, save_dir=str(tmp_path)).metric is None  # decided from the network later


def test_loader_batches_are_tensors_every_epoch_and_per_ds_id():
    data = NumpyDataset({"x": np.arange(40, dtype=np.float32).reshape(10, 4), "y": np.arange(10, dtype=np.int64)})
    pipeline = Pipeline(train_data=data, eval_data={"a": data, "b": data}, batch_size=4, num_process=0)
    for epoch in (1, 2):
        with pipeline(mode="train", epoch=epoch) as loader:
            assert len(loader) == 3
            batches = list(loader)
        assert len(batches) == 3 and all(isinstance(batch["x"], Tensor) for batch in batches)
        assert sorted(int(v) for batch in batches for v in np.asarray(batch["y"].numpy())) == list(range(10))
    with pipeline(mode="eval", ds_id="b", shuffle=False) as loader:
        assert np.asarray(next(iter(loader))["y"].numpy()).tolist() == [0, 1, 2, 3]


def test_the_logger_prints_tf_tensors_and_variables_a_trace_logs(capsys):
    from logger_helpers import log_eval_epoch
    system = log_eval_epoch({"var": tf.Variable(0.25), "plain": tf.constant(2.5, dtype=tf.float16)}, step=4)
    assert capsys.readouterr().out.strip() == "FastEstimator-Eval: step: 4; epoch: 1; plain: 2.5; var: 0.25;"
    assert system.summary.history["eval"]["var"][4] == 0.25


def test_a_keras_models_weights_are_fe_types_tensors_as_keras_2s_tf_variables_were():
    from fe_core.types import Array
    model = tf.keras.Sequential([tf.keras.Input((2, )), tf.keras.layers.Dense(1)])
    assert all(isinstance(weight, Tensor) and isinstance(weight, Array) for weight in model.trainable_variables)
    assert isinstance(tf.Variable(1.0), Tensor) and not isinstance(np.zeros(1), Tensor)
