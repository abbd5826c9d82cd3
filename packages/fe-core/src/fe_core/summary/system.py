"""`System`: the state shared by the Estimator and its traces while a run is going, and its checkpoints."""
from __future__ import annotations

import datetime
import os
import uuid
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from fe_core.framework.registry import loaded_backends
from fe_core.containers import to_list
from fe_core.distributed.communicator import get_communicator
from fe_core.summary.summary import Summary
from fe_core.export import fe_export

if TYPE_CHECKING:  # pragma: no cover
    from fe_core.checkpoint.checkpoint_dir import Checkpoint, SavedModel
    from fe_core.checkpoint.codec import StateCodec
    from fe_core.schedule.scheduler import Scheduler

__all__ = ["System"]

# The System attributes written (human readable) into system.json; everything else goes through the state codec.
PLAIN_ATTRIBUTES = ("mode", "ds_id", "exp_id", "global_step", "epoch_idx", "batch_idx", "total_epochs", "stop_training",
                    "log_steps", "train_steps_per_epoch", "eval_steps_per_epoch", "experiment_time",
                    "eval_log_steps_request", "eval_log_steps")
# What a checkpoint restores of PLAIN_ATTRIBUTES: the run's position and counters. The rest (total_epochs, log_steps,
# steps per epoch, the requested eval log steps) is configuration the script sets; it is saved for the record only.
STATE_ATTRIBUTES = ("mode", "ds_id", "exp_id", "global_step", "epoch_idx", "batch_idx", "stop_training",
                    "experiment_time", "eval_log_steps")
# fe_core.checkpoint imports fe_core.summary, so the checkpoint modules are imported inside the methods using them.
# Lists of stateful objects in a checkpoint: (entry name, owner attribute, attribute on the owner).
OBJECT_LISTS = (("traces", None, "traces"), ("tops", "network", "ops"), ("slops", "network", "slicers"),
                ("pops", "network", "postprocessing"), ("nops", "pipeline", "ops"))
_DESCRIPTIONS = {"traces": "traces", "tops": "network ops", "slops": "network slicers",
                 "pops": "network postprocessing ops", "nops": "pipeline ops"}


def _timestamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


@fe_export("fe.summary.system.System", "fe.summary.System")
class System:
    """The state the Estimator and its traces share while running.

    Args:
        network: The network being used (may be None, for example in unit tests of traces).
        pipeline: The pipeline being used (may be None).
        traces: The traces (or Schedulers of traces) given to the Estimator.
        mode: The current execution mode ('train', 'eval', 'test', or None for warmup).
        ds_id: The current dataset id ('' when each mode has a single dataset).
        num_devices: How many accelerators training uses (the Estimator passes its backend's count).
        log_steps: Log every n steps (0 disables train logging, None disables all logging).
        total_epochs: How many epochs training is expected to run for.
        train_steps_per_epoch: Cut training epochs short (or extend them) to this many steps; None to use all data.
        eval_steps_per_epoch: Cut evaluation epochs short (or extend them) to this many steps; None to use all data.
        eval_log_steps: The evaluation steps on which progress logs should be printed.
        system_config: A description of the estimator's configuration, kept on the Summary.

    Attributes:
        mode: The current execution mode, None during warmup.
        ds_id: The current dataset id.
        exp_id: A unique 64-bit identifier of the current experiment.
        global_step: How many training steps have elapsed (None before the first).
        num_devices: How many accelerators training uses; in a data-parallel run, the number of processes training
            together (each drives one device; `global_step` then counts steps of the whole group, each consuming one
            global batch of the Pipeline's `batch_size` samples).
        log_steps: Log every n steps (0 disables train logging, None disables all logging).
        total_epochs: How many epochs training is expected to run for.
        batch_samples: In a data-parallel evaluation or test, how many samples the current batch has on this
            process (None otherwise).
        epoch_idx: The current epoch (counting from 1; 0 before training).
        batch_idx: The current batch within the epoch (counting from 1; None before the first).
        stop_training: Set it to True to end training early.
        network: The network being used.
        pipeline: The pipeline being used.
        traces: The traces being used.
        train_steps_per_epoch: The number of training steps per epoch, or None for all data.
        eval_steps_per_epoch: The number of evaluation steps per epoch, or None for all data.
        eval_log_steps_request: The evaluation steps on which the user wants progress logs.
        eval_log_steps: The evaluation steps that will be logged this epoch, and the number of evaluation steps.
        summary: Where experiment results are written (records only when named).
        experiment_time: When the experiment started ('%Y%m%d-%H%M%S'), '' before `reset`.
        custom_graphs: Extra graphs (lists of Summaries) too complicated for the primary history.

    Example:
        >>> system = System(network=None, pipeline=None, traces=[])
        >>> system.reset(summary_name="exp")
        >>> system.update_global_step(); system.write_summary("loss", 0.5)
        >>> system.summary.history["train"]["loss"]
        {1: 0.5}
    """

    mode: Optional[str]
    ds_id: str
    exp_id: int
    global_step: Optional[int]
    num_devices: int
    log_steps: Optional[int]
    total_epochs: int
    epoch_idx: int
    batch_idx: Optional[int]
    stop_training: bool
    network: Any
    pipeline: Any
    traces: List[Union[Any, "Scheduler[Any]"]]
    train_steps_per_epoch: Optional[int]
    eval_steps_per_epoch: Optional[int]
    eval_log_steps_request: List[int]
    eval_log_steps: Tuple[List[int], int]
    summary: Summary
    experiment_time: str
    custom_graphs: Dict[str, List[Summary]]

    def __init__(self,
                 network: Any,
                 pipeline: Any,
                 traces: List[Union[Any, "Scheduler[Any]"]],
                 mode: Optional[str] = None,
                 ds_id: str = '',
                 num_devices: int = 0,
                 log_steps: Optional[int] = None,
                 total_epochs: int = 0,
                 train_steps_per_epoch: Optional[int] = None,
                 eval_steps_per_epoch: Optional[int] = None,
                 eval_log_steps: Sequence[int] = (),
                 system_config: Any = None) -> None:
        self.network = network
        self.pipeline = pipeline
        self.eval_log_steps_request = list(to_list(eval_log_steps))
        self.eval_log_steps = ([], 0)
        self.traces = traces
        self.mode = mode
        self.ds_id = ds_id
        self.num_devices = num_devices
        self.log_steps = log_steps
        self.total_epochs = total_epochs
        self.batch_idx = None
        self.train_steps_per_epoch = train_steps_per_epoch
        self.eval_steps_per_epoch = eval_steps_per_epoch
        self.stop_training = False
        self.summary = Summary(None, system_config)
        self.experiment_time = ""
        self.custom_graphs = {}
        self.batch_samples: Optional[int] = None
        self._initialize_state()

    @property
    def steps_per_epoch(self) -> Optional[int]:
        """The step limit of the current mode: `train_steps_per_epoch` in train, `eval_steps_per_epoch` in eval,
        else None."""
        if self.mode == "train":
            return self.train_steps_per_epoch
        if self.mode == "eval":
            return self.eval_steps_per_epoch
        return None

    def _initialize_state(self) -> None:
        self.global_step = None
        self.epoch_idx = 0
        self.exp_id = int.from_bytes(uuid.uuid1().bytes, byteorder="big", signed=True) >> 64

    def update_global_step(self) -> None:
        """Increment `global_step` (None becomes 1)."""
        self.global_step = 1 if self.global_step is None else self.global_step + 1

    def update_batch_idx(self) -> None:
        """Increment `batch_idx` (None becomes 1)."""
        self.batch_idx = 1 if self.batch_idx is None else self.batch_idx + 1

    def reset(self, summary_name: Optional[str] = None, system_config: Any = None) -> None:
        """Reset for a new round of training, with a new Summary, a new experiment id and time.

        Args:
            summary_name: The experiment's name; the Summary records only when it is not None.
            system_config: A description of the estimator's configuration.
        """
        self.experiment_time = _timestamp()
        self.mode = "train"
        self.ds_id = ""
        self._initialize_state()
        self.batch_idx = None
        self.stop_training = False
        self.summary = Summary(summary_name, system_config)
        self.custom_graphs = {}

    def reset_for_test(self, summary_name: Optional[str] = None) -> None:
        """Partially reset for a round of testing.

        The epoch becomes `total_epochs` unless training was stopped early, previous test results are cleared from
        the summary and custom graphs, and the summary keeps its name unless a new one is given.

        Args:
            summary_name: The experiment's name; None keeps the current one.
        """
        self.experiment_time = self.experiment_time or _timestamp()
        self.mode = "test"
        self.ds_id = ""
        self.batch_idx = None
        if not self.stop_training:
            self.epoch_idx = self.total_epochs
        self.stop_training = False
        self.summary.name = summary_name or self.summary.name
        self.summary.history.pop("test", None)
        for graph_set in self.custom_graphs.values():
            for graph in graph_set:
                graph.history.pop("test", None)

    def write_summary(self, key: str, value: Any) -> None:
        """Record `value` under the current mode and `key` at the current global step (0 before the first step),
        if the experiment is named.

        Args:
            key: The key to record.
            value: The value to record.
        """
        if self.summary:
            self.summary.history[self.mode][key][self.global_step or 0] = value

    def add_graph(self, graph_name: str, graph: Union[Summary, List[Summary]]) -> None:
        """Store custom summary graphs (replacing any stored under the same name).

        Args:
            graph_name: The graph's name.
            graph: A Summary or a list of Summaries.
        """
        self.custom_graphs[graph_name] = [graph] if isinstance(graph, Summary) else list(graph)

    # ------------------------------------------------------------------ checkpoints
    def _models(self) -> List[Any]:
        if self.network is None or not hasattr(self.network, "backend"):
            return []
        return list(getattr(self.network, "models", None) or [])

    def _object_lists(self) -> List[Tuple[str, List[Any]]]:
        lists = []
        for entry, owner_name, attribute in OBJECT_LISTS:
            owner = self if owner_name is None else getattr(self, owner_name)
            items = getattr(owner, attribute, None) if owner is not None else None
            lists.append((entry, to_list(items)))
        return lists

    def _datasets(self) -> Dict[str, Dict[str, Any]]:
        data = getattr(self.pipeline, "data", None) if self.pipeline is not None else None
        if not data:
            return {}
        return {mode: dict(sets) if isinstance(sets, Mapping) else {"": sets} for mode, sets in data.items()}

    @staticmethod
    def _is_native_dataset(dataset: Any) -> bool:
        """Whether a checkpoint leaves `dataset` alone: a framework's loader, or a dataset that is not fe's (a torch
        Dataset, a user's class deriving from none of fe's), which FastEstimator does not restore either, unless it
        chooses its state itself with get_state()/set_state()."""
        from fe_core.dataset._nested_state import checkpoints_dataset
        return not checkpoints_dataset(dataset) or any(backend.is_native_dataset(dataset)
                                                       for backend in loaded_backends())

    def _dataset_states(self, codec: "StateCodec") -> Dict[str, Dict[str, List[Dict[str, Any]]]]:
        from fe_core.checkpoint.object_state import get_object_state, stateful_objects
        return {
            mode: {
                ds_id: [{} if self._is_native_dataset(ds) else get_object_state(ds, codec)
                        for ds in stateful_objects([dataset])]
                for ds_id, dataset in sets.items()
            }
            for mode, sets in self._datasets().items()
        }

    def _save_models(self, directory: str) -> List["SavedModel"]:
        from fe_core.checkpoint.checkpoint_dir import SavedModel
        from fe_core.checkpoint.hashed_file import WrittenFile

        def relative(name: Any) -> str:  # keeps the digest a backend reported with a WrittenFile
            path = os.path.relpath(name, directory) if os.path.isabs(name) else str(name)
            return name.renamed(path) if isinstance(name, WrittenFile) else path

        models = self._models()
        saved = []
        for index, model in enumerate(models):
            save_optimizer = getattr(model, "optimizer", None) is not None
            files = self.network.backend.save_model(model, directory, save_optimizer=save_optimizer)
            saved.append(SavedModel(name=str(getattr(model, "model_name", f"model_{index}")),
                                    files=[relative(name) for name in to_list(files)],
                                    optimizer=save_optimizer,
                                    auto_name=bool(getattr(model, "fe_auto_name", False))))
        return saved

    def save_state(self, save_dir: str) -> None:
        """Save the training state (a checkpoint) into the directory `save_dir`.

        The checkpoint holds the plain System attributes, the models' weights and optimizer states (written by the
        network's backend in the framework's own format), the summary and custom graphs, the states of the traces,
        network ops, slicers, postprocessing ops, pipeline ops and datasets (see
        `fe_core.checkpoint.object_state.get_object_state`), and the python, numpy and backend random states. It is
        JSON + numpy arrays, never a pickle of arbitrary objects.

        The write is atomic: `save_dir` is replaced as a whole, so a crash while saving leaves the previous checkpoint
        intact. `save_dir` must be new, empty, or an earlier checkpoint.

        Args:
            save_dir: The checkpoint directory.

        Raises:
            CheckpointEncodeError: If some state cannot be stored; the message names it (e.g. 'traces[2].history').
            ValueError: If `save_dir` is a non-empty directory that is not a checkpoint.
        """
        from fe_core.checkpoint.checkpoint_dir import write_checkpoint
        from fe_core.checkpoint.codec import StateCodec
        from fe_core.checkpoint.object_state import get_object_states
        from fe_core.checkpoint.rng_state import capture_rng_state
        codec = StateCodec()
        state: Dict[str, Any] = {"summary": self.summary, "custom_graphs": self.custom_graphs}
        for entry, items in self._object_lists():
            state[entry] = get_object_states(items, codec)
        state["ds"] = self._dataset_states(codec)
        if self.pipeline is not None and callable(getattr(self.pipeline, "get_state", None)):
            state["pipeline"] = self.pipeline.get_state()  # the position inside an epoch (for mid-epoch resume)
        state["rng"] = capture_rng_state()
        # A data-parallel run: every rank's random state and trace state go into rank 0's checkpoint, which only
        # rank 0 writes (weights are the same on every rank); the others wait until it is complete.
        communicator = get_communicator()
        stage = getattr(self.network.backend, "stage_checkpoint", None) if self.network is not None else None
        if callable(stage):  # sharded models: every rank writes its own part first (a collective)
            stage(self._models(), save_dir)
        if communicator.world_size > 1:
            from fe_core.distributed.rank_state import gather_rank_states
            state["ranks"] = gather_rank_states({"rng": state["rng"], "traces": state["traces"]}, communicator)
            if not communicator.is_main:
                communicator.barrier()
                return
        system = {name: getattr(self, name) for name in PLAIN_ATTRIBUTES}
        system["eval_log_steps"] = [list(self.eval_log_steps[0]), self.eval_log_steps[1]]
        try:
            write_checkpoint(save_dir, system=system, state=state, save_models=self._save_models, codec=codec)
        finally:
            if communicator.world_size > 1:
                communicator.barrier()

    def _check_checkpoint(self, checkpoint: "Checkpoint") -> None:
        from fe_core.checkpoint.object_state import check_object_states
        from fe_core.checkpoint.rng_state import check_rng_state
        where = checkpoint.directory
        missing = [name for name in PLAIN_ATTRIBUTES if name not in checkpoint.system]
        if missing:
            raise ValueError(f"Checkpoint {where!r}: system.json lacks the attributes {missing}")
        self._check_plain_attributes(checkpoint.system, where)
        models = self._models()
        expected_models = [str(getattr(m, "model_name", f"model_{i}")) for i, m in enumerate(models)]
        saved_models = [model.name for model in checkpoint.models]
        # Automatic names count per process ('model', then 'model1' when a notebook re-runs the script): models named
        # automatically on both sides match by position.
        matches = len(saved_models) == len(expected_models) and all(
            saved == expected or (record.auto_name and bool(getattr(model, "fe_auto_name", False)))
            for saved, expected, record, model in zip(saved_models, expected_models, checkpoint.models, models))
        if not matches:
            raise ValueError(f"Checkpoint {where!r} holds the models {saved_models}, but the network has "
                             f"{expected_models}")
        state = checkpoint.state
        required = ["summary", "custom_graphs", "ds", "rng"] + [entry for entry, _, _ in OBJECT_LISTS]
        missing = [name for name in required if name not in state]
        if missing:
            raise ValueError(f"Checkpoint {where!r}: state.json lacks the entries {missing}")
        if not isinstance(state["summary"], Summary):
            raise ValueError(f"Checkpoint {where!r}: 'summary' should be a Summary")
        graphs = state["custom_graphs"]
        if not isinstance(graphs, dict) or not all(
                isinstance(g, list) and all(isinstance(s, Summary) for s in g) for g in graphs.values()):
            raise ValueError(f"Checkpoint {where!r}: 'custom_graphs' should map names to lists of Summaries")
        for entry, items in self._object_lists():
            check_object_states(entry, items, state[entry], description=_DESCRIPTIONS[entry])
        datasets = self._datasets()
        if not isinstance(state["ds"], dict):
            raise ValueError(f"Checkpoint {where!r}: 'ds' should be a dict of mode -> ds_id -> states")
        for mode, sets in state["ds"].items():
            if not isinstance(sets, dict):
                raise ValueError(f"Checkpoint {where!r}: ds[{mode!r}] should be a dict of ds_id -> states")
            unexpected = sorted(set(sets) - set(datasets.get(mode, {})))
            if unexpected:
                raise ValueError(f"Checkpoint {where!r} holds datasets for mode {mode!r} and ds_ids {unexpected} "
                                 f"that the pipeline does not have (it has {sorted(datasets.get(mode, {}))})")
            for ds_id, states in sets.items():
                check_object_states(f"ds[{mode!r}][{ds_id!r}]", [datasets[mode][ds_id]], states,
                                    description=f"datasets (mode {mode!r}, ds_id {ds_id!r})")
        check_rng_state(state["rng"])

    def _check_plain_attributes(self, saved: Dict[str, Any], where: str) -> None:
        """Check the type and range of every restored System attribute in `system.json`.

        Raises:
            ValueError: Naming the attribute, what was found and what was expected.
        """
        def is_count(value: Any, allow_none: bool = False) -> bool:
            return (value is None and allow_none) or (type(value) is int and value >= 0)

        checks = {
            "global_step": (is_count(saved["global_step"], allow_none=True), "a non-negative integer or null"),
            "epoch_idx": (is_count(saved["epoch_idx"]) and saved["epoch_idx"] <= self.total_epochs,
                          f"an integer from 0 to this run's {self.total_epochs} epochs"),
            "batch_idx": (is_count(saved["batch_idx"], allow_none=True), "a non-negative integer or null"),
            "stop_training": (type(saved["stop_training"]) is bool, "true or false"),
            "mode": (saved["mode"] in (None, "train", "eval", "test", "infer"), "'train', 'eval', 'test' or 'infer'"),
            "ds_id": (saved["ds_id"] is None or isinstance(saved["ds_id"], str), "a string"),
            "exp_id": (type(saved["exp_id"]) is int, "an integer"),
            "experiment_time": (isinstance(saved["experiment_time"], str), "a string"),
        }
        for name, (ok, expected) in checks.items():
            if not ok:
                raise ValueError(f"Checkpoint {where!r}: system.json has {name} = {saved[name]!r:.60}, expected "
                                 f"{expected}")
        steps = saved["eval_log_steps"]
        if not (isinstance(steps, list) and len(steps) == 2 and isinstance(steps[0], list)
                and all(is_count(step) for step in steps[0]) and is_count(steps[1])):
            raise ValueError(f"Checkpoint {where!r}: system.json has a malformed eval_log_steps {steps!r:.60}")

    def _load_models(self, checkpoint: "Checkpoint") -> None:
        """Load every model's saved files, all or nothing (see `fe_core.checkpoint.model_restore`)."""
        from fe_core.checkpoint.model_restore import restore_models
        models = self._models()
        restore_models(self.network.backend if models else None, models, checkpoint)

    def _own_rank_entry(self, checkpoint: "Checkpoint", load_dir: str) -> Optional[Dict[str, Any]]:
        """This rank's random and trace state. A checkpoint of sharded models written by a different number of
        processes still resumes (the backend reshards the models): every rank then takes rank 0's state (or the
        single process's), with a message that the run cannot repeat the original bitwise."""
        from fe_core.distributed.rank_state import rank_entry
        ranks = checkpoint.state.get("ranks")
        try:
            return rank_entry(ranks, load_dir)
        except ValueError:
            reshards = getattr(self.network.backend, "reshards", None) if self.network is not None else None
            if not (callable(reshards) and reshards(self._models(), checkpoint)):
                raise
        communicator = get_communicator()
        written = len(ranks) if isinstance(ranks, list) else 1
        if communicator.is_main:
            print(f"FastEstimator-RestoreWizard: {load_dir} was written by {written} process(es), this run has "
                  f"{communicator.world_size}: the sharded models are resharded exactly, but each batch is split "
                  f"differently across the processes and their random streams differ, so the run will not repeat a "
                  f"{written}-process run bitwise")
        return ranks[0] if isinstance(ranks, list) and ranks and isinstance(ranks[0], dict) else None

    def load_state(self, load_dir: str) -> None:
        """Restore the training state saved by `save_state`.

        Restoring is all or nothing. Everything is verified before anything is changed: the manifest (every file
        present with the recorded size and sha256, no symbolic links), the format and version, the type and range of
        every System attribute, and that the checkpoint's models, traces, ops and datasets match the in-memory ones.
        Then the models are loaded, all or nothing (a backend that checks its files first has every model checked
        before any is loaded, with no copy of them; otherwise those loaded before a failure are put back from a
        temporary copy; see `fe_core.checkpoint.model_restore`), then the run's position and
        counters, summary, custom graphs, object states and random states. The System's own configuration (total
        epochs, log steps, steps per epoch) is never taken from a checkpoint; of traces, ops, slicers and datasets the
        checkpoint restores data (numbers, arrays, tensors, constructor arguments included, as FastEstimator does) but
        never file names, directories, URLs, callables or other strings given to a constructor (see
        `fe_core.checkpoint.object_state`). Decoding admits only plain data types (no pickle), so a
        tampered checkpoint cannot make this import or run anything. If a save was interrupted between its two
        renames, the previous checkpoint is read from its backup sibling (with a RuntimeWarning).

        Args:
            load_dir: The checkpoint directory.

        Raises:
            FileNotFoundError: If the directory or one of its files is missing.
            ValueError: If a file is corrupt, the format is wrong, or the checkpoint does not fit this System's
                network, traces, ops or pipeline (the message names what was expected and what was found).
        """
        from fe_core.checkpoint.checkpoint_dir import read_checkpoint
        from fe_core.checkpoint.object_state import set_object_state, set_object_states, stateful_objects
        from fe_core.checkpoint.rng_state import restore_rng_state
        backend = self.network.backend if self.network is not None else None
        checkpoint = read_checkpoint(load_dir, verified_when_read=getattr(backend, "verified_when_read", None))
        self._check_checkpoint(checkpoint)
        own = self._own_rank_entry(checkpoint, load_dir)  # this rank's random and trace state, if several
        self._load_models(checkpoint)  # the step most likely to fail: first, and undone if it does
        saved = checkpoint.system
        for name in STATE_ATTRIBUTES:
            setattr(self, name, saved[name])
        self.eval_log_steps = (list(saved["eval_log_steps"][0]), saved["eval_log_steps"][1])
        state = checkpoint.state
        self.summary.name = state["summary"].name
        self.summary.history = state["summary"].history
        self.custom_graphs = state["custom_graphs"]
        for entry, items in self._object_lists():
            set_object_states(items, own["traces"] if own is not None and entry == "traces" else state[entry])
        datasets = self._datasets()
        for mode, sets in state["ds"].items():
            for ds_id, states in sets.items():
                for dataset, dataset_state in zip(stateful_objects([datasets[mode][ds_id]]), states):
                    if not self._is_native_dataset(dataset):
                        set_object_state(dataset, dataset_state)
        if "pipeline" in state and callable(getattr(self.pipeline, "set_state", None)):
            self.pipeline.set_state(state["pipeline"])
        restore_rng_state(own["rng"] if own is not None else state["rng"])
