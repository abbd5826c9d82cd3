"""What a checkpoint saves of a trace, an op, a slicer or a dataset, and how it is put back.

A checkpoint restores the DATA a run changes (counters, statistics, random generators, weights, and any number,
array or tensor a user's code adjusts during training, such as a curriculum's `prob`), as FastEstimator does, but it
never decides what reaches the filesystem, imports or code: file and directory paths, URLs, names of classes or
callables. A checkpoint directory may have been written by someone else.

An object chooses its state by defining `get_state() -> dict` and `set_state(state)`. Otherwise its state is the part
of its instance `__dict__` that the checkpoint codec can store (numbers, strings, numpy arrays, backend tensors, dicts
and lists of those, numpy generators, summaries), except:
    * attributes named like a parameter of the `__init__` of its class or a base class (FastEstimator's convention
      stores constructor arguments under their own names: `CSVLogger(filename=...)` -> `self.filename`) whose value is
      not plain numeric data: such an attribute is saved and restored only while it holds numbers, booleans, None,
      numeric numpy arrays (up to `LARGE_ARRAY_BYTES`: larger ones are the script's input data), backend tensors or
      variables, numpy generators, or containers of those. A string or any other object given to the constructor
      (a path, a key, a mode, a model, a callable) is the script's configuration;
    * any value holding a string that looks like a location or a dotted name (with '/', '\\' or ':', a leading '~'
      or '.', or dotted like 'run.csv' or 'os.system'; numbers written as text such as '0.25' are data): paths, URLs
      and `module.name` references are never taken from a checkpoint;
    * (a class may list attributes whose strings are only data written into the script's own files in its
      `fe_text_data` tuple: the location rule does not apply to them, e.g. a CSVLogger's rows);
    * attributes listed in a class's `fe_configuration` tuple (a dataset's arrays and their index: the script's input
      data), and
    * attributes that hold callables, modules, models, the `system` back reference or any other object the codec
      cannot store (rebuilt by the user's script).
Restoring sets only attributes the object already has, whose current value passes the same rules, with a value of the
same kind (a number stays a number, an array an array); what the rules exclude is ignored when found in a checkpoint.
Tensors and variables are assigned in place, so one shared by an op and a trace stays shared. What an explicit
`get_state()` returns is never filtered: if part of it cannot be stored, saving fails.

Example:
    >>> class Curriculum:
    ...     def __init__(self, prob, log_dir="/tmp/logs"):
    ...         self.prob, self.log_dir, self.count, self.fn = prob, log_dir, 0, print
    >>> c = Curriculum(0.1); c.prob, c.count = 0.7, 3
    >>> sorted(get_object_state(c).items())
    [('count', 3), ('prob', 0.7)]
    >>> fresh = Curriculum(0.1); set_object_state(fresh, {'prob': 0.7, 'count': 3, 'log_dir': '/etc'})
    >>> fresh.prob, fresh.count, fresh.log_dir
    (0.7, 3, '/tmp/logs')
"""
from __future__ import annotations

import inspect
import numbers
import re
import types
import warnings
from collections import defaultdict
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.checkpoint.codec import StateCodec, backend_state_reducers
from fe_core.schedule.scheduler import Scheduler

__all__ = ["get_object_state", "set_object_state", "stateful_objects", "get_object_states", "check_object_states",
           "set_object_states", "check_object_state", "SKIPPED_ATTRIBUTES", "configuration_names",
           "constructor_names", "declared_configuration", "get_attribute_state", "check_attribute_state",
           "set_attribute_state", "is_restorable_attribute", "declared_text_data", "LARGE_ARRAY_BYTES"]

# The back reference to the System, the backend an op is built for, and the keys, modes and ds_ids that wire an op,
# trace or slicer into the run: the script's, never a checkpoint's.
SKIPPED_ATTRIBUTES = frozenset({"system", "framework", "device", "inputs", "outputs", "mode", "ds_id", "in_list",
                                "out_list"})
# A numpy array given to a constructor and larger than this is the script's input data (a dataset's samples, a lookup
# table): it is neither copied into every checkpoint nor taken from one.
LARGE_ARRAY_BYTES = 1 << 22
_MISSING = object()
_CONSTRUCTOR: Dict[type, FrozenSet[str]] = {}
_DECLARED: Dict[type, FrozenSet[str]] = {}
_TEXT_DATA: Dict[type, FrozenSet[str]] = {}
_WARNED: set = set()
_LOCATION_CHARS = frozenset("/\\:\x00")
_DOTTED_NAME = re.compile(r"[\w -]+(\.[A-Za-z_][\w -]*)+")
_TENSOR_MODULES = ("torch", "tensorflow", "keras", "tf_keras", "jax", "jaxlib")


def constructor_names(cls: type) -> FrozenSet[str]:
    """The parameter names of every `__init__` in the MRO of `cls` (FastEstimator stores constructor arguments under
    their own names).

    Example:
        >>> class Saver:
        ...     def __init__(self, save_dir, keep=2):
        ...         self.save_dir, self.keep, self.saved = save_dir, keep, []
        >>> sorted(constructor_names(Saver))
        ['keep', 'save_dir']
    """
    names = _CONSTRUCTOR.get(cls)
    if names is None:
        found = set()
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None or klass is object:
                continue
            try:
                parameters = inspect.signature(init).parameters
            except (TypeError, ValueError):
                continue
            found.update(name for name in list(parameters)[1:])
        names = _CONSTRUCTOR[cls] = frozenset(found)
    return names


def declared_text_data(cls: type) -> FrozenSet[str]:
    """The names the classes in the MRO of `cls` list in their `fe_text_data` attribute: attributes whose strings are
    data written into the script's own files (a CSVLogger's rows, which may hold file names as instance ids), never
    used as locations, so the location rule does not apply to them."""
    names = _TEXT_DATA.get(cls)
    if names is None:
        found = set()
        for klass in cls.__mro__:
            found.update(klass.__dict__.get("fe_text_data", ()))
        names = _TEXT_DATA[cls] = frozenset(found)
    return names


def declared_configuration(cls: type) -> FrozenSet[str]:
    """The names the classes in the MRO of `cls` list in their `fe_configuration` attribute: attributes never saved
    nor restored (a dataset's samples and their index)."""
    names = _DECLARED.get(cls)
    if names is None:
        found = set()
        for klass in cls.__mro__:
            found.update(klass.__dict__.get("fe_configuration", ()))
        names = _DECLARED[cls] = frozenset(found)
    return names


def configuration_names(cls: type) -> FrozenSet[str]:
    """Constructor parameter names and `fe_configuration` names of `cls` together: the attributes that a checkpoint
    restores only while they hold plain numeric data (see `is_restorable_attribute`)."""
    return constructor_names(cls) | declared_configuration(cls)


def _is_location(text: str) -> bool:
    """Whether a string may name a file, directory, URL or dotted class/callable name: it holds '/', '\\', ':' or
    NUL, starts with '~' or '.', or is dotted like a file or module name ('run.csv', 'os.system'); numbers written as
    text ('0.25', '1e-05') and key names are data."""
    return bool(_LOCATION_CHARS.intersection(text)) or text.startswith(("~", ".")) or \
        _DOTTED_NAME.fullmatch(text) is not None


def _holds_location(value: Any, depth: int = 0) -> bool:
    """Whether `value` is, or contains (in containers or string arrays), a location-like string or bytes."""
    if depth > 64:
        return True  # absurdly deep: not data anyone wrote
    if isinstance(value, str):
        return _is_location(value)
    if isinstance(value, (bytes, bytearray)):
        return _is_location(bytes(value).decode("latin-1"))
    if isinstance(value, dict):
        return any(_holds_location(key, depth + 1) or _holds_location(item, depth + 1) for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_location(item, depth + 1) for item in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "USO":
        return any(_holds_location(item, depth + 1) for item in value.reshape(-1).tolist())
    return False


def _is_tensor(value: Any) -> bool:
    """A framework tensor or variable (judged without importing any framework)."""
    return type(value).__module__.split(".")[0] in _TENSOR_MODULES and hasattr(value, "shape") and \
        hasattr(value, "dtype") and not isinstance(value, type)


def _is_numeric_data(value: Any, depth: int = 0) -> bool:
    """Numbers, booleans, None, numeric numpy arrays (not larger than LARGE_ARRAY_BYTES), tensors, numpy generators,
    and dicts / lists / tuples / sets of those (dict keys may be short names)."""
    if depth > 64:
        return False
    if value is None or isinstance(value, (numbers.Number, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.nbytes <= LARGE_ARRAY_BYTES
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return True
    if isinstance(value, dict):
        return all((isinstance(key, str) or _is_numeric_data(key, depth + 1)) and _is_numeric_data(item, depth + 1)
                   for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_numeric_data(item, depth + 1) for item in value)
    return _is_tensor(value)


def is_restorable_attribute(cls: type, name: str, value: Any) -> bool:
    """Whether attribute `name` of a `cls` object may be saved in / restored from a checkpoint while it holds `value`
    (see the module docstring). Whether the codec can store `value` is checked separately.

    Example:
        >>> class Op:
        ...     def __init__(self, prob, save_dir):
        ...         self.prob, self.save_dir = prob, save_dir
        >>> is_restorable_attribute(Op, "prob", 0.3), is_restorable_attribute(Op, "save_dir", "/tmp/out")
        (True, False)
    """
    if name in SKIPPED_ATTRIBUTES or name in declared_configuration(cls):
        return False
    if isinstance(value, (types.ModuleType, type)) or (callable(value) and not _is_tensor(value)):
        return False
    if name in constructor_names(cls):
        return _is_numeric_data(value) and not _holds_location(value)
    return name in declared_text_data(cls) or not _holds_location(value)


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
        `obj.get_state()` if `obj` defines it; else its storable instance attributes (`get_attribute_state`).

    Raises:
        TypeError: If `obj.get_state()` does not return a dict.
    """
    if _has_method(obj, "get_state"):
        state = obj.get_state()
        if not isinstance(state, dict):
            raise TypeError(f"{type(obj).__name__}.get_state() must return a dict, got {type(state).__name__}")
        return state
    return get_attribute_state(obj, codec)


def get_attribute_state(obj: Any, codec: Optional[StateCodec] = None) -> Dict[str, Any]:
    """The instance attributes of `obj` that a checkpoint saves (see the module docstring), whether or not `obj`
    defines `get_state` (meta ops use it for their own attributes next to their children's states).

    Args:
        obj: Any object.
        codec: The codec deciding what can be stored (default: one with the loaded backends' reducers).

    Returns:
        A dict of attribute name -> value; empty if `obj` has no instance attributes.
    """
    attributes = getattr(obj, "__dict__", None)
    if not attributes:
        return {}
    codec = codec or StateCodec()
    cls = type(obj)
    state = {}
    for name, value in attributes.items():
        if not is_restorable_attribute(cls, name, value):
            continue
        if codec.can_encode(value):
            state[name] = value
        elif name not in constructor_names(cls) and (cls, name) not in _WARNED and \
                not _is_configuration_object(value):
            _WARNED.add((cls, name))
            warnings.warn(f"{cls.__name__}.{name} (a {type(value).__module__}.{type(value).__qualname__}) is not "
                          f"saved in checkpoints: it is neither plain data nor a tensor of a loaded backend. Give "
                          f"{cls.__name__} get_state()/set_state() to checkpoint it.", RuntimeWarning, stacklevel=2)
    return state


def _is_configuration_object(value: Any) -> bool:
    """Objects that are rebuilt by the script, not state: models, ops, traces, datasets, networks, pipelines, systems."""
    if isinstance(value, (list, tuple)) and value:
        return all(_is_configuration_object(item) for item in value)  # a meta op's list of ops
    modules = {klass.__module__.split(".")[0] for klass in type(value).__mro__}
    if modules & {"fe_core", "fe_torch", "fe_tf", "fe", "torch", "tensorflow", "keras", "tf_keras"}:
        return True  # fe objects (a user's op or trace too), and framework objects no reducer handles (models, ...)
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

    `obj.set_state(state)` is used if `obj` defines it; otherwise `set_attribute_state`. `check_object_state` tells
    beforehand whether a state fits.

    Args:
        obj: The object to restore.
        state: Its saved state.

    Raises:
        TypeError: If `obj` has neither `set_state` nor instance attributes but `state` is not empty.
    """
    if _has_method(obj, "set_state"):
        obj.set_state(state)
        return
    set_attribute_state(obj, state)


def _restorable_items(obj: Any, state: Dict[str, Any], attributes: Dict[str, Any]) -> Iterable[Tuple[str, Any, Any]]:
    """(name, current value or _MISSING, saved value) for each saved attribute the rules let a checkpoint set."""
    cls = type(obj)
    for name, value in state.items():
        if not isinstance(name, str) or not is_restorable_attribute(cls, name, value):
            continue  # configuration, locations and code are the script's, whatever a checkpoint says
        current = attributes.get(name, _MISSING)
        if current is not _MISSING and not is_restorable_attribute(cls, name, current):
            continue  # the script holds a path, a callable or other configuration there: it wins
        yield name, current, value


def set_attribute_state(obj: Any, state: Dict[str, Any]) -> None:
    """Set the saved attributes in `state` on `obj` (`get_attribute_state`'s counterpart).

    What the rules exclude (see the module docstring) is ignored, an attribute which is a dict (or defaultdict) is
    updated in place (recursively, keys missing from the saved dict are removed) so defaultdict factories survive, a
    tensor or variable is assigned in place (an op and a trace sharing it keep sharing it), a numpy Generator gets its
    bit-generator state back in place, and an attribute that already equals the saved value is left alone.

    Raises:
        TypeError: If `obj` has no instance attributes but `state` is not empty.
    """
    if not state:
        return
    attributes = getattr(obj, "__dict__", None)
    if attributes is None:
        raise TypeError(f"Cannot restore state {sorted(state)} into a {type(obj).__name__}: it has neither "
                        f"set_state() nor instance attributes")
    for name, current, value in list(_restorable_items(obj, state, attributes)):
        in_place = _in_place_assigner(current) if current is not _MISSING else None
        if in_place is not None:
            in_place(current, value)  # a tensor / variable that other objects may share keeps its identity
        elif isinstance(current, dict) and type(value) is dict:
            _update_dict_in_place(current, value)
        elif isinstance(current, np.ndarray) and isinstance(value, np.ndarray) and current.flags.writeable and \
                current.shape == value.shape and current.dtype == value.dtype:
            current[...] = value  # an array that other objects may share keeps its identity
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
    not take; it is called here. Otherwise `check_attribute_state` checks it.

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
    check_attribute_state(obj, state, where)


def check_attribute_state(obj: Any, state: Any, where: str) -> None:
    """Check that saved attributes fit `obj`: every one the rules let a checkpoint set must exist on `obj` with a
    value of the same kind, and a tensor or variable must keep its shape.

    Raises:
        ValueError: Naming the attribute, the object and `where` when it does not fit.
    """
    if not isinstance(state, dict):
        raise ValueError(f"{where}: the saved attributes of a {type(obj).__name__} should be a dict, found a "
                         f"{type(state).__name__}")
    if not state:
        return
    attributes = getattr(obj, "__dict__", None)
    if attributes is None:
        raise ValueError(f"{where}: a {type(obj).__name__} has no attributes to restore {sorted(map(str, state))} "
                         f"into")
    for name, current, value in _restorable_items(obj, state, attributes):
        if current is _MISSING:
            raise ValueError(f"{where}: {type(obj).__name__} has no attribute {name!r} (the checkpoint was saved from "
                             f"a different object)")
        if not _same_kind(current, value):
            raise ValueError(f"{where}: {type(obj).__name__}.{name} is a {type(current).__name__}, but the "
                             f"checkpoint holds a {type(value).__name__}")
        if _is_tensor(current) and tuple(getattr(value, "shape", ())) != tuple(current.shape):
            raise ValueError(f"{where}: {type(obj).__name__}.{name} has shape {tuple(current.shape)}, but the "
                             f"checkpoint holds shape {tuple(getattr(value, 'shape', ()))}")


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
