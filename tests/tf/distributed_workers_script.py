"""A 2-worker TensorFlow fit (MultiWorkerMirroredStrategy from TF_CONFIG) with Pipeline worker processes, run by
tests/tf/test_pipeline_workers_multiworker.py.

Writes `<FE_T_OUT>/rank<R>.json`: digests of every training batch this worker received (a random augmentation
included), its sample ids, and the Pipeline worker pids and shared-memory prefix its pool used.
Environment: FE_T_OUT, FE_T_NP (Pipeline num_process).
"""
import hashlib
import json
import os

import numpy as np
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.distributed import get_communicator
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.trace import Trace


class Noise(NumpyOp):
    def forward(self, data, state):
        return data + np.random.uniform(-0.1, 0.1, size=data.shape).astype(np.float32)


class Record(Trace):
    def __init__(self, pipeline):
        super().__init__(inputs=("x", "idx"), mode="train")
        self.pipeline = pipeline
        self.batches = {}
        self.pids = set()
        self.prefix = None

    def on_batch_end(self, data):
        x = np.ascontiguousarray(np.asarray(data["x"]))
        self.batches.setdefault(str(self.system.epoch_idx), []).append(
            [hashlib.sha256(x.tobytes()).hexdigest(), np.asarray(data["idx"]).tolist()])
        pool = self.pipeline._worker_pool
        if pool is not None and pool.pids():
            self.pids.update(pool.pids())
            self.prefix = pool.prefix


def main():
    enable_deterministic(5)
    rng = np.random.RandomState(0)
    x = rng.normal(size=(32, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y, "idx": np.arange(32)}), batch_size=8,
                        ops=[Noise(inputs="x", outputs="x")], num_process=int(os.environ["FE_T_NP"]))
    model = build(model_fn=lambda: tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(2)]),
                  optimizer_fn="sgd", model_name="net")
    from fe_tf.network import TFNetwork  # pylint: disable=import-outside-toplevel
    network = TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                             UpdateOp(model=model, loss_name="ce")])
    record = Record(pipeline)
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=[record], log_steps=0).fit("mw")
    rank = get_communicator().rank
    with open(os.path.join(os.environ["FE_T_OUT"], f"rank{rank}.json"), "w") as file:
        json.dump({"rank": rank, "batches": record.batches, "pids": sorted(record.pids), "prefix": record.prefix,
                   "weights": [np.asarray(w).ravel().tolist() for w in model.get_weights()]}, file)


if __name__ == "__main__":
    main()
