"""`fe logs`: draw the history in saved FastEstimator-format logs (files or directories of them) into an image.

    fe logs LOG_DIR_OR_FILE ... [--out history.png | --save [DIR] | --display] [--overwrite] [--extension .txt]
            [--recursive] [--include KEY ... | --ignore KEY ...] [--all_keys] [--smooth S] [--pretty_names]
            [--common_legend | --split_legend] [--group REGEX]

The image goes to `./history.png` (in the working directory) unless `--out` or `--save` says otherwise; an existing
file is replaced only with `--overwrite`. By default only losses and metrics are drawn: bookkeeping keys (steps/sec,
epoch_time, total_time, learning rates, logging_interval, num_device, BestModelSaver's since_best_<m> and
max_<m>/min_<m>) are left out unless `--all_keys` or `--include` asks for them.
`--group '(.*)_[0-9]+\\.txt'` averages runs whose file names share the captured part into mean +- stddev curves.
"""
from __future__ import annotations

import argparse
import os
import re
from typing import Any, List, Optional, Sequence

from fe_core.summary.logs import find_log_files, parse_log_file

from fe.cli.errors import CLIError
from fe.cli.options import Options, options_of

__all__ = ["add_logs_parser", "configure_log_parser", "logs", "collect_log_files", "bookkeeping_keys"]

DEFAULT_OUT = "history.png"
# Keys a run logs about itself rather than about the model: not drawn unless asked for.
_BOOKKEEPING = re.compile(r"epoch|steps/sec|logging_interval|num_device|(epoch|total)_time(\(\w+\))?|"
                          r"(\w+_)?lr|since_best_.+")


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


def bookkeeping_keys(keys: Sequence[str]) -> List[str]:
    """The keys among `keys` that are bookkeeping rather than losses or metrics.

    Those are 'epoch', 'steps/sec', 'epoch_time(sec)', 'total_time(sec)', learning rates ('model_lr'),
    'logging_interval', 'num_device', BestModelSaver's 'since_best_<m>', and its 'max_<m>' / 'min_<m>' where a
    'since_best_<m>' is logged too.

    Example:
        >>> bookkeeping_keys(["ce", "accuracy", "steps/sec", "max_accuracy", "since_best_accuracy", "min_iou"])
        ['steps/sec', 'max_accuracy', 'since_best_accuracy']
    """
    best_of = {key[len("since_best_"):] for key in keys if key.startswith("since_best_")}
    return [key for key in keys if _BOOKKEEPING.fullmatch(key) or
            (key.startswith(("max_", "min_")) and key[4:] in best_of)]


def _ignored_keys(args: argparse.Namespace, summaries: List[Any]) -> Optional[List[str]]:
    """The keys not to draw: those asked for, plus bookkeeping unless `--all_keys` or `--include` is given."""
    if args.include or args.all_keys:
        return args.ignore
    from fe_core.summary.plot import plottable_keys  # pylint: disable=import-outside-toplevel
    available = plottable_keys(summaries)
    hidden = bookkeeping_keys(available)
    ignored = list(dict.fromkeys([*(args.ignore or []), *hidden]))
    if available and all(key in ignored for key in available):
        raise CLIError(f"nothing to draw: the logs hold only bookkeeping or ignored keys {available}; pass "
                       f"--all_keys to draw them, or --include KEY ...")
    return ignored


def _refuse_overwrite(path: str, args: argparse.Namespace) -> None:
    if os.path.exists(path) and not args.overwrite:
        raise CLIError(f"{path} already exists; pass --overwrite to replace it, or choose another file with --out")


def _save_target(args: argparse.Namespace) -> str:
    """The image file `--save [DIR_OR_FILE]` writes: parse_logs.png in a directory (the first log's by default)."""
    target = args.save if isinstance(args.save, str) else (
        args.paths[0] if os.path.isdir(args.paths[0]) else os.path.dirname(os.path.abspath(args.paths[0])))
    if os.path.isdir(target) or target.endswith(os.sep) or not os.path.splitext(target)[1]:
        target = os.path.join(target, "parse_logs.png")
    return target


# What `logs` reads when given a dict (FastEstimator passes `vars(args)`) that leaves an option out.
LOGS_DEFAULTS = {"out": DEFAULT_OUT, "save": False, "save_dir": None, "display": False, "overwrite": False,
                 "extension": ".txt", "recursive": False, "include": None, "ignore": None, "all_keys": False,
                 "smooth": 1.0, "pretty_names": False, "share_legend": True, "group": None}


class _LogDirAction(argparse.Action):
    """Store the log paths under FastEstimator's 'log_dir': one path as a str (as its parser gives it), several as a
    list."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        values = list(values)
        setattr(namespace, self.dest, values[0] if len(values) == 1 else values)


class _SaveAction(argparse.Action):
    """`--save [DIR]` as FastEstimator's parser records it: 'save' True, and 'save_dir' the directory (or None)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        setattr(namespace, "save", True)
        setattr(namespace, "save_dir", values)


def logs(args: Options, unknown: Optional[List[str]]) -> int:
    """Run `fe logs`: parse the logs and save the plot (losses and metrics; every key with `--all_keys`).

    Args:
        args: The options, as a Namespace or as the dict FastEstimator passes (`vars(args)`): 'paths' (or
            FastEstimator's 'log_dir': a log file or directory, or a list of them) and the flags above.
        unknown: Arguments the parser did not recognise (an error).

    Raises:
        CLIError: For unknown arguments, missing or unreadable logs, nothing to draw, or an existing output file
            without `--overwrite`.
    """
    if unknown:
        raise CLIError(f"unrecognized arguments: {' '.join(unknown)}")
    args = options_of(args, LOGS_DEFAULTS, aliases={"log_dir": "paths"})
    if not hasattr(args, "paths"):
        raise CLIError("fe logs needs the log files or directories ('paths')")
    if isinstance(args.paths, str):
        args.paths = [args.paths]
    if args.save is True and getattr(args, "save_dir", None):  # FastEstimator's SaveAction: save=True, save_dir=DIR
        args.save = args.save_dir
    elif args.save is False:  # FastEstimator's dict when not saving: the default image (history.png)
        args.save = None
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
        ignored = _ignored_keys(args, summaries)
        if args.display:
            visualize_logs(summaries, save_path=None, smooth_factor=args.smooth, pretty_names=args.pretty_names,
                           ignore_metrics=ignored, include_metrics=args.include, share_legend=args.share_legend)
            return 0
        if args.save is not None:
            target = _save_target(args)
            _refuse_overwrite(target, args)
            out = visualize_logs(summaries, save_path=target, smooth_factor=args.smooth,
                                 pretty_names=args.pretty_names, ignore_metrics=ignored,
                                 include_metrics=args.include, verbose=False, share_legend=args.share_legend)
        else:
            _refuse_overwrite(args.out, args)
            out = plot_summaries(summaries, args.out, keys=args.include, ignore_keys=ignored,
                                 smooth_factor=args.smooth, share_legend=args.share_legend,
                                 pretty_names=args.pretty_names)
    except (ImportError, ValueError) as error:
        raise CLIError(str(error)) from error
    print(f"Saved the history of {count} log(s) to {out}")
    return 0


def add_logs_parser(subparsers: Any) -> None:
    """Add the `logs` command."""
    parser = subparsers.add_parser("logs", help="plot the history in saved logs (into ./history.png)",
                                   description="Parse FastEstimator-format logs (the console output of a run, saved "
                                   "to a file) and draw one subplot per loss or metric, one curve per log and mode, "
                                   "into ./history.png (or --out FILE, --save DIR, --display). An existing image is "
                                   "replaced only with --overwrite. Bookkeeping keys (steps/sec, epoch_time, "
                                   "total_time, learning rates, since_best_*, ...) are drawn only with --all_keys or "
                                   "--include.", allow_abbrev=False)
    parser.add_argument("log_dir", nargs="+", action=_LogDirAction, metavar="LOG_DIR_OR_FILE",
                        help="log files, or directories of them")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--out", default=DEFAULT_OUT, metavar="FILE",
                        help="the image file to write (default: history.png in the working directory)")
    output.add_argument("--save", nargs="?", action=_SaveAction, default=False, metavar="DIR",
                        help="save parse_logs.png into DIR (default: the log directory), as FastEstimator does")
    output.add_argument("--display", action="store_true", help="show the figure in a window instead of saving it")
    parser.add_argument("--overwrite", action="store_true", help="replace the image file if it exists")
    parser.add_argument("--extension", default=".txt", help="in directories, the extension of log files")
    parser.add_argument("--recursive", action="store_true", help="search sub-directories too")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--include", nargs="+", metavar="KEY", help="draw only these keys (bookkeeping ones too)")
    keys.add_argument("--ignore", nargs="+", metavar="KEY", help="do not draw these keys")
    parser.add_argument("--all_keys", action="store_true",
                        help="also draw bookkeeping keys (steps/sec, epoch_time, total_time, learning rates, "
                        "logging_interval, num_device, since_best_*, BestModelSaver's max_*/min_*)")
    parser.add_argument("--smooth", type=float, default=1, help="gaussian smoothing of the curves (0: none; default 1, "
                        "as FastEstimator's)")
    parser.add_argument("--pretty_names", action="store_true", help="clean up key names in subplot titles")
    legend = parser.add_mutually_exclusive_group()
    legend.add_argument("--common_legend", dest="share_legend", action="store_true", default=True,
                        help="one legend for all subplots (the default)")
    legend.add_argument("--split_legend", dest="share_legend", action="store_false",
                        help="one legend per subplot instead of one in all")
    parser.add_argument("--group", metavar="REGEX", default=None,
                        help="average logs whose file names match REGEX with the same first captured group into "
                        "mean +- stddev curves, e.g. '(.*)_[0-9]+\\.txt'")
    parser.set_defaults(func=logs, save_dir=None)


def configure_log_parser(subparsers: Any) -> None:
    """Add the `logs` command to `subparsers` (FastEstimator's name for `add_logs_parser`)."""
    add_logs_parser(subparsers)
