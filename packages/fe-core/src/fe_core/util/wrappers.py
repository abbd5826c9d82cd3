"""Small wrapper types: a do-nothing context (`NonContext`), a dict whose default sees the key (`DefaultKeyDict`),
a printable id (`FEID`) and a mutable boolean (`Flag`)."""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Dict, TypeVar

from fe_core.export import fe_export

__all__ = ["NonContext", "DefaultKeyDict", "FEID", "Flag"]

KT = TypeVar("KT")
VT = TypeVar("VT")


@fe_export("fe.util.base_util.NonContext", "fe.util.NonContext")
class NonContext:
    """A context manager that does nothing, to stand in where a real one is optional.

    Example:
        >>> a = 5
        >>> with NonContext():
        ...     a = a + 37
        >>> a
        42
    """

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


@fe_export("fe.util.base_util.DefaultKeyDict", "fe.util.DefaultKeyDict")
class DefaultKeyDict(Dict[KT, VT]):
    """Like `collections.defaultdict`, but the default function receives the missing key (and the result is stored).

    Example:
        >>> d = DefaultKeyDict(default=lambda x: x + x, a=4, b=6)
        >>> d["a"], d["c"], dict(d)
        (4, 'cc', {'a': 4, 'b': 6, 'c': 'cc'})

    Args:
        default: A function which takes a key and returns a default value based on the key.
        **kwargs: Initial key/value pairs for the dictionary.
    """

    def __init__(self, default: Callable[[Any], Any], **kwargs) -> None:
        super().__init__(**kwargs)
        self.factory = default

    def __missing__(self, key: KT) -> VT:
        value = self.factory(key)
        self[key] = value
        return value


@fe_export("fe.util.base_util.FEID", "fe.util.FEID")
class FEID:
    """An int wrapper whose printed form can be changed, used to cross-reference objects in reports.

    It prints as `@FE<id>` (or `@FE<translation>` once `set_translation_dict` maps the id), compares and hashes like
    its int.

    Example:
        >>> fid = FEID(3)
        >>> str(fid), fid == 3, fid == FEID(3)
        ('@FE3', True, True)
        >>> FEID.set_translation_dict({3: "model"}); str(fid)
        '@FEmodel'
        >>> FEID.set_translation_dict({})

    Args:
        val: An integer id to be wrapped.

    Raises:
        TypeError: If `val` is not an int.
    """

    _translation_dict: ClassVar[Dict[int, Any]] = {}

    __slots__ = ("_val",)

    def __init__(self, val: int) -> None:
        if not isinstance(val, int) or isinstance(val, bool):
            raise TypeError(f"FEID wraps an int, got {val!r} ({type(val).__name__})")
        self._val = val

    @classmethod
    def set_translation_dict(cls, mapping: Dict[int, Any]) -> None:
        """Provide a lookup table to be invoked during value printing (replacing any earlier one).

        Args:
            mapping: A mapping of id: printable id.
        """
        cls._translation_dict = dict(mapping)

    def __int__(self) -> int:
        return self._val

    def __hash__(self) -> int:
        return hash(self._val)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, FEID):
            return self._val == other._val
        return self._val == other

    def __lt__(self, other: Any) -> bool:
        return self._val < (other._val if isinstance(other, FEID) else other)

    def __str__(self) -> str:
        return f"@FE{self._translation_dict.get(self._val, self._val)}"

    def __repr__(self) -> str:
        return str(self)


@fe_export("fe.util.base_util.Flag", "fe.util.Flag")
class Flag:
    """A mutable wrapper around a boolean, to share an on/off switch between objects.

    Example:
        >>> flag = Flag()
        >>> bool(flag)
        False
        >>> flag.set_true(); bool(flag)
        True

    Args:
        val: The initial value for the Flag.
    """

    __slots__ = ("_val",)

    def __init__(self, val: bool = False) -> None:
        self._val = bool(val)

    def set_true(self) -> None:
        """Set the flag to True."""
        self._val = True

    def set_false(self) -> None:
        """Set the flag to False."""
        self._val = False

    def __bool__(self) -> bool:
        return self._val

    def __repr__(self) -> str:
        return f"Flag({self._val})"
