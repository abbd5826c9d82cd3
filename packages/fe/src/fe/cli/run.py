"""`fe run`: run a script's `fastestimator_run(**arguments)`, or else fit and test its `get_estimator()`'s Estimator.

    fe run SCRIPT [--hyperparameters JSON_FILE] [--key value ...]

As FastEstimator's `run`: a script that defines `fastestimator_run` is handed the arguments and does what it likes;
otherwise its Estimator is fitted when the pipeline has training data and tested when it has test data.
"""
from __future__ import annotations

import argparse
from typing import Any, Dict, List, Optional, Union

from fe.cli.errors import CLIError
from fe.cli.hyperparameters import check_arguments, load_hyperparameters, parse_cli_to_dictionary
from fe.cli.script import load_entry_point
from fe.cli.train import build_estimator

__all__ = ["run", "configure_run_parser"]


def run(args: Union[argparse.Namespace, Dict[str, Any]], unknown: Optional[List[str]]) -> int:
    """Run `fe run`.

    Args:
        args: 'entry_point' (the script or module) and optionally 'hyperparameters_json' (a JSON file of arguments).
        unknown: The remaining `--key value` pairs, passed to `fastestimator_run` / `get_estimator`.

    Raises:
        CLIError: If the script defines neither function, or the arguments do not fit it.
    """
    options = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    arguments = load_hyperparameters(options.get("hyperparameters_json"))
    arguments.update(parse_cli_to_dictionary(unknown or []))
    entry_point = options["entry_point"]
    module = load_entry_point(entry_point)
    runner = getattr(module, "fastestimator_run", None)
    if callable(runner):
        check_arguments(runner, arguments, f"fastestimator_run() in {entry_point}")
        runner(**arguments)
        return 0
    get_estimator = getattr(module, "get_estimator", None)
    if not callable(get_estimator):
        raise CLIError(f"{entry_point} defines neither fastestimator_run() nor get_estimator()")
    estimator = build_estimator(get_estimator, arguments, f"get_estimator() in {entry_point}")
    data = getattr(getattr(estimator, "pipeline", None), "data", {})
    if "train" in data:
        estimator.fit()
    if "test" in data:
        estimator.test()
    return 0


def configure_run_parser(subparsers: Any) -> None:
    """Add the `run` command to `subparsers`."""
    parser = subparsers.add_parser("run", help="run a script's fastestimator_run() (or fit and test its Estimator)",
                                   description="Call SCRIPT's fastestimator_run(**arguments); without one, fit the "
                                   "Estimator its get_estimator() returns when there is training data and test it "
                                   "when there is test data.", allow_abbrev=False)
    parser.add_argument("entry_point", metavar="SCRIPT", help="the Python script (or module name)")
    parser.add_argument("--hyperparameters", dest="hyperparameters_json", metavar="JSON_FILE",
                        help="a JSON file of arguments (command-line ones win)")
    parser.add_argument_group("arguments", "any other --name value pair is passed on as name=value")
    parser.set_defaults(func=run)
