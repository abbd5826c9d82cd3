"""Checkpoint state of datasets that hold datasets (BatchDataset, InterleaveDataset, CombinedDataset, ExtendDataset):
their own position (index maps) next to the states of the datasets they hold, so that a user's dataset inside them is
saved and restored as a top-level one is (FastEstimator restores the attributes of its datasets at any depth).

Only fe's datasets (FEDataset and the classes fe defines, and subclasses of them, as FastEstimator's are traceable)
have their state restored; a dataset of another library or a user's own class that derives from none of fe's (a torch
Dataset) is the script's, as in FastEstimator, which does not restore what it cannot trace - unless it chooses its
state itself by defining `get_state()` and `set_state(state)` (fe's state protocol, as FastEstimator restores a class
that defines its own `__getstate__`).
"""
from __future__ import annotations

from typing import Any, Dict, List

__all__ = ["NestedDatasetStateMixin", "checkpoints_dataset", "is_fe_dataset"]

_FE_PACKAGES = frozenset({"fe_core", "fe_torch", "fe_tf", "fe"})


def is_fe_dataset(dataset: Any) -> bool:
    """Whether a checkpoint saves and restores `dataset`'s state: its class, or one of its bases, is fe's.

    Example:
        >>> import numpy as np
        >>> from fe_core.dataset import NumpyDataset
        >>> is_fe_dataset(NumpyDataset({"x": np.arange(2)})), is_fe_dataset([{"x": 0}, {"x": 1}])
        (True, False)
    """
    return any(str(getattr(klass, "__module__", "")).split(".")[0] in _FE_PACKAGES
               for klass in type(dataset).__mro__ if klass is not object)


def checkpoints_dataset(dataset: Any) -> bool:
    """Whether a checkpoint saves and restores `dataset`'s state: it is fe's (`is_fe_dataset`), or it chooses its state
    itself with `get_state()` and `set_state(state)`.

    Example:
        >>> from types import SimpleNamespace
        >>> counted = SimpleNamespace(get_state=lambda: {}, set_state=lambda state: None)
        >>> checkpoints_dataset(counted), checkpoints_dataset([{"x": 0}, {"x": 1}])
        (True, False)
    """
    return is_fe_dataset(dataset) or (callable(getattr(dataset, "get_state", None))
                                      and callable(getattr(dataset, "set_state", None)))


class NestedDatasetStateMixin:
    """Gives a dataset of datasets `get_state`, `check_state` and `set_state` over its own data and its members'.

    Subclasses implement `fe_member_datasets()`: the datasets they hold, in a fixed order.
    """

    def fe_member_datasets(self) -> List[Any]:
        """The datasets this one holds, in a fixed order."""
        raise NotImplementedError

    def get_state(self) -> Dict[str, Any]:
        """The checkpoint state: {"attributes": this dataset's own data (its index maps, ...), "datasets": the state of
        each member dataset ({} for one that is not fe's)}."""
        from fe_core.checkpoint.object_state import get_attribute_state, get_object_state
        return {"attributes": get_attribute_state(self),
                "datasets": [get_object_state(member) if checkpoints_dataset(member) else {}
                             for member in self.fe_member_datasets()]}

    def check_state(self, state: Dict[str, Any]) -> None:
        """Check that a saved state fits this dataset and its members before anything is restored.

        Raises:
            ValueError: If the saved states do not match the members in number, or a saved value does not fit.
        """
        from fe_core.checkpoint import object_state
        name = type(self).__name__
        if not isinstance(state, dict):
            raise ValueError(f"{name}: the saved state should be a dict, found a {type(state).__name__}")
        members = self.fe_member_datasets()
        states = state.get("datasets", [])
        if not isinstance(states, list) or len(states) != len(members):
            saved = len(states) if isinstance(states, list) else 0
            raise ValueError(f"{name}: the checkpoint holds {saved} member dataset state(s), but this dataset holds "
                             f"{len(members)} ({', '.join(type(member).__name__ for member in members)})")
        object_state.check_attribute_state(self, state.get("attributes") or {}, name)
        for index, (member, member_state) in enumerate(zip(members, states)):
            if not isinstance(member_state, dict):
                raise ValueError(f"{name} member dataset {index}: the saved state should be a dict")
            if checkpoints_dataset(member):
                object_state.check_object_state(member, member_state,
                                                f"{name} member dataset {index} ({type(member).__name__})")

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore this dataset's own data and its fe members' states from `get_state()`'s output (checked first).

        Raises:
            ValueError: If the saved state does not fit (nothing is changed then).
        """
        from fe_core.checkpoint import object_state
        self.check_state(state)
        for member, member_state in zip(self.fe_member_datasets(), state.get("datasets", [])):
            if checkpoints_dataset(member):
                object_state.set_object_state(member, member_state)
        object_state.set_attribute_state(self, state.get("attributes") or {})
