"""What a script's `get_estimator` (or `fastestimator_run`) accepts: its parameters, their types and descriptions.

Used by `fe train/test/run SCRIPT --help` to list the script's own arguments (with defaults and the docstring's
`Args:` descriptions), and to check command-line values before the call: `--epochs two` for `epochs: int = 8` is a
one-line usage error naming the argument and the expected type (from the annotation, else the default's type),
instead of a traceback from deep inside the Estimator.
"""
from __future__ import annotations

import argparse
import inspect
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from fe.cli.errors import CLIError

__all__ = ["ScriptParameter", "script_parameters", "docstring_arguments", "convert_arguments", "format_parameters"]

# Types whose values the command line can produce (JSON / Python literals); other annotations are not checked.
_CHECKABLE = (bool, int, float, str, list, tuple, dict, set, type(None))
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class ScriptParameter:
    """One parameter of a script's function as the command line sees it.

    Attributes:
        name: The parameter name (given as `--name value`).
        default: Its default, or `inspect.Parameter.empty` when it is required.
        type_text: How the type is written (the annotation, else the default's type name; '' when unknown).
        allowed: The classes a value may be an instance of (None: anything, not checked).
        description: The docstring's description of it ('' when there is none).
    """

    name: str
    default: Any
    type_text: str
    allowed: Optional[Tuple[type, ...]]
    description: str


def docstring_arguments(function: Callable[..., Any]) -> Dict[str, str]:
    """The descriptions in the Google-style `Args:` section of `function`'s docstring, by parameter name.

    Example:
        >>> def f(epochs=2):
        ...     '''Build it.
        ...
        ...     Args:
        ...         epochs: How many
        ...             epochs to train.
        ...     '''
        >>> docstring_arguments(f)
        {'epochs': 'How many epochs to train.'}
    """
    lines = (inspect.getdoc(function) or "").splitlines()
    result: Dict[str, str] = {}
    section_indent: Optional[int] = None
    entry_indent: Optional[int] = None
    current: Optional[str] = None
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if section_indent is None:
            if stripped in ("Args:", "Arguments:", "Parameters:"):
                section_indent = indent
            continue
        if not stripped:
            continue
        if indent <= section_indent:
            break
        entry = re.match(r"\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)", stripped)
        if entry and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            current = entry.group(1)
            result[current] = entry.group(3).strip()
        elif current is not None:
            result[current] = f"{result[current]} {stripped}".strip()
    return result


def _resolve_annotation(annotation: Any, function: Callable[..., Any]) -> Any:
    namespace = dict(vars(typing))
    namespace.update(getattr(function, "__globals__", {}))
    for _ in range(2):  # a quoted annotation under `from __future__ import annotations` is a string of a string
        if not isinstance(annotation, str):
            return annotation
        try:
            annotation = eval(annotation, namespace)  # pylint: disable=eval-used  # the script's own annotation
        except Exception:  # pylint: disable=broad-except  # names imported only for type checkers: not checked
            return None
    return None if isinstance(annotation, str) else annotation


def _allowed_types(annotation: Any) -> Optional[Tuple[type, ...]]:
    """The classes an annotation admits, or None when it is not one the command line can check."""
    if annotation is None or annotation is Any:
        return None
    if annotation is type(None):
        return (type(None), )
    origin = typing.get_origin(annotation)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is getattr(types, "UnionType")):
        members: List[type] = []
        for argument in typing.get_args(annotation):
            allowed = _allowed_types(argument)
            if allowed is None:
                return None
            members.extend(allowed)
        return tuple(members)
    if origin in (list, tuple, dict, set):
        return (origin, )
    if isinstance(annotation, type) and annotation in _CHECKABLE:
        return (annotation, )
    return None


def _type_text(annotation: Any, default: Any) -> str:
    if annotation is not _NO_DEFAULT:
        return annotation.strip("'\"") if isinstance(annotation, str) else inspect.formatannotation(annotation)
    if default is not _NO_DEFAULT and default is not None:
        return type(default).__name__
    return ""


def script_parameters(function: Callable[..., Any]) -> Tuple[List[ScriptParameter], bool]:
    """The parameters of `function` that can be given as `--name value`, and whether it takes `**kwargs`.

    A parameter's allowed types come from its annotation (strings are resolved in the function's module; an
    annotation that cannot be resolved or checked allows anything), else from its default's type when that is a bool,
    int, float or str. None is allowed when the annotation says so or the default is None.
    """
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return [], True
    descriptions = docstring_arguments(function)
    result: List[ScriptParameter] = []
    for parameter in signature.parameters.values():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue
        default = parameter.default
        if parameter.annotation is not _NO_DEFAULT:
            allowed = _allowed_types(_resolve_annotation(parameter.annotation, function))
        elif default is not _NO_DEFAULT and type(default) in (bool, int, float, str):
            allowed = (type(default), )
        else:
            allowed = None
        if allowed is not None and default is None and type(None) not in allowed:
            allowed = allowed + (type(None), )
        result.append(ScriptParameter(parameter.name, default, _type_text(parameter.annotation, default), allowed,
                                      descriptions.get(parameter.name, "")))
    takes_any = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    return result, takes_any


def _fits(value: Any, allowed: Tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in allowed
    if isinstance(value, int):
        return int in allowed or float in allowed
    if isinstance(value, (list, tuple)):
        return any(kind in allowed for kind in (list, tuple, set))
    return isinstance(value, allowed)


def _names(allowed: Tuple[type, ...]) -> str:
    names = [kind.__name__ for kind in allowed if kind is not type(None)]
    text = " or ".join(dict.fromkeys(names)) or "None"
    return f"{text} or None" if type(None) in allowed and names else text


def convert_arguments(function: Callable[..., Any], arguments: Dict[str, Any], raw: Dict[str, Any],
                      where: str) -> Dict[str, Any]:
    """Check each argument against the type its parameter expects; give text-only parameters the text as typed.

    `None` (`--name None` or `null`) always reaches the function as None, as FastEstimator's command line hands it
    over; a number or boolean for a parameter that only takes text (`name: str`) arrives as the text typed.

    Args:
        function: The function the arguments are for (a script's `get_estimator`).
        arguments: The parsed arguments (`--epochs 2` -> 2), from the command line and a hyperparameters file.
        raw: The command-line arguments as typed (strings), so that a `str` parameter gets `--name 007` as '007'.
        where: How to name the function in messages ('get_estimator() in mnist.py').

    Returns:
        The arguments to call `function` with.

    Raises:
        CLIError: Naming the argument, the expected type and the value given, for a value of the wrong type.

    Example:
        >>> def get_estimator(epochs: int = 2, name: str = "run"): ...
        >>> convert_arguments(get_estimator, {"epochs": 3, "name": 7}, {"name": "007"}, "get_estimator()")
        {'epochs': 3, 'name': '007'}
        >>> convert_arguments(get_estimator, {"name": None}, {"name": "None"}, "get_estimator()")
        {'name': None}
    """
    parameters = {parameter.name: parameter for parameter in script_parameters(function)[0]}
    converted = dict(arguments)
    for key, value in arguments.items():
        parameter = parameters.get(key)
        if value is None or parameter is None or parameter.allowed is None or _fits(value, parameter.allowed):
            continue  # `--name None` is Python's None whatever the annotation says, as in FastEstimator
        text = raw.get(key)
        if str in parameter.allowed and isinstance(text, str):
            converted[key] = text
            continue
        shown = text if isinstance(text, str) else value
        default = "" if parameter.default is _NO_DEFAULT else f"; its default is {parameter.default!r}"
        raise CLIError(f"argument --{key}: expected {_names(parameter.allowed)}, got {shown!r} "
                       f"({where} declares {key}: {parameter.type_text or _names(parameter.allowed)}{default})")
    return converted


def format_parameters(function: Callable[..., Any], title: str) -> str:
    """The help text listing `function`'s parameters as `--name TYPE  description (default: value)` lines."""
    parameters, takes_any = script_parameters(function)
    helper = argparse.ArgumentParser(add_help=False, usage=argparse.SUPPRESS, prog="fe")
    group = helper.add_argument_group(title, None if parameters else "it takes no arguments")
    for parameter in parameters:
        if parameter.default is _NO_DEFAULT:
            suffix = "(required)"
        else:
            suffix = f"(default: {parameter.default!r})".replace("%", "%%")
        description = parameter.description.replace("%", "%%")
        group.add_argument(f"--{parameter.name}", metavar=parameter.type_text.replace("%", "%%") or "VALUE",
                           dest=f"script_{parameter.name}", help=f"{description} {suffix}".strip())
    if takes_any:
        group.add_argument("--NAME", metavar="VALUE", dest="script_any_kwargs",
                           help="any other name: it takes **kwargs")
    return helper.format_help()
