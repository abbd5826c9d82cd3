"""The run-history database: every `fit` / `test` is recorded in a local SQLite file, as in FastEstimator 1.7.

Where: `~/fastestimator_data/history.db` (FastEstimator's location), or the file named by the environment variable
`FE_HISTORY_DB` (tests point it at a temporary file; `FE_HISTORY_DB=off` turns recording off), or whatever
`fe.estimator.record_history(path)` chose for this process (`record_history(False)` turns it off).

What: one `history` row per experiment (file, experiment name: the Summary's name or else the script's, marked
`(test)` for a run of `test` alone such as `fe test`; status 'Launched' / 'Completed' / 'Failed' / 'Aborted', or
'Killed' for a run whose process died without saying how it ended, found by the next run or `fe history`; the
command-line arguments, fe version, start and end times, devices, CPUs, restarts), and child rows in
`features`, `datasets`, `pipeline`, `network`, `postprocess`, `traces`, `errors` (exception type and traceback) and
`logs` (everything the run printed). The table and column names are FastEstimator's, so `fe history sql` queries
written for it work here. Child rows go with their history row (foreign keys, ON DELETE CASCADE).

Safe with concurrent runs: the database is in WAL mode with a busy timeout, every write is one short transaction,
and a run whose database cannot be opened or written still trains (with one warning). The schema is versioned
(`settings.schema_version` and `PRAGMA user_version`); a database written by a newer fe is refused with a clear error
rather than modified.

Off the critical path: a recorder writes its run's first rows from a background thread (sqlite3 is imported there
too), and `fit` starts that thread only once its first training step has finished, so the database costs the time to
the first step nothing; the run's end joins the thread before it writes the final status.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import sys
import threading
import time
import warnings
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Type, Union

from fe_core.export import fe_export

if TYPE_CHECKING:
    import sqlite3

__all__ = ["connect", "delete", "update_settings", "HistoryRecorder", "default_db_path", "set_history_location",
           "history_db_path", "history_context", "mark_killed_runs", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_ENV_VAR = "FE_HISTORY_DB"
_OFF = ("", "0", "off", "false", "no", "none")
_BUSY_TIMEOUT_S = 30.0
_DEFAULT_KEEP = 500
LOG_STORE_INTERVAL_S = 10.0  # a running experiment's log reaches the database at most this often (and at its end)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS settings (pk INTEGER PRIMARY KEY NOT NULL CHECK (pk = 0), schema_version INTEGER, "
    "n_keep INTEGER, n_keep_logs INTEGER)",
    "CREATE TABLE IF NOT EXISTS history (pk INTEGER PRIMARY KEY, file TEXT, experiment TEXT, status TEXT, args TEXT, "
    "fe_version TEXT, train_start TIMESTAMP, train_end TIMESTAMP, n_gpus INTEGER, n_cpus INTEGER, n_workers INTEGER, "
    "n_restarts INTEGER DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS history_start ON history (train_start)",
    "CREATE TABLE IF NOT EXISTS features (feature TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS datasets (mode TEXT, dataset TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS pipeline (pipe_op TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS network (net_op TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS postprocess (pp_op TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS traces (trace TEXT, "
    "fk INTEGER REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS errors (exc_type TEXT, exc_tb TEXT, "
    "fk INTEGER PRIMARY KEY REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE IF NOT EXISTS logs (log TEXT, "
    "fk INTEGER PRIMARY KEY REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE INDEX IF NOT EXISTS features_fk ON features (fk)",
    "CREATE INDEX IF NOT EXISTS datasets_fk ON datasets (fk)",
    "CREATE INDEX IF NOT EXISTS pipeline_fk ON pipeline (fk)",
    "CREATE INDEX IF NOT EXISTS network_fk ON network (fk)",
    "CREATE INDEX IF NOT EXISTS postprocess_fk ON postprocess (fk)",
    "CREATE INDEX IF NOT EXISTS traces_fk ON traces (fk)",
)

# True: the default location (or FE_HISTORY_DB); False: off; a string: that file. Set by `record_history`.
_location: Union[bool, str] = True
_warned = False


def default_db_path() -> str:
    """FastEstimator's default database file, `~/fastestimator_data/history.db`."""
    return os.path.join(str(Path.home()), "fastestimator_data", "history.db")


def set_history_location(path: Union[bool, str]) -> None:
    """Where this process records runs: True for the default (`FE_HISTORY_DB` or `~/fastestimator_data/history.db`),
    False for nowhere, or a database file path. `fe.estimator.record_history` calls this.

    Raises:
        ValueError: If `path` is neither a bool nor a non-empty string.
    """
    global _location  # pylint: disable=global-statement
    if not isinstance(path, bool) and not (isinstance(path, (str, os.PathLike)) and str(path)):
        raise ValueError(f"record_history takes True, False or a database file path, got {path!r}")
    _location = path if isinstance(path, bool) else os.fspath(path)


def history_db_path() -> Optional[str]:
    """The database file the next run is recorded in, or None when recording is off."""
    if _location is False:
        return None
    if isinstance(_location, str):
        return _location
    env = os.environ.get(_ENV_VAR)
    if env is not None:
        return None if env.strip().lower() in _OFF else env
    return default_db_path()


def _resolve(db_path: Optional[str]) -> str:
    if db_path is not None:
        return db_path
    env = os.environ.get(_ENV_VAR)
    if env is not None and env.strip().lower() not in _OFF:
        return env
    return default_db_path()


def _now() -> str:
    return datetime.now().isoformat(sep=" ", timespec="microseconds")


@fe_export("fe.summary.history.connect", "fe.summary.connect")
def connect(db_path: Optional[str] = None, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) the history database, with its schema, foreign keys and WAL mode.

    Args:
        db_path: The database file; None for `FE_HISTORY_DB` or `~/fastestimator_data/history.db`. ':memory:' gives
            a private in-memory database.
        check_same_thread: Refuse use from other threads than the creating one (sqlite3's default).

    Returns:
        An open connection whose rows are `sqlite3.Row`s. Close it when done.

    Raises:
        sqlite3.DatabaseError: If the file is not a database, or was written by a newer schema version.
    """
    import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name  # (on use: ~2 ms to import)
    path = _resolve(db_path)
    if path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        if not os.path.exists(path):
            _publish_new_database(path)
    connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, check_same_thread=check_same_thread)
    _prepare(connection, path)
    return connection


def _publish_new_database(path: str) -> None:
    """Create the database file at `path` with its whole schema at once: it is built under a temporary name and then
    linked into place, so a reader never finds a database file without its tables (another process's recorder may be
    creating it at that moment). When several create it together, the first link wins and the others use it."""
    import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
    temporary = f"{path}.{os.getpid()}-{threading.get_ident()}.creating"
    try:
        connection = sqlite3.connect(temporary, timeout=_BUSY_TIMEOUT_S)
        try:
            _prepare(connection, temporary)
        finally:
            connection.close()  # checkpoints the WAL into the file: the file alone holds the schema
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process published it first
        except OSError:  # a file system without hard links
            if not os.path.exists(path):
                os.replace(temporary, path)
    finally:
        for leftover in (temporary, temporary + "-wal", temporary + "-shm", temporary + "-journal"):
            with contextlib.suppress(OSError):
                os.remove(leftover)


def _prepare(connection: sqlite3.Connection, path: str) -> None:
    """Set a new connection's row factory, foreign keys and WAL mode, and create or check the schema."""
    import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
    try:
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA foreign_keys = ON")
        if path != ":memory:":
            connection.execute("PRAGMA journal_mode = WAL")  # readers never block the writer, nor the reverse
            connection.execute("PRAGMA synchronous = NORMAL")  # durable at checkpoints; commits cost no fsync
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"History database {path!r} has schema version {version}, newer than this fe "
                                        f"understands ({SCHEMA_VERSION}); upgrade fe or use another FE_HISTORY_DB")
        if version < SCHEMA_VERSION:
            with connection:  # one transaction: concurrent first connections create the schema once
                connection.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    connection.execute(statement)
                connection.execute("INSERT OR IGNORE INTO settings (pk, schema_version, n_keep, n_keep_logs) "
                                   "VALUES (0, ?, ?, ?)", (SCHEMA_VERSION, _DEFAULT_KEEP, _DEFAULT_KEEP))
                connection.execute("UPDATE settings SET schema_version = ? WHERE pk = 0", (SCHEMA_VERSION,))
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        connection.close()
        raise


@contextlib.contextmanager
def _open(db_path: Optional[str]) -> Iterator[sqlite3.Connection]:
    connection = connect(db_path)
    try:
        yield connection
    finally:
        connection.close()


def _apply_limits(connection: sqlite3.Connection) -> None:
    """Delete the history rows beyond `settings.n_keep` and the logs beyond `settings.n_keep_logs` (oldest first).
    Runs inside the caller's transaction."""
    row = connection.execute("SELECT n_keep, n_keep_logs FROM settings WHERE pk = 0").fetchone()
    n_keep, n_keep_logs = (row[0], row[1]) if row else (_DEFAULT_KEEP, _DEFAULT_KEEP)
    connection.execute("DELETE FROM history WHERE pk NOT IN (SELECT pk FROM history ORDER BY train_start DESC, "
                       "rowid DESC LIMIT ?)", (max(int(n_keep), 0),))
    connection.execute("DELETE FROM logs WHERE fk NOT IN (SELECT pk FROM history ORDER BY train_start DESC, "
                       "rowid DESC LIMIT ?)", (max(int(n_keep_logs), 0),))


# Recorders keep one connection per (process, thread, database) open until the process exits: closing the last
# connection of a WAL database checkpoints and fsyncs it, which would cost every fit tens of milliseconds. The thread is
# the one that runs the recorder (its owner), although the connection is opened by the recorder's background thread.
_connections: Dict[Tuple[int, int, str], "sqlite3.Connection"] = {}
_shared_lock = threading.Lock()


def _shared_connection(db_path: Optional[str], owner: Optional[int] = None) -> sqlite3.Connection:
    path = os.path.abspath(_resolve(db_path)) if _resolve(db_path) != ":memory:" else ":memory:"
    key = (os.getpid(), threading.get_ident() if owner is None else owner, path)  # a forked child opens its own
    with _shared_lock:
        connection = _connections.get(key)
    if connection is not None and path != ":memory:" and not os.path.exists(path):  # the file was removed
        _drop_shared_connection(connection)
        connection = None
    if connection is None:
        connection = connect(path, check_same_thread=False)
        with _shared_lock:
            _connections[key] = connection
    return connection


def _drop_shared_connection(connection: sqlite3.Connection) -> None:
    import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
    with _shared_lock:
        for key in [key for key, value in _connections.items() if value is connection]:
            del _connections[key]
    with contextlib.suppress(sqlite3.Error):
        connection.close()


@atexit.register
def _close_shared_connections() -> None:
    with _shared_lock:
        connections = [connection for key, connection in _connections.items() if key[0] == os.getpid()]
        _connections.clear()
    if connections:
        import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
        for connection in connections:
            with contextlib.suppress(sqlite3.Error):
                connection.close()


@fe_export("fe.summary.history.delete", "fe.summary.delete")
def delete(n_keep: int = 20, db_path: Optional[str] = None) -> None:
    """Remove all but the `n_keep` most recent history entries (with their logs, errors, ops...), then compact the file.

    Args:
        n_keep: How many of the most recent entries to keep.
        db_path: The database file, or None for the default location.

    Raises:
        ValueError: If `n_keep` is negative.
    """
    if isinstance(n_keep, bool) or not isinstance(n_keep, int) or n_keep < 0:
        raise ValueError(f"delete: n_keep must be a non-negative integer, got {n_keep!r}")
    import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
    with _open(db_path) as connection:
        with connection:
            connection.execute("DELETE FROM history WHERE pk NOT IN (SELECT pk FROM history ORDER BY train_start "
                               "DESC, rowid DESC LIMIT ?)", (n_keep,))
        try:
            connection.execute("VACUUM")
        except sqlite3.OperationalError:  # another process holds the database: compact another time
            pass


@fe_export("fe.summary.history.update_settings", "fe.summary.update_settings")
def update_settings(n_keep: Optional[int] = None, n_keep_logs: Optional[int] = None,
                    db_path: Optional[str] = None) -> None:
    """Change how many history entries and logs the database keeps, and print the settings.

    The limits are enforced at the end of the next recorded run (or by `delete`). `n_keep_logs` never exceeds
    `n_keep`; negative values count as 0.

    Args:
        n_keep: How many history entries to retain (None: unchanged).
        n_keep_logs: How many logs to retain (None: unchanged).
        db_path: The database file, or None for the default location.
    """
    with _open(db_path) as connection:
        with connection:
            if n_keep is not None:
                keep = max(int(n_keep), 0)
                connection.execute("UPDATE settings SET n_keep = ?, n_keep_logs = MIN(n_keep_logs, ?) WHERE pk = 0",
                                   (keep, keep))
            if n_keep_logs is not None:
                connection.execute("UPDATE settings SET n_keep_logs = MIN(n_keep, ?) WHERE pk = 0",
                                   (max(int(n_keep_logs), 0),))
        row = connection.execute("SELECT n_keep, n_keep_logs FROM settings WHERE pk = 0").fetchone()
    print(f"History settings: n_keep = {row['n_keep']}, n_keep_logs = {row['n_keep_logs']}")


def _describe(item: Any) -> List[str]:
    """The class name(s) of an op / trace / dataset, and of every value of a Scheduler of them."""
    values = item.get_all_values() if hasattr(item, "get_all_values") else [item]
    return [type(value).__name__ for value in values if value is not None]


def _fe_version() -> str:
    for name in ("fe", "fe_core"):
        module = sys.modules.get(name)
        version = getattr(module, "__version__", None)
        if version is None and name == "fe_core":
            from fe_core.__about__ import __version__ as version  # pylint: disable=import-outside-toplevel
        if version is not None:
            return str(version)
    return "unknown"


@fe_export("fe.summary.history.HistoryRecorder", "fe.summary.HistoryRecorder")
class HistoryRecorder:
    """Record one `fit` or `test` in the history database; use it as a context manager around the run.

    On entry it starts writing the run's row (status 'Launched') with what it uses (datasets, pipeline and network
    ops, postprocessing ops, traces, features) from a background thread, so the run does not wait for the database
    (`fit` defers this until its first training step is done: `defer_row=True` and `start_row()`), and starts
    copying everything printed to `sys.stdout` into the run's log; on exit it waits for that write, then
    stores the log, the end time and the status ('Completed', 'Failed' with the traceback, or 'Aborted' for a
    KeyboardInterrupt), then trims the database to its limits. A `test` after a `fit` of the same estimator updates
    the same row. If the database cannot be used, the run goes on unrecorded (with one warning).

    Args:
        system: The run's System (its `exp_id` is the row's primary key).
        est_path: The file that created the Estimator (bookkeeping only; any string).
        db_path: The database file, or None for the default location.
        defer_row: Write the run's first row only when `start_row()` is called (or when the run ends).

    Example:
        >>> # with HistoryRecorder(estimator.system, "train.py", db_path="history.db"):  # doctest: +SKIP
        >>> #     ...  # the run
    """

    def __init__(self, system: Any, est_path: str, db_path: Optional[str] = None, defer_row: bool = False) -> None:
        self.system = system
        self.defer_row = defer_row
        self.filename = os.path.basename(str(est_path))
        self.db_path = db_path
        self.pk: Optional[int] = None
        self.stdout: Any = None
        self._db: Optional[sqlite3.Connection] = None
        self._chunks: List[str] = []
        self._active = False
        self._stored_at = time.monotonic()
        self._opening: Optional[threading.Thread] = None
        self._open_error: Optional[BaseException] = None
        self._rows_pending: Optional[Dict[str, Any]] = None
        self._owner = threading.get_ident()

    # ------------------------------------------------------------------ stdout tee
    def write(self, output: str) -> int:
        """Write `output` to the real stdout and to the run's log."""
        self._chunks.append(output)
        return self.stdout.write(output) if self.stdout is not None else len(output)

    def flush(self) -> None:
        """Flush the real stdout, and store the log written so far in the database (at most every
        `LOG_STORE_INTERVAL_S` seconds: progress bars flush on every redraw; the rest is stored when the run ends)."""
        if self.stdout is not None:
            self.stdout.flush()
        now = time.monotonic()
        if now - self._stored_at < LOG_STORE_INTERVAL_S:
            return
        self._stored_at = now
        self._wait_for_row()
        if self._db is not None and self._chunks:
            import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
            try:
                with self._db:
                    self._store_log()
            except sqlite3.Error as error:
                self._fail(error)

    def _store_log(self) -> None:
        """Append what was printed since the last store to the run's log (inside the caller's transaction)."""
        if self._chunks and self._db is not None:
            self._db.execute("UPDATE logs SET log = log || ? WHERE fk = ?", ("".join(self._chunks), self.pk))
            self._chunks = []

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... of the real stdout
        stdout = self.__dict__.get("stdout")
        if stdout is None:
            raise AttributeError(name)
        return getattr(stdout, name)

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "HistoryRecorder":
        self.pk = int(self.system.exp_id)
        self._rows_pending = self._rows()  # read here, before the run changes anything: the thread only writes them
        self._open_error = None
        self._owner = threading.get_ident()
        if not self.defer_row:
            self.start_row()
        self.stdout = sys.stdout
        sys.stdout = self
        self._active = True
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc_val: Optional[BaseException],
                 exc_tb: Any) -> None:
        if self._active:
            self._active = False
            if sys.stdout is self:
                sys.stdout = self.stdout
        self._wait_for_row()
        if self._db is None:
            self.stdout = None
            return
        import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
        import traceback  # pylint: disable=import-outside-toplevel
        db = self._db
        try:
            status = "Completed" if exc_type is None else "Aborted" if issubclass(
                exc_type, KeyboardInterrupt) else "Failed"
            # A test keeps the end time of the training it follows, if there was one.
            end = "?" if self.system.mode in ("train", "eval") else "IFNULL(train_end, ?)"
            with db:  # one transaction: log, status, error, limits
                self._check_for_restart()
                self._store_log()
                db.execute(f"UPDATE history SET train_end = {end}, status = ? WHERE pk = ?", (_now(), status, self.pk))
                if exc_type is not None:
                    trace = "".join(traceback.format_exception(exc_type, exc_val, exc_tb))
                    db.execute("INSERT OR REPLACE INTO errors (exc_type, exc_tb, fk) VALUES (?, ?, ?)",
                               (exc_type.__name__, trace, self.pk))
                _apply_limits(db)
        except sqlite3.Error as error:
            self._fail(error)
        self._db = None
        self.stdout = None

    def start_row(self) -> None:
        """Start writing the run's first rows in a background thread (once; later calls do nothing)."""
        rows, self._rows_pending = self._rows_pending, None
        if rows is None:
            return
        self._opening = threading.Thread(target=self._open_and_insert, args=(self._owner, rows), name="fe-history",
                                         daemon=False)  # the interpreter's exit waits for it
        self._opening.start()

    def _wait_for_row(self) -> None:
        """Write the run's first rows if nobody started that yet, and join the thread writing them; warn (once)
        here if it could not."""
        rows, self._rows_pending = self._rows_pending, None
        if rows is not None:
            self._open_and_insert(self._owner, rows)
        opening, self._opening = self._opening, None
        if opening is not None:
            opening.join()
        if self._open_error is not None:
            error, self._open_error = self._open_error, None
            self._fail(error)

    def _open_and_insert(self, owner: int, rows: Dict[str, Any]) -> None:
        """Open (or reuse) the owner thread's connection and write the run's first rows (in the background thread, or
        in the owner's at the run's end when nothing started it)."""
        connection = None
        try:
            connection = _shared_connection(self.db_path, owner)
            self._insert_run(connection, rows)
            self._db = connection
        except Exception as error:  # pylint: disable=broad-except  # recorded runs never fail because of the database
            self._open_error = error
            if connection is not None:
                _drop_shared_connection(connection)

    def _fail(self, error: BaseException) -> None:
        """Stop recording (the run goes on) and warn once per process."""
        global _warned  # pylint: disable=global-statement
        if self._db is not None:
            import sqlite3  # pylint: disable=import-outside-toplevel,redefined-outer-name
            with contextlib.suppress(sqlite3.Error):
                self._db.rollback()
            _drop_shared_connection(self._db)
            self._db = None
        if not _warned:
            _warned = True
            where = _resolve(self.db_path)
            warnings.warn(f"fe could not record this run in the history database {where!r} ({error}); training goes "
                          f"on without it. Set FE_HISTORY_DB to another file, or record_history(False) to stop "
                          f"recording.", RuntimeWarning, stacklevel=4)

    # ------------------------------------------------------------------ rows
    def _rows(self) -> Dict[str, Any]:
        """What the run's first rows hold, read from the system (cheap: names and a few numbers)."""
        system = self.system
        pipeline = system.pipeline
        datasets = []
        for mode, per_ds in sorted(getattr(pipeline, "data", {}).items()):
            for ds_id, dataset in sorted(per_ds.items()) if isinstance(per_ds, dict) else [("", per_ds)]:
                for name in _describe(dataset):
                    datasets.append((mode if not ds_id else f"{mode}:{ds_id}", name))
        network = system.network
        components = {table: (column, [name for item in items for name in _describe(item)])
                      for table, column, items in (("pipeline", "pipe_op", getattr(pipeline, "ops", [])),
                                                   ("network", "net_op", getattr(network, "ops", [])),
                                                   ("postprocess", "pp_op", getattr(network, "postprocessing", [])),
                                                   ("traces", "trace", system.traces))}
        return {"history": (self.filename, self._experiment(), json.dumps(sys.argv[1:]), _fe_version(), _now(),
                            int(getattr(system, "num_devices", 0) or 0), os.cpu_count(),
                            getattr(pipeline, "num_process", None)),
                "features": self._features(), "datasets": datasets, "components": components}

    def _experiment(self) -> str:
        """The experiment column: the Summary's name (`fit(summary=...)`), else the script's name; a run of `test`
        alone (not after this estimator's `fit`, e.g. `fe test`) is marked `(test)`."""
        name = self.system.summary.name or os.path.splitext(self.filename)[0]
        return f"{name} (test)" if self.system.mode == "test" else name

    def _insert_run(self, db: sqlite3.Connection, rows: Dict[str, Any]) -> None:
        with db:
            if db.execute("SELECT 1 FROM history WHERE pk = ?", (self.pk,)).fetchone() is not None:
                return  # a test after this estimator's fit: same experiment, same row
            _mark_killed_runs(db)  # runs of this machine whose process is gone without saying how it ended
            db.execute("INSERT INTO history (pk, file, experiment, status, args, fe_version, train_start, n_gpus, "
                       "n_cpus, n_workers, n_restarts) VALUES (?, ?, ?, 'Launched', ?, ?, ?, ?, ?, ?, 0)",
                       (self.pk, *rows["history"]))
            db.executemany("INSERT INTO features (feature, fk) VALUES (?, ?)",
                           [(feature, self.pk) for feature in rows["features"]])
            db.executemany("INSERT INTO datasets (mode, dataset, fk) VALUES (?, ?, ?)",
                           [(mode, name, self.pk) for mode, name in rows["datasets"]])
            for table, (column, names) in rows["components"].items():
                db.executemany(f"INSERT INTO {table} ({column}, fk) VALUES (?, ?)", [(name, self.pk) for name in names])
            db.execute("INSERT OR IGNORE INTO logs (log, fk) VALUES ('', ?)", (self.pk,))
            db.execute("INSERT OR REPLACE INTO processes (host, pid, started, fk) VALUES (?, ?, ?, ?)",
                       (_HOST, os.getpid(), _process_start(os.getpid()), self.pk))

    def _features(self) -> List[str]:
        from fe_core.determinism import deterministic_seed  # pylint: disable=import-outside-toplevel
        network = self.system.network
        features = []
        if deterministic_seed() is not None:
            features.append("Deterministic")
        if getattr(network, "mixed_precision", False):
            features.append("MixedPrecision")
        if getattr(network, "slicers", None):
            features.append("Slicers")
        target = getattr(network, "target_type", None)
        if target:
            features.append(f"Backend:{target}")
        search_trial = os.environ.get("FE_SEARCH_TRIAL")  # set by fe_core.search.trial while a trial runs
        if search_trial:
            features.append(f"SearchTrial:{search_trial}")  # "<search name>:<search_idx>"
        return features

    def _check_for_restart(self) -> None:
        """A RestoreWizard restored an earlier experiment (its exp_id): continue that row instead of a new one (inside
        the caller's transaction)."""
        db = self._db
        assert db is not None
        restored = int(self.system.exp_id)
        if restored == self.pk:
            return
        if db.execute("SELECT 1 FROM history WHERE pk = ?", (restored,)).fetchone() is not None:
            self._store_log()
            old_log = db.execute("SELECT log FROM logs WHERE fk = ?", (self.pk,)).fetchone()
            db.execute("DELETE FROM history WHERE pk = ?", (self.pk,))
            if old_log is not None and old_log[0]:
                db.execute("INSERT OR IGNORE INTO logs (log, fk) VALUES ('', ?)", (restored,))
                db.execute("UPDATE logs SET log = log || ? WHERE fk = ?", (old_log[0], restored))
        else:
            db.execute("UPDATE history SET pk = ? WHERE pk = ?", (restored, self.pk))
        db.execute("UPDATE history SET n_restarts = n_restarts + 1 WHERE pk = ?", (restored,))
        self.pk = restored


# Which process runs a 'Launched' row, so that a later run (or `fe history`) can mark it 'Killed' once that process is
# gone without recording how it ended (kill -9, out of memory, a lost machine). A table of its own, created when first
# needed, so a database of an earlier fe keeps its schema version and an earlier fe still reads it.
_PROCESSES = ("CREATE TABLE IF NOT EXISTS processes (host TEXT, pid INTEGER, started TEXT, "
              "fk INTEGER PRIMARY KEY REFERENCES history(pk) ON DELETE CASCADE ON UPDATE CASCADE)")
_HOST = socket.gethostname()


def _process_start(pid: int) -> Optional[str]:
    """When process `pid` started (Linux: its start time in clock ticks), to tell it from a later process that got
    the same pid; None where it cannot be known."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[19]
    except (OSError, IndexError):
        return None


def _mark_killed_runs(db: sqlite3.Connection) -> int:
    """Mark 'Killed' the 'Launched' runs of this machine whose process is gone (inside the caller's transaction).

    Returns:
        How many runs were marked.
    """
    from fe_core.distributed.failure import pid_alive  # pylint: disable=import-outside-toplevel
    db.execute(_PROCESSES)
    rows = db.execute("SELECT h.pk, p.pid, p.started FROM history h JOIN processes p ON p.fk = h.pk "
                      "WHERE h.status = 'Launched' AND p.host = ?", (_HOST,)).fetchall()
    killed = [pk for pk, pid, started in rows
              if not pid_alive(int(pid)) or (started is not None and _process_start(int(pid)) not in (None, started))]
    db.executemany("UPDATE history SET status = 'Killed' WHERE pk = ?", [(pk,) for pk in killed])
    return len(killed)


def mark_killed_runs(db_path: Optional[str] = None) -> int:
    """Mark 'Killed' every run of this machine still 'Launched' whose process is gone (kill -9, out of memory): such
    a run never recorded how it ended. Every new run does this when it starts; `fe history` too.

    Args:
        db_path: The database file, or None for the default location.

    Returns:
        How many runs were marked (0 when there is no database).
    """
    if not os.path.exists(_resolve(db_path)):
        return 0
    with _open(db_path) as connection:
        with connection:
            return _mark_killed_runs(connection)


def history_context(system: Any, est_path: str, defer_row: bool = False) -> contextlib.AbstractContextManager:
    """A `HistoryRecorder` for the configured database, or a no-op context (entered as None) when recording is off or
    this process is not rank 0 of a distributed run."""
    path = history_db_path()
    if path is None or not _is_main_process():
        return contextlib.nullcontext()
    return HistoryRecorder(system, est_path, db_path=path, defer_row=defer_row)


def _is_main_process() -> bool:
    """Only rank 0 of a distributed run records it (one row per run, not one per process)."""
    try:
        from fe_core.distributed.communicator import is_main_process  # pylint: disable=import-outside-toplevel
    except ImportError:
        return True
    return is_main_process()
