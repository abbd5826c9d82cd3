"""Checkpoint state of meta ops: the states of the ops they hold, so that ops nested in `Sometimes`, `OneOf`,
`Repeat` or `Fuse` are saved and restored like top-level ops (at any depth)."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

__all__ = ["MetaOpStateMixin"]


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
        """The checkpoint state: {"ops": [state of each child op]}."""
        from fe_core.checkpoint.object_state import get_object_state
        return {"ops": [get_object_state(op) for op in self.get_child_ops()]}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore the child ops' states from `get_state()`'s output.

        Raises:
            ValueError: If the saved states do not match the child ops in number.
        """
        from fe_core.checkpoint import object_state
        children = self.get_child_ops()
        states: Sequence[Dict[str, Any]] = state.get("ops", [])
        if not isinstance(states, list) or len(states) != len(children):
            saved = len(states) if isinstance(states, list) else 0
            raise ValueError(f"{type(self).__name__}: the checkpoint holds {saved} nested op state(s), but this op "
                             f"holds {len(children)} op(s) ({', '.join(type(op).__name__ for op in children)})")
        check = getattr(object_state, "check_object_state", None)  # all-or-nothing check, where the collector has one
        if check is not None:
            for index, (op, op_state) in enumerate(zip(children, states)):
                check(op, op_state, f"{type(self).__name__} nested op {index} ({type(op).__name__})")
        for op, op_state in zip(children, states):
            object_state.set_object_state(op, op_state)

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
