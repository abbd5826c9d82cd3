"""Digits with TensorFlow: LeNet on scikit-learn's 8x8 digits upscaled to 28x28.

FastEstimator-style: a Pipeline of NumpyOps, a Network of ModelOp -> CrossEntropy -> UpdateOp, and Accuracy and
BestModelSaver traces; the best model (by eval accuracy) is saved into `save_dir`
(`./fe_runs/digits_tf_cnn` by default) and restored before testing. The data is scikit-learn's
digits (shipped with it, no download), split into train/eval/test.

Run it with `fe train fe.examples.digits_tf_cnn --epochs 2` (or the path of this file), then
`fe test fe.examples.digits_tf_cnn` in the same directory tests the saved best model; or run
`python -m fe.examples.digits_tf_cnn --epochs 2`.
"""
from __future__ import annotations

import os
import sys
from typing import Optional
import fe
from fe.architecture.tensorflow import LeNet
from fe.cli.train import run_main
from fe.examples.digits import UpscaleDigits, load_digits_datasets
from fe.op.numpyop.univariate import ExpandDims, Minmax
from fe.op.tensorop.loss import CrossEntropy
from fe.op.tensorop.model import ModelOp, UpdateOp
from fe.trace.io import BestModelSaver
from fe.trace.metric import Accuracy

__all__ = ["get_estimator"]


def get_estimator(epochs: int = 8,
                  batch_size: int = 32,
                  train_steps_per_epoch: Optional[int] = None,
                  eval_steps_per_epoch: Optional[int] = None,
                  save_dir: str = os.path.join("fe_runs", "digits_tf_cnn"),
                  weights_path: Optional[str] = None,
                  log_steps: int = 20) -> fe.Estimator:
    """The Estimator of this example.

    Args:
        epochs: Training epochs.
        batch_size: Samples per batch.
        train_steps_per_epoch: Cut training epochs to this many steps (None: the whole training set).
        eval_steps_per_epoch: Cut evaluation epochs to this many steps (None: the whole eval set).
        save_dir: Where BestModelSaver writes the best model, relative to the working directory unless absolute;
            `fe test` (run in the same directory) loads the model from there.
        weights_path: Weights to start from (for example a saved `model_best_accuracy.h5`, to test it).
        log_steps: Print the training loss every this many steps.
    """
    train_data, eval_data, test_data = load_digits_datasets()
    pipeline = fe.Pipeline(train_data=train_data,
                           eval_data=eval_data,
                           test_data=test_data,
                           batch_size=batch_size,
                           ops=[
                               UpscaleDigits(inputs="x", outputs="x"),
                               ExpandDims(inputs="x", outputs="x", axis=-1),  # channels last: (28, 28, 1)
                               Minmax(inputs="x", outputs="x"),
                           ])
    model = fe.build(model_fn=LeNet, optimizer_fn="adam", weights_path=weights_path)
    network = fe.Network(ops=[
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        UpdateOp(model=model, loss_name="ce"),
    ])
    traces = [
        Accuracy(true_key="y", pred_key="y_pred"),
        BestModelSaver(model=model,
                       save_dir=save_dir,
                       metric="accuracy",
                       save_best_mode="max",
                       load_best_final=True),
    ]
    return fe.Estimator(pipeline=pipeline,
                        network=network,
                        epochs=epochs,
                        traces=traces,
                        train_steps_per_epoch=train_steps_per_epoch,
                        eval_steps_per_epoch=eval_steps_per_epoch,
                        log_steps=log_steps)


if __name__ == "__main__":
    sys.exit(run_main(get_estimator, prog="python -m fe.examples.digits_tf_cnn"))
