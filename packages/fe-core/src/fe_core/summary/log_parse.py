"""Parsing saved logs, with FastEstimator 1.x's `parse_log_files` / `parse_log_dir` (parse, then draw)."""
from __future__ import annotations

import os
from typing import Iterable, List, Optional

from fe_core.summary.logs import find_log_files, parse_log_file, parse_log_lines, parse_log_text, parse_log_value
from fe_core.summary.plot import visualize_logs
from fe_core.summary.summary import Summary
from fe_core.export import fe_export

__all__ = ["parse_log_file", "parse_log_files", "parse_log_dir", "parse_log_text", "parse_log_lines",
           "parse_log_value"]


@fe_export("fe.summary.logs.log_parse.parse_log_files", "fe.summary.logs.parse_log_files")
def parse_log_files(file_paths: List[str],
                    log_extension: Optional[str] = ".txt",
                    smooth_factor: float = 0,
                    save: bool = False,
                    save_path: Optional[str] = None,
                    ignore_metrics: Optional[Iterable[str]] = None,
                    include_metrics: Optional[Iterable[str]] = None,
                    share_legend: bool = True,
                    pretty_names: bool = False,
                    group_by: Optional[str] = None) -> List[Summary]:
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
        share_legend: One legend for the whole figure (True) or one per subplot (False).
        pretty_names: Clean up key names in subplot titles.
        group_by: Not supported: grouping runs into mean +- stdev curves. Must be None.

    Returns:
        The parsed Summaries, one per file.

    Raises:
        ValueError: If no file is given, or `group_by` is used.
    """
    if group_by is not None:
        raise ValueError("parse_log_files: group_by (averaging runs into mean +- stdev curves) is not supported; "
                         "parse the files and plot the Summaries separately instead")
    if not file_paths:
        raise ValueError("parse_log_files needs at least one log file")
    summaries = [parse_log_file(path, log_extension) for path in file_paths]
    if save and save_path is None:
        save_path = os.path.dirname(os.path.abspath(file_paths[0]))
    visualize_logs(summaries,
                   save_path=save_path if save else None,
                   smooth_factor=smooth_factor,
                   share_legend=share_legend,
                   pretty_names=pretty_names,
                   ignore_metrics=ignore_metrics,
                   include_metrics=include_metrics)
    return summaries


@fe_export("fe.summary.logs.log_parse.parse_log_dir", "fe.summary.logs.parse_log_dir")
def parse_log_dir(dir_path: str,
                  log_extension: str = ".txt",
                  recursive_search: bool = False,
                  smooth_factor: float = 1,
                  save: bool = False,
                  save_path: Optional[str] = None,
                  ignore_metrics: Optional[Iterable[str]] = None,
                  include_metrics: Optional[Iterable[str]] = None,
                  share_legend: bool = True,
                  pretty_names: bool = False,
                  group_by: Optional[str] = None) -> List[Summary]:
    """Parse every log file in a directory and draw their histories together, as FastEstimator 1.x does.

    Args:
        dir_path: The directory holding the logs.
        log_extension: Only files ending with this are logs.
        recursive_search: Also look in sub-directories.
        smooth_factor: Gaussian smoothing of the curves (0: none).
        save: Save the image (True, into `save_path` or `dir_path`) or show it in a window (False).
        save_path: Where to save: an image file, or a directory to write `parse_logs.png` into.
        ignore_metrics: Keys not to draw.
        include_metrics: Draw only these keys.
        share_legend: One legend for the whole figure (True) or one per subplot (False).
        pretty_names: Clean up key names in subplot titles.
        group_by: Not supported; must be None.

    Returns:
        The parsed Summaries, one per file.

    Raises:
        FileNotFoundError: If `dir_path` is not a directory.
        ValueError: If it holds no log file.
    """
    paths = find_log_files(dir_path, log_extension, recursive_search)
    if not paths:
        raise ValueError(f"No log files ending with {log_extension!r} in {dir_path!r}")
    return parse_log_files(paths, log_extension, smooth_factor, save, save_path or (dir_path if save else None),
                           ignore_metrics, include_metrics, share_legend, pretty_names, group_by)
