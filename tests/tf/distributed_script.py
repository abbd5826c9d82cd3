"""An ordinary fe script, run by tests/tf/test_distributed.py as 2 TensorFlow workers (TF_CONFIG on 127.0.0.1).

Writes `<FE_T_OUT>/rank<R>.json`: final weights, the eval history, the training sample ids per epoch, num_devices,
and the eval loss / accuracy computed directly from the final weights on all the eval data.
"""
import json
import os

import numpy as np
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.distributed import get_communicator, global_batches
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.metric import Accuracy
from fe_core.trace.trace import Trace


class Noise(NumpyOp):
    """Per-sample random noise from numpy's global generator (each worker draws its own)."""

    def forward(self, data, state):
        return data + np.random.uniform(-0.01, 0.01, size=data.shape).astype(np.float32)


class Crash(Trace):
    """Exits the process at global step `step` (0: never), as a killed worker would."""

    def __init__(self, step):
        super().__init__(mode="train")
        self.step = step

    # The crash step is this harness's setting, not training state: a resumed run must not take it back from the
    # checkpoint (fe restores a trace's numeric attributes, constructor-named ones too, as FastEstimator does).
    def get_state(self):
        return {}

    def set_state(self, state):
        pass

    def on_batch_end(self, data):
        if self.system.global_step == self.step:
            os._exit(3)


class Seen(Trace):
    def __init__(self):
        super().__init__(inputs="idx", mode="train")
        self.seen = {}

    def on_batch_end(self, data):
        self.seen.setdefault(str(self.system.epoch_idx), []).extend(np.asarray(data["idx"]).tolist())


def model_fn():
    keras = tf.keras  # Keras 3, or tf-keras under TF_USE_LEGACY_KERAS=1 (the tf-keras2 suite)
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])


def main():
    enable_deterministic(7)
    rng = np.random.RandomState(0)
    x = rng.normal(size=(22, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x[:13], "y": y[:13], "idx": np.arange(13)}),
                        eval_data=NumpyDataset({"x": x[13:], "y": y[13:]}), batch_size=4,
                        ops=[Noise(inputs="x", outputs="x", mode="train")])
    model = build(model_fn=model_fn, optimizer_fn="sgd", model_name="net")  # creates the strategy first
    from fe_tf.network import TFNetwork  # pylint: disable=import-outside-toplevel
    network = TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                             UpdateOp(model=model, loss_name="ce")])
    seen = Seen()
    traces = [Accuracy("y", "y_pred"), seen, Crash(int(os.environ.get("FE_T_CRASH_AT", "0")))]
    if os.environ.get("FE_T_CKPT"):
        traces.append(RestoreWizard(directory=os.environ["FE_T_CKPT"], frequency="2s"))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=2)
    summary = estimator.fit("mw")
    logits = model(x[13:], training=False)
    # the loss one process logs for these global batches: the mean of the batches' means (issue 45)
    per_sample = tf.nn.sparse_softmax_cross_entropy_with_logits(y[13:], logits).numpy()
    truth_ce = float(np.mean([per_sample[part].mean() for part in
                              global_batches(np.arange(9), 4, False, get_communicator().world_size)]))
    truth_acc = float(np.mean(np.argmax(logits.numpy(), axis=1) == y[13:]))
    comm = get_communicator()
    history = {key: {str(step): float(np.asarray(value).ravel()[0]) for step, value in values.items()}
               for key, values in summary.history["eval"].items() if key in ("accuracy", "ce")}
    result = {"rank": comm.rank, "world_size": comm.world_size, "communicator": comm.name,
              "strategy": type(tf.distribute.get_strategy()).__name__,
              "weights": [np.asarray(w).ravel().tolist() for w in model.get_weights()], "history": history,
              "seen": seen.seen, "num_devices": estimator.system.num_devices, "truth_ce": truth_ce,
              "truth_acc": truth_acc}
    with open(os.path.join(os.environ["FE_T_OUT"], f"rank{comm.rank}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
