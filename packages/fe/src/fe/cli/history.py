"""`fe history`: list the runs recorded in the history database, query it with SQL, trim it, or change its limits.

    fe history [--limit 15] [--interactive] [--args] [--errors] [--features] [--datasets] [--pipeline] [--network]
               [--traces] [--pks] [--csv]
    fe history sql "SELECT experiment, status FROM history" [--interactive] [--csv]
    fe history clear [N]                 # keep only the N (20) most recent runs
    fe history settings [--keep K] [--keep_logs L]

The database is `~/fastestimator_data/history.db`, or the file named by the `FE_HISTORY_DB` environment variable.
"""
from __future__ import annotations

import argparse
import sqlite3
from typing import Any, Dict, List, Union

from fe.cli.errors import CLIError

__all__ = ["history_basic", "history_sql", "clear_history", "settings", "configure_history_parser"]

Args = Union[argparse.Namespace, Dict[str, Any]]


def _arguments(args: Args) -> Dict[str, Any]:
    return vars(args) if isinstance(args, argparse.Namespace) else dict(args)


def _no_unknown(unknown: List[str]) -> None:
    if unknown:
        raise CLIError(f"unrecognized arguments: {' '.join(unknown)}")


def history_basic(args: Args, unknown: List[str]) -> int:
    """Print the most recent runs (`fe history`).

    Args:
        args: The parsed arguments (the flags of `HistoryReader.read_basic`).
        unknown: Arguments the parser did not recognise (an error).

    Raises:
        CLIError: If `unknown` is not empty, or the database cannot be read.
    """
    _no_unknown(unknown)
    options = _arguments(args)
    from fe_core.summary.history import mark_killed_runs  # pylint: disable=import-outside-toplevel
    from fe_core.summary.history_reader import HistoryReader  # pylint: disable=import-outside-toplevel
    try:
        mark_killed_runs()  # a run killed with kill -9 never said so: its process is gone
    except (sqlite3.Error, OSError):  # a read-only database is still listed
        pass
    try:
        with HistoryReader() as reader:
            reader.read_basic(limit=options["limit"], interactive=options["interactive"],
                              include_args=options["include_args"], errors=options["errors"],
                              include_pk=options["include_pk"], include_features=options["include_features"],
                              include_traces=options["include_traces"], include_datasets=options["include_datasets"],
                              include_pipeline=options["include_pipeline"],
                              include_network=options["include_network"], as_csv=options["csv"])
    except sqlite3.Error as error:
        raise CLIError(f"cannot read the history database: {error}") from error
    return 0


def history_sql(args: Args, unknown: List[str]) -> int:
    """Run an SQL query against the history database and print the result (`fe history sql QUERY`).

    Raises:
        CLIError: If `unknown` is not empty or the query fails.
    """
    _no_unknown(unknown)
    options = _arguments(args)
    from fe_core.summary.history_reader import HistoryReader  # pylint: disable=import-outside-toplevel
    try:
        with HistoryReader() as reader:
            reader.read_sql(query=options["query"], as_csv=options["csv"], interactive=options["interactive"])
    except sqlite3.Error as error:
        raise CLIError(f"the query failed: {error}") from error
    return 0


def clear_history(args: Args, unknown: List[str]) -> int:
    """Delete all but the most recent runs (`fe history clear [N]`).

    Raises:
        CLIError: If `unknown` is not empty or N is negative.
    """
    _no_unknown(unknown)
    from fe_core.summary.history import delete  # pylint: disable=import-outside-toplevel
    retain = _arguments(args)["retain"]
    try:
        delete(n_keep=retain)
    except ValueError as error:
        raise CLIError(str(error)) from error
    print(f"Kept the {retain} most recent history entries")
    return 0


def settings(args: Args, unknown: List[str]) -> int:
    """Change how many runs and logs the database keeps, and print the settings (`fe history settings`).

    Raises:
        CLIError: If `unknown` is not empty.
    """
    _no_unknown(unknown)
    options = _arguments(args)
    from fe_core.summary.history import update_settings  # pylint: disable=import-outside-toplevel
    update_settings(n_keep=options["keep"], n_keep_logs=options["keep_logs"])
    return 0


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interactive", action="store_true",
                        help="afterwards, prompt for a row number and show that run's log and error")
    parser.add_argument("--csv", dest="csv", action="store_true", help="print CSV instead of a table")


def configure_history_parser(subparsers: Any) -> None:
    """Add the `history` command (and its `sql`, `clear` and `settings` sub-commands) to `subparsers`."""
    parser = subparsers.add_parser("history", help="list the runs recorded in the history database",
                                   description="View prior fe trainings recorded in the history database "
                                   "(~/fastestimator_data/history.db, or $FE_HISTORY_DB).",
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter, allow_abbrev=False)
    parser.add_argument("--limit", metavar="L", type=int, default=15, help="how many runs to show")
    _add_output_flags(parser)
    for flag, dest, what in (("--args", "include_args", "the command-line arguments of each run"),
                             ("--errors", "errors", "only failed runs, with their error type"),
                             ("--features", "include_features", "the fe features each run used"),
                             ("--datasets", "include_datasets", "the datasets each run used"),
                             ("--pipeline", "include_pipeline", "the pipeline ops each run used"),
                             ("--network", "include_network", "the network ops each run used"),
                             ("--traces", "include_traces", "the traces each run used"),
                             ("--pks", "include_pk", "the database primary key (experiment id) of each run")):
        parser.add_argument(flag, dest=dest, action="store_true", help=f"show {what}")
    parser.set_defaults(func=history_basic)
    commands = parser.add_subparsers(dest="history_command", metavar="{sql,clear,settings}",
                                     parser_class=type(parser))
    sql_parser = commands.add_parser("sql", help="run an SQL query against the history database",
                                     description="Run a raw SQL query against the history database.",
                                     allow_abbrev=False)
    sql_parser.add_argument("query", metavar="QUERY", help="e.g. fe history sql 'SELECT * FROM history'")
    _add_output_flags(sql_parser)
    sql_parser.set_defaults(func=history_sql)
    clear_parser = commands.add_parser("clear", help="delete all but the most recent runs",
                                       description="Delete old history entries to save space.", allow_abbrev=False)
    clear_parser.add_argument("retain", metavar="N", nargs="?", type=int, default=20,
                              help="how many of the most recent runs to keep (default 20)")
    clear_parser.set_defaults(func=clear_history)
    settings_parser = commands.add_parser("settings", help="change how many runs and logs are kept",
                                          description="Change how many runs and logs the database keeps.",
                                          allow_abbrev=False)
    settings_parser.add_argument("--keep", metavar="K", type=int, help="how many of the most recent runs to keep")
    settings_parser.add_argument("--keep_logs", metavar="L", type=int,
                                 help="how many of the most recent runs' logs to keep")
    settings_parser.set_defaults(func=settings)
