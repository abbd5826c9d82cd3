"""get_current_items with several ds_ids, as FastEstimator's signature allows."""
from __future__ import annotations

from fe_core.op.numpyop import LambdaOp
from fe_core.schedule import get_current_items


def test_get_current_items_takes_several_ds_ids():
    a = LambdaOp(fn=lambda x: x, inputs="x", outputs="x", ds_id="a")
    b = LambdaOp(fn=lambda x: x, inputs="x", outputs="x", ds_id="b")
    not_a = LambdaOp(fn=lambda x: x, inputs="x", outputs="x", ds_id="!a")
    assert get_current_items([a, b, not_a], ds_id=["a", "b"]) == [a, b, not_a]
    assert get_current_items([a, b, not_a], ds_id="a") == [a]
    assert get_current_items([a, b, not_a], ds_id="") == [not_a]


def test_scheduler_argument_errors_are_assertion_and_value_errors():
    import pytest

    from fe_core.schedule import EpochScheduler, RepeatScheduler
    for bad in (lambda: EpochScheduler({0: "a"}), lambda: EpochScheduler([]), lambda: RepeatScheduler("abc")):
        with pytest.raises(AssertionError):
            bad()
        with pytest.raises(ValueError):
            bad()
