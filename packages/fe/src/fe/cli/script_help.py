"""`fe train SCRIPT --help` (and `fe test` / `fe run`): the command's help, then the script's own arguments.

The script is loaded only when help is asked for with a script named before `--help`; its function's parameters are
listed with their types, defaults and docstring descriptions (see `fe.cli.script_arguments.format_parameters`).
"""
from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Any, Callable, Optional, Sequence, Tuple

from fe.cli.script import load_entry_point
from fe.cli.script_arguments import format_parameters

__all__ = ["ScriptHelpAction", "add_script_help", "get_estimator_of", "runner_of"]

# Given a loaded script and its name: the function its `--key value` arguments go to, and how to name it.
FunctionFinder = Callable[[ModuleType, str], Tuple[Callable[..., Any], str]]


def get_estimator_of(module: ModuleType, entry_point: str) -> Tuple[Callable[..., Any], str]:
    """The script's `get_estimator` (for `fe train` / `fe test`)."""
    from fe.cli.script import find_get_estimator  # pylint: disable=import-outside-toplevel
    return find_get_estimator(module, entry_point), "get_estimator()"


def runner_of(module: ModuleType, entry_point: str) -> Tuple[Callable[..., Any], str]:
    """The script's `fastestimator_run`, else its `get_estimator` (for `fe run`)."""
    runner = getattr(module, "fastestimator_run", None)
    if callable(runner):
        return runner, "fastestimator_run()"
    return get_estimator_of(module, entry_point)


class ScriptHelpAction(argparse.Action):
    """`-h/--help` that also lists the arguments of the script given before it.

    Args:
        option_strings: The flags ('-h', '--help').
        find_function: Given the loaded script and its name, the function the arguments go to and its name.
        dest: Unused (help stores nothing).
        default: Unused.
        help: The flag's own help text.
    """

    def __init__(self,
                 option_strings: Sequence[str],
                 find_function: FunctionFinder = get_estimator_of,
                 dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS,
                 help: Optional[str] = None) -> None:  # pylint: disable=redefined-builtin
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)
        self.find_function = find_function

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        entry_point = getattr(namespace, "entry_point", None)
        text = parser.format_help()
        if entry_point:
            function, name = self.find_function(load_entry_point(entry_point), entry_point)
            text += "\n" + format_parameters(function, f"{name} arguments of {entry_point} (--name value)")
        else:
            text += "\n(name the script before --help to list its own arguments: fe COMMAND SCRIPT --help)\n"
        sys.stdout.write(text)
        parser.exit()


def add_script_help(parser: argparse.ArgumentParser, find_function: FunctionFinder = get_estimator_of) -> None:
    """Give `parser` (made with `add_help=False`) a `-h/--help` that lists the script's own arguments too."""
    parser.add_argument("-h", "--help", action=ScriptHelpAction, find_function=find_function,
                        help="show this help (with SCRIPT given first, also the script's own arguments) and exit")
