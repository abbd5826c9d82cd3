"""Parsing saved logs, with FastEstimator 1.x's `parse_log_files` / `parse_log_dir` (parse, then draw)."""
from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Optional

from fe_core.summary.logs import find_log_files, parse_log_file, parse_log_lines, parse_log_text, parse_log_value
from fe_core.summary.plot import visualize_logs
from fe_core.summary.summary import Summary, average_summaries
from fe_core.export import fe_export

__all__ = ["parse_log_file", "parse_log_files", "parse_log_dir", "parse_log_text", "parse_log_lines",
           "parse_log_value", "group_summaries"]


def group_summaries(file_paths: List[str], summaries: List[Summary], group_by: str) -> List[Summary]:
    """Average the summaries of files whose names match `group_by` into one mean +- stddev Summary per group.

    The regex is matched (`re.search`) against each file's name; its first capture group (or, without groups, the
    whole match) names the group. Groups keep the order of their first file.

    Args:
        file_paths: The files the summaries were parsed from.
        summaries: One Summary per file.
        group_by: The regex, e.g. r'(.*)_[\\d]+\\.txt' to group a_1.txt, a_2.txt apart from b_1.txt, b_2.txt.

    Returns:
        One Summary per group (values with several runs become `ValWithError(mean - std, mean, mean + std)`).

    Raises:
        ValueError: If `group_by` is not a valid regex, or a file name does not match it.
    """
    try:
        pattern = re.compile(group_by)
    except re.error as error:
        raise ValueError(f"group_by {group_by!r} is not a valid regular expression: {error}") from None
    groups: Dict[str, List[Summary]] = {}
    for path, summary in zip(file_paths, summaries):
        name = os.path.basename(path)
        match = pattern.search(name)
        if match is None:
            raise ValueError(f"Log file {name!r} does not match the group_by pattern {group_by!r}")
        key = match.group(1) if pattern.groups else match.group(0)
        groups.setdefault(key, []).append(summary)
    return [average_summaries(key, members) for key, members in groups.items()]


@fe_export("fe.summary.logs.log_parse.parse_log_files", "fe.summary.logs.parse_log_files")
def parse_log_files(file_paths: List[str],
                    log_extension: Optional[str] = ".txt",
                    smooth_factor: float = 0,
                    save: bool = False,
                    save_path: Optional[str] = None,
                    ignore_metrics: Optional[Iterable[str]] = None,
                    include_metrics: Optional[Iterable[str]] = None,
                    pretty_names: bool = False,
                    group_by: Optional[str] = None,
                    share_legend: bool = True) -> List[Summary]:
    """Parse log files and draw their histories together, as FastEstimator 1.x does.

    Args:
        file_paths: The log files.
        log_extension: Their extension (stripped from the file names to name the curves).
        smooth_factor: Gaussian smoothing of the curves (0: none).
        save: Save the image (True) or show it in a window (False).
        save_path: Where to save: an image file, or a directory to write `parse_logs.png` into. Defaults to the
            first log file's directory.
        ignore_metrics: Keys not to draw.
        include_metrics: Draw only these keys.
        pretty_names: Clean up key names in subplot titles.
        group_by: A regex grouping files to draw as mean +- stddev: r'(.*)_[\\d]+\\.txt' draws [a_1.txt, a_2.txt] as
            'a' and [b_1.txt, b_2.txt] as 'b' (see `group_summaries`).
        share_legend: One legend for the whole figure (True) or one per subplot (False).

    Returns:
        The Summaries drawn: one per file, or one per group with `group_by`.

    Raises:
        AssertionError: If no log file is given (a ValueError too).
        ValueError: If a log file does not match the `group_by` pattern.
    """
    if not file_paths:
        raise _NoLogFiles("parse_log_files needs at least one log file")
    summaries = [parse_log_file(path, log_extension) for path in file_paths]
    if group_by is not None:
        summaries = group_summaries(list(file_paths), summaries, group_by)
    if save and save_path is None:
        save_path = os.path.dirname(os.path.abspath(file_paths[0]))
    visualize_logs(summaries,
                   save_path=save_path if save else None,
                   smooth_factor=smooth_factor,
                   pretty_names=pretty_names,
                   ignore_metrics=ignore_metrics,
                   include_metrics=include_metrics,
                   share_legend=share_legend)
    return summaries


class _NoLogFiles(ValueError, AssertionError):
    """No log file was given (FastEstimator raises AssertionError; this is also a ValueError)."""


@fe_export("fe.summary.logs.log_parse.parse_log_dir", "fe.summary.logs.parse_log_dir")
def parse_log_dir(dir_path: str,
                  log_extension: str = ".txt",
                  recursive_search: bool = False,
                  smooth_factor: float = 0,
                  save: bool = False,
                  save_path: Optional[str] = None,
                  ignore_metrics: Optional[Iterable[str]] = None,
                  include_metrics: Optional[Iterable[str]] = None,
                  pretty_names: bool = False,
                  group_by: Optional[str] = None,
                  share_legend: bool = True) -> List[Summary]:
    """Parse every log file in a directory (or one log file) and draw their histories together, as FastEstimator 1.x
    does.

    Args:
        dir_path: The directory holding the logs, or the path of one log file.
        log_extension: Only files ending with this are logs.
        recursive_search: Also look in sub-directories.
        smooth_factor: Gaussian smoothing of the curves (0: none).
        save: Save the image (True, into `save_path` or `dir_path`) or show it in a window (False).
        save_path: Where to save: an image file, or a directory to write `parse_logs.png` into.
        ignore_metrics: Keys not to draw.
        include_metrics: Draw only these keys.
        pretty_names: Clean up key names in subplot titles.
        group_by: A regex grouping files to draw as mean +- stddev (see `parse_log_files`).
        share_legend: One legend for the whole figure (True) or one per subplot (False).

    Returns:
        The Summaries drawn.

    Raises:
        FileNotFoundError: If `dir_path` does not exist.
        ValueError: If it holds no log file, or a file does not match `group_by`.
    """
    if os.path.isfile(dir_path):
        paths = [dir_path]
        default_dir = os.path.dirname(os.path.abspath(dir_path))
    else:
        paths = find_log_files(dir_path, log_extension, recursive_search)
        default_dir = dir_path
    if not paths:
        raise _NoLogFiles(f"No log files ending with {log_extension!r} in {dir_path!r}")
    return parse_log_files(paths, log_extension, smooth_factor, save, save_path or (default_dir if save else None),
                           ignore_metrics, include_metrics, pretty_names, group_by, share_legend)
