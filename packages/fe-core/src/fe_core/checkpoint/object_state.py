"""What a checkpoint saves of a trace, an op or a dataset, and how it is put back.

An object chooses its state by defining `get_state() -> dict` and `set_state(state)`. Otherwise its state is the part
of its instance `__dict__` that the checkpoint codec can store: counters, numbers, strings, numpy arrays, dicts and
lists of those, numpy generators, summaries. Attributes that hold callables, modules, models, the `system` back
reference or any other object the codec cannot store are configuration rebuilt by the user's script, not state, and
are left out. What an explicit `get_state()` returns is never filtered: if part of it cannot be stored, saving fails.

Example:
    >>> class Counter:
    ...     def __init__(self):
    ...         self.count, self.fn = 0, print
    >>> c = Counter(); c.count = 3
    >>> get_object_state(c)
    {'count': 3}
    >>> fresh = Counter(); set_object_state(fresh, {'count': 3}); fresh.count
    3
"""
from __future__ import annotations

import types
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np

from fe_core.checkpoint.codec import StateCodec
from fe_core.schedule.scheduler import Scheduler

__all__ = ["get_object_state", "set_object_state", "stateful_objects", "get_object_states", "check_object_states",
           "set_object_states", "SKIPPED_ATTRIBUTES"]

SKIPPED_ATTRIBUTES = frozenset({"system"})
_MISSING = object()


def _has_method(obj: Any, name: str) -> bool:
    return callable(getattr(obj, name, None))


def get_object_state(obj: Any, codec: Optional[StateCodec] = None) -> Dict[str, Any]:
    """The state of `obj` to put in a checkpoint.

    Args:
        obj: A trace, op, dataset or any other object.
        codec: The codec deciding what can be stored (default: one with the loaded backends' reducers).

    Returns:
        `obj.get_state()` if `obj` defines it; else its storable instance attributes (see the module docstring);
        else an empty dict.

    Raises:
        TypeError: If `obj.get_state()` does not return a dict.
    """
    if _has_method(obj, "get_state"):
        state = obj.get_state()
        if not isinstance(state, dict):
            raise TypeError(f"{type(obj).__name__}.get_state() must return a dict, got {type(state).__name__}")
        return state
    attributes = getattr(obj, "__dict__", None)
    if not attributes:
        return {}
    codec = codec or StateCodec()
    state = {}
    for name, value in attributes.items():
        if name in SKIPPED_ATTRIBUTES or callable(value) or isinstance(value, types.ModuleType):
            continue
        if codec.can_encode(value):
            state[name] = value
    return state


def _same_value(current: Any, saved: Any) -> bool:
    if current is saved:
        return True
    if type(current) is not type(saved):
        return False
    try:
        if isinstance(current, np.ndarray):
            return current.dtype == saved.dtype and current.shape == saved.shape and bool(
                np.array_equal(current, saved))
        return bool(current == saved)
    except Exception:  # pylint: disable=broad-except  (ambiguous or failing comparisons just mean "set it")
        return False


def _update_dict_in_place(current: Dict[Any, Any], saved: Dict[Any, Any]) -> None:
    for key in [key for key in current if key not in saved]:
        del current[key]
    factory = current.default_factory if isinstance(current, defaultdict) else None
    for key, value in saved.items():
        existing = current[key] if key in current else _MISSING
        if existing is _MISSING and factory is not None and type(value) is dict:
            fresh = factory()
            if isinstance(fresh, dict):  # keep nested defaultdict factories (defaultdict(lambda: defaultdict(list)))
                _update_dict_in_place(fresh, value)
                current[key] = fresh
                continue
        if isinstance(existing, dict) and type(value) is dict:
            _update_dict_in_place(existing, value)
        else:
            current[key] = value


def set_object_state(obj: Any, state: Dict[str, Any]) -> None:
    """Put a state returned by `get_object_state` back into `obj`.

    `obj.set_state(state)` is used if `obj` defines it. Otherwise each attribute is set, except that an attribute which
    is a dict (or defaultdict) is updated in place (recursively, keys missing from the saved dict are removed) so
    defaultdict factories survive, a numpy Generator gets its bit-generator state back in place, and an attribute that
    already equals the saved value is left alone.

    Args:
        obj: The object to restore.
        state: Its saved state.

    Raises:
        TypeError: If `obj` has neither `set_state` nor instance attributes but `state` is not empty.
    """
    if _has_method(obj, "set_state"):
        obj.set_state(state)
        return
    if not state:
        return
    attributes = getattr(obj, "__dict__", None)
    if attributes is None:
        raise TypeError(f"Cannot restore state {sorted(state)} into a {type(obj).__name__}: it has neither "
                        f"set_state() nor instance attributes")
    for name, value in state.items():
        current = attributes.get(name, _MISSING)
        if isinstance(current, dict) and type(value) is dict:
            _update_dict_in_place(current, value)
        elif isinstance(current, np.random.Generator) and isinstance(value, np.random.Generator) and \
                type(current.bit_generator) is type(value.bit_generator):
            current.bit_generator.state = value.bit_generator.state
        elif current is _MISSING or not _same_value(current, value):
            setattr(obj, name, value)


def stateful_objects(items: Iterable[Any]) -> List[Any]:
    """The distinct objects in `items`: Schedulers expanded to their values, None dropped, duplicates (by identity)
    kept once, in order of first appearance.

    Example:
        >>> from fe_core.schedule import EpochScheduler
        >>> a, b = object(), object()
        >>> stateful_objects([a, EpochScheduler({1: b, 3: None, 5: a})]) == [a, b]
        True
    """
    found: List[Any] = []
    seen = set()
    for item in items:
        for candidate in item.get_all_values() if isinstance(item, Scheduler) else [item]:
            if candidate is not None and id(candidate) not in seen:
                seen.add(id(candidate))
                found.append(candidate)
    return found


def get_object_states(items: Iterable[Any], codec: Optional[StateCodec] = None) -> List[Dict[str, Any]]:
    """The states of `stateful_objects(items)`, in order."""
    codec = codec or StateCodec()
    return [get_object_state(obj, codec) for obj in stateful_objects(items)]


def check_object_states(name: str, items: Iterable[Any], states: Any, description: Optional[str] = None) -> None:
    """Check that saved `states` fit the in-memory `items` (one state dict per stateful object).

    Args:
        name: What the list is ('traces', 'nops', ...), for the error message.
        items: The in-memory items.
        states: The saved states.
        description: What the objects are, in words ('pipeline ops'); defaults to `name`.

    Raises:
        ValueError: If `states` is not a list of dicts or has a different length than the in-memory objects.
    """
    objects = stateful_objects(items)
    description = description or name
    if not isinstance(states, list):
        raise ValueError(f"Checkpoint entry {name!r} should be a list of states, found a {type(states).__name__}")
    if len(states) != len(objects):
        raise ValueError(f"Checkpoint entry {name!r} holds {len(states)} saved states, but {len(objects)} "
                         f"{description} are in memory ({', '.join(type(obj).__name__ for obj in objects) or 'none'}); the "
                         f"script must build the same objects it had when the checkpoint was saved")
    for index, state in enumerate(states):
        if not isinstance(state, dict):
            raise ValueError(f"Checkpoint entry {name}[{index}] should be a dict, found a {type(state).__name__}")


def set_object_states(items: Iterable[Any], states: Sequence[Dict[str, Any]]) -> None:
    """Restore `states` (as checked by `check_object_states`) into `stateful_objects(items)`."""
    for obj, state in zip(stateful_objects(items), states):
        set_object_state(obj, state)
