"""Turning `--key value` command-line pairs into keyword arguments for a script's `get_estimator`.

As in FastEstimator's CLI, every `--key value` pair that the `fe` command does not know itself is passed on to
`get_estimator(**kwargs)`, with values parsed into Python objects (`--epochs 2` -> 2, `--lr 1e-3` -> 0.001,
`--layers [32,64]` -> [32, 64], `--name run1` -> 'run1'), after those of a `--hyperparameters` JSON file. Unlike
FastEstimator, a key that `get_estimator` does not accept is a one-line error instead of a TypeError traceback.
"""
from __future__ import annotations

import ast
import inspect
import json
from typing import Any, Callable, Dict, List, Optional, Sequence

from fe.cli.errors import CLIError

__all__ = ["parse_value", "parse_cli_tokens", "parse_grouped_values", "parse_cli_to_dictionary", "load_hyperparameters",
           "check_arguments"]


def parse_value(text: str) -> Any:
    """A command-line value as a Python object: JSON first, then a Python literal, else the string itself.

    Example:
        >>> parse_value("2"), parse_value("1e-3"), parse_value("true"), parse_value("None"), parse_value("adam")
        (2, 0.001, True, None, 'adam')
    """
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def parse_cli_tokens(tokens: Optional[Sequence[str]]) -> Dict[str, Any]:
    """Group `['--epochs', '5', '--lr=0.1', '--flag', '--sizes', '1', '2']` by key, keeping the values as typed.

    A key followed by one value gets that string, by several values a list of them, by none `True`.

    Raises:
        CLIError: If a value comes before any `--key`, or a key is empty or given twice.

    Example:
        >>> parse_cli_tokens(["--epochs", "5", "--name=007", "--quick", "--sizes", "1", "2"])
        {'epochs': '5', 'name': '007', 'quick': True, 'sizes': ['1', '2']}
    """
    result: Dict[str, Any] = {}
    key: Optional[str] = None
    values: List[str] = []

    def flush() -> None:
        if key is None:
            return
        if key in result:
            raise CLIError(f"argument --{key} is given twice")
        result[key] = True if not values else values[0] if len(values) == 1 else list(values)

    for token in tokens or ():
        if token.startswith("--"):
            flush()
            name, equals, value = token[2:].partition("=")
            if not name or not name.replace("-", "_").isidentifier():
                raise CLIError(f"invalid argument {token!r}: expected --name value")
            key, values = name.replace("-", "_"), [value] if equals else []
        elif key is None:
            raise CLIError(f"unexpected argument {token!r}: expected --name value pairs after the script")
        else:
            values.append(token)
    flush()
    return result


def parse_cli_to_dictionary(tokens: Optional[Sequence[str]]) -> Dict[str, Any]:
    """Parse `['--epochs', '5', '--lr=0.1', '--flag', '--sizes', '1', '2']` into keyword arguments.

    A key followed by one value gets that value, by several values a list of them, by none `True`.

    Raises:
        CLIError: If a value comes before any `--key`, or a key is empty or given twice.

    Example:
        >>> parse_cli_to_dictionary(["--epochs", "5", "--test", "this", "--lr=0.74", "--quick"])
        {'epochs': 5, 'test': 'this', 'lr': 0.74, 'quick': True}
    """
    return parse_grouped_values(parse_cli_tokens(tokens))


def parse_grouped_values(grouped: Dict[str, Any]) -> Dict[str, Any]:
    """`parse_cli_tokens`' values (strings, lists of strings, True for a bare flag) parsed into Python objects.

    Example:
        >>> parse_grouped_values({"epochs": "5", "sizes": ["1", "2"], "quick": True})
        {'epochs': 5, 'sizes': [1, 2], 'quick': True}
    """
    return {key: value if value is True else [parse_value(item) for item in value] if isinstance(value, list) else
            parse_value(value) for key, value in grouped.items()}


def load_hyperparameters(path: Optional[str]) -> Dict[str, Any]:
    """The keyword arguments in a `--hyperparameters` JSON file (an object), or {} when no file is given.

    Raises:
        CLIError: If the file cannot be read, is not valid JSON, or does not hold an object.
    """
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as file:
            content = json.load(file)
    except OSError as error:
        raise CLIError(f"cannot read the hyperparameters file {path!r}: {error.strerror or error}") from error
    except ValueError as error:
        raise CLIError(f"the hyperparameters file {path!r} is not valid JSON: {error}") from error
    if not isinstance(content, dict):
        raise CLIError(f"the hyperparameters file {path!r} must hold a JSON object of name: value pairs")
    return content


def check_arguments(function: Callable[..., Any], kwargs: Dict[str, Any], where: str) -> None:
    """Make sure `function(**kwargs)` binds: every key is a parameter and every required parameter is given.

    Args:
        function: The function to be called (a script's `get_estimator`).
        kwargs: The keyword arguments it will get.
        where: How to name the function in messages ('get_estimator() in mnist.py').

    Raises:
        CLIError: Naming the unknown or missing arguments and listing what the function accepts.
    """
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # builtins and C functions: let the call itself complain
        return
    parameters = signature.parameters.values()
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    accepts_any = any(p.kind == p.VAR_KEYWORD for p in parameters)
    accepted = ", ".join(f"--{name}" for name in named) or "no arguments"
    unknown = [key for key in kwargs if key not in named]
    if unknown and not accepts_any:
        listed = ", ".join(f"--{key}" for key in unknown)
        raise CLIError(f"{where} does not accept {listed} (it accepts: {accepted})")
    missing = [p.name for p in parameters
               if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty and p.name not in kwargs]
    if missing:
        raise CLIError(f"{where} needs " + ", ".join(f"--{name}" for name in missing))
    if any(p.kind == p.POSITIONAL_ONLY and p.default is p.empty for p in parameters):
        raise CLIError(f"{where} has positional-only parameters, which cannot be given on the command line")
