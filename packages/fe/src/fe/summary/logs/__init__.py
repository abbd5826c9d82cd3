"""Saved logs (FastEstimator's `fastestimator.summary.logs`): parse FastEstimator-format logs into Summaries and draw
them.

`parse_log_file` returns one Summary. As in FastEstimator, `parse_log_files` and `parse_log_dir` parse and then draw
(on screen, or into a file with `save=True`); they also return the parsed Summaries. To parse without drawing, use
`parse_log_text`, or `fe_core.summary.logs`.
"""
from fe_core.summary.logs import find_log_files, parse_log_file, parse_log_lines, parse_log_text, parse_log_value
from fe_core.summary.plot import plot_logs, plot_summaries, visualize_logs
from fe.summary.logs import log_parse, log_plot
from fe.summary.logs.log_parse import parse_log_dir, parse_log_files

__all__ = ["find_log_files", "log_parse", "log_plot", "parse_log_dir", "parse_log_file", "parse_log_files",
           "parse_log_lines", "parse_log_text", "parse_log_value", "plot_logs", "plot_summaries", "visualize_logs"]
