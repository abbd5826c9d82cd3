"""A FastEstimator-style script that splits its eval data without a seed, run as 2 TensorFlow workers by
test_newcomer_distributed_split.py. Writes `<FE_T_OUT>/rank<R>.json` with the samples of each dataset. With
FE_T_SHUFFLE=1 each worker shuffles its data with its own seed (a mistake fit must refuse)."""
import json
import os

import numpy as np
import tensorflow as tf  # noqa: F401  (as a TF script does: fe then sets up the multi-worker strategy before the model)

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.distributed import get_communicator
from fe_core.estimator import Estimator
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline


def model_fn():
    import keras  # pylint: disable=import-outside-toplevel
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


def main():
    x = np.random.RandomState(0).normal(size=(32, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    if os.environ.get("FE_T_SHUFFLE"):
        np.random.RandomState(json.loads(os.environ["TF_CONFIG"])["task"]["index"]).shuffle(x)
    eval_data = NumpyDataset({"x": x[16:], "y": y[16:]})
    test_data = eval_data.split(0.5)  # FastEstimator's idiom: no seed
    pipeline = Pipeline(train_data=NumpyDataset({"x": x[:16], "y": y[:16]}), eval_data=eval_data,
                        test_data=test_data, batch_size=4)
    model = build(model_fn=model_fn, optimizer_fn="sgd", model_name="net")
    from fe_tf.network import TFNetwork  # pylint: disable=import-outside-toplevel
    network = TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                             UpdateOp(model=model, loss_name="ce")])
    estimator = Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None)
    estimator.fit()
    estimator.test()
    result = {"eval": eval_data["x"][:, 0].tolist(), "test": test_data["x"][:, 0].tolist()}
    with open(os.path.join(os.environ["FE_T_OUT"], f"rank{get_communicator().rank}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
