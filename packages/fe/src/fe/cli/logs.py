"""`fe logs`: draw the history in saved FastEstimator-format logs (files or directories of them) into an image."""
from __future__ import annotations

import argparse
import os
from typing import Any, List

from fe_core.summary.logs import find_log_files, parse_log_file

from fe.cli.errors import CLIError

__all__ = ["add_logs_parser", "logs", "collect_log_files"]


def collect_log_files(paths: List[str], extension: str, recursive: bool) -> List[str]:
    """The log files named by `paths`: files as given, directories searched for files ending with `extension`.

    Raises:
        CLIError: If a path does not exist or no log file is found.
    """
    files: List[str] = []
    for path in paths:
        if os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            files.extend(find_log_files(path, extension, recursive))
        else:
            raise CLIError(f"no such log file or directory: {path!r}")
    if not files:
        raise CLIError(f"no log files ending with {extension!r} in {', '.join(paths)}"
                       + ("" if recursive else " (use --recursive to search sub-directories)"))
    return files


def logs(args: argparse.Namespace, unknown: List[str]) -> int:
    """Run `fe logs`: parse the logs and save the plot."""
    if unknown:
        raise CLIError(f"unrecognized arguments: {' '.join(unknown)}")
    files = collect_log_files(args.paths, args.extension, args.recursive)
    try:
        summaries = [parse_log_file(path, args.extension if path.endswith(args.extension) else None)
                     for path in files]
    except ValueError as error:
        raise CLIError(str(error)) from error
    try:
        from fe_core.summary.plot import plot_summaries  # pylint: disable=import-outside-toplevel
        plot_summaries(summaries, args.out, keys=args.include, ignore_keys=args.ignore, smooth_factor=args.smooth,
                       share_legend=not args.split_legend, pretty_names=args.pretty_names)
    except (ImportError, ValueError) as error:
        raise CLIError(str(error)) from error
    print(f"Saved the history of {len(summaries)} log(s) to {args.out}")
    return 0


def add_logs_parser(subparsers: Any) -> None:
    """Add the `logs` command."""
    parser = subparsers.add_parser("logs", help="plot the history in saved logs",
                                   description="Parse FastEstimator-format logs (the console output of a run, saved "
                                   "to a file) and draw one subplot per logged key, one curve per log and mode.",
                                   allow_abbrev=False)
    parser.add_argument("paths", nargs="+", metavar="LOG_DIR_OR_FILE", help="log files, or directories of them")
    parser.add_argument("--out", default="history.png", help="the image file to write")
    parser.add_argument("--extension", default=".txt", help="in directories, the extension of log files")
    parser.add_argument("--recursive", action="store_true", help="search sub-directories too")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--include", nargs="+", metavar="KEY", help="draw only these keys")
    keys.add_argument("--ignore", nargs="+", metavar="KEY", help="do not draw these keys")
    parser.add_argument("--smooth", type=float, default=0.0, help="gaussian smoothing of the curves (0: none)")
    parser.add_argument("--pretty_names", action="store_true", help="clean up key names in subplot titles")
    parser.add_argument("--split_legend", action="store_true", help="one legend per subplot instead of one in all")
    parser.set_defaults(func=logs)
