"""Issue 30 item 7: a reader never finds the history database without its tables.

The recorder creates the database from a background thread; a reader (another process's `fe history`, a test polling
for the row) that opened the file between its creation and its schema got `no such table: history`, about once in
eight runs of tests/core/test_summary_history.py::test_a_recorder_used_directly_writes_its_row_on_entry. The file now
appears only once its schema is complete.
"""
from __future__ import annotations

import os
import sqlite3
import threading

from fe_core.summary import history
from fe_core.summary.history import connect


def _tables(path: str):
    """The tables a reader sees at `path` now (None when there is no file yet), without creating the file."""
    if not os.path.exists(path):
        return None
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as reader:
        return {row[0] for row in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_the_database_file_appears_with_its_schema(tmp_path, monkeypatch):
    path = str(tmp_path / "history.db")
    seen = []

    class Observed(list):
        def __iter__(self):
            seen.append(_tables(path))  # what a reader finds while the schema is being written
            return super().__iter__()

    monkeypatch.setattr(history, "_SCHEMA", Observed(history._SCHEMA))
    connect(path).close()
    assert seen == [None]
    assert "history" in _tables(path)
    assert sorted(os.listdir(tmp_path)) in (["history.db"], ["history.db", "history.db-shm", "history.db-wal"])


def test_readers_polling_during_creation_never_see_an_empty_database(tmp_path):
    paths = [str(tmp_path / f"h{index}.db") for index in range(15)]
    problems = []
    done = threading.Event()

    def poll():
        while not done.is_set():
            for path in paths:
                tables = _tables(path)
                if tables is not None and "history" not in tables:
                    problems.append(path)

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for path in paths:
            connect(path, check_same_thread=False).close()
    finally:
        done.set()
        reader.join()
    assert problems == []


def test_two_creators_share_one_database(tmp_path):
    path = str(tmp_path / "history.db")
    connections = []
    threads = [threading.Thread(target=lambda: connections.append(connect(path, check_same_thread=False)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(connections) == 2
        assert [tuple(c.execute("SELECT schema_version FROM settings").fetchone()) for c in connections] == [
            (history.SCHEMA_VERSION,)] * 2
    finally:
        for connection in connections:
            connection.close()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".creating")]
