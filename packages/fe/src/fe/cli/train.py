"""`fe train` and `fe test`: build the Estimator a script's `get_estimator` returns, then train or test it.

`fe train SCRIPT [--hyperparameters FILE] [--warmup true|false] [--summary NAME] [--then_test] [--key value ...]`
calls `get_estimator(**arguments)` and runs `fit`, as FastEstimator's `train` does; `--then_test` also runs `test`
afterwards when the pipeline has test data. `fe test SCRIPT ...` only tests, as FastEstimator's does, and first loads what
`fe train` saved: each model given no `weights_path` gets the weights its BestModelSaver (the best) or ModelSaver (the
newest) wrote into their `save_dir`, and the file is printed; with nothing saved, one warning line on stderr says the
weights are freshly initialised (see `fe.cli.saved_weights`). The test is logged at the step and epoch the training
ended at, when a CSVLogger's file says (see `fe.cli.trained_position`). `fe train SCRIPT --help` lists the script's own
arguments, and a value of the wrong type (`--epochs two`) is a one-line usage error.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from fe.cli.errors import USAGE_EXIT_CODE, CLIError
from fe.cli.hyperparameters import check_arguments, load_hyperparameters, parse_cli_tokens, parse_grouped_values
from fe.cli.options import Options, options_of
from fe.cli.saved_weights import load_given_weights, restore_saved_weights
from fe.cli.script import find_get_estimator, load_entry_point
from fe.cli.script_arguments import convert_arguments, format_parameters
from fe.cli.script_help import add_script_help
from fe.cli.trained_position import start_test_at_trained_position
from fe_core.summary.run_arguments import set_run_arguments

__all__ = ["add_train_parser", "add_test_parser", "configure_train_parser", "configure_test_parser", "train", "test",
           "build_estimator", "parsed_arguments", "run_main"]

_WARMUP = {"true": True, "false": False}
# What `train` / `test` read when given a dict (FastEstimator passes `vars(args)`) that leaves an option out.
TRAIN_DEFAULTS: Dict[str, Any] = {"hyperparameters_json": None, "summary": None, "eager": False, "warmup": True,
                                  "then_test": False, "no_test": False}
TEST_DEFAULTS: Dict[str, Any] = {"hyperparameters_json": None, "summary": None, "eager": False, "weights": None}


def parsed_arguments(hyperparameters_json: Optional[str], raw: Dict[str, Any]) -> Dict[str, Any]:
    """The keyword arguments for a script's function: a `--hyperparameters` file's, then the command line's (which
    win, given as `parse_cli_tokens` groups them), parsed into Python values."""
    arguments = load_hyperparameters(hyperparameters_json)
    arguments.update(parse_grouped_values(raw))
    return arguments


def _get_arguments(args: argparse.Namespace, unknown: Optional[List[str]]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The parsed arguments for get_estimator, and the command line's values as typed (see `convert_arguments`)."""
    raw = parse_cli_tokens(unknown or [])
    return parsed_arguments(getattr(args, "hyperparameters_json", None), raw), raw


def build_estimator(get_estimator: Callable[..., Any], arguments: Dict[str, Any], where: str,
                    raw: Optional[Dict[str, Any]] = None) -> Any:
    """Call `get_estimator(**arguments)` after checking that it accepts them, with values of the types it declares.

    Args:
        get_estimator: The script's function.
        arguments: Its keyword arguments (parsed values).
        where: How to name it in messages.
        raw: The command-line values as typed, for parameters that take text (`--name 007` -> '007').

    Raises:
        CLIError: If an argument is unknown, has a value of the wrong type (`--epochs two` for `epochs: int`), or a
            required one is missing, or the result is not an Estimator.
    """
    check_arguments(get_estimator, arguments, where)
    arguments = convert_arguments(get_estimator, arguments, raw or {}, where)
    set_run_arguments(arguments)  # experiment trackers (MLflowLogger) log them as the run's hyperparameters
    estimator = get_estimator(**arguments)
    if not (hasattr(estimator, "fit") and hasattr(estimator, "test")):
        raise CLIError(f"{where} returned {type(estimator).__name__}, not an Estimator")
    return estimator


def _has_test_data(estimator: Any) -> bool:
    return "test" in getattr(getattr(estimator, "pipeline", None), "data", {})


def _fit_and_test(estimator: Any, summary: Optional[str], warmup: bool, run_test: bool, eager: bool = False,
                  where: str = "get_estimator()", prog: str = "fe train") -> int:
    estimator.fit(summary=summary, warmup=warmup, eager=eager)
    if run_test:
        if _has_test_data(estimator):
            estimator.test(summary=summary, eager=eager)
        else:  # said, not skipped silently (`fe test` refuses such a pipeline with the same words)
            print(f"{prog}: not testing: the pipeline built by {where} has no test data", file=sys.stderr)
    return 0


def _parse_warmup(text: Any, flag: str = "--warmup") -> bool:
    """A flag's value as a bool: True / False as given, or the strings 'true' / 'false' (any case)."""
    if isinstance(text, bool):
        return text
    try:
        return _WARMUP[str(text).lower()]
    except KeyError:
        raise CLIError(f"{flag} must be true or false, got {text!r}") from None


def boolean_option(text: str) -> bool:
    """argparse's `type` for `--warmup` / `--eager`: 'true' / 'false' (any case) as a bool, as FastEstimator's parser
    hands them to the command functions."""
    if str(text).lower() not in _WARMUP:
        raise argparse.ArgumentTypeError(f"must be true or false, got {text!r}")
    return _WARMUP[str(text).lower()]


def train(args: Options, unknown: Optional[List[str]]) -> int:
    """Run `fe train`: fit the script's Estimator (with `then_test`, then test it when its pipeline has test data).

    Args:
        args: The options, as a Namespace or as the dict FastEstimator passes (`vars(args)`): 'entry_point' (the
            script or module), and optionally 'hyperparameters_json', 'summary', 'warmup', 'eager' (booleans, or the
            strings 'true' / 'false'), 'then_test'; others ('mode', 'func') are ignored.
        unknown: The remaining `--key value` pairs, passed to `get_estimator`.

    Returns:
        The exit code (0).
    """
    args = options_of(args, TRAIN_DEFAULTS)
    warmup = _parse_warmup(args.warmup)
    eager = _parse_warmup(args.eager, "--eager")
    arguments, raw = _get_arguments(args, unknown)
    module = load_entry_point(args.entry_point)
    where = f"get_estimator() in {args.entry_point}"
    estimator = build_estimator(find_get_estimator(module, args.entry_point), arguments, where, raw)
    return _fit_and_test(estimator, args.summary, warmup, run_test=bool(args.then_test) and not args.no_test,
                         eager=eager, where=where)


def test(args: Options, unknown: Optional[List[str]]) -> int:
    """Run `fe test`: test the script's Estimator (no training), with the weights `fe train` saved.

    Models given no `weights_path` get the weights their BestModelSaver / ModelSaver saved (see
    `fe.cli.saved_weights.restore_saved_weights`); a model with none is tested as built, with a warning on stderr.

    Args:
        args: The options, as a Namespace or as the dict FastEstimator passes (`vars(args)`): 'entry_point', and
            optionally 'hyperparameters_json', 'summary', 'eager', 'weights' (a list of `PATH` / `MODEL=PATH`).
        unknown: The remaining `--key value` pairs, passed to `get_estimator`.

    Returns:
        The exit code (0).
    """
    args = options_of(args, TEST_DEFAULTS)
    arguments, raw = _get_arguments(args, unknown)
    module = load_entry_point(args.entry_point)
    where = f"get_estimator() in {args.entry_point}"
    estimator = build_estimator(find_get_estimator(module, args.entry_point), arguments, where, raw)
    if not _has_test_data(estimator):
        raise CLIError(f"the pipeline built by {where} has no test data")
    load_given_weights(estimator, list(args.weights or []), "fe test")
    restore_saved_weights(estimator, "fe test")
    start_test_at_trained_position(estimator)  # the step and epoch the training ended at, as the fit's test says
    estimator.test(summary=args.summary, eager=_parse_warmup(args.eager, "--eager"))
    return 0


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry_point", metavar="SCRIPT",
                        help="the Python script (or module name) that defines get_estimator()")
    parser.add_argument("--hyperparameters", dest="hyperparameters_json", metavar="JSON_FILE",
                        help="a JSON file of get_estimator() arguments (command-line ones win)")
    parser.add_argument("--summary", default=None, help="experiment name")
    parser.add_argument("--eager", default=False, type=boolean_option, metavar="{true,false}",
                        help="run TensorFlow eagerly instead of in tf.function (true or false; torch ignores it)")
    parser.add_argument_group("get_estimator() arguments",
                              "any other --name value pair is passed to get_estimator(name=value), e.g. --epochs 2 "
                              "--batch_size 64; values are parsed as JSON or Python literals")


def add_train_parser(subparsers: Any) -> None:
    """Add the `train` command."""
    parser = subparsers.add_parser("train", help="train the Estimator of a script",
                                   description="Train the Estimator that SCRIPT's get_estimator() returns (with "
                                   "--then_test, also test it afterwards when its pipeline has test data). `fe train "
                                   "SCRIPT --help` lists SCRIPT's arguments.", allow_abbrev=False, add_help=False)
    add_script_help(parser)
    _add_common(parser)
    parser.add_argument("--warmup", default=True, type=boolean_option, metavar="{true,false}",
                        help="run the warmup checks first (true or false)")
    parser.add_argument("--then_test", action="store_true",
                        help="after training, also test when the pipeline has test data (FastEstimator's train only "
                        "fits)")
    parser.add_argument("--no_test", action="store_true", help=argparse.SUPPRESS)  # the default now; still accepted
    parser.set_defaults(func=train)


def add_test_parser(subparsers: Any) -> None:
    """Add the `test` command."""
    parser = subparsers.add_parser("test", help="test the Estimator of a script (with the weights fe train saved)",
                                   description="Test the Estimator that SCRIPT's get_estimator() returns, without "
                                   "training. Each model given no weights_path first gets the weights its "
                                   "BestModelSaver (the best) or ModelSaver (the newest) saved in their save_dir, as "
                                   "`fe train` left them; with none found, a warning says its weights are freshly "
                                   "initialised. `fe test SCRIPT --help` lists SCRIPT's arguments.",
                                   allow_abbrev=False, add_help=False)
    add_script_help(parser)
    _add_common(parser)
    parser.add_argument("--weights", action="append", metavar="[MODEL=]PATH",
                        help="test with this weights file: PATH for a network of one model, MODEL=PATH for any "
                        "(repeat for several models); works for any script")
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
    if "-h" in tokens or "--help" in tokens:
        sys.stdout.write(f"usage: {prog} [--summary NAME] [--warmup true|false] [--hyperparameters JSON_FILE] "
                         f"[--name value ...]\n\nTrain, then test, the Estimator of get_estimator().\n\n" +
                         format_parameters(get_estimator, "get_estimator() arguments (--name value)"))
        return 0
    summary = None
    try:
        raw = parse_cli_tokens(tokens)
        options = {key: raw.pop(key) for key in ("summary", "warmup", "hyperparameters") if key in raw}
        summary = options.get("summary")
        warmup = _parse_warmup(str(options.get("warmup", "true")))
        hyperparameters_json = options.get("hyperparameters")
        if hyperparameters_json is not None and not isinstance(hyperparameters_json, str):
            raise CLIError("argument --hyperparameters: expected one JSON file")
        arguments = parsed_arguments(hyperparameters_json, raw)
        where = f"{prog} {get_estimator.__module__}: get_estimator()"
        estimator = build_estimator(get_estimator, arguments, where, raw)
    except CLIError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return USAGE_EXIT_CODE
    return _fit_and_test(estimator, None if summary is None else str(summary), warmup, run_test=True, where=where,
                         prog=prog)
