"""What a checkpoint saves of a trace, an op or a dataset, and how it is put back.

A checkpoint restores STATE (counters, statistics, random generators, weights), never CONFIGURATION that the script
sets (file names, directories, keys, modes, hyperparameters): a checkpoint directory may have been written by someone
else, and a changed script must win over an old checkpoint.

An object chooses its state by defining `get_state() -> dict` and `set_state(state)`. Otherwise its state is the part
of its instance `__dict__` that the checkpoint codec can store (counters, numbers, strings, numpy arrays, dicts and
lists of those, numpy generators, summaries), except configuration:
    * attributes named like a parameter of the `__init__` of its class or a base class (FastEstimator's convention
      stores constructor arguments under their own names: `CSVLogger(filename=...)` -> `self.filename`) or listed in
      a class's `fe_configuration` tuple (a dataset's arrays and their index: the script's input data), and
    * attributes that hold callables, modules, models, the `system` back reference or any other object the codec
      cannot store (rebuilt by the user's script).
Restoring sets only attributes the object already has, with a value of the same kind (a number stays a number, an
array an array); configuration found in a checkpoint is ignored. What an explicit `get_state()` returns is never
filtered: if part of it cannot be stored, saving fails.

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

import inspect
import numbers
import types
import warnings
from collections import defaultdict
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence

import numpy as np

from fe_core.checkpoint.codec import StateCodec, backend_state_reducers
from fe_core.schedule.scheduler import Scheduler

__all__ = ["get_object_state", "set_object_state", "stateful_objects", "get_object_states", "check_object_states",
           "set_object_states", "check_object_state", "SKIPPED_ATTRIBUTES", "configuration_names"]

SKIPPED_ATTRIBUTES = frozenset({"system"})
_MISSING = object()
_CONFIGURATION: Dict[type, FrozenSet[str]] = {}
_WARNED: set = set()


def configuration_names(cls: type) -> FrozenSet[str]:
    """The attribute names that are configuration for objects of `cls`: the parameters of every `__init__` in its MRO,
    and the names a class lists in its `fe_configuration` attribute (derived data a class keeps, such as a dataset's
    index of its arrays).

    Example:
        >>> class Saver:
        ...     def __init__(self, save_dir, keep=2):
        ...         self.save_dir, self.keep, self.saved = save_dir, keep, []
        >>> sorted(configuration_names(Saver))
        ['keep', 'save_dir']
    """
    names = _CONFIGURATION.get(cls)
    if names is None:
        found = set()
        for klass in cls.__mro__:
            found.update(klass.__dict__.get("fe_configuration", ()))
            init = klass.__dict__.get("__init__")
            if init is None or klass is object:
                continue
            try:
                parameters = inspect.signature(init).parameters
            except (TypeError, ValueError):
                continue
            found.update(name for name in list(parameters)[1:])
        names = _CONFIGURATION[cls] = frozenset(found)
    return names


def _same_kind(current: Any, saved: Any) -> bool:
    """Whether a saved value may replace the current one (numbers by numbers, arrays by arrays, ...)."""
    if isinstance(current, bool) or isinstance(saved, bool):
        return isinstance(current, (bool, np.bool_)) and isinstance(saved, (bool, np.bool_))
    if isinstance(current, numbers.Number) and isinstance(saved, numbers.Number):
        return True
    if current is None or saved is None:
        return True  # an attribute that starts as None (a best value, a last loss) and is set during training
    if isinstance(current, np.ndarray) or isinstance(saved, np.ndarray):
        return isinstance(current, np.ndarray) and isinstance(saved, np.ndarray)
    if isinstance(current, dict) and isinstance(saved, dict):
        return True
    if isinstance(current, (list, tuple)) and isinstance(saved, (list, tuple)):
        return True
    return isinstance(saved, type(current)) or isinstance(current, type(saved))


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
    configuration = configuration_names(type(obj))
    state = {}
    for name, value in attributes.items():
        if name in SKIPPED_ATTRIBUTES or name in configuration or callable(value) or \
                isinstance(value, types.ModuleType):
            continue
        if codec.can_encode(value):
            state[name] = value
        elif (type(obj), name) not in _WARNED and not _is_configuration_object(value):
            _WARNED.add((type(obj), name))
            warnings.warn(f"{type(obj).__name__}.{name} (a {type(value).__module__}.{type(value).__qualname__}) is not "
                          f"saved in checkpoints: it is neither plain data nor a tensor of a loaded backend. Give "
                          f"{type(obj).__name__} get_state()/set_state() to checkpoint it.", RuntimeWarning, stacklevel=2)
    return state


def _is_configuration_object(value: Any) -> bool:
    """Objects that are rebuilt by the script, not state: models, ops, traces, datasets, networks, pipelines, systems."""
    module = type(value).__module__.split(".")[0]
    if module in ("fe_core", "fe_torch", "fe_tf", "fe", "torch", "tensorflow", "keras", "tf_keras"):
        return True  # fe objects, and framework objects no reducer handles (models, optimizers, devices)
    if hasattr(value, "model_name"):
        return True  # a model built with fe.build, whatever its framework
    return isinstance(value, (types.FunctionType, type)) or hasattr(value, "__call__")


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

    `obj.set_state(state)` is used if `obj` defines it. Otherwise each attribute is set, except that configuration
    (see the module docstring) is ignored, an attribute which is a dict (or defaultdict) is updated in place
    (recursively, keys missing from the saved dict are removed) so defaultdict factories survive, a numpy Generator
    gets its bit-generator state back in place, and an attribute that already equals the saved value is left alone.
    `check_object_state` tells beforehand whether a state fits.

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
    configuration = configuration_names(type(obj))
    for name, value in state.items():
        if name in configuration or name in SKIPPED_ATTRIBUTES:
            continue  # the script's configuration wins over whatever a checkpoint says
        current = attributes.get(name, _MISSING)
        in_place = _in_place_assigner(current) if current is not _MISSING else None
        if in_place is not None:
            in_place(current, value)  # a tensor / variable that other objects may share keeps its identity
        elif isinstance(current, dict) and type(value) is dict:
            _update_dict_in_place(current, value)
        elif isinstance(current, np.random.Generator) and isinstance(value, np.random.Generator) and \
                type(current.bit_generator) is type(value.bit_generator):
            current.bit_generator.state = value.bit_generator.state
        elif current is _MISSING or not _same_value(current, value):
            setattr(obj, name, value)


def _in_place_assigner(current: Any) -> Optional[Any]:
    """The `assign` of the loaded backend reducer that handles `current`, if any (no framework import here)."""
    if type(current).__module__.split(".")[0] not in ("torch", "tensorflow", "keras"):
        return None
    for reducer in backend_state_reducers():
        if reducer.assign is not None and reducer.matches(current):
            return reducer.assign
    return None


def check_object_state(obj: Any, state: Dict[str, Any], where: str) -> None:
    """Check that a saved `state` fits `obj` before anything is restored (all or nothing).

    An object with its own `set_state` may define `check_state(state)`, which raises ValueError for a state it could
    not take; it is called here. Otherwise every saved attribute that is not configuration must exist on `obj` with a
    value of the same kind.

    Raises:
        ValueError: Naming the attribute, the object and `where` (the checkpoint entry) when it does not fit.
    """
    if _has_method(obj, "set_state"):
        if _has_method(obj, "check_state"):
            try:
                obj.check_state(state)
            except (TypeError, KeyError, AttributeError) as error:
                raise ValueError(f"{where}: {type(obj).__name__} cannot take the saved state: {error}") from error
        return
    if not state:
        return
    attributes = getattr(obj, "__dict__", None)
    if attributes is None:
        raise ValueError(f"{where}: a {type(obj).__name__} has no attributes to restore {sorted(state)} into")
    configuration = configuration_names(type(obj))
    for name, value in state.items():
        if name in configuration or name in SKIPPED_ATTRIBUTES:
            continue
        if name not in attributes:
            raise ValueError(f"{where}: {type(obj).__name__} has no attribute {name!r} (the checkpoint was saved from "
                             f"a different object)")
        if not _same_kind(attributes[name], value):
            raise ValueError(f"{where}: {type(obj).__name__}.{name} is a {type(attributes[name]).__name__}, but the "
                             f"checkpoint holds a {type(value).__name__}")


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
    for index, (obj, state) in enumerate(zip(objects, states)):
        if not isinstance(state, dict):
            raise ValueError(f"Checkpoint entry {name}[{index}] should be a dict, found a {type(state).__name__}")
        check_object_state(obj, state, f"Checkpoint entry {name}[{index}]")


def set_object_states(items: Iterable[Any], states: Sequence[Dict[str, Any]]) -> None:
    """Restore `states` (as checked by `check_object_states`) into `stateful_objects(items)`."""
    for obj, state in zip(stateful_objects(items), states):
        set_object_state(obj, state)
