"""The checkpoint codec: plain state <-> JSON data plus named numpy arrays, with an allowlist on the way back.

What can be stored:
    * JSON types as themselves: str, int, bool, None, finite float, list, dict with str keys.
    * Tagged objects `{"__fe__": <tag>, ...}` for everything else: non-finite floats, dicts with non-str keys (int
      steps come back as ints), tuples, sets, frozensets, complex, bytes, numpy arrays (written to `arrays.npz` and
      referenced by name), numpy scalars (dtype preserved), numpy `Generator`/`RandomState` (their bit-generator
      state), `ValWithError`, `Summary` (through its `get_state`/`set_state`), and backend objects through the
      `StateReducer`s of loaded backends (`{"__fe__": "reduced", "reducer": <name>, "data": ...}`).
    * `defaultdict`, `OrderedDict` and `Counter` are stored as dicts and come back as plain dicts (see
      `fe_core.checkpoint.object_state.set_object_state`, which updates existing dicts in place so factories survive).

Decoding knows only the tags above. A tag it does not know, or a reducer name no loaded backend registered, is an
error; nothing named in a checkpoint is ever imported, looked up or called, and there is no pickle anywhere (arrays
are read with `allow_pickle=False`).

Example:
    >>> codec = StateCodec(reducers=[])
    >>> data, arrays = codec.encode({"loss": {1: np.float32(0.5)}, "w": np.zeros(2)})
    >>> restored = codec.decode(data, arrays)
    >>> restored["loss"][1].dtype, restored["w"].tolist()
    (dtype('float32'), [0.0, 0.0])
"""
from __future__ import annotations

import base64
import math
import re
from collections import Counter, OrderedDict, defaultdict
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

from fe_core.framework.base import StateReducer
from fe_core.framework.registry import loaded_backends
from fe_core.summary.summary import Summary, ValWithError

__all__ = ["StateCodec", "CheckpointEncodeError", "CheckpointDecodeError", "backend_state_reducers", "TAG"]

TAG = "__fe__"

_DICT_TYPES = (dict, defaultdict, OrderedDict, Counter)
_INLINE_SCALAR = re.compile(r"^[<>|=]?([biu][1248]|f[248]|c(8|16))$")
_BIT_GENERATORS: Dict[str, Callable[[], Any]] = {
    name: getattr(np.random, name)
    for name in ("MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64") if hasattr(np.random, name)
}
_ALLOWED = ("dict, list, tuple, set, frozenset, str, int, float, complex, bytes, bool, None, numpy arrays, numpy "
            "scalars, numpy Generator/RandomState, ValWithError, Summary, and types a loaded backend has a "
            "StateReducer for")


class CheckpointEncodeError(TypeError):
    """Raised when a value cannot be stored in a checkpoint; the message names the value's path."""


class CheckpointDecodeError(ValueError):
    """Raised when checkpoint data is malformed or names something outside the allowlist."""


def backend_state_reducers() -> List[StateReducer]:
    """The `StateReducer`s of every backend loaded in this process."""
    reducers: List[StateReducer] = []
    for backend in loaded_backends():
        reducers.extend(backend.state_reducers())
    return reducers


def child_path(path: str, key: Any) -> str:
    """The path of `key` inside the container at `path` ('traces[2]' + 'history' -> 'traces[2].history')."""
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


class StateCodec:
    """Turns plain state into JSON-compatible data plus numpy arrays, and back, using only a fixed allowlist.

    Args:
        reducers: Reducers for backend objects; None takes those of every loaded backend.
    """

    def __init__(self, reducers: Optional[Sequence[StateReducer]] = None) -> None:
        self.reducers: List[StateReducer] = list(backend_state_reducers() if reducers is None else reducers)
        self._reducers_by_name = {reducer.name: reducer for reducer in self.reducers}

    def encode(self, value: Any, path: str = "state") -> Tuple[Any, Dict[str, np.ndarray]]:
        """Encode `value`.

        Args:
            value: The state to encode.
            path: The name of `value` used in error messages.

        Returns:
            The JSON-compatible data and the arrays it references by name.

        Raises:
            CheckpointEncodeError: If something in `value` cannot be stored (the message names its path).
        """
        arrays: Dict[str, np.ndarray] = {}
        return _Encoder(self.reducers, arrays).encode(value, path), arrays

    def can_encode(self, value: Any) -> bool:
        """Whether `encode` would accept `value` (nothing is stored)."""
        try:
            _Encoder(self.reducers, None).encode(value, "")
        except CheckpointEncodeError:
            return False
        return True

    def decode(self, data: Any, arrays: Mapping[str, np.ndarray], path: str = "state") -> Any:
        """Decode what `encode` produced.

        Args:
            data: The JSON data.
            arrays: The arrays it references (for example an opened `arrays.npz`).
            path: The name of `data` used in error messages.

        Returns:
            The restored state.

        Raises:
            CheckpointDecodeError: If the data is malformed, references a missing array, or names a tag or reducer
                outside the allowlist.
        """
        return _Decoder(self._reducers_by_name, arrays).decode(data, path)


class _Encoder:

    def __init__(self, reducers: List[StateReducer], arrays: Optional[Dict[str, np.ndarray]]) -> None:
        self.reducers = reducers
        self.arrays = arrays  # None: dry run
        self.array_count = 0
        self.active: Set[int] = set()

    def _store_array(self, array: np.ndarray) -> str:
        name = f"a{self.array_count}"
        self.array_count += 1
        if self.arrays is not None:
            self.arrays[name] = array
        return name

    def _items(self, values: Iterable[Any], path: str) -> List[Any]:
        return [self.encode(item, f"{path}[{index}]") for index, item in enumerate(values)]

    def _enter(self, value: Any, path: str) -> None:
        if id(value) in self.active:
            raise CheckpointEncodeError(f"{path}: circular reference to a {type(value).__name__}")
        self.active.add(id(value))

    def encode(self, value: Any, path: str) -> Any:
        kind = type(value)
        if value is None or kind is str or kind is bool or kind is int:
            return value
        if kind is float:
            return value if math.isfinite(value) else {TAG: "float", "value": repr(value)}
        if kind in _DICT_TYPES or kind is list or kind is tuple or kind is set or kind is frozenset:
            self._enter(value, path)
            try:
                return self._container(value, kind, path)
            finally:
                self.active.discard(id(value))
        if kind is np.ndarray or kind is np.memmap:
            return self._array(value, path)
        if isinstance(value, np.generic):
            return self._numpy_scalar(value, path)
        if kind is ValWithError:
            return {TAG: "ValWithError", "items": self._items(value, path)}
        if kind is Summary:
            return {TAG: "Summary", "state": self.encode(value.get_state(), path)}
        if kind is complex:
            return {TAG: "complex", "real": self.encode(value.real, path), "imag": self.encode(value.imag, path)}
        if kind is bytes:
            return {TAG: "bytes", "base64": base64.b64encode(value).decode("ascii")}
        if kind is np.random.Generator:
            return self._generator(value, path)
        if kind is np.random.RandomState:
            return {TAG: "numpy.RandomState", "state": self.encode(value.get_state(legacy=False), path)}
        for reducer in self.reducers:
            if reducer.matches(value):
                try:
                    reduced = reducer.reduce(value)
                except Exception as error:
                    raise CheckpointEncodeError(f"{path}: state reducer {reducer.name!r} failed on a "
                                                f"{type(value).__qualname__}: {error}") from error
                return {TAG: "reduced", "reducer": reducer.name, "data": self.encode(reduced, path)}
        raise CheckpointEncodeError(f"{path}: cannot store object of type {kind.__module__}.{kind.__qualname__} "
                                    f"(a checkpoint holds only {_ALLOWED}; give the owning object "
                                    f"get_state()/set_state() to choose what it saves)")

    def _container(self, value: Any, kind: type, path: str) -> Any:
        if kind is list:
            return self._items(value, path)
        if kind is tuple:
            return {TAG: "tuple", "items": self._items(value, path)}
        if kind is set or kind is frozenset:
            try:
                ordered = sorted(value)  # deterministic files where the elements allow it
            except TypeError:
                ordered = list(value)
            return {TAG: kind.__name__, "items": self._items(ordered, path)}
        if all(type(key) is str for key in value) and TAG not in value:
            return {key: self.encode(item, child_path(path, key)) for key, item in value.items()}
        return {
            TAG: "dict",
            "items": [[self.encode(key, f"{path}<key {key!r}>"), self.encode(item, child_path(path, key))]
                      for key, item in value.items()]
        }

    def _array(self, value: np.ndarray, path: str) -> Any:
        if value.dtype.kind == "O":
            return {TAG: "object_array", "shape": list(value.shape),
                    "items": self._items(value.reshape(-1).tolist() if value.size else [], path)}
        if value.dtype.hasobject:
            raise CheckpointEncodeError(f"{path}: cannot store a structured numpy array with object fields "
                                        f"(dtype {value.dtype})")
        return {TAG: "ndarray", "key": self._store_array(np.asarray(value))}

    def _numpy_scalar(self, value: np.generic, path: str) -> Any:
        dtype = value.dtype
        if _INLINE_SCALAR.match(dtype.str):
            if dtype.kind == "c":
                item = [self.encode(float(value.real), path), self.encode(float(value.imag), path)]
            else:
                item = self.encode(value.item(), path)
            return {TAG: "numpy.scalar", "dtype": dtype.str, "value": item}
        if dtype.hasobject:
            raise CheckpointEncodeError(f"{path}: cannot store a numpy scalar of dtype {dtype}")
        return {TAG: "numpy.scalar", "array": self._store_array(np.asarray(value))}

    def _generator(self, value: np.random.Generator, path: str) -> Any:
        name = type(value.bit_generator).__name__
        if name not in _BIT_GENERATORS or type(value.bit_generator) is not _BIT_GENERATORS[name]:
            raise CheckpointEncodeError(f"{path}: cannot store a numpy Generator using bit generator {name!r} "
                                        f"(supported: {sorted(_BIT_GENERATORS)})")
        return {TAG: "numpy.Generator", "bit_generator": name, "state": self.encode(value.bit_generator.state, path)}


def _field(data: Dict[str, Any], name: str, kinds: Tuple[type, ...], path: str, tag: str) -> Any:
    if name not in data:
        raise CheckpointDecodeError(f"{path}: malformed {tag!r} entry, it has no {name!r} field")
    value = data[name]
    if type(value) not in kinds:
        raise CheckpointDecodeError(f"{path}: malformed {tag!r} entry, field {name!r} should be "
                                    f"{' or '.join(k.__name__ for k in kinds)}, found {type(value).__name__}")
    return value


class _Decoder:

    def __init__(self, reducers: Dict[str, StateReducer], arrays: Mapping[str, np.ndarray]) -> None:
        self.reducers = reducers
        self.arrays = arrays

    def decode(self, data: Any, path: str) -> Any:
        kind = type(data)
        if data is None or kind is str or kind is bool or kind is int or kind is float:
            return data
        if kind is list:
            return [self.decode(item, f"{path}[{index}]") for index, item in enumerate(data)]
        if kind is not dict:
            raise CheckpointDecodeError(f"{path}: unexpected {kind.__name__} in checkpoint data")
        if TAG not in data:
            return {key: self.decode(item, child_path(path, key)) for key, item in data.items()}
        tag = data[TAG]
        handler = _HANDLERS.get(tag) if type(tag) is str else None
        if handler is None:
            raise CheckpointDecodeError(
                f"{path}: refusing to load unknown checkpoint tag {tag!r}; only these tags are allowed: "
                f"{sorted(_HANDLERS)} (a checkpoint cannot name classes, modules or functions)")
        return handler(self, data, path)

    def _items(self, data: Dict[str, Any], path: str, tag: str) -> List[Any]:
        return self.decode(_field(data, "items", (list,), path, tag), path)

    def _float(self, data: Dict[str, Any], path: str) -> float:
        text = _field(data, "value", (str,), path, "float")
        if text not in ("nan", "inf", "-inf"):
            raise CheckpointDecodeError(f"{path}: malformed 'float' entry {text!r} (expected nan, inf or -inf)")
        return float(text)

    def _dict(self, data: Dict[str, Any], path: str) -> Dict[Any, Any]:
        result: Dict[Any, Any] = {}
        for index, pair in enumerate(_field(data, "items", (list,), path, "dict")):
            if type(pair) is not list or len(pair) != 2:
                raise CheckpointDecodeError(f"{path}: malformed 'dict' entry, item {index} is not a [key, value] pair")
            key = self.decode(pair[0], f"{path}<key {index}>")
            try:
                hash(key)
            except TypeError as error:
                raise CheckpointDecodeError(f"{path}: dict key {key!r} is not hashable") from error
            result[key] = self.decode(pair[1], child_path(path, key))
        return result

    def _tuple(self, data: Dict[str, Any], path: str) -> tuple:
        return tuple(self._items(data, path, "tuple"))

    def _set(self, data: Dict[str, Any], path: str) -> Any:
        tag = data[TAG]
        items = self._items(data, path, tag)
        try:
            return set(items) if tag == "set" else frozenset(items)
        except TypeError as error:
            raise CheckpointDecodeError(f"{path}: a {tag} holds an unhashable element") from error

    def _array_named(self, key: str, path: str) -> np.ndarray:
        if key not in self.arrays:
            raise CheckpointDecodeError(f"{path}: array {key!r} is missing from the checkpoint's arrays")
        array = self.arrays[key]
        if type(array) is not np.ndarray:
            raise CheckpointDecodeError(f"{path}: array {key!r} is not a numpy array")
        return array

    def _ndarray(self, data: Dict[str, Any], path: str) -> np.ndarray:
        return self._array_named(_field(data, "key", (str,), path, "ndarray"), path)

    def _object_array(self, data: Dict[str, Any], path: str) -> np.ndarray:
        shape = _field(data, "shape", (list,), path, "object_array")
        if not all(type(dim) is int and dim >= 0 for dim in shape):
            raise CheckpointDecodeError(f"{path}: malformed 'object_array' shape {shape!r}")
        items = self._items(data, path, "object_array")
        if len(items) != math.prod(shape):
            raise CheckpointDecodeError(f"{path}: 'object_array' of shape {shape} holds {len(items)} items")
        array = np.empty(len(items), dtype=object)
        array[:] = items if items else []
        return array.reshape(shape)

    def _numpy_scalar(self, data: Dict[str, Any], path: str) -> np.generic:
        if "array" in data:
            array = self._array_named(_field(data, "array", (str,), path, "numpy.scalar"), path)
            if array.ndim != 0:
                raise CheckpointDecodeError(f"{path}: numpy scalar array has shape {array.shape}, expected ()")
            return array[()]
        dtype_text = _field(data, "dtype", (str,), path, "numpy.scalar")
        if not _INLINE_SCALAR.match(dtype_text):
            raise CheckpointDecodeError(f"{path}: refusing numpy scalar dtype {dtype_text!r}")
        dtype = np.dtype(dtype_text)
        value = self.decode(data.get("value"), path)
        try:
            if dtype.kind == "c":
                if type(value) is not list or len(value) != 2:
                    raise ValueError("expected [real, imag]")
                return dtype.type(complex(float(value[0]), float(value[1])))
            if type(value) not in (bool, int, float):
                raise ValueError(f"expected a number, found {type(value).__name__}")
            return dtype.type(value)
        except (ValueError, TypeError, OverflowError) as error:
            raise CheckpointDecodeError(f"{path}: malformed numpy scalar of dtype {dtype}: {error}") from error

    def _val_with_error(self, data: Dict[str, Any], path: str) -> ValWithError:
        items = self._items(data, path, "ValWithError")
        if len(items) != 3:
            raise CheckpointDecodeError(f"{path}: a ValWithError needs 3 values, found {len(items)}")
        return ValWithError(*items)

    def _summary(self, data: Dict[str, Any], path: str) -> Summary:
        state = self.decode(_field(data, "state", (dict,), path, "Summary"), path)
        # a name is a string, None, or a number (InstanceTracker / LabelTracker name their Summaries by index / label)
        if type(state) is not dict or type(state.get("history")) is not dict or \
                not (state.get("name") is None or type(state.get("name")) in (str, int, float)):
            raise CheckpointDecodeError(f"{path}: malformed 'Summary' entry (expected a name and a history dict)")
        summary = Summary(None)
        try:
            summary.set_state(state)
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise CheckpointDecodeError(f"{path}: malformed 'Summary' history: {error!r}") from error
        return summary

    def _complex(self, data: Dict[str, Any], path: str) -> complex:
        parts = [self.decode(_field(data, part, (float, int, dict), path, "complex"), path) for part in ("real", "imag")]
        if not all(type(part) in (float, int) for part in parts):
            raise CheckpointDecodeError(f"{path}: malformed 'complex' entry")
        return complex(parts[0], parts[1])

    def _bytes(self, data: Dict[str, Any], path: str) -> bytes:
        try:
            return base64.b64decode(_field(data, "base64", (str,), path, "bytes"), validate=True)
        except ValueError as error:
            raise CheckpointDecodeError(f"{path}: malformed 'bytes' entry: {error}") from error

    def _generator(self, data: Dict[str, Any], path: str) -> np.random.Generator:
        name = _field(data, "bit_generator", (str,), path, "numpy.Generator")
        if name not in _BIT_GENERATORS:
            raise CheckpointDecodeError(f"{path}: refusing unknown numpy bit generator {name!r} (allowed: "
                                        f"{sorted(_BIT_GENERATORS)})")
        bit_generator = _BIT_GENERATORS[name]()
        try:
            bit_generator.state = self.decode(_field(data, "state", (dict,), path, "numpy.Generator"), path)
        except (ValueError, TypeError, KeyError) as error:
            raise CheckpointDecodeError(f"{path}: malformed {name} state: {error!r}") from error
        return np.random.Generator(bit_generator)

    def _random_state(self, data: Dict[str, Any], path: str) -> np.random.RandomState:
        state = self.decode(_field(data, "state", (dict,), path, "numpy.RandomState"), path)
        name = state.get("bit_generator") if type(state) is dict else None
        if name not in _BIT_GENERATORS:
            raise CheckpointDecodeError(f"{path}: refusing numpy RandomState with bit generator {name!r} (allowed: "
                                        f"{sorted(_BIT_GENERATORS)})")
        random_state = np.random.RandomState(_BIT_GENERATORS[name]())
        try:
            random_state.set_state(state)
        except (ValueError, TypeError, KeyError) as error:
            raise CheckpointDecodeError(f"{path}: malformed RandomState state: {error!r}") from error
        return random_state

    def _reduced(self, data: Dict[str, Any], path: str) -> Any:
        name = _field(data, "reducer", (str,), path, "reduced")
        reducer = self.reducers.get(name)
        if reducer is None:
            raise CheckpointDecodeError(
                f"{path}: refusing object reduced by unknown state reducer {name!r}; the reducers of the loaded "
                f"backends are {sorted(self.reducers)} (load the backend that wrote it first)")
        reduced = self.decode(data.get("data"), path)
        try:
            return reducer.restore(reduced)
        except Exception as error:
            raise CheckpointDecodeError(f"{path}: state reducer {name!r} could not restore its data: {error}") \
                from error


_HANDLERS: Dict[str, Callable[[_Decoder, Dict[str, Any], str], Any]] = {
    "float": _Decoder._float,
    "dict": _Decoder._dict,
    "tuple": _Decoder._tuple,
    "set": _Decoder._set,
    "frozenset": _Decoder._set,
    "ndarray": _Decoder._ndarray,
    "object_array": _Decoder._object_array,
    "numpy.scalar": _Decoder._numpy_scalar,
    "numpy.Generator": _Decoder._generator,
    "numpy.RandomState": _Decoder._random_state,
    "ValWithError": _Decoder._val_with_error,
    "Summary": _Decoder._summary,
    "complex": _Decoder._complex,
    "bytes": _Decoder._bytes,
    "reduced": _Decoder._reduced,
}
