"""The options a command's function gets: an `argparse.Namespace` or, as FastEstimator passes them, a dict.

FastEstimator's `run_main` calls each command's function as `func(vars(args), unknown)`, and users call
`fe.cli.train.train({"entry_point": "mnist.py"}, ["--epochs", "2"])` the same way; fe's functions take either form
and fill what a dict leaves out with the command's defaults.
"""
from __future__ import annotations

import argparse
from typing import Any, Dict, Mapping, Union

__all__ = ["Options", "options_of"]

Options = Union[argparse.Namespace, Mapping[str, Any]]


def options_of(args: Options, defaults: Dict[str, Any], aliases: Mapping[str, str] = {}) -> argparse.Namespace:
    """`args` (a Namespace or a dict such as `vars(namespace)`) as a Namespace, with `defaults` for missing keys.

    Args:
        args: The parsed options.
        defaults: The value of each option the command reads when `args` does not give it.
        aliases: FastEstimator's names of options that fe names otherwise ({fastestimator_name: fe_name}).

    Returns:
        A new Namespace (`args` is not changed).

    Example:
        >>> options_of({"entry_point": "mnist.py"}, {"summary": None}).summary is None
        True
    """
    given = dict(vars(args) if isinstance(args, argparse.Namespace) else args)
    for name, fe_name in aliases.items():
        if name in given and fe_name not in given:
            given[fe_name] = given.pop(name)
    merged = dict(defaults)
    merged.update(given)
    return argparse.Namespace(**merged)
