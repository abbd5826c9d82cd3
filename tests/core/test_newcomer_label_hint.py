"""Issue 30 item 5: the label-range error does not claim "the labels count from 1" from one batch's evidence."""
from __future__ import annotations

import numpy as np

from fe_core.op.tensorop.loss import CrossEntropy

STATE = {"mode": "train", "epoch": 1, "ds_id": ""}


def _message(labels, classes=10):
    op = CrossEntropy(inputs=("y_pred", "y"), outputs="ce")
    labels = np.asarray(labels)
    return str(op.label_range_error(np.zeros((len(labels), classes)), labels, int(labels.min()), int(labels.max()),
                                    STATE))


def test_labels_one_to_ten_in_a_batch_are_not_called_one_based():
    message = _message(np.arange(1, 11))  # a batch without 0: labels 1..10, or 0..9 plus one stray 10
    assert "seem to count from 1" not in message
    assert "If the labels count from 1 (no label 0 anywhere in the data), subtract 1" in message
    assert "if label 10 should not be there, fix the data" in message and "11 outputs" in message


def test_a_label_beyond_the_classes_with_zero_present_asks_for_more_outputs():
    message = _message([0, 3, 12])
    assert "count from 1" not in message and "at least 13 outputs" in message
