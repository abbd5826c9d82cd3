"""Checkpoint state of meta ops: the states of the ops they hold, so that ops nested in `Sometimes`, `OneOf`,
`Repeat` or `Fuse` are saved and restored like top-level ops (at any depth)."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

__all__ = ["MetaOpStateMixin"]


def _public(attributes: Dict[str, Any]) -> Dict[str, Any]:
    """The attributes a user's code may change (a `prob`); '_' ones are derived from the wrapped ops."""
    if not isinstance(attributes, dict):
        raise ValueError(f"The saved attributes of a meta op should be a dict, found a {type(attributes).__name__}")
    return {name: value for name, value in attributes.items() if not str(name).startswith("_")}


class MetaOpStateMixin:
    """Gives a meta op `get_child_ops`, `get_state` and `set_state` over the ops it holds.

    The checkpoint collector (`fe_core.checkpoint.object_state`) calls `get_state()` / `set_state()` on objects that
    define them, so a meta op's children (and their children) are saved with it. Subclasses implement
    `get_child_ops()`.
    """

    def get_child_ops(self) -> List[Any]:
        """The ops this meta op runs, in a fixed order."""
        raise NotImplementedError

    def get_state(self) -> Dict[str, Any]:
        """The checkpoint state: {"ops": [state of each child op], "attributes": this op's own data (a `prob` a
        curriculum changed, ...)}."""
        from fe_core.checkpoint.object_state import get_attribute_state, get_object_state
        return {"ops": [get_object_state(op) for op in self.get_child_ops()],
                "attributes": _public(get_attribute_state(self))}

    def check_state(self, state: Dict[str, Any]) -> None:
        """Check that a saved state fits this op and its children before anything is restored.

        Raises:
            ValueError: If the saved states do not match the child ops in number, or a saved value does not fit.
        """
        from fe_core.checkpoint import object_state
        children = self.get_child_ops()
        states: Sequence[Dict[str, Any]] = state.get("ops", [])
        if not isinstance(states, list) or len(states) != len(children):
            saved = len(states) if isinstance(states, list) else 0
            raise ValueError(f"{type(self).__name__}: the checkpoint holds {saved} nested op state(s), but this op "
                             f"holds {len(children)} op(s) ({', '.join(type(op).__name__ for op in children)})")
        object_state.check_attribute_state(self, _public(state.get("attributes") or {}), type(self).__name__)
        for index, (op, op_state) in enumerate(zip(children, states)):
            object_state.check_object_state(op, op_state,
                                            f"{type(self).__name__} nested op {index} ({type(op).__name__})")

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore the child ops' states and this op's own data from `get_state()`'s output (all checked first).

        Raises:
            ValueError: If the saved states do not match the child ops in number, or a saved value does not fit.
        """
        from fe_core.checkpoint import object_state
        self.check_state(state)
        for op, op_state in zip(self.get_child_ops(), state.get("ops", [])):
            object_state.set_object_state(op, op_state)
        object_state.set_attribute_state(self, _public(state.get("attributes") or {}))

    def _set_children_rua_level(self, magnitude_coef: float) -> None:
        """Forward `set_rua_level` to every child op.

        Raises:
            AttributeError: If a child op has no `set_rua_level`.
        """
        for op in self.get_child_ops():
            if not hasattr(op, "set_rua_level"):
                raise AttributeError(f"{type(self).__name__}: {type(op).__name__} has no set_rua_level method, so RUA "
                                     f"cannot set its augmentation level")
        for op in self.get_child_ops():
            op.set_rua_level(magnitude_coef)
