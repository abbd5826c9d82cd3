"""Reading command-line values: `parse_string_to_python`, `parse_cli_to_dictionary`, and argparse's `SaveAction`."""
from __future__ import annotations

import argparse
import ast
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from fe_core.export import fe_export

__all__ = ["parse_string_to_python", "parse_cli_to_dictionary", "SaveAction"]


@fe_export("fe.util.cli_util.parse_string_to_python", "fe.util.parse_string_to_python")
def parse_string_to_python(val: str) -> Any:
    """Convert a string into a python object: JSON first, then a python literal, else the string itself.

    Example:
        >>> parse_string_to_python("5"), parse_string_to_python("[5, 4, 0.3]"), parse_string_to_python("{'a':5}")
        (5, [5, 4, 0.3], {'a': 5})
        >>> parse_string_to_python("adam"), parse_string_to_python("true"), parse_string_to_python("None")
        ('adam', True, None)

    Args:
        val: An input string.

    Returns:
        A python object version of the input string.
    """
    try:
        return json.loads(val)
    except (json.JSONDecodeError, TypeError, ValueError):
        pass
    try:
        return ast.literal_eval(val)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return val


@fe_export("fe.util.cli_util.parse_cli_to_dictionary")
def parse_cli_to_dictionary(input_list: Optional[List[str]]) -> Dict[str, Any]:
    """Convert a list of command-line strings ('--key value ...') into a dictionary with python objects as values.

    The tokens after a '--key' up to the next '--key' are joined (without spaces, so a list split by the shell such
    as `--shape [28, 28]` is read back whole) and parsed with `parse_string_to_python`. Values before the first
    '--key' belong to no key and are left out, as FastEstimator does.

    Example:
        >>> parse_cli_to_dictionary(["--epochs", "5", "--test", "this", "--lr", "0.74"])
        {'epochs': 5, 'test': 'this', 'lr': 0.74}
        >>> parse_cli_to_dictionary(["--shape", "[28,", "28]"])
        {'shape': [28, 28]}
        >>> parse_cli_to_dictionary(["stray", "--epochs", "2"])
        {'epochs': 2}

    Args:
        input_list: A list of input strings from the cli.

    Returns:
        A dictionary constructed from the `input_list`, with values converted to python objects where applicable.
    """
    result: Dict[str, Any] = {}
    key: Optional[str] = None
    value = ""
    for token in input_list or []:
        if token.startswith("--"):
            if key:
                result[key] = parse_string_to_python(value)
            key, value = token[2:], ""
        elif key is not None:
            value += token
    if key:
        result[key] = parse_string_to_python(value)
    return result


@fe_export("fe.util.cli_util.SaveAction")
class SaveAction(argparse.Action):
    """An argparse action for an optional-value flag: `--save [DIR]` sets `save=True` and `save_dir=DIR/` (or None).

    Used inside an exclusive group to populate a secondary variable (`<dest>_dir`) next to the flag itself.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> _ = parser.add_argument("--save", action=SaveAction, default=False, dest="save")
        >>> args = parser.parse_args(["--save", "/tmp/out"])
        >>> args.save, args.save_dir
        (True, '/tmp/out/')

    Args:
        option_strings: A list of command-line option strings which should be associated with this action.
        dest: The name of the attribute to hold the created object(s).
        nargs: The number of command line arguments to be consumed (only '?' is supported).
        **kwargs: Pass-through keyword arguments.

    Raises:
        ValueError: If `nargs` is not '?'.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, nargs: Union[int, str, None] = "?",
                 **kwargs: Dict[str, Any]) -> None:
        if nargs != "?":
            raise ValueError(f"SaveAction takes nargs='?', got {nargs!r}")
        super().__init__(option_strings, dest, nargs, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        setattr(namespace, self.dest, True)
        setattr(namespace, self.dest + "_dir", None if values is None else os.path.join(values, ""))
