"""Find models that were built to be trained (with an optimizer) but that nothing in the Network ever updates.

A Network whose ops forgot the `UpdateOp` trains nothing: every epoch runs at the initial weights' accuracy and no
error is raised. FastEstimator is silent here; the Estimator's warmup warns once, naming the model(s).

Example:
    >>> models_never_updated([])
    []
"""
from __future__ import annotations

from typing import Any, Iterable, List, Set

from fe_core.op.tensorop.model import UpdateOp
from fe_core.schedule.scheduler import get_current_items
from fe_core.warning_lines import fe_warn

__all__ = ["models_never_updated", "warn_models_never_updated"]

_FE_MODULES = ("fe_core.", "fe_torch.", "fe_tf.", "fe.")


def _flatten(ops: Iterable[Any]) -> List[Any]:
    """Every op, with Schedulers expanded to all their values and meta ops (Fuse, Repeat, ...) to the ops inside."""
    flat: List[Any] = []
    pending = list(get_current_items(list(ops)))
    while pending:
        op = pending.pop(0)
        flat.append(op)
        inner = getattr(op, "ops", None)
        if isinstance(inner, (list, tuple)):
            pending.extend(get_current_items(list(inner)))
    return flat


def _holds(op: Any, model: Any) -> bool:
    """Whether `op` keeps a reference to `model` among its attributes (directly or in a list/tuple/dict)."""
    for value in vars(op).values():
        if value is model:
            return True
        if isinstance(value, (list, tuple)) and any(item is model for item in value):
            return True
        if isinstance(value, dict) and any(item is model for item in value.values()):
            return True
    return False


def models_never_updated(ops: Iterable[Any]) -> List[Any]:
    """The models used by `ops` that have an optimizer but are updated by no op in train mode.

    A model counts as updated when an `UpdateOp` that runs in train mode (in any epoch) updates it, or when a
    TensorOp written outside fe holds it (its own code may update it, e.g. with `fe.backend.update_model`).

    Args:
        ops: The Network's ops (Schedulers of ops allowed).

    Returns:
        The models, in order of first use.
    """
    flat = _flatten(ops)
    used: List[Any] = []
    seen: Set[int] = set()
    for op in flat:
        get_models = getattr(op, "get_fe_models", None)
        for model in sorted(get_models(), key=lambda m: str(getattr(m, "model_name", ""))) if callable(
                get_models) else []:
            if id(model) not in seen:
                seen.add(id(model))
                used.append(model)
    updated: Set[int] = set()
    for op in flat:
        if isinstance(op, UpdateOp):
            if not op.mode or "train" in op.mode:
                updated.add(id(op.model))
        elif not type(op).__module__.startswith(_FE_MODULES) and hasattr(op, "__dict__"):
            updated |= {id(model) for model in used if _holds(op, model)}
    return [model for model in used
            if getattr(model, "optimizer", None) is not None and id(model) not in updated]


def warn_models_never_updated(ops: Iterable[Any]) -> None:
    """Warn (one warning per model) when a model built with an optimizer is never updated in train mode."""
    for model in models_never_updated(ops):
        name = getattr(model, "model_name", type(model).__name__)
        fe_warn(f"Model {name!r} was built with an optimizer, but no UpdateOp updates it in train mode, so "
                f"training will not change its weights. Add UpdateOp(model=..., loss_name=...) to the Network's "
                f"ops, or build it with optimizer_fn=None if it is not meant to be trained.")  # a FastEstimator-Warn line
