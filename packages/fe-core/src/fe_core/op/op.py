"""`Op`, the unit of work of the Pipeline (NumpyOp) and the Network (TensorOp).

An op reads `inputs` keys, writes `outputs` keys, and runs only in its `mode`(s) and `ds_id`(s). When `inputs` is a
single string, `forward` receives that one value; when it is a list or tuple (even of one key), `forward` receives a
list. The same holds for what `forward` returns and `outputs`.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, MutableMapping, Set, Union

from fe_core.containers import to_list, to_set
from fe_core.modes import check_ds_id, check_io_names, parse_modes
from fe_core.export import fe_export

__all__ = ["Op", "get_inputs_by_op", "write_outputs_by_op", "ungroup_outputs", "check_output_count"]


@fe_export("fe.op.op.Op", "fe.op.Op")
class Op:
    """The base class of every op.

    Args:
        inputs: Key(s) to read. A string gives `forward` one value; a list/tuple gives it a list.
        outputs: Key(s) to write. A string means `forward` returns one value; a list/tuple means a list.
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer', '!train', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.

    Attributes:
        in_list: Whether `forward` receives a list.
        out_list: Whether `forward` returns a list.
    """

    def __init__(self,
                 inputs: Union[None, str, Iterable[str], Callable] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        self.inputs: List[str] = check_io_names(to_list(inputs))
        self.outputs: List[str] = check_io_names(to_list(outputs))
        self.mode: Set[str] = parse_modes(to_set(mode))
        self.ds_id: Set[str] = check_ds_id(to_set(ds_id))
        self.in_list: bool = not isinstance(inputs, str)
        self.out_list: bool = not isinstance(outputs, str)

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        """Transform the input value(s) into the output value(s).

        Args:
            data: One value (when `inputs` is a string) or a list of values.
            state: Execution context ('mode', 'epoch', 'warmup', ... and backend entries such as a gradient tape).

        Returns:
            One value (when `outputs` is a string) or a list of values, or None when the op writes nothing.
        """
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(inputs={self.inputs}, outputs={self.outputs})"


@fe_export("fe.op.op.get_inputs_by_op", "fe.op.get_inputs_by_op")
def get_inputs_by_op(op: Op, store: MutableMapping[str, Any]) -> Any:
    """Read `op`'s inputs from `store`, as one value or a list (see `Op`)."""
    if op.in_list:
        return [store[key] for key in op.inputs]
    return store[op.inputs[0]]


def ungroup_outputs(op: Any, outputs: Any) -> Any:
    """One value per output key from what `op` returned.

    An op may return several keys' values as one list (a multivariate op given a list of mask keys returns the masks
    as one list, as FastEstimator's does); it says so with `output_groups`, one entry per returned value: None for a
    value of one key, n for a list of n keys' values. Other ops' outputs come back unchanged.

    Example:
        >>> class Grouped: output_groups = (None, 2)
        >>> ungroup_outputs(Grouped(), ["image", ["mask1", "mask2"]])
        ['image', 'mask1', 'mask2']
    """
    groups = getattr(op, "output_groups", None)
    if not groups or not isinstance(outputs, (list, tuple)) or len(outputs) != len(groups):
        return outputs
    flat: List[Any] = []
    for size, value in zip(groups, outputs):
        if size is None:
            flat.append(value)
        else:
            flat.extend(value)
    return flat


@fe_export("fe.op.op.write_outputs_by_op", "fe.op.write_outputs_by_op")
def write_outputs_by_op(op: Op, store: MutableMapping[str, Any], outputs: Any) -> None:
    """Write `outputs` into `store` under `op.outputs`.

    Raises:
        ValueError: If a list-output op returns the wrong number of values.
    """
    if not op.out_list:
        store[op.outputs[0]] = outputs
        return
    outputs = ungroup_outputs(op, outputs)
    if len(outputs) != len(op.outputs):
        check_output_count(op, op.outputs, len(outputs))
    for key, value in zip(op.outputs, outputs):
        store[key] = value


def check_output_count(op: Any, outputs: List[str], count: int, where: str = "") -> None:
    """Judge a list-output op that returned `count` values for `outputs` (called only when they differ).

    Fewer values than keys is an error. More is what FastEstimator accepts silently, writing the first ones (a
    single array returned for `outputs=['x']` gives 'x' its first row): fe does the same, with a warning.

    Raises:
        ValueError: If the op returned fewer values than it declares outputs.
    """
    message = f"{type(op).__name__} declares outputs {list(outputs)} but returned {count} value(s)"
    if count < len(outputs):
        raise ValueError(message + (f" ({where})" if where else ""))
    from fe_core.warning_lines import fe_warn  # pylint: disable=import-outside-toplevel
    fe_warn(f"{message}: only the first {len(outputs)} are written, as FastEstimator does (return a list of "
            f"{len(outputs)} value(s), or declare outputs as a string to write one value whole)", stacklevel=3)
