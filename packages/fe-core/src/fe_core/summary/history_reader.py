"""`HistoryReader`: print what the run-history database holds (`fe history`), as tables or CSV.

The database is written by `fe_core.summary.history.HistoryRecorder`; see that module for its tables.
"""
from __future__ import annotations

import csv
import io
import sqlite3
import sys
from typing import Any, Callable, Iterable, List, Optional, Sequence

from fe_core.export import fe_export
from fe_core.summary.history import connect

__all__ = ["HistoryReader", "format_table"]

_LIST_COLUMNS = (
    ("include_features", "features", "feature", "features"),
    ("include_datasets", "datasets", "mode || ': ' || dataset", "datasets"),
    ("include_pipeline", "pipeline", "pipe_op", "pipeline"),
    ("include_network", "network", "net_op", "network"),
    ("include_traces", "traces", "trace", "traces"),
)


def format_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain-text table with a header row and column rules (multi-line cells are flattened)."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(str(column))] + [len(row[index]) for row in cells]) for index, column in enumerate(columns)]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"
    lines = [rule, "| " + " | ".join(str(c).ljust(w) for c, w in zip(columns, widths)) + " |", rule]
    lines += ["| " + " | ".join(value.ljust(width) for value, width in zip(row, widths)) + " |" for row in cells]
    lines.append(rule)
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split("\n"))


@fe_export("fe.summary.history.HistoryReader", "fe.summary.HistoryReader")
class HistoryReader:
    """Read the history database; use it as a context manager.

    ```python
    with HistoryReader() as reader:
        reader.read_basic(limit=5, include_traces=True)
        reader.read_sql("SELECT experiment, status FROM history WHERE status = ?", args=["Failed"])
    ```

    Args:
        db_path: The database file, or None for the default location (`FE_HISTORY_DB` or
            `~/fastestimator_data/history.db`).
    """

    def __init__(self, db_path: Optional[str] = None) -> None:
        self.db_path = db_path
        self.db: Optional[sqlite3.Connection] = None
        self.response: List[sqlite3.Row] = []
        self.input: Callable[[str], str] = input  # replaceable for tests

    def __enter__(self) -> "HistoryReader":
        self.db = connect(self.db_path)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def _connection(self) -> sqlite3.Connection:
        if self.db is None:
            raise RuntimeError("Use HistoryReader as a context manager: `with HistoryReader() as reader: ...`")
        return self.db

    def read_basic(self,
                   limit: int = 10,
                   interactive: bool = False,
                   include_args: bool = False,
                   errors: bool = False,
                   include_pk: bool = False,
                   include_features: bool = False,
                   include_traces: bool = False,
                   include_datasets: bool = False,
                   include_pipeline: bool = False,
                   include_network: bool = False,
                   as_csv: bool = False) -> None:
        """Print the most recent runs (newest first).

        Args:
            limit: How many runs to show.
            interactive: Then prompt for a row number and show that run's log (and error), until 'exit'.
            include_args: Show the command-line arguments of each run.
            errors: Show only failed or aborted runs, with their exception type.
            include_pk: Show each run's primary key (its experiment id).
            include_features: Show the fe features each run used (deterministic, mixed precision, ...).
            include_traces: Show the traces each run used.
            include_datasets: Show the dataset classes each run used, per mode.
            include_pipeline: Show the pipeline ops each run used.
            include_network: Show the network ops each run used.
            as_csv: Print CSV instead of a table.
        """
        flags = {"include_features": include_features, "include_datasets": include_datasets,
                 "include_pipeline": include_pipeline, "include_network": include_network,
                 "include_traces": include_traces}
        columns = ["h.pk AS pk", "h.experiment AS experiment", "h.status AS status", "h.file AS file"]
        if include_args:
            columns.append("h.args AS args")
        columns += ["h.train_start AS start", "h.train_end AS completed", "h.fe_version AS fe_version"]
        for flag, table, expression, alias in _LIST_COLUMNS:
            if flags[flag]:
                columns.append(f"(SELECT group_concat({expression}, ', ') FROM {table} t WHERE t.fk = h.pk) AS {alias}")
        if errors:
            columns.append("e.exc_type AS error")
        query = f"SELECT {', '.join(columns)} FROM history h"
        if errors:
            query += " LEFT JOIN errors e ON e.fk = h.pk WHERE h.status IN ('Failed', 'Aborted')"
        query += " ORDER BY h.train_start DESC, h.rowid DESC LIMIT ?"
        self.read_sql(query, args=[int(limit)], hide_cols=() if include_pk else ("pk",), as_csv=as_csv,
                      interactive=interactive)

    def read_sql(self,
                 query: str,
                 args: Iterable[Any] = (),
                 hide_cols: Iterable[str] = (),
                 as_csv: bool = False,
                 interactive: bool = False) -> None:
        """Run an SQL query against the database and print the result.

        Args:
            query: The SQL (parameters as '?').
            args: The query's parameters.
            hide_cols: Result columns not to print.
            as_csv: Print CSV instead of a table.
            interactive: Then prompt for a row number and show that run's log and error (needs a 'pk' column in the
                result), until 'exit'.

        Raises:
            sqlite3.Error: If the query is invalid.
        """
        cursor = self._connection().execute(query, list(args))
        names = [description[0] for description in cursor.description or ()]
        self.response = cursor.fetchall()
        hidden = set(hide_cols)
        shown = [index for index, name in enumerate(names) if name not in hidden]
        header = ["#"] + [names[index] for index in shown] if interactive else [names[index] for index in shown]
        rows = [([str(number)] if interactive else []) + [row[index] for index in shown]
                for number, row in enumerate(self.response, start=1)]
        if as_csv:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
            sys.stdout.write(buffer.getvalue())
        else:
            print(format_table(header, rows))
        if interactive:
            self._interact(names)

    # ------------------------------------------------------------------ interactive session
    def _interact(self, names: List[str]) -> None:
        if "pk" not in names:
            print("(interactive lookups need the 'pk' column in the query result)")
            return
        while True:
            try:
                choice = self.input("Enter a row number to see its log and error, or 'exit': ").strip().lower()
            except EOFError:
                return
            if choice in ("exit", "quit", "q", ""):
                return
            if not choice.isdigit() or not 1 <= int(choice) <= len(self.response):
                print(f"Please enter a number from 1 to {len(self.response)}, or 'exit'")
                continue
            self.show_run(self.response[int(choice) - 1]["pk"])

    def show_run(self, pk: int) -> None:
        """Print the stored log and error of the run with primary key `pk`."""
        db = self._connection()
        log = db.execute("SELECT log FROM logs WHERE fk = ?", (pk,)).fetchone()
        error = db.execute("SELECT exc_type, exc_tb FROM errors WHERE fk = ?", (pk,)).fetchone()
        print(log["log"] if log is not None and log["log"] else "(no log stored for this run)")
        if error is not None:
            print(f"Error ({error['exc_type']}):\n{error['exc_tb']}")
