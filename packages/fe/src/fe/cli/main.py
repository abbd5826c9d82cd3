"""The `fe` command: `fe train`, `fe test`, `fe run`, `fe logs`, `fe plot`, `fe history`, `fe checkpoint`
(`fe COMMAND --help`)."""
from __future__ import annotations

import argparse
import sys
from typing import List, NoReturn, Optional

from fe.cli.checkpoint import configure_checkpoint_parser
from fe.cli.errors import USAGE_EXIT_CODE, CLIError
from fe.cli.history import configure_history_parser
from fe.cli.logs import add_logs_parser
from fe.cli.plot import configure_plot_parser
from fe.cli.run import configure_run_parser
from fe.cli.train import add_test_parser, add_train_parser
from fe_core.config_error import ConfigurationError, configuration_error_line, wants_traceback

__all__ = ["build_parser", "main", "run_main"]

_COMMANDS = ("train", "test", "run", "logs", "plot", "history", "checkpoint")
INTERRUPTED_EXIT_CODE = 130
CONFIGURATION_EXIT_CODE = 1  # the script's configuration was refused (as Python's exit code for an unhandled error)  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become `CLIError`s (one line on stderr, exit code 2)."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(message)


def build_parser() -> argparse.ArgumentParser:
    """The `fe` argument parser with its commands."""
    parser = _Parser(prog="fe", description="FastEstimator-style training from the command line.",
                     allow_abbrev=False)
    from fe.__about__ import __version__  # pylint: disable=import-outside-toplevel
    parser.add_argument("--version", action="version", version=f"fe {__version__}")
    # The command's name is the options' 'mode', as in FastEstimator's parser (`vars(args)["mode"] == "train"`).
    subparsers = parser.add_subparsers(dest="mode", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    add_train_parser(subparsers)
    add_test_parser(subparsers)
    configure_run_parser(subparsers)
    add_logs_parser(subparsers)
    configure_plot_parser(subparsers)
    configure_history_parser(subparsers)
    configure_checkpoint_parser(subparsers)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the `fe` command line.

    Args:
        argv: The arguments (default: `sys.argv[1:]`).

    Returns:
        The exit code: 0 on success, 2 for a usage error (printed as one line on stderr, without a traceback), 1
        for a script whose configuration fe refuses (a `ConfigurationError`, one line naming the script's line that
        led to it; `FE_TRACEBACK=1` shows the traceback), 130
        after Ctrl-C (the run's one `FastEstimator-Interrupted: ...` line is all that is printed). SIGTERM during a
        run ends the process with code 143 the same way (see `fe_core.termination`).
    """
    tokens = list(sys.argv[1:] if argv is None else argv)
    command = next((token for token in tokens if not token.startswith("-")), "")
    prog = f"fe {command}" if command in _COMMANDS else "fe"
    try:
        args, unknown = build_parser().parse_known_args(tokens)
        # each command gets a dict, as FastEstimator's run_main passes it; the function is looked up when the parser
        # is built, so a patched `fe.cli.train.train` is the one called
        return int(args.func(vars(args), unknown) or 0)
    except CLIError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return USAGE_EXIT_CODE
    except ConfigurationError as error:  # fe's own check of the script's configuration: its message says it all
        if wants_traceback():
            raise
        print(f"{prog}: error: {configuration_error_line(error)}", file=sys.stderr)
        return CONFIGURATION_EXIT_CODE
    except KeyboardInterrupt as interrupt:  # the Estimator printed where the run stopped and how to resume
        if not str(interrupt).startswith("fe: interrupted"):  # Ctrl-C outside a run (importing the script, ...)
            print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT_CODE


def run_main(argv: Optional[List[str]] = None) -> int:
    """Parse `argv` and run the requested command (FastEstimator's name for `main`).

    Returns:
        The exit code.
    """
    return main(argv)


if __name__ == "__main__":
    sys.exit(main())
