"""Torch tensors held by traces and ops are checkpointed, and restored in place: an object shared by a trace and an op
is still shared after a restore; unsaveable attributes are reported, never dropped silently."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from fe_core.checkpoint.codec import StateCodec
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.framework import get_backend


class Holder:
    def __init__(self, shared: torch.Tensor) -> None:
        self.shared = shared
        self.count = 0


class Tracker:
    def __init__(self) -> None:
        self.running = torch.zeros(3)
        self.steps = 0


def test_tensor_state_round_trips_and_stays_shared():
    get_backend("torch")  # loaded: its reducers are known
    tracker = Tracker()
    holder = Holder(tracker.running)  # an op and a trace sharing one tensor
    tracker.running += torch.tensor([1.0, 2.0, 3.0])
    tracker.steps = 5
    codec = StateCodec()
    data, arrays = codec.encode(get_object_state(tracker))
    saved = codec.decode(data, arrays)
    fresh = Tracker()
    fresh_holder = Holder(fresh.running)
    set_object_state(fresh, saved)
    assert fresh.steps == 5
    assert fresh.running.tolist() == [1.0, 2.0, 3.0]
    assert fresh_holder.shared is fresh.running  # restored in place: still the tensor the op holds
    assert fresh_holder.shared.tolist() == [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(holder.shared.numpy(), [1.0, 2.0, 3.0])


def test_a_tensor_of_another_shape_is_refused():
    get_backend("torch")
    fresh = Tracker()
    with pytest.raises(ValueError, match="shape"):
        set_object_state(fresh, {"running": torch.zeros(5), "steps": 1})


def test_unsaveable_attributes_are_reported_once():
    class Opaque:
        pass

    class WithOpaque:
        def __init__(self) -> None:
            self.thing = Opaque()
            self.count = 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state = get_object_state(WithOpaque())
        get_object_state(WithOpaque())
    assert state == {"count": 1}
    messages = [str(w.message) for w in caught if "WithOpaque.thing" in str(w.message)]
    assert len(messages) == 1 and "get_state()/set_state()" in messages[0]
