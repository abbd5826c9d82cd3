"""tf.Variable and tf.Tensor attributes of traces and ops are checkpointed (never dropped silently); a variable is
restored in place, so a variable shared by a trace and an op stays shared."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from fe_core.checkpoint.codec import StateCodec
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.framework import get_backend


class Tracker:
    def __init__(self) -> None:
        self.total = tf.Variable(tf.zeros(2))
        self.last = tf.constant([0, 0], dtype=tf.int32)
        self.steps = 0


def _round_trip(obj):
    codec = StateCodec()
    data, arrays = codec.encode(get_object_state(obj))
    return codec.decode(data, arrays)


def test_variables_and_tensors_are_saved_and_restored():
    get_backend("tf")
    tracker = Tracker()
    tracker.total.assign([1.5, -2.0])
    tracker.last = tf.constant([3, 4], dtype=tf.int32)
    tracker.steps = 7
    saved = _round_trip(tracker)
    assert set(saved) == {"total", "last", "steps"}
    fresh = Tracker()
    shared = fresh.total  # an op holding the same variable
    set_object_state(fresh, saved)
    assert fresh.total is shared
    np.testing.assert_allclose(shared.numpy(), [1.5, -2.0])
    assert fresh.last.dtype == tf.int32 and fresh.last.numpy().tolist() == [3, 4]
    assert fresh.steps == 7


def test_a_variable_of_another_shape_is_refused():
    get_backend("tf")
    with pytest.raises(ValueError, match="shape"):
        set_object_state(Tracker(), {"total": tf.Variable(tf.zeros(3)), "steps": 0})


def test_unknown_dtype_names_are_refused():
    get_backend("tf")
    reducer = next(r for r in get_backend("tf").state_reducers() if r.name == "tf.Variable")
    with pytest.raises(ValueError, match="not one of"):
        reducer.restore({"dtype": "resource", "value": np.zeros(2)})
