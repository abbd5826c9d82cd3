"""FastEstimator semantics, part 4 (issue 43) on TensorFlow: CrossEntropy (binary as Keras 2 computes it, and with
class weights) called through `forward`, eagerly and in a tf.function, binary Accuracy of a one-column prediction,
the Delete TensorOp in `Network.transform` and inside a Fuse, SuperLoss state through a checkpoint, and
RestoreWizard's key file."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tensorflow as tf

from compat4_helpers import (WEIGHTED_CROSS_ENTROPY, check_delete_in_transform, check_fuse_holding_a_delete,
                             check_restore_wizard_key_file, check_super_loss_state_round_trip)
from fe_core.data import Data
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.trace.metric import Accuracy

# FastEstimator's binary cross entropy of values outside [0, 1] (Keras 2's formula: epsilon inside the logarithms)
OUT_OF_RANGE = ([[1.0], [3.0], [4.5]], [[1.0], [2.0], [4.0]], {2: 2.0, 4: 3.0}, -20.444319, -56.221874)


def identity() -> Any:
    inputs = tf.keras.Input((1, 1))
    return tf.keras.Model(inputs, inputs)


def linear(units: int) -> Any:
    return lambda: tf.keras.Sequential([tf.keras.Input((2, )), tf.keras.layers.Dense(units)])


@tf.function
def traced_forward(op: Any, data: Any) -> Any:
    return op.forward(data, {})


@pytest.mark.parametrize("traced", [False, True])
def test_cross_entropy_with_class_weights_of_one_input_key_through_forward(traced: bool) -> None:
    call = (lambda op, data: traced_forward(op, data)) if traced else (lambda op, data: op.forward(data, {}))
    for pred, true, weights, expected in WEIGHTED_CROSS_ENTROPY.values():
        loss = CrossEntropy(inputs="x", outputs="x", class_weights=weights)
        assert np.allclose(call(loss, [tf.constant(pred), tf.constant(true)]).numpy(), expected)



def test_binary_cross_entropy_outside_0_1_is_keras_2s() -> None:
    """log(1 - p + eps) of p clipped to 1 - eps is ill-conditioned: compared eagerly, as FastEstimator's test does
    (a traced graph may fold the additions in another order)."""
    pred, true, weights, plain, weighted = OUT_OF_RANGE
    for class_weights, expected in ((None, plain), (weights, weighted)):
        loss = CrossEntropy(inputs="x", outputs="x", class_weights=class_weights)
        assert np.allclose(loss.forward([tf.constant(pred), tf.constant(true)], {}).numpy(), expected)


def test_binary_accuracy_of_a_one_column_prediction_with_one_hot_labels() -> None:
    for from_logits, pred in ((False, [[0.3], [0.6]]), (True, [[-1], [1]])):  # integer logits: still logits
        accuracy = Accuracy(true_key="label", pred_key="pred", output_name="acc", from_logits=from_logits)
        accuracy.on_epoch_begin(Data())
        accuracy.on_batch_end(Data({"label": tf.constant([[1, 0], [0, 1]]), "pred": tf.constant(pred)}))
        end = Data()
        accuracy.on_epoch_end(end)
        assert end["acc"] == 1.0


@pytest.mark.parametrize("fused", [False, True])
def test_delete_in_transform_leaves_fastestimators_chainmap_layers(fused: bool) -> None:
    check_delete_in_transform(identity, fused)


def test_fuse_holding_a_delete_leaves_the_key_out_of_its_outputs() -> None:
    with pytest.warns(UserWarning, match="only the first 1 are written, as FastEstimator does"):
        check_fuse_holding_a_delete(tf.constant([[1., 2., 4.], [1., 2., 6.]]))


def test_super_loss_state_is_saved_and_loaded(tmp_path: Any) -> None:
    pred = tf.constant([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]])
    true = tf.constant([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    check_super_loss_state_round_trip(linear(3), pred, true, tmp_path, lambda value: bool(value.numpy()))


def test_restore_wizard_writes_its_key_file_and_reads_back_its_frequency(tmp_path: Any) -> None:
    check_restore_wizard_key_file(linear(1), tmp_path)
