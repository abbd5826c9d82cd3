"""Meta NumpyOps (Fuse, OneOf, Repeat, Sometimes), forward_numpyop, and checkpointing of the ops they hold."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pytest

from fe_core.checkpoint.codec import StateCodec
from fe_core.checkpoint.object_state import get_object_states, set_object_states
from fe_core.op.numpyop import Batch, Delete, LambdaOp, NumpyOp, RemoveIf, forward_numpyop
from fe_core.op.numpyop.meta import Fuse, OneOf, Repeat, Sometimes
from fe_core.op.numpyop.remove_if import FilteredData


class Counter(NumpyOp):
    """A stateful op: adds 1 to its input and counts its calls."""

    def __init__(self, inputs: str = "x", outputs: str = "x", mode: Any = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode)
        self.calls = 0

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        self.calls += 1
        return data + 1


class Leveled(LambdaOp):
    def __init__(self) -> None:
        super().__init__(fn=lambda x: x, inputs="x", outputs="x")
        self.level = None

    def set_rua_level(self, magnitude_coef: float) -> None:
        self.level = magnitude_coef


def plus(n: int, key: str = "x") -> LambdaOp:
    return LambdaOp(fn=lambda v: v + n, inputs=key, outputs=key)


# ------------------------------------------------------------------------------------------- Sometimes
def test_sometimes_runs_with_its_probability_and_passes_through_otherwise():
    op = Sometimes(plus(1), prob=0.3)
    np.random.seed(0)
    results = [op.forward([0], {})[0] for _ in range(2000)]
    assert set(results) == {0, 1}
    assert abs(np.mean(results) - 0.3) < 0.05
    assert Sometimes(plus(1), prob=0.0).forward([0], {}) == [0]
    assert Sometimes(plus(1), prob=1.0).forward([0], {}) == [1]


def test_sometimes_needs_existing_output_keys_as_inputs_and_rejects_bad_arguments():
    op = Sometimes(LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="y"))
    assert op.inputs == ["x", "y"] and op.outputs == ["y"]
    with pytest.raises(ValueError, match="prob"):
        Sometimes(plus(1), prob=1.5)
    with pytest.raises(ValueError, match="Batch"):
        Sometimes(Batch())


# ----------------------------------------------------------------------------------------------- OneOf
def test_one_of_follows_probs():
    op = OneOf(plus(1), plus(10), plus(100), probs=[0.2, 0.0, 0.8])
    np.random.seed(0)
    results = np.array([op.forward([0], {}) for _ in range(2000)])
    assert set(results.tolist()) == {1, 100}
    assert abs(np.mean(results == 1) - 0.2) < 0.05


def test_one_of_is_uniform_without_probs_and_checks_its_arguments():
    op = OneOf(plus(1), plus(2))
    np.random.seed(0)
    results = [op.forward([0], {}) for _ in range(1000)]
    assert abs(np.mean(np.array(results) == 1) - 0.5) < 0.06
    with pytest.raises(ValueError, match="probs"):
        OneOf(plus(1), plus(2), probs=[0.5, 0.6])
    with pytest.raises(ValueError, match="probs"):
        OneOf(plus(1), plus(2), probs=[1.0])
    with pytest.raises(ValueError, match="share"):
        OneOf(plus(1), plus(1, key="y"))
    with pytest.raises(ValueError, match="at least one"):
        OneOf()


# ---------------------------------------------------------------------------------------------- Repeat
def test_repeat_a_fixed_number_of_times_or_while_a_condition_holds():
    assert Repeat(plus(2), repeat=3).forward([0], {}) == [6]
    assert Repeat(plus(3), repeat=lambda x: x < 10).forward([0], {}) == [12]
    assert Repeat(plus(3), repeat=lambda x: x < 100, max_iter=2).forward([0], {}) == [6]
    assert Repeat(plus(3), repeat=lambda x: False).forward([0], {}) == [3]  # always at least once


def test_repeat_condition_may_read_other_keys_and_the_op_is_exposed():
    inner = plus(1)
    op = Repeat(inner, repeat=lambda x, limit: x < limit)
    assert op.inputs == ["x", "limit"] and op.outputs == ["x"] and op.op is inner
    assert op.forward([0, 4], {}) == [4]


def test_repeat_rejects_bad_arguments_and_passes_filtered_data_on():
    with pytest.raises(ValueError, match="repeat"):
        Repeat(plus(1), repeat=0)
    with pytest.raises(ValueError, match="max_iter"):
        Repeat(plus(1), repeat=lambda x: True, max_iter=0)
    with pytest.raises(ValueError, match="Batch"):
        Repeat(Batch())
    assert isinstance(Repeat(RemoveIf(fn=lambda x: True, inputs="x"), repeat=2).forward([0], {}), FilteredData)


def test_repeat_is_batch_capable_only_for_a_fixed_count_of_a_batch_capable_op():
    from fe_core.op.numpyop.univariate import Minmax
    assert Repeat(Minmax(inputs="x", outputs="x"), repeat=2).batch_capable
    assert not Repeat(Minmax(inputs="x", outputs="x"), repeat=lambda x: False).batch_capable
    assert not Repeat(plus(1), repeat=2).batch_capable


# ------------------------------------------------------------------------------------------------ Fuse
def test_fuse_runs_a_chain_as_one_op():
    op = Fuse([LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y"),
               LambdaOp(fn=lambda x, y: x * y, inputs=["x", "y"], outputs="z"),
               Delete("y")])
    assert op.inputs == ["x"] and op.outputs == ["z"]
    assert op.forward([3], {}) == [12]
    assert op.forward_batch([np.array([1, 2])], {})[0].tolist() == [2, 6]


def test_fuse_checks_modes_and_members():
    with pytest.raises(ValueError, match="mode"):
        Fuse([Counter(mode="train"), Counter(mode="eval")])
    with pytest.raises(ValueError, match="Batch"):
        Fuse([Counter(), Batch()])
    with pytest.raises(ValueError, match="at least one"):
        Fuse([])
    assert Fuse(Counter(mode="train")).mode == {"train"}


def test_fuse_stops_at_filtered_data():
    op = Fuse([RemoveIf(fn=lambda x: x > 1, inputs="x"), plus(1)])
    assert isinstance(op.forward([5], {}), FilteredData)
    assert op.forward([0], {}) == [1]


def test_meta_ops_wrap_each_other():
    op = Sometimes(Fuse([OneOf(plus(1), plus(1)), Repeat(plus(10), repeat=2)]), prob=1.0)
    assert op.forward([0], {}) == [21]


# ------------------------------------------------------------------------------------------------- RUA level
def test_set_rua_level_reaches_wrapped_ops_or_says_which_cannot():
    inner = [Leveled(), Leveled()]
    for op in (Sometimes(inner[0]), OneOf(*inner), Repeat(inner[1]), Fuse(inner)):
        op.set_rua_level(0.4)
    assert inner[0].level == inner[1].level == 0.4
    with pytest.raises(AttributeError, match="Counter"):
        Fuse([Leveled(), Counter()]).set_rua_level(0.1)
    LambdaOp(fn=abs).set_rua_level(0.5)  # a LambdaOp accepts and ignores it


# ----------------------------------------------------------------------------------------- checkpoints
def test_state_of_ops_nested_in_meta_ops_is_saved_and_restored():
    def build():
        deep = Counter()
        ops = [Sometimes(Fuse([Counter(), OneOf(deep, Counter())]), prob=1.0), Repeat(Counter(), repeat=2)]
        return ops, deep

    ops, deep = build()
    for _ in range(3):
        store = {"x": 0}
        forward_numpyop(ops, store, {"mode": "train"})
    states = get_object_states(ops, StateCodec())
    fresh, fresh_deep = build()
    set_object_states(fresh, states)
    calls = lambda op: op.calls  # noqa: E731
    assert calls(fresh[0].op.ops[0]) == 3 and calls(fresh[1].op) == 6
    assert calls(fresh_deep) == calls(deep) and calls(fresh[0].op.ops[1].ops[1]) == calls(ops[0].op.ops[1].ops[1])
    assert calls(fresh_deep) + calls(fresh[0].op.ops[1].ops[1]) == 3


def test_restoring_into_different_nested_ops_is_refused():
    states = get_object_states([Fuse([Counter(), Counter()])])
    with pytest.raises(ValueError, match="Fuse"):
        set_object_states([Fuse([Counter()])], states)


# ------------------------------------------------------------------------------------- forward_numpyop
def test_forward_numpyop_runs_ops_in_place_deletes_and_filters():
    data = {"x": 1, "tmp": 0}
    result = forward_numpyop([plus(1), LambdaOp(fn=lambda x: x * 3, inputs="x", outputs="y"), Delete("tmp")], data,
                             {"mode": "train"})
    assert result is None and data == {"x": 2, "y": 6}
    assert isinstance(forward_numpyop([RemoveIf(fn=lambda x: True, inputs="x"), plus(1)], data, {"mode": "train"}),
                      FilteredData)
    assert data["x"] == 2  # ops after the filter did not run


def test_forward_numpyop_batched_uses_forward_batch_and_checks_its_argument():
    class BatchOnly(NumpyOp):
        def forward(self, data, state):
            raise AssertionError("forward must not run on batches")

        def forward_batch(self, data, state):
            return data.sum(keepdims=True)

    data = {"x": np.array([1, 2, 3])}
    forward_numpyop([BatchOnly(inputs="x", outputs="s")], data, {"mode": "eval"}, batched="np")
    assert data["s"].tolist() == [6]
    with pytest.raises(ValueError, match="batched"):
        forward_numpyop([], data, {"mode": "eval"}, batched="jax")
