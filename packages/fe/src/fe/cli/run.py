"""`fe run`: run a script's `fastestimator_run(**arguments)`, or else fit and test its `get_estimator()`'s Estimator.

    fe run SCRIPT [--hyperparameters JSON_FILE] [--key value ...]

As FastEstimator's `run`: a script that defines `fastestimator_run` is handed the arguments and does what it likes;
otherwise its Estimator is fitted when the pipeline has training data and tested when it has test data.
"""
from __future__ import annotations

import argparse
from typing import Any, Dict, List, Optional, Union

from fe.cli.errors import CLIError
from fe.cli.hyperparameters import check_arguments, parse_cli_tokens
from fe.cli.saved_weights import restore_saved_weights
from fe.cli.script import load_entry_point
from fe.cli.script_arguments import convert_arguments
from fe.cli.script_help import add_script_help, runner_of
from fe.cli.train import build_estimator, parsed_arguments

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
    raw = parse_cli_tokens(unknown or [])
    arguments = parsed_arguments(options.get("hyperparameters_json"), raw)
    entry_point = options["entry_point"]
    module = load_entry_point(entry_point)
    runner = getattr(module, "fastestimator_run", None)
    if callable(runner):
        where = f"fastestimator_run() in {entry_point}"
        check_arguments(runner, arguments, where)
        runner(**convert_arguments(runner, arguments, raw, where))
        return 0
    get_estimator = getattr(module, "get_estimator", None)
    if not callable(get_estimator):
        raise CLIError(f"{entry_point} defines neither fastestimator_run() nor get_estimator()")
    estimator = build_estimator(get_estimator, arguments, f"get_estimator() in {entry_point}", raw)
    data = getattr(getattr(estimator, "pipeline", None), "data", {})
    if "train" in data:
        estimator.fit()
    if "test" in data:
        if "train" not in data:  # nothing trained here: test what an earlier run saved, as `fe test` does
            restore_saved_weights(estimator, "fe run")
        estimator.test()
    return 0


def configure_run_parser(subparsers: Any) -> None:
    """Add the `run` command to `subparsers`."""
    parser = subparsers.add_parser("run", help="run a script's fastestimator_run() (or fit and test its Estimator)",
                                   description="Call SCRIPT's fastestimator_run(**arguments); without one, fit the "
                                   "Estimator its get_estimator() returns when there is training data and test it "
                                   "when there is test data. `fe run SCRIPT --help` lists SCRIPT's arguments.",
                                   allow_abbrev=False, add_help=False)
    add_script_help(parser, runner_of)
    parser.add_argument("entry_point", metavar="SCRIPT", help="the Python script (or module name)")
    parser.add_argument("--hyperparameters", dest="hyperparameters_json", metavar="JSON_FILE",
                        help="a JSON file of arguments (command-line ones win)")
    parser.add_argument_group("arguments", "any other --name value pair is passed on as name=value")
    parser.set_defaults(func=run)
