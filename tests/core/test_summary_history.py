"""The run-history database: what fit/test record, the settings and limits, reading it back, concurrency."""
from __future__ import annotations

import os
import sqlite3
import threading

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator, record_history
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.summary import history
from fe_core.summary.history import HistoryRecorder, connect, delete, update_settings
from fe_core.summary.history_reader import HistoryReader
from fe_core.trace import Trace


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    path = str(tmp_path / "fe_history" / "history.db")
    monkeypatch.setenv("FE_HISTORY_DB", path)
    monkeypatch.setattr(history, "_location", True)
    return path


def make_estimator(epochs: int = 1, traces=None, test: bool = False) -> Estimator:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 2)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": x[:, :1] * 2})
    pipeline = Pipeline(train_data=data, eval_data=data, test_data=data if test else None, batch_size=8)
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    return Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=1)


def rows(db_path: str, query: str, args=()):
    with sqlite3.connect(db_path) as connection:
        return connection.execute(query, args).fetchall()


def test_connect_creates_the_schema_in_wal_mode_with_a_version(db_path):
    connection = connect()
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"history", "features", "datasets", "pipeline", "network", "postprocess", "traces", "errors", "logs",
                "settings"} <= tables
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert tuple(connection.execute("SELECT schema_version, n_keep, n_keep_logs FROM settings").fetchone()) == (
            history.SCHEMA_VERSION, 500, 500)
    finally:
        connection.close()


def test_a_newer_schema_is_refused(db_path):
    connect().close()
    with sqlite3.connect(db_path) as connection:
        connection.execute(f"PRAGMA user_version = {history.SCHEMA_VERSION + 1}")
    with pytest.raises(sqlite3.DatabaseError, match="newer than this fe"):
        connect()


def test_fit_then_test_record_one_completed_run_with_its_log_and_components(db_path, capsys):
    estimator = make_estimator(test=True)
    estimator.fit("my_run")
    estimator.test()
    printed = capsys.readouterr().out
    assert "FastEstimator-Train" in printed  # the log still reaches the console
    (run,) = rows(db_path, "SELECT pk, experiment, status, file, train_start, train_end, n_restarts FROM history")
    assert run[0] == estimator.system.exp_id
    assert run[1:3] == ("my_run", "Completed") and run[3] == "test_summary_history.py"
    assert run[4] <= run[5] and run[6] == 0
    (log,) = rows(db_path, "SELECT log FROM logs WHERE fk = ?", (run[0],))
    assert "FastEstimator-Train: step: 1;" in log[0] and "FastEstimator-Test" in log[0]
    assert rows(db_path, "SELECT net_op FROM network ORDER BY rowid") == [("ModelOp",), ("MeanSquaredError",),
                                                                          ("UpdateOp",)]
    assert sorted(rows(db_path, "SELECT mode, dataset FROM datasets")) == [("eval", "NumpyDataset"),
                                                                           ("test", "NumpyDataset"),
                                                                           ("train", "NumpyDataset")]
    assert ("Backend:numpy",) in rows(db_path, "SELECT feature FROM features")


class Boom(Trace):
    def on_epoch_end(self, data):
        raise RuntimeError("exploded on purpose")


def test_a_failed_run_records_the_error_type_and_traceback(db_path):
    estimator = make_estimator(traces=[Boom(mode="train")])
    with pytest.raises(RuntimeError, match="exploded on purpose"):
        estimator.fit()
    (run,) = rows(db_path, "SELECT pk, status FROM history")
    assert run[1] == "Failed"
    (error,) = rows(db_path, "SELECT exc_type, exc_tb FROM errors WHERE fk = ?", (run[0],))
    assert error[0] == "RuntimeError" and "exploded on purpose" in error[1]
    assert rows(db_path, "SELECT trace FROM traces") == [("Boom",)]


def test_recording_can_be_turned_off_or_moved(db_path, tmp_path, capsys):
    record_history(False)
    try:
        make_estimator().fit()
    finally:
        record_history(True)
    assert not os.path.exists(db_path)  # nothing was recorded, not even an empty database
    other = str(tmp_path / "elsewhere.db")
    record_history(other)
    try:
        make_estimator().fit()
    finally:
        record_history(True)
    assert rows(other, "SELECT COUNT(*) FROM history") == [(1,)]
    with pytest.raises(ValueError, match="record_history"):
        record_history(3)


def test_env_var_off_disables_recording(tmp_path, monkeypatch):
    monkeypatch.setenv("FE_HISTORY_DB", "off")
    assert history.history_db_path() is None


def test_limits_delete_and_settings(db_path, capsys):
    for _ in range(4):
        make_estimator().fit()
    update_settings(n_keep=3, n_keep_logs=5)
    assert "n_keep = 3, n_keep_logs = 3" in capsys.readouterr().out  # logs never exceed entries
    make_estimator().fit()  # limits apply at the end of a run
    assert rows(db_path, "SELECT COUNT(*) FROM history") == [(3,)]
    update_settings(n_keep_logs=1)
    make_estimator().fit()
    assert rows(db_path, "SELECT COUNT(*) FROM logs") == [(1,)]
    newest = rows(db_path, "SELECT pk FROM history ORDER BY train_start DESC LIMIT 1")[0][0]
    delete(n_keep=1)
    assert rows(db_path, "SELECT pk FROM history") == [(newest,)]
    assert rows(db_path, "SELECT COUNT(*) FROM network WHERE fk != ?", (newest,)) == [(0,)]  # cascaded
    with pytest.raises(ValueError, match="n_keep"):
        delete(n_keep=-1)


def test_reader_prints_tables_csv_and_errors(db_path, capsys):
    make_estimator().fit("good")
    with pytest.raises(RuntimeError):
        make_estimator(traces=[Boom(mode="train")]).fit("bad")
    capsys.readouterr()
    with HistoryReader() as reader:
        reader.read_basic(limit=5, include_traces=True, include_pk=True)
        table = capsys.readouterr().out
        assert "| pk " in table and "good" in table and "bad" in table and "Boom" in table
        reader.read_basic(errors=True, as_csv=True)
        csv_text = capsys.readouterr().out.splitlines()
        assert csv_text[0].split(",")[:2] == ["experiment", "status"] and csv_text[0].endswith(",error")
        assert len(csv_text) == 2 and csv_text[1].startswith("bad,Failed,") and csv_text[1].endswith("RuntimeError")
        reader.read_sql("SELECT experiment FROM history WHERE status = ?", args=["Completed"])
        assert "good" in capsys.readouterr().out


def test_reader_interactive_shows_a_runs_log(db_path, capsys):
    make_estimator().fit("shown")
    capsys.readouterr()
    answers = iter(["9", "1", "exit"])
    with HistoryReader() as reader:
        reader.input = lambda prompt: next(answers)
        reader.read_basic(interactive=True)
    out = capsys.readouterr().out
    assert "Please enter a number from 1 to 1" in out and "FastEstimator-Train: step: 1;" in out


def test_reader_needs_a_context():
    with pytest.raises(RuntimeError, match="context manager"):
        HistoryReader().read_sql("SELECT 1")


def test_concurrent_writers_all_land(db_path):
    connect().close()
    errors = []

    class FakeSystem:
        def __init__(self, exp_id):
            self.exp_id, self.mode, self.num_devices, self.traces = exp_id, "train", 0, []
            self.summary = type("S", (), {"name": f"run{exp_id}"})()
            self.pipeline = self.network = None

    def run(exp_id):
        try:
            with HistoryRecorder(FakeSystem(exp_id), "script.py", db_path=db_path):
                pass
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert rows(db_path, "SELECT COUNT(*) FROM history WHERE status = 'Completed'") == [(6,)]


def test_an_unusable_database_warns_and_training_goes_on(tmp_path, monkeypatch):
    bad = tmp_path / "not_a_db.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    monkeypatch.setenv("FE_HISTORY_DB", str(bad))
    monkeypatch.setattr(history, "_location", True)
    monkeypatch.setattr(history, "_warned", False)
    with pytest.warns(RuntimeWarning, match="could not record this run"):
        make_estimator().fit()


class Restore(Trace):
    """Acts like a RestoreWizard that restored the experiment `exp_id`."""

    def __init__(self, exp_id):
        super().__init__()
        self.exp_id = exp_id

    def on_begin(self, data):
        self.system.exp_id = self.exp_id


def test_a_restored_run_continues_the_earlier_row(db_path):
    first = make_estimator()
    first.fit("interrupted")
    first_pk = first.system.exp_id
    resumed = make_estimator(traces=[Restore(first_pk)])
    resumed.fit("interrupted")
    assert rows(db_path, "SELECT pk, n_restarts, status FROM history") == [(first_pk, 1, "Completed")]
    (log,) = rows(db_path, "SELECT log FROM logs WHERE fk = ?", (first_pk,))
    assert log[0].count("FastEstimator-Start") == 2  # both runs' output, in order
    gone = make_estimator(traces=[Restore(12345)])  # the earlier row was trimmed away: this row takes its id
    gone.fit()
    assert rows(db_path, "SELECT n_restarts FROM history WHERE pk = 12345") == [(1,)]


def test_only_the_main_process_of_a_distributed_run_records(db_path, monkeypatch):
    monkeypatch.setattr(history, "_is_main_process", lambda: False)
    make_estimator().fit()
    assert not os.path.exists(db_path)


def test_flush_stores_the_log_so_far_at_most_every_interval(db_path, monkeypatch):
    class FakeSystem:
        exp_id, mode, num_devices, traces, pipeline, network = 99, "train", 0, [], None, None
        summary = type("S", (), {"name": "live"})()

    monkeypatch.setattr(history, "LOG_STORE_INTERVAL_S", 0.0)
    with HistoryRecorder(FakeSystem(), "x.py", db_path=db_path) as recorder:
        print("first line")
        recorder.flush()
        assert rows(db_path, "SELECT log FROM logs WHERE fk = 99") == [("first line\n",)]  # visible mid-run
        monkeypatch.setattr(history, "LOG_STORE_INTERVAL_S", 3600.0)
        print("second line")
        recorder.flush()
        assert rows(db_path, "SELECT log FROM logs WHERE fk = 99") == [("first line\n",)]  # not yet
    assert rows(db_path, "SELECT log FROM logs WHERE fk = 99") == [("first line\nsecond line\n",)]


class RowProbe(Trace):
    """Looks up the run's row at the first training step's end, and waits for it at the first epoch's end."""

    def __init__(self, db_path: str) -> None:
        super().__init__(mode="train")
        self.db_path = db_path
        self.at_first_step = self.during_run = None

    def on_batch_end(self, data):
        if self.at_first_step is None:
            self.at_first_step = rows(self.db_path, "SELECT status FROM history WHERE pk = ?", (self.system.exp_id,)) \
                if os.path.exists(self.db_path) else []

    def on_epoch_end(self, data):
        import time
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = rows(self.db_path, "SELECT status FROM history WHERE pk = ?", (self.system.exp_id,)) \
                if os.path.exists(self.db_path) else []
            if found:
                self.during_run = found
                return
            time.sleep(0.01)


def test_fit_writes_its_row_after_the_first_training_step_while_it_runs(db_path):
    """The first row costs the path to the first step nothing (written once that step is done, off the main thread),
    and it is there, 'Launched', while the run goes on."""
    probe = RowProbe(db_path)
    estimator = make_estimator(epochs=2, traces=[probe])
    estimator.fit()
    assert probe.at_first_step == []
    assert probe.during_run == [("Launched",)]
    assert rows(db_path, "SELECT status FROM history WHERE pk = ?", (estimator.system.exp_id,)) == [("Completed",)]


class FailsInWarmup(Trace):
    def __init__(self):
        super().__init__(inputs="no_such_key")


def test_a_run_that_fails_before_its_first_step_is_recorded(db_path):
    estimator = make_estimator(traces=[FailsInWarmup()])
    with pytest.raises(KeyError):
        estimator.fit()
    assert rows(db_path, "SELECT status FROM history WHERE pk = ?", (estimator.system.exp_id,)) == [("Failed",)]
    (error,) = rows(db_path, "SELECT exc_type FROM errors WHERE fk = ?", (estimator.system.exp_id,))
    assert error == ("KeyError",)


def test_a_recorder_used_directly_writes_its_row_on_entry(db_path):
    class FakeSystem:
        exp_id, mode, num_devices, traces, pipeline, network = 7, "train", 0, [], None, None
        summary = type("S", (), {"name": "direct"})()

    with HistoryRecorder(FakeSystem(), "x.py", db_path=db_path):
        import time
        deadline = time.monotonic() + 10
        while not (os.path.exists(db_path) and rows(db_path, "SELECT status FROM history WHERE pk = 7")):
            assert time.monotonic() < deadline, "the row was never written"
            time.sleep(0.01)
        assert rows(db_path, "SELECT status, experiment FROM history WHERE pk = 7") == [("Launched", "direct")]
    assert rows(db_path, "SELECT status FROM history WHERE pk = 7") == [("Completed",)]


def test_fit_with_recording_off_does_not_import_sqlite(tmp_path):
    """sqlite3 (about 2 ms to import) is loaded by the recorder only, never on the way to training."""
    import subprocess
    import sys
    script = (
        "import sys\n"
        "sys.path.insert(0, %r)\n"
        "import numpy as np, numpy_backend as nb\n"
        "nb.install()\n"
        "from fe_core.dataset import NumpyDataset\n"
        "from fe_core.estimator import Estimator\n"
        "from fe_core.network import make_network\n"
        "from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp\n"
        "from fe_core.pipeline import Pipeline\n"
        "x = np.ones((8, 2), dtype=np.float32)\n"
        "model = nb.build(2, 1)\n"
        "Estimator(Pipeline(train_data=NumpyDataset({'x': x, 'y': x[:, :1]}), batch_size=4),\n"
        "          make_network([ModelOp(model=model, inputs='x', outputs='p'),\n"
        "                        MeanSquaredError(inputs=('p', 'y'), outputs='mse'),\n"
        "                        UpdateOp(model=model, loss_name='mse')]), epochs=1, log_steps=None).fit()\n"
        "print('sqlite3' in sys.modules)\n") % os.path.dirname(nb.__file__)
    env = dict(os.environ, FE_HISTORY_DB="off")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                            check=False, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"
