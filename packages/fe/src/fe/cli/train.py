"""`fe train` and `fe test`: build the Estimator a script's `get_estimator` returns, then train and/or test it.

`fe train SCRIPT [--hyperparameters FILE] [--warmup true|false] [--summary NAME] [--key value ...]` calls
`get_estimator(**arguments)`, runs `fit`, then `test` when the pipeline has test data (FastEstimator's `train` only
fits; its `run` fits and tests). `fe test SCRIPT ...` only tests, as FastEstimator's does: to test saved weights, have
`get_estimator` take their path (the examples take `--weights_path`).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Dict, List, Optional

from fe.cli.errors import USAGE_EXIT_CODE, CLIError
from fe.cli.hyperparameters import check_arguments, load_hyperparameters, parse_cli_to_dictionary
from fe.cli.script import find_get_estimator, load_entry_point

__all__ = ["add_train_parser", "add_test_parser", "configure_train_parser", "configure_test_parser", "train", "test",
           "build_estimator", "run_main"]

_WARMUP = {"true": True, "false": False}


def _get_arguments(args: argparse.Namespace, unknown: List[str]) -> Dict[str, Any]:
    arguments = load_hyperparameters(getattr(args, "hyperparameters_json", None))
    arguments.update(parse_cli_to_dictionary(unknown))
    return arguments


def build_estimator(get_estimator: Callable[..., Any], arguments: Dict[str, Any], where: str) -> Any:
    """Call `get_estimator(**arguments)` after checking that it accepts them.

    Raises:
        CLIError: If an argument is unknown or a required one is missing, or the result is not an Estimator.
    """
    check_arguments(get_estimator, arguments, where)
    estimator = get_estimator(**arguments)
    if not (hasattr(estimator, "fit") and hasattr(estimator, "test")):
        raise CLIError(f"{where} returned {type(estimator).__name__}, not an Estimator")
    return estimator


def _has_test_data(estimator: Any) -> bool:
    return "test" in getattr(getattr(estimator, "pipeline", None), "data", {})


def _fit_and_test(estimator: Any, summary: Optional[str], warmup: bool, run_test: bool, eager: bool = False) -> int:
    estimator.fit(summary=summary, warmup=warmup, eager=eager)
    if run_test and _has_test_data(estimator):
        estimator.test(summary=summary, eager=eager)
    return 0


def _parse_warmup(text: str, flag: str = "--warmup") -> bool:
    try:
        return _WARMUP[str(text).lower()]
    except KeyError:
        raise CLIError(f"{flag} must be true or false, got {text!r}") from None


def train(args: argparse.Namespace, unknown: List[str]) -> int:
    """Run `fe train`: fit the script's Estimator, then test it when its pipeline has test data."""
    warmup = _parse_warmup(args.warmup)
    eager = _parse_warmup(args.eager, "--eager")
    arguments = _get_arguments(args, unknown)
    module = load_entry_point(args.entry_point)
    where = f"get_estimator() in {args.entry_point}"
    estimator = build_estimator(find_get_estimator(module, args.entry_point), arguments, where)
    return _fit_and_test(estimator, args.summary, warmup, run_test=not args.no_test, eager=eager)


def test(args: argparse.Namespace, unknown: List[str]) -> int:
    """Run `fe test`: test the script's Estimator (no training)."""
    arguments = _get_arguments(args, unknown)
    module = load_entry_point(args.entry_point)
    where = f"get_estimator() in {args.entry_point}"
    estimator = build_estimator(find_get_estimator(module, args.entry_point), arguments, where)
    if not _has_test_data(estimator):
        raise CLIError(f"the pipeline built by {where} has no test data")
    estimator.test(summary=args.summary, eager=_parse_warmup(args.eager, "--eager"))
    return 0


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry_point", metavar="SCRIPT", help="the Python script (or module name) that defines get_estimator()")
    parser.add_argument("--hyperparameters", dest="hyperparameters_json", metavar="JSON_FILE",
                        help="a JSON file of get_estimator() arguments (command-line ones win)")
    parser.add_argument("--summary", default=None, help="experiment name")
    parser.add_argument("--eager", default="false",
                        help="run TensorFlow eagerly instead of in tf.function (true or false; torch ignores it)")
    parser.add_argument_group("get_estimator() arguments",
                              "any other --name value pair is passed to get_estimator(name=value), e.g. --epochs 2 "
                              "--batch_size 64; values are parsed as JSON or Python literals")


def add_train_parser(subparsers: Any) -> None:
    """Add the `train` command."""
    parser = subparsers.add_parser("train", help="train (then test) the Estimator of a script",
                                   description="Train the Estimator that SCRIPT's get_estimator() returns, then test "
                                   "it when its pipeline has test data.", allow_abbrev=False)
    _add_common(parser)
    parser.add_argument("--warmup", default="true", help="run the warmup checks first (true or false)")
    parser.add_argument("--no_test", action="store_true", help="do not test after training")
    parser.set_defaults(func=train)


def add_test_parser(subparsers: Any) -> None:
    """Add the `test` command."""
    parser = subparsers.add_parser("test", help="test the Estimator of a script",
                                   description="Test the Estimator that SCRIPT's get_estimator() returns (no "
                                   "training; pass saved weights through get_estimator's arguments).",
                                   allow_abbrev=False)
    _add_common(parser)
    parser.set_defaults(func=test)


def configure_train_parser(subparsers: Any) -> None:
    """Add the `train` command to `subparsers` (FastEstimator's name for `add_train_parser`)."""
    add_train_parser(subparsers)


def configure_test_parser(subparsers: Any) -> None:
    """Add the `test` command to `subparsers` (FastEstimator's name for `add_test_parser`)."""
    add_test_parser(subparsers)


def run_main(get_estimator: Callable[..., Any], argv: Optional[List[str]] = None, prog: str = "python -m") -> int:
    """Run a script's own `if __name__ == "__main__":` like `fe train`: `--key value` arguments go to get_estimator.

    Args:
        get_estimator: The script's function.
        argv: The arguments (default: `sys.argv[1:]`).
        prog: The program name for messages.

    Returns:
        The exit code (2 with a one-line message on stderr for a usage error).

    Example:
        >>> # if __name__ == "__main__":
        >>> #     sys.exit(run_main(get_estimator))  # doctest: +SKIP
    """
    tokens = list(sys.argv[1:] if argv is None else argv)
    summary = None
    try:
        arguments = parse_cli_to_dictionary(tokens)
        summary = arguments.pop("summary", None)
        warmup = _parse_warmup(str(arguments.pop("warmup", "true")))
        hyperparameters = load_hyperparameters(arguments.pop("hyperparameters", None))
        hyperparameters.update(arguments)
        where = f"{prog} {get_estimator.__module__}: get_estimator()"
        estimator = build_estimator(get_estimator, hyperparameters, where)
    except CLIError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return USAGE_EXIT_CODE
    return _fit_and_test(estimator, None if summary is None else str(summary), warmup, run_test=True)
