"""Running a list of NumpyOps on one data dict (a sample or a batch) with as little per-call work as possible.

Ops are compiled once per epoch into tuples (`compile_steps`), so the hot loop (`run_steps`) only reads keys, calls
`forward` / `forward_batch` and writes keys. An op that edits a read-only input in place (a `NumpyDataset` sample)
is switched, on its first failure, to receive copies (`in_place_edits`), as FastEstimator does.
"""
from __future__ import annotations

import copy
import time
from typing import Any, Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple

import numpy as np

from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.op.op import check_output_count, ungroup_outputs

__all__ = ["Step", "compile_steps", "run_steps", "OpTimer", "add_note"]

# (op, forward callable, input keys, in_list, output keys, out_list, keys deleted afterwards)
Step = Tuple[NumpyOp, Callable[[Any, Dict[str, Any]], Any], Tuple[str, ...], bool, Tuple[str, ...], bool,
             Tuple[str, ...]]


def _copy_value(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else copy.deepcopy(value)


def _with_copied_inputs(forward: Callable[[Any, Dict[str, Any]], Any], in_list: bool
                        ) -> Callable[[Any, Dict[str, Any]], Any]:
    if in_list:
        return lambda data, state: forward([_copy_value(value) for value in data], state)
    return lambda data, state: forward(_copy_value(data), state)


class OpTimer:
    """Accumulates how often and how long each pipeline stage (fetch, op, collate) runs, for `Pipeline.benchmark`.

    Attributes:
        rows: One entry per timed callable: [label, inputs, outputs, stage, visits, seconds].
    """

    def __init__(self) -> None:
        self.rows: List[List[Any]] = []

    def wrap(self, label: str, inputs: Sequence[str], outputs: Sequence[str], stage: str,
             function: Callable[..., Any]) -> Callable[..., Any]:
        """Return `function` wrapped so that each call adds one visit and its duration to a new row."""
        row: List[Any] = [label, list(inputs), list(outputs), stage, 0, 0.0]
        self.rows.append(row)
        clock = time.perf_counter

        def timed(*args: Any) -> Any:
            start = clock()
            result = function(*args)
            row[5] += clock() - start
            row[4] += 1
            return result

        return timed


def _checked(op: NumpyOp, forward: Callable[[Any, Dict[str, Any]], Any],
             batched: bool) -> Callable[[Any, Dict[str, Any]], Any]:
    """`forward` failing clearly when an op that declares outputs returns None (used in the Estimator's warmup only,
    so that ordinary steps pay nothing for the check)."""
    outputs = list(op.outputs)
    method = "forward_batch" if batched else "forward"

    def checked(data: Any, state: Dict[str, Any]) -> Any:
        result = forward(data, state)
        if result is None:
            raise ValueError(f"{type(op).__name__} (inputs {op.inputs}, outputs {outputs}) returned None from "
                             f"{method} in the Pipeline, mode {state.get('mode')!r}, epoch {state.get('epoch')}, "
                             f"ds_id {state.get('ds_id')!r}, but it declares outputs {outputs}: {method} must return "
                             f"the value{'s' if len(outputs) > 1 else ''} to write there" +
                             (f" (a list of {len(outputs)})" if len(outputs) > 1 else ""))
        return result

    return checked


def _ungrouped(op: NumpyOp, forward: Callable[[Any, Dict[str, Any]], Any]) -> Callable[[Any, Dict[str, Any]], Any]:
    """`forward` giving one value per output key for an op that gathers some keys' values in one list."""
    return lambda data, state: ungroup_outputs(op, forward(data, state))


def compile_steps(ops: Sequence[NumpyOp], batched: bool, timer: Optional[OpTimer] = None,
                  checked: bool = False) -> List[Step]:
    """Turn ops into steps for `run_steps`.

    Args:
        ops: The ops, in execution order.
        batched: Whether they run on batches (`forward_batch`) or single samples (`forward`).
        timer: When given, every op's call is timed (for benchmarks only).
        checked: Check what each op returns (an op declaring outputs must not return None); for the warmup.
    """
    steps: List[Step] = []
    for op in ops:
        forward = op.forward_batch if batched else op.forward
        if getattr(op, "output_groups", None):  # values of several keys returned as one list: one per key here
            forward = _ungrouped(op, forward)
        if checked and op.outputs:
            forward = _checked(op, forward, batched)
        if getattr(op, "in_place_edits", False):
            forward = _with_copied_inputs(forward, op.in_list)
        if timer is not None:
            forward = timer.wrap(type(op).__name__, op.inputs, op.outputs, "batch" if batched else "sample", forward)
        if isinstance(op, Delete):  # reads nothing: a key pruned upstream (nobody needs it) is simply absent
            steps.append((op, forward, (), True, (), False, tuple(op.inputs)))
            continue
        steps.append((op, forward, tuple(op.inputs), op.in_list, tuple(op.outputs), op.out_list, ()))
    return steps


def _describe(op: NumpyOp, state: Dict[str, Any]) -> str:
    return (f"while running {type(op).__name__}(inputs={op.inputs}, outputs={op.outputs}) in the Pipeline, mode "
            f"{state.get('mode')!r} epoch {state.get('epoch')} ds_id {state.get('ds_id')!r}")


def run_steps(store: MutableMapping[str, Any], steps: List[Step], state: Dict[str, Any]) -> Optional[FilteredData]:
    """Run compiled ops on `store` in place.

    Returns:
        The FilteredData an op returned (the caller drops the sample or batch), else None.

    Raises:
        ValueError: If a list-output op returns the wrong number of values.
    """
    for step in steps:
        op, forward, inputs, in_list, outputs, out_list, deletes = step
        data = [store[key] for key in inputs] if in_list else store[inputs[0]]
        try:
            result = forward(data, state)
        except ValueError as error:
            if "read-only" not in str(error):
                add_note(error, _describe(op, state))
                raise
            # The op edits its input in place and the input is a read-only view of the dataset: give it copies.
            op.in_place_edits = True  # type: ignore[attr-defined]
            step = (op, _with_copied_inputs(forward, in_list)) + step[2:]
            steps[_index_of(steps, op)] = step
            result = step[1](data, state)
        except Exception as error:
            add_note(error, _describe(op, state))
            raise
        if result.__class__ is FilteredData:
            return result
        if outputs:
            if out_list:
                if len(result) != len(outputs):
                    check_output_count(op, outputs, len(result), _describe(op, state))
                for key, value in zip(outputs, result):
                    store[key] = value
            else:
                store[outputs[0]] = result
        for key in deletes:
            store.pop(key, None)
    return None


def _index_of(steps: List[Step], op: NumpyOp) -> int:
    for index, step in enumerate(steps):
        if step[0] is op:
            return index
    raise ValueError(f"{op!r} is not among the compiled steps")


def add_note(error: BaseException, note: str) -> None:
    """Add `note` to `error` (Python 3.11+ notes), once."""
    adder = getattr(error, "add_note", None)  # Python 3.11+
    if adder is not None and note not in getattr(error, "__notes__", ()):
        adder(note)
