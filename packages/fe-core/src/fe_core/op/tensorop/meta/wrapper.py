"""`WrapperOp`: the shared base of the meta TensorOps, which run other TensorOps inside one op."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set

from fe_core.op.op import check_output_count
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["WrapperOp", "run_wrapped"]


def run_wrapped(op: TensorOp, store: Dict[str, Any], state: Dict[str, Any]) -> None:
    """Run `op` on the values in `store` (by its input keys) and write its results back into `store`."""
    data = [store[key] for key in op.inputs] if op.in_list else store[op.inputs[0]] if op.inputs else None
    result = op.forward(data, state)
    if not op.outputs:
        return
    if op.out_list:
        if len(result) != len(op.outputs):
            check_output_count(op, op.outputs, len(result))
        store.update(zip(op.outputs, result))
    else:
        store[op.outputs[0]] = result


def _public(attributes: Dict[str, Any]) -> Dict[str, Any]:
    """The attributes a user's code may change (a `prob`); '_' ones are derived from the wrapped ops."""
    if not isinstance(attributes, dict):
        raise ValueError(f"The saved attributes of a meta op should be a dict, found a {type(attributes).__name__}")
    return {name: value for name, value in attributes.items() if not str(name).startswith("_")}


class WrapperOp(TensorOp):
    """A TensorOp running the TensorOps in `self.ops`: it builds them, reports their models and loss keys, and passes
    the Network's gradient-graph decisions on to them.

    Subclasses set `self.ops` before using these methods; `forward` gets and returns lists (`in_list`/`out_list`).
    """

    ops: List[TensorOp]

    @staticmethod
    def check_ops(ops: Sequence[Any], owner: str) -> List[TensorOp]:
        """The ops as a list, checked to be TensorOps (not Schedulers or NumpyOps)."""
        checked = []
        for op in ops:
            if not isinstance(op, TensorOp):
                raise ValueError(f"{owner} can only wrap TensorOps (no Schedulers or NumpyOps), got "
                                 f"{type(op).__name__}")
            checked.append(op)
        if not checked:
            raise ValueError(f"{owner} needs at least one TensorOp")
        return checked

    def build(self, framework: str, device: Any = None) -> None:
        for op in self.ops:
            op.build(framework, device)
        super().build(framework, device)

    def get_fe_models(self) -> Set[Any]:
        models: Set[Any] = set()
        for op in self.ops:
            models |= op.get_fe_models()
        return models

    def get_fe_loss_keys(self) -> Set[str]:
        keys: Set[str] = set()
        for op in self.ops:
            keys |= op.get_fe_loss_keys()
        return keys

    def fe_retain_graph(self, retain: Optional[bool] = None) -> Optional[bool]:
        gradient_ops = [op for op in self.ops if op.fe_retain_graph() is not None]
        if not gradient_ops:
            return None
        if retain is not None:
            for op in gradient_ops[:-1]:
                op.fe_retain_graph(True)
            gradient_ops[-1].fe_retain_graph(retain)
        return gradient_ops[-1].fe_retain_graph()

    def get_state(self) -> Dict[str, Any]:
        """The wrapped ops' checkpoint states (a SuperLoss's average, an UpdateOp's accumulated gradients, ...) and
        this op's own data (a `prob` a curriculum changed, ...)."""
        from fe_core.checkpoint import object_state  # pylint: disable=import-outside-toplevel
        return {"ops": [object_state.get_object_state(op) for op in self.ops],
                "attributes": _public(object_state.get_attribute_state(self))}

    def check_state(self, state: Dict[str, Any]) -> None:
        """Check that a saved state fits this op and its wrapped ops before anything is restored.

        Raises:
            ValueError: If the number of saved states differs from the wrapped ops, or a saved value does not fit.
        """
        from fe_core.checkpoint import object_state  # pylint: disable=import-outside-toplevel
        saved = state.get("ops", [])
        if not isinstance(saved, list) or len(saved) != len(self.ops):
            raise ValueError(f"{type(self).__name__} wraps {len(self.ops)} op(s) but the checkpoint holds states for "
                             f"{len(saved) if isinstance(saved, list) else 0}")
        object_state.check_attribute_state(self, _public(state.get("attributes") or {}), type(self).__name__)
        for index, (op, op_state) in enumerate(zip(self.ops, saved)):
            object_state.check_object_state(op, op_state, f"{type(self).__name__} wrapped op {index}")

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned into the wrapped ops and this op (all checked before anything is set)."""
        from fe_core.checkpoint import object_state  # pylint: disable=import-outside-toplevel
        self.check_state(state)
        for op, op_state in zip(self.ops, state.get("ops", [])):
            object_state.set_object_state(op, op_state)
        object_state.set_attribute_state(self, _public(state.get("attributes") or {}))

    def ensure_built(self, data: Any) -> None:
        if getattr(self, "framework", None) is None:
            super().ensure_built(data)
