"""`MLflowLogger`: the run's logged values, hyperparameters, summary and best models, tracked in MLflow."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import time
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.determinism import deterministic_seed
from fe_core.distributed.communicator import is_main_process
from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.summary.run_arguments import run_arguments
from fe_core.summary.summary import ValWithError
from fe_core.trace.trace import Trace

__all__ = ["MLflowLogger", "UNSENT_DIR"]

#: Where metrics that could not be sent by the end of a run are kept (a JSON file per run, relative to the working
#: directory); `MLflowLogger.send_unsent(path)` sends one later.
UNSENT_DIR = "fe_mlflow_unsent"

_INVALID = re.compile(r"[^\w./\- :]+")  # MLflow accepts letters, digits, '_', '-', '.', ' ', ':' and '/' in names
_BATCH = 1000  # MLflow's limit of metrics per log_batch request
# While training, a tracking server that does not answer must not hold a step for minutes: MLflow's default is 7
# retries with exponential backoff and a 120 s timeout. These apply to MLflowLogger's own requests unless the user
# set the variables.
_HTTP_ENV = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "0",
             "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def metric_name(mode: str, key: str) -> str:
    """The MLflow name of a logged key: `<mode>/<key>`, `key|ds_id` as `key/ds_id`, other characters MLflow refuses
    as '_' ('epoch_time(sec)' -> 'train/epoch_time_sec').

    Example:
        >>> metric_name("eval", "accuracy|ds1"), metric_name("train", "epoch_time(sec)")
        ('eval/accuracy/ds1', 'train/epoch_time_sec')
    """
    clean = _INVALID.sub("_", str(key).replace("|", "/")).strip("_") or "value"
    return f"{mode}/{clean}"


def _scalar(value: Any) -> Optional[float]:
    """A logged value as a float, or None when it is not one number (arrays, strings)."""
    if isinstance(value, ValWithError):
        value = value.y
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.number)):
        return float(value)
    try:
        array = np.asarray(value)
    except Exception:  # pylint: disable=broad-except  (a tensor or object numpy cannot read: not a number)
        return None
    if array.size != 1 or array.dtype.kind not in "biuf":
        return None
    return float(array.reshape(-1)[0])


def _json_value(value: Any) -> Any:
    """A logged value as JSON: a number or nested lists of numbers, a `ValWithError` as its list, else its text."""
    if isinstance(value, ValWithError):
        return list(value)
    if _scalar(value) is not None or isinstance(value, np.ndarray):
        return np.asarray(value).tolist()
    return str(value)


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 500 else text[:497] + "..."


@contextlib.contextmanager
def _short_http_waits(timeout: int = 10) -> Iterator[None]:
    added = [name for name in _HTTP_ENV if name not in os.environ]
    for name in added:
        os.environ[name] = str(timeout) if name == "MLFLOW_HTTP_REQUEST_TIMEOUT" else _HTTP_ENV[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def is_local_directory(tracking_uri: Optional[str]) -> bool:
    """Whether `tracking_uri` names a local directory store (`./mlruns`, `/abs/path`, `file:///...`), which MLflow 3
    refuses unless MLFLOW_ALLOW_FILE_STORE is set.

    Example:
        >>> is_local_directory("./mlfs"), is_local_directory("file:///tmp/mlruns"), is_local_directory("sqlite:///m.db")
        (True, True, False)
    """
    if tracking_uri is None:
        return False
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", tracking_uri)
    return scheme is None or scheme.group(1).lower() == "file" or len(scheme.group(1)) == 1  # C:\runs on Windows


@contextlib.contextmanager
def _file_store_allowed(tracking_uri: Optional[str]) -> Iterator[None]:
    """A local directory given as `tracking_uri` is used as MLflow's file store (what the user asked for), while
    the client is made; MLflow 3 otherwise refuses it ("filesystem tracking backend ... maintenance mode")."""
    added = is_local_directory(tracking_uri) and "MLFLOW_ALLOW_FILE_STORE" not in os.environ
    if added:
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        if added:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)


@contextlib.contextmanager
def _quiet_store_setup() -> Iterator[None]:
    """MLflow's INFO lines when it creates a SQLite store's tables ("Creating initial MLflow database tables...")
    are not the user's business: they are hidden while fe opens the store (warnings and errors still show)."""
    loggers = [logging.getLogger(name) for name in ("mlflow.store.db.utils", "alembic", "alembic.runtime.migration")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        if logger.getEffectiveLevel() < logging.WARNING:
            logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@fe_export("fe.trace.io.mlflow_logger.MLflowLogger", "fe.trace.io.MLflowLogger")
class MLflowLogger(Trace):
    """Track the run in MLflow: every logged value, the hyperparameters, the final summary and (optionally) models.

    What is logged (only by rank 0 of a data-parallel run):
        * metrics: every number the Logger's lines carry, named `<mode>/<key>` (`train/ce`, `train/steps/sec`,
          `eval/accuracy`, `eval/accuracy/ds1` for `accuracy|ds1`; characters MLflow refuses become '_', so
          `epoch_time(sec)` is `train/epoch_time_sec`), at the global step: training values at every log step,
          evaluation and test values at every epoch end, the `epoch`, and the Finish line's values (`total_time`,
          learning rates) at the end. Arrays of more than one number (a confusion matrix) are not metrics and are
          left out (they are in the `fe_summary.json` artifact).
        * parameters (with `log_params`): the arguments `fe train` passed to `get_estimator` (`arg.<name>`), the
          Estimator's and Pipeline's settings (`epochs`, `batch_size`, `log_steps`, steps per epoch, `num_process`,
          the data sets' sizes), the models (name, optimizer, mixed precision), the traces, the deterministic seed,
          and the entries of `log_params` when it is a dict.
        * artifacts: `fe_summary.json` (the whole history) at the end of `fit()` and `test()`; with `log_models`,
          the files of every `BestModelSaver` and `ModelExporter` of the run, under `models/`.

    The MLflow run is opened when training starts and set FINISHED at its end (FAILED when the run fails or is
    interrupted); `test()` after `fit()` logs into the same run. The run id is part of the checkpointed state, so a
    run resumed by `RestoreWizard` logs into the same MLflow run (steps already there are not logged twice).

    If the tracking store cannot be reached (a server that went away, a full disk), one warning is printed and
    training goes on: values are kept in memory (and in checkpoints) and sent again at every epoch end and at the
    end of the run; what still cannot be sent by then is written to `fe_mlflow_unsent/<run_id>.json`, which
    `MLflowLogger.send_unsent(path)` sends later. Requests made while training retry once with a 10 s timeout
    (60 s when the run is opened), unless MLFLOW_HTTP_REQUEST_* environment variables say otherwise.

    Cost: the values are batched into one `log_batch` request per log step and per epoch end; other steps do nothing.

    Args:
        tracking_uri: Where to log: a directory / `file:` URI (MLflow's local file store, which fe opens although
            MLflow 3 would ask for MLFLOW_ALLOW_FILE_STORE=true; `sqlite:///mlflow.db` is MLflow's recommended local
            store), `sqlite:///path.db`, or
            `http://host:port` of an MLflow tracking server. None: MLflow's default (MLFLOW_TRACKING_URI, else its
            local default).
        experiment_name: The MLflow experiment (created if missing).
        run_name: The run's name (None: MLflow picks one).
        log_params: Whether to log the hyperparameters; a dict is logged as well (its keys as given).
        log_models: Whether to upload the best / exported model files as artifacts at the end.
        mode: What mode(s) to execute this Trace in (None: all).

    Raises:
        ImportError: At the start of a run, if mlflow is not installed (fe-core's `mlflow` extra).

    Example:
        >>> # Estimator(..., traces=[Accuracy("y", "y_pred"), MLflowLogger("sqlite:///mlflow.db", run_name="lenet")])
    """

    fe_log_steps_only = True  # in training, on_batch_end acts only on log steps

    def __init__(self,
                 tracking_uri: Optional[str] = None,
                 experiment_name: str = "fe",
                 run_name: Optional[str] = None,
                 log_params: Union[bool, Mapping[str, Any]] = True,
                 log_models: bool = False,
                 mode: Union[None, str, Iterable[str]] = None) -> None:
        if tracking_uri is not None and not isinstance(tracking_uri, (str, os.PathLike)):
            raise ValueError(f"MLflowLogger tracking_uri must be a URI or a path, got {tracking_uri!r}")
        if not isinstance(experiment_name, str) or not experiment_name:
            raise ValueError(f"MLflowLogger experiment_name must be a non-empty string, got {experiment_name!r}")
        if run_name is not None and not isinstance(run_name, str):
            raise ValueError(f"MLflowLogger run_name must be a string or None, got {run_name!r}")
        if not isinstance(log_params, (bool, Mapping)):
            raise ValueError(f"MLflowLogger log_params must be a bool or a dict, got {log_params!r}")
        super().__init__(inputs="*", mode=mode)
        self.tracking_uri = None if tracking_uri is None else os.fspath(tracking_uri)
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.log_params = log_params
        self.log_models = bool(log_models)
        self.run_id = ""  # the MLflow run; checkpointed, so a resumed run logs into the same one
        self.pending: List[List[Any]] = []  # [name, value, timestamp ms, step] not sent yet
        self._client: Any = None
        self._active = False  # this process logs (rank 0, run opened)
        self._offline = False  # the store failed; waiting for the next retry point
        self._warned = False
        self._floor: Dict[str, int] = {}  # resumed run: the last step already in MLflow, per metric
        # Every value collected, {mode: {key: {step: JSON value}}}: the `fe_summary.json` artifact of a run whose
        # Summary records nothing (an unnamed run: `fit()`, `fe train` without --summary).
        self.record: Dict[str, Dict[str, Dict[str, Any]]] = {}

    # ------------------------------------------------------------------ checkpoint state
    def get_state(self) -> Dict[str, Any]:
        return {"run_id": self.run_id, "pending": [list(item) for item in self.pending],
                "record": json.dumps(self.record, default=str)}

    def set_state(self, state: Dict[str, Any]) -> None:
        run_id = state.get("run_id", "")
        self.run_id = run_id if isinstance(run_id, str) and re.fullmatch(r"[0-9A-Za-z_-]*", run_id) else ""
        self.pending = [[str(name), float(value), int(stamp), int(step)]
                        for name, value, stamp, step in state.get("pending", [])]
        try:
            record = json.loads(state.get("record", "{}"))
        except (TypeError, ValueError):
            record = {}
        self.record = record if isinstance(record, dict) else {}

    # ------------------------------------------------------------------ MLflow access
    def _mlflow_client(self) -> Any:
        if self._client is None:
            tracking = import_optional("mlflow.tracking", extra="mlflow", feature="MLflowLogger")
            with _quiet_store_setup(), _file_store_allowed(self.tracking_uri):
                self._client = tracking.MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    def _fail(self, what: str, error: BaseException) -> None:
        self._offline = True
        if not self._warned:
            self._warned = True
            where = self.tracking_uri or "the default tracking URI"
            warnings.warn(f"MLflowLogger: could not {what} at {where} ({type(error).__name__}: "
                          f"{str(error).splitlines()[0] if str(error) else ''}); training continues, values are kept "
                          f"and sent again at each epoch end and at the end of the run", RuntimeWarning, stacklevel=2)

    def _open_run(self) -> None:
        client = self._mlflow_client()
        system = self.system
        fresh_fit = system.mode == "train" and not system.global_step
        if fresh_fit:
            self.run_id, self.pending, self._floor, self.record = "", [], {}, {}
        if system.mode == "test":
            self.record.pop("test", None)  # a new test replaces the last one's values, as in the Summary
        with _short_http_waits(timeout=60):  # once per run: a server's first request may be slow
            if self.run_id:
                try:
                    client.update_run(self.run_id, status="RUNNING")
                    if system.mode == "train":
                        self._floor = self._logged_steps(client)
                    return
                except Exception as error:  # pylint: disable=broad-except
                    if not self._is_missing(error):
                        self._fail("reopen MLflow run " + self.run_id, error)
                        return
                    warnings.warn(f"MLflowLogger: the checkpointed MLflow run {self.run_id} is not in "
                                  f"{self.tracking_uri or 'the tracking store'}; starting a new run", RuntimeWarning)
                    self.run_id = ""
            self._create_run()

    def _create_run(self) -> None:
        client = self._mlflow_client()
        try:
            experiment = client.get_experiment_by_name(self.experiment_name)
            experiment_id = (experiment.experiment_id if experiment is not None else
                             client.create_experiment(self.experiment_name))
            backend = getattr(getattr(self.system, "network", None), "backend", None)
            run = client.create_run(experiment_id, run_name=self.run_name,
                                    tags={"fe.framework": str(getattr(backend, "name", ""))})
            self.run_id = run.info.run_id
        except Exception as error:  # pylint: disable=broad-except
            self._fail("open an MLflow run", error)
            return
        if self.log_params is not False:
            self._send_params(client)

    @staticmethod
    def _is_missing(error: BaseException) -> bool:
        return "RESOURCE_DOES_NOT_EXIST" in str(getattr(error, "error_code", "")) or "not found" in str(error).lower()

    def _logged_steps(self, client: Any) -> Dict[str, int]:
        run = client.get_run(self.run_id)
        floors = {}
        for name in run.data.metrics:
            history = client.get_metric_history(self.run_id, name)
            if history:
                floors[name] = max(metric.step for metric in history)
        return floors

    def _send_params(self, client: Any) -> None:
        entities = import_optional("mlflow.entities", extra="mlflow", feature="MLflowLogger")
        params = [entities.Param(_INVALID.sub("_", key)[:250], _param_value(value))
                  for key, value in self.hyperparameters().items()]
        try:
            for start in range(0, len(params), 100):
                client.log_batch(self.run_id, params=params[start:start + 100])
        except Exception as error:  # pylint: disable=broad-except
            self._fail("log parameters", error)

    def hyperparameters(self) -> Dict[str, Any]:
        """The run's settings logged as MLflow parameters (see the class docstring)."""
        system = self.system
        params: Dict[str, Any] = {f"arg.{key}": value for key, value in run_arguments().items()}
        params.update({"epochs": system.total_epochs, "log_steps": system.log_steps,
                       "train_steps_per_epoch": system.train_steps_per_epoch,
                       "eval_steps_per_epoch": system.eval_steps_per_epoch, "num_devices": system.num_devices,
                       "seed": deterministic_seed()})
        pipeline = system.pipeline
        if pipeline is not None:
            params["batch_size"] = getattr(pipeline, "batch_size", None)
            params["num_process"] = getattr(pipeline, "num_process", None)
            params["pipeline_ops"] = [type(op).__name__ for op in getattr(pipeline, "ops", [])]
            for mode, sets in (getattr(pipeline, "data", None) or {}).items():
                for ds_id, dataset in (sets.items() if isinstance(sets, dict) else [("", sets)]):
                    try:
                        params[f"data.{mode}{'.' + ds_id if ds_id else ''}.size"] = len(dataset)
                    except TypeError:
                        continue
        network = system.network
        if network is not None:
            params["framework"] = getattr(getattr(network, "backend", None), "name", None)
            for model in getattr(network, "models", []):
                name = getattr(model, "model_name", type(model).__name__)
                params[f"model.{name}"] = type(model).__name__
                optimizer = getattr(model, "optimizer", None)
                params[f"model.{name}.optimizer"] = None if optimizer is None else type(optimizer).__name__
                params[f"model.{name}.mixed_precision"] = bool(getattr(model, "mixed_precision", False))
        params["traces"] = [type(trace).__name__ for trace in (system.traces or [])]
        if isinstance(self.log_params, Mapping):
            params.update({str(key): value for key, value in self.log_params.items()})
        return params

    def _flush(self, retry: bool) -> None:
        """Send the pending values; while offline, only at retry points (epoch ends, the end)."""
        if not self.pending or (self._offline and not retry):
            return
        entities = import_optional("mlflow.entities", extra="mlflow", feature="MLflowLogger")
        client = self._mlflow_client()
        with _short_http_waits():
            if not self.run_id:  # the store was unreachable when the run started: open it now
                if not retry:
                    return
                self._create_run()
                if not self.run_id:
                    return
            while self.pending:
                chunk = self.pending[:_BATCH]
                try:
                    client.log_batch(self.run_id, metrics=[entities.Metric(name, value, stamp, step)
                                                           for name, value, stamp, step in chunk])
                except Exception as error:  # pylint: disable=broad-except
                    self._fail("send metrics", error)
                    return
                del self.pending[:len(chunk)]
        self._offline = False

    def _collect(self, data: Data, step: Optional[int], extra: Optional[Dict[str, Any]] = None) -> None:
        mode = self.system.mode
        step = int(step or 0)
        stamp = int(time.time() * 1000)
        values = dict(data.read_logs())
        if extra:
            values.update(extra)
        record = self.record.setdefault(mode, {})
        for key, value in values.items():
            record.setdefault(str(key), {})[str(step)] = _json_value(value)
            number = _scalar(value)
            if number is None:
                continue
            name = "epoch" if key == "epoch" else metric_name(mode, key)
            if self._floor and step <= self._floor.get(name, -1):
                continue  # a resumed run: this step is already in MLflow
            self.pending.append([name, number, stamp, step])

    # ------------------------------------------------------------------ hooks
    def on_begin(self, data: Data) -> None:
        self._active = is_main_process()
        if not self._active:
            return
        self._mlflow_client()  # a missing mlflow is reported before the first step
        self._open_run()

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        if not self._active or system.mode != "train":
            return
        log_steps, step = system.log_steps, system.global_step
        if log_steps and (step % log_steps == 0 or step == 1):
            self._collect(data, step)
            self._flush(retry=False)

    def on_epoch_end(self, data: Data) -> None:
        if not self._active:
            return
        system = self.system
        extra = {"epoch": system.epoch_idx} if system.mode == "train" else None
        self._collect(data, system.global_step, extra)
        self._flush(retry=True)

    def on_end(self, data: Data) -> None:
        if not self._active:
            return
        system = self.system
        if system.mode != "test":
            self._collect(data, system.global_step)
        self._send_artifacts()
        self._flush(retry=True)
        self._finish("FINISHED")

    def fe_abort(self) -> None:
        """A failed or interrupted run: send what can be sent, mark the MLflow run FAILED."""
        if not self._active:
            return
        self._flush(retry=True)
        self._finish("FAILED")

    # ------------------------------------------------------------------ the end
    def _send_artifacts(self) -> None:
        if not self.run_id or self._offline:
            return
        client = self._mlflow_client()
        with tempfile.TemporaryDirectory() as directory, _short_http_waits():
            try:
                path = os.path.join(directory, "fe_summary.json")
                with open(path, "w", encoding="utf-8") as file:
                    json.dump(self._summary_record(), file, indent=1, default=str)
                client.log_artifact(self.run_id, path)
                if self.log_models:
                    for model_file in self._model_files():
                        client.log_artifact(self.run_id, model_file, artifact_path="models")
            except Exception as error:  # pylint: disable=broad-except
                self._fail("upload artifacts", error)

    def _summary_record(self) -> Dict[str, Any]:
        """The whole history: every value this logger collected, and what the Summary recorded (a named run)."""
        summary = self.system.summary
        history = {mode: {key: dict(steps) for key, steps in keys.items()} for mode, keys in self.record.items()}
        for mode, keys in getattr(summary, "history", {}).items():
            for key, steps in keys.items():
                history.setdefault(mode, {}).setdefault(str(key), {}).update(
                    {str(step): _json_value(value) for step, value in steps.items()})
        return {"name": getattr(summary, "name", None), "history": history}

    def _model_files(self) -> List[str]:
        files = []
        for trace in self.system.traces or []:
            for attribute in ("model_path", "export_path"):
                path = getattr(trace, attribute, None)
                if isinstance(path, str) and os.path.exists(path):
                    files.append(path)
        return files

    def _finish(self, status: str) -> None:
        if self.pending:
            path = self._write_unsent()
            warnings.warn(f"MLflowLogger: {len(self.pending)} values could not be sent to MLflow run {self.run_id}; "
                          f"kept in {path} (send them with MLflowLogger.send_unsent({path!r}))", RuntimeWarning)
            self.pending = []
        if self._offline or not self.run_id:
            return
        with _short_http_waits():
            try:
                self._mlflow_client().set_terminated(self.run_id, status=status)
            except Exception as error:  # pylint: disable=broad-except
                self._fail("close the MLflow run", error)

    def _write_unsent(self) -> str:
        os.makedirs(UNSENT_DIR, exist_ok=True)
        name = self.run_id or f"unopened-{self.experiment_name}-{int(time.time())}"
        path = os.path.abspath(os.path.join(UNSENT_DIR, f"{_INVALID.sub('_', name)}.json"))
        earlier: List[List[Any]] = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                earlier = json.load(file).get("metrics", [])
        record = {"tracking_uri": self.tracking_uri, "run_id": self.run_id, "experiment_name": self.experiment_name,
                  "run_name": self.run_name, "metrics": earlier + self.pending}
        temporary = path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(record, file)
        os.replace(temporary, path)
        return path

    @staticmethod
    def send_unsent(path: str, tracking_uri: Optional[str] = None) -> int:
        """Send the values a run could not send (a `fe_mlflow_unsent/<run_id>.json` file), then delete the file.

        Args:
            path: The file.
            tracking_uri: Where to send them (default: the run's own tracking URI, kept in the file).

        Returns:
            How many values were sent.
        """
        with open(path, encoding="utf-8") as file:
            record = json.load(file)
        tracking = import_optional("mlflow.tracking", extra="mlflow", feature="MLflowLogger")
        entities = import_optional("mlflow.entities", extra="mlflow", feature="MLflowLogger")
        client = tracking.MlflowClient(tracking_uri=tracking_uri or record.get("tracking_uri"))
        metrics = [entities.Metric(str(name), float(value), int(stamp), int(step))
                   for name, value, stamp, step in record["metrics"]]
        run_id = record.get("run_id")
        if not run_id:  # the store could not be reached when the run started: open a run for these values now
            experiment = client.get_experiment_by_name(record["experiment_name"])
            experiment_id = (experiment.experiment_id if experiment is not None else
                             client.create_experiment(record["experiment_name"]))
            run_id = client.create_run(experiment_id, run_name=record.get("run_name")).info.run_id
        for start in range(0, len(metrics), _BATCH):
            client.log_batch(run_id, metrics=metrics[start:start + _BATCH])
        os.remove(path)
        return len(metrics)
