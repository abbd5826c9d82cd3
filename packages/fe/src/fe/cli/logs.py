"""`fe logs`: draw the history in saved FastEstimator-format logs (files or directories of them) into an image.

    fe logs LOG_DIR_OR_FILE ... [--out history.png | --save [DIR] | --display] [--extension .txt] [--recursive]
            [--include KEY ... | --ignore KEY ...] [--smooth S] [--pretty_names] [--common_legend | --split_legend]
            [--group REGEX]

`--group '(.*)_[0-9]+\\.txt'` averages runs whose file names share the captured part into mean +- stddev curves.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, List

from fe_core.summary.logs import find_log_files, parse_log_file

from fe.cli.errors import CLIError

__all__ = ["add_logs_parser", "configure_log_parser", "logs", "collect_log_files"]


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
    count = len(summaries)
    try:
        if args.group:
            from fe_core.summary.log_parse import group_summaries  # pylint: disable=import-outside-toplevel
            summaries = group_summaries(files, summaries, args.group)
        from fe_core.summary.plot import plot_summaries, visualize_logs  # pylint: disable=import-outside-toplevel
        if args.display:
            visualize_logs(summaries, save_path=None, smooth_factor=args.smooth, pretty_names=args.pretty_names,
                           ignore_metrics=args.ignore, include_metrics=args.include, share_legend=args.share_legend)
            return 0
        if args.save is not None:
            directory = args.save if isinstance(args.save, str) else (
                args.paths[0] if os.path.isdir(args.paths[0]) else os.path.dirname(os.path.abspath(args.paths[0])))
            out = visualize_logs(summaries, save_path=directory, smooth_factor=args.smooth,
                                 pretty_names=args.pretty_names, ignore_metrics=args.ignore,
                                 include_metrics=args.include, verbose=False, share_legend=args.share_legend)
        else:
            out = plot_summaries(summaries, args.out, keys=args.include, ignore_keys=args.ignore,
                                 smooth_factor=args.smooth, share_legend=args.share_legend,
                                 pretty_names=args.pretty_names)
    except (ImportError, ValueError) as error:
        raise CLIError(str(error)) from error
    print(f"Saved the history of {count} log(s) to {out}")
    return 0


def add_logs_parser(subparsers: Any) -> None:
    """Add the `logs` command."""
    parser = subparsers.add_parser("logs", help="plot the history in saved logs",
                                   description="Parse FastEstimator-format logs (the console output of a run, saved "
                                   "to a file) and draw one subplot per logged key, one curve per log and mode.",
                                   allow_abbrev=False)
    parser.add_argument("paths", nargs="+", metavar="LOG_DIR_OR_FILE", help="log files, or directories of them")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--out", default="history.png", help="the image file to write")
    output.add_argument("--save", nargs="?", const=True, default=None, metavar="DIR",
                        help="save parse_logs.png into DIR (default: the log directory), as FastEstimator does")
    output.add_argument("--display", action="store_true", help="show the figure in a window instead of saving it")
    parser.add_argument("--extension", default=".txt", help="in directories, the extension of log files")
    parser.add_argument("--recursive", action="store_true", help="search sub-directories too")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--include", nargs="+", metavar="KEY", help="draw only these keys")
    keys.add_argument("--ignore", nargs="+", metavar="KEY", help="do not draw these keys")
    parser.add_argument("--smooth", type=float, default=0.0, help="gaussian smoothing of the curves (0: none)")
    parser.add_argument("--pretty_names", action="store_true", help="clean up key names in subplot titles")
    legend = parser.add_mutually_exclusive_group()
    legend.add_argument("--common_legend", dest="share_legend", action="store_true", default=True,
                        help="one legend for all subplots (the default)")
    legend.add_argument("--split_legend", dest="share_legend", action="store_false",
                        help="one legend per subplot instead of one in all")
    parser.add_argument("--group", metavar="REGEX", default=None,
                        help="average logs whose file names match REGEX with the same first captured group into "
                        "mean +- stddev curves, e.g. '(.*)_[0-9]+\\.txt'")
    parser.set_defaults(func=logs)


def configure_log_parser(subparsers: Any) -> None:
    """Add the `logs` command to `subparsers` (FastEstimator's name for `add_logs_parser`)."""
    add_logs_parser(subparsers)
