"""Diagnosing a user's mistakes before training: messages that name the op, key or model, where, and what was expected.

The Estimator's warmup and the Network use these helpers to turn an obscure failure (a framework's traceback about
`mat1 and mat2`, a missing key, an op that never runs) into one message that says which op failed, on which key(s) of
which shape(s), in which mode, epoch and ds_id, and what was expected, with the original exception chained. Nothing
here runs on an ordinary training step: only where an error is being raised, or once before training.

Invalid configuration raises `ConfigurationError` (or `ConfigurationTypeError`), defined in `fe_core.config_error`
and re-exported here: a ValueError (TypeError) carrying fe's message that is also an AssertionError, as FastEstimator
asserts the same conditions, so old `except AssertionError` clauses keep working.
"""
from __future__ import annotations

import difflib
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from fe_core.config_error import ConfigurationError, ConfigurationTypeError
from fe_core.schedule.scheduler import Scheduler, get_current_items

__all__ = ["ConfigurationError", "ConfigurationTypeError", "where", "op_label", "describe_value", "describe_inputs", "described", "is_described", "rewrap", "add_note",
           "suggest_keys", "find_unavailable_input", "unavailable_key_message", "check_ds_ids_exist"]


def where(state: Mapping[str, Any]) -> str:
    """'mode ..., epoch ..., ds_id ...' of an op's `state` (the TF network keeps the Python epoch in 'fe_epoch')."""
    epoch = state.get("fe_epoch", state.get("epoch"))
    return f"mode {state.get('mode')!r}, epoch {epoch}, ds_id {state.get('ds_id')!r}"


def op_label(op: Any) -> str:
    """The op's class, its model (for ModelOp / UpdateOp) and its keys, e.g.
    "ModelOp (model 'lenet', inputs ['x'], outputs ['y_pred'])"."""
    parts = []
    model = getattr(op, "model", None)
    if model is not None:
        parts.append(f"model {getattr(model, 'model_name', type(model).__name__)!r}")
    parts.append(f"inputs {list(getattr(op, 'inputs', []))}")
    outputs = list(getattr(op, "outputs", []))
    if outputs:
        parts.append(f"outputs {outputs}")
    return f"{type(op).__name__} ({', '.join(parts)})"


def _dtype_name(dtype: Any) -> str:
    name = getattr(dtype, "name", None)
    text = name if isinstance(name, str) else str(dtype)
    return text[len("torch."):] if text.startswith("torch.") else text


def describe_value(value: Any) -> str:
    """A value's shape and dtype ('shape (4, 28, 28, 1) float32'), or its type when it has no shape."""
    shape = getattr(value, "shape", None)
    if shape is None:
        return f"a {type(value).__name__}"
    try:
        dims = tuple(None if dim is None else int(dim) for dim in shape)
    except (TypeError, ValueError):  # an unknown rank
        return f"shape {shape}"
    dtype = getattr(value, "dtype", None)
    return f"shape {dims}" + (f" {_dtype_name(dtype)}" if dtype is not None else "")


def describe_inputs(keys: Sequence[str], store: Mapping[str, Any]) -> str:
    """"'x' shape (4, 784) float32, 'y' shape (4,) int64" for the keys found in `store`."""
    return ", ".join(f"{key!r} {describe_value(store[key])}" if key in store else f"{key!r} (missing)"
                     for key in keys)


def described(error: BaseException) -> BaseException:
    """Mark `error` as already naming its op and context, so enclosing handlers pass it on unchanged."""
    try:
        error.fe_described = True  # type: ignore[attr-defined]
    except AttributeError:  # exception types with __slots__
        pass
    return error


def is_described(error: BaseException) -> bool:
    """Whether `error` came from `described` (or `rewrap`)."""
    return bool(getattr(error, "fe_described", False))


def rewrap(error: BaseException, message: str) -> Optional[BaseException]:
    """A new exception of `error`'s type carrying `message`, marked as described, for the caller to raise `from
    error`; None when that type cannot be made from a single message (the caller then adds `message` to `error` as a
    note and re-raises it, so the type a user may catch never changes)."""
    try:
        new = type(error)(message)
        if str(new) != message and not isinstance(new, KeyError):
            return None  # the type formats its message: keep the original
    except Exception:  # pylint: disable=broad-except  (any constructor may fail)
        return None
    return described(new)


def add_note(error: BaseException, note: str) -> None:
    """Attach `note` to `error` (shown under its traceback) and mark it described."""
    if note not in getattr(error, "__notes__", ()):
        error.add_note(note)
    described(error)


def suggest_keys(key: str, available: Iterable[str], reader: Any = None, earlier_ops: Sequence[Any] = (),
                 pipeline_keys: Iterable[str] = (), all_ops: Sequence[Any] = ()) -> List[str]:
    """The keys a user most likely meant instead of the missing `key`, best first (at most 3).

    Close spellings first (difflib); then, when nothing is spelled alike, what the reading op's role suggests: an
    UpdateOp's loss key -> the losses computed earlier; a loss op's ground-truth key -> pipeline keys no network op
    reads.

    Args:
        key: The missing key.
        available: The keys that exist where `key` was read.
        reader: The op that reads `key`.
        earlier_ops: The ops that ran before `reader` (for the losses they computed).
        pipeline_keys: The keys the pipeline provides.
        all_ops: Every network op of the configuration (to find pipeline keys nobody reads).
    """
    available = sorted(set(available))
    suggestions = difflib.get_close_matches(key, available, n=3, cutoff=0.6)
    if not suggestions and reader is not None:
        if key in _loss_keys(reader):
            suggestions = [out for op in earlier_ops if _is_loss(op) for out in op.outputs]
        elif _is_loss(reader) and len(reader.inputs) > 1 and key == reader.true_key:
            read = {name for op in all_ops for name in getattr(op, "inputs", [])}
            suggestions = [name for name in sorted(set(pipeline_keys)) if name not in read]
    return list(dict.fromkeys(suggestions))[:3]


def _is_loss(op: Any) -> bool:
    """Whether `op` is a loss op (LossOp's (y_pred, y_true) interface; duck-typed to keep this module low)."""
    return hasattr(type(op), "true_key") and hasattr(type(op), "pred_key")


def _loss_keys(op: Any) -> Set[str]:
    getter = getattr(op, "get_fe_loss_keys", None)
    return set(getter()) if callable(getter) else set()


def find_unavailable_input(ops: Sequence[Any], pipeline_keys: Iterable[str]
                           ) -> Optional[Tuple[int, str, List[str]]]:
    """The first op (by position) reading a key that neither the pipeline nor an earlier op produced.

    Returns:
        (index of the op, the key, outputs of the ops before it), or None when every input is available.
    """
    available = set(pipeline_keys)
    produced: List[str] = []
    for index, op in enumerate(ops):
        for key in getattr(op, "inputs", []):
            if key not in available:
                return index, key, produced
        for key in getattr(op, "outputs", []):
            available.add(key)
            if key not in produced:
                produced.append(key)
    return None


def unavailable_key_message(ops: Sequence[Any], index: int, key: str, produced: Sequence[str],
                            pipeline_keys: Iterable[str], context: str, kind: str = "op") -> str:
    """The message for `ops[index]` reading `key` that is not there: every key available at that point (pipeline
    keys and earlier ops' outputs), the closest one, and whether a later op makes it (ops run in list order)."""
    reader = ops[index]
    pipeline_keys = sorted(set(pipeline_keys))
    message = (f"{kind} {op_label(reader)} reads key {key!r}, which neither the pipeline nor an earlier op produces "
               f"in {context}. Keys available there: pipeline {pipeline_keys}, earlier network ops "
               f"{list(produced)}.")
    later = [op for op in ops[index + 1:] if key in getattr(op, "outputs", [])]
    if later:
        message += (f" {type(later[0]).__name__} produces {key!r} later: ops run in the order given, so move it "
                    f"before {type(reader).__name__}.")
    suggestions = suggest_keys(key, list(pipeline_keys) + list(produced), reader, ops[:index], pipeline_keys, ops)
    if suggestions:
        message += " Did you mean " + " or ".join(repr(name) for name in suggestions) + "?"
    return message


# ---------------------------------------------------------------------------------------------------- ds_ids
def _all_values(items: Iterable[Any]) -> List[Any]:
    return get_current_items(items)  # schedulers expanded to every value, Nones dropped


def pipeline_ds_ids(pipeline: Any, total_epochs: int) -> Set[str]:
    """Every ds_id the pipeline's data has in any mode and epoch (InterleaveDataset member names included)."""
    ds_ids: Set[str] = set()
    data: Dict[str, Dict[str, Any]] = getattr(pipeline, "data", None) or {}
    for mode, datasets in data.items():
        for epoch in range(1, total_epochs + 1):
            ds_ids.update(pipeline.get_ds_ids(epoch=epoch, mode=mode))
        for dataset in datasets.values():
            members = dataset.get_all_values() if isinstance(dataset, Scheduler) else [dataset]
            for member in members:
                names = getattr(member, "names", None) if callable(getattr(member, "sub_ds_ids", None)) else None
                ds_ids.update(names or ())
    return ds_ids


def check_ds_ids_exist(pipeline: Any, groups: Sequence[Tuple[str, Iterable[Any]]], total_epochs: int) -> None:
    """Fail when an item restricted to a ds_id names no dataset of the pipeline (it would never run).

    Args:
        pipeline: The Pipeline.
        groups: (what the items are, the items or schedulers of them), e.g. ("Pipeline op", pipeline.ops).
        total_epochs: The epochs of the run.

    Raises:
        ConfigurationError: (a ValueError and an AssertionError) Naming the first such item, the unknown ds_id(s) and
            the ds_ids that exist.
    """
    existing = pipeline_ds_ids(pipeline, total_epochs)
    if not existing:
        return
    for kind, items in groups:
        for item in _all_values(items):
            names = {ds_id for ds_id in getattr(item, "ds_id", None) or () if not ds_id.startswith("!")}
            unknown = sorted(names - existing)
            if unknown:
                named = sorted(existing - {""})
                have = (f"the pipeline's ds_ids are {named}" if named else
                        "the pipeline's datasets have no ds_id (give the data as {ds_id: dataset} to name them)")
                label = op_label(item) if callable(getattr(item, "forward", None)) else type(item).__name__
                raise ConfigurationError(f"{kind} {label} runs only on ds_id {sorted(names)}, but the pipeline has "
                                         f"no dataset {unknown[0]!r}, so it would never run; {have}.")
