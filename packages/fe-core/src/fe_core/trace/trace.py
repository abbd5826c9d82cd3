"""`Trace`: the base class of everything that watches or steers a run, its per-dataset variant `PerDSTrace`, and
`implemented_hooks`, which tells the Estimator which hooks a trace actually overrides."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, FrozenSet, Iterable, List, Set, Union

from fe_core.containers import to_list, to_set
from fe_core.data import Data
from fe_core.modes import check_ds_id, check_io_names, parse_modes
from fe_core.export import fe_export

if TYPE_CHECKING:  # pragma: no cover
    from fe_core.summary.system import System

__all__ = ["Trace", "PerDSTrace", "implemented_hooks", "attached_system", "current_ds_id", "TRACE_HOOKS",
           "PER_DS_HOOKS"]

#: The hooks every Trace has, in the order the Estimator calls them within a run.
TRACE_HOOKS = ("on_begin", "on_epoch_begin", "on_batch_begin", "on_batch_end", "on_epoch_end", "on_end")
#: The extra hooks of a PerDSTrace, called around each dataset of an epoch.
PER_DS_HOOKS = ("on_ds_begin", "on_ds_end")


@fe_export("fe.trace.trace.Trace", "fe.trace.Trace")
class Trace:
    """Trace controls the training loop. Subclass it to add your own behaviour.

    The Estimator calls a trace's hooks as it runs. Besides the `Data` of the moment, a trace can read and change the
    run's `System` through `self.system` (set by the Estimator before the first hook), for example to stop training.
    The order of calls is:

    ```
            Training:                                       Testing:

        on_begin                                            on_begin
            |                                                   |
        on_epoch_begin (train)  <------<                    on_epoch_begin (test)  <------<
            |                          |                        |                         |
        on_batch_begin (train) <----<  |                    on_batch_begin (test) <----<  |
            |                       |  |                        |                      |  |
        on_batch_end (train) >-----^   |                    on_batch_end (test) >------^  |
            |                          ^                        |                         |
        on_epoch_end (train)           |                    on_epoch_end (test) >---------^
            |                          |                        |
        on_epoch_begin (eval)          |                    on_end
            |                          ^
        on_batch_begin (eval) <----<   |
            |                      |   |
        on_batch_end (eval) >-----^    |
            |                          |
        on_epoch_end (eval) >----------^
            |
        on_end
    ```

    Only the hooks a subclass overrides are called (see `implemented_hooks`), so an unused hook costs nothing per step.

    Args:
        inputs: Keys this trace reads from the data. '*' means "everything": such a trace runs after all others.
        outputs: Keys this trace writes.
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer'); None for all; '!train' for all but train.
        ds_id: Dataset id(s) to run on; None for all; '!ds1' for all but ds1.

    Attributes:
        system: The run's System, set by the Estimator.
        fe_monitor_names: Keys the Estimator should collect for this trace (added to the Essential traces' monitor
            names), for example the metric a model saver watches during eval.
        fe_log_steps_only: Set to True (on the class) when the trace's batch hooks do nothing in training except on
            log steps (`global_step % log_steps == 0` or step 1, and never when `log_steps` is 0 or None): the
            Estimator then calls them in training only on those steps. Hooks in other modes are called every step.

    Example:
        >>> class CountBatches(Trace):
        ...     def on_epoch_begin(self, data):
        ...         self.count = 0
        ...     def on_batch_end(self, data):
        ...         self.count += 1
        ...     def on_epoch_end(self, data):
        ...         data.write_with_log("batches", self.count)
        >>> sorted(implemented_hooks(CountBatches(mode="train")))
        ['on_batch_end', 'on_epoch_begin', 'on_epoch_end']
    """

    system: "System"
    inputs: List[str]
    outputs: List[str]
    mode: Set[str]
    ds_id: Set[str]
    fe_monitor_names: Set[str]
    fe_log_steps_only: bool = False

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        self.inputs = check_io_names(to_list(inputs))
        self.outputs = check_io_names(to_list(outputs))
        self.mode = parse_modes(to_set(mode))
        self.ds_id = check_ds_id(to_set(ds_id))
        self.fe_monitor_names = set()

    def on_begin(self, data: Data) -> None:
        """Runs once at the beginning of training or testing.

        Args:
            data: Where traces communicate with each other or write values for logging.
        """

    def on_epoch_begin(self, data: Data) -> None:
        """Runs at the beginning of each epoch.

        Args:
            data: Where traces communicate with each other or write values for logging.
        """

    def on_batch_begin(self, data: Data) -> None:
        """Runs at the beginning of each batch.

        Args:
            data: The batch about to be run, plus what earlier traces wrote.
        """

    def on_batch_end(self, data: Data) -> None:
        """Runs at the end of each batch.

        Args:
            data: The current batch and prediction data, as well as anything written by earlier traces.
        """

    def on_epoch_end(self, data: Data) -> None:
        """Runs at the end of each epoch.

        Args:
            data: Where traces communicate with each other or write values for logging.
        """

    def on_end(self, data: Data) -> None:
        """Runs once at the end of training or testing, when the run ended normally or stopped early (not after an
        error or a Ctrl-C: see `fe_core.trace.abort`).

        Args:
            data: Where traces communicate with each other or write values for logging.
        """

    def get_outputs(self, ds_ids: Union[None, str, List[str]]) -> List[str]:
        """The keys this trace writes when it runs on `ds_ids`.

        Override this only when a trace's outputs depend on the dataset ids it runs on.

        Args:
            ds_ids: The dataset ids under which this trace will execute.

        Returns:
            The outputs of this trace.
        """
        return list(self.outputs)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} inputs={self.inputs} outputs={self.outputs} mode={sorted(self.mode) or 'all'}"
                f" ds_id={sorted(self.ds_id) or 'all'}>")


@fe_export("fe.trace.trace.PerDSTrace", "fe.trace.PerDSTrace")
class PerDSTrace(Trace):
    """A Trace that is also told when each dataset of an epoch begins and ends.

    With several datasets in one mode (a dict of eval sets, for example), the Estimator calls `on_ds_begin` before and
    `on_ds_end` after each dataset's batches, between `on_epoch_begin` and `on_epoch_end`. The Data given to
    `on_ds_end` is a per-dataset view: a value logged there as 'acc' is recorded as 'acc|ds_id'.

    Example:
        >>> class PerDSCount(PerDSTrace):
        ...     def on_ds_begin(self, data):
        ...         self.count = 0
        ...     def on_batch_end(self, data):
        ...         self.count += 1
        ...     def on_ds_end(self, data):
        ...         data.write_with_log("batches", self.count)  # logged as 'batches|<ds_id>'
    """

    def on_ds_begin(self, data: Data) -> None:
        """Runs at the beginning of each dataset.

        Args:
            data: Where traces communicate with each other. Values written here are not logged.
        """

    def on_ds_end(self, data: Data) -> None:
        """Runs at the end of each dataset.

        Args:
            data: A per-dataset view of the epoch-end Data. What is logged here is gathered across all datasets and
                logged at on_epoch_end.
        """


def attached_system(trace: Trace) -> Any:
    """The System the Estimator attached to `trace`, or None when the trace is driven directly (a unit test calling
    `on_epoch_begin` / `on_batch_end` / `on_epoch_end` itself, as FastEstimator's users do)."""
    return getattr(trace, "system", None)


def current_ds_id(trace: Trace) -> str:
    """The dataset id `trace` runs on now: the System's, or '' (the unnamed dataset) when no System is attached.

    Example:
        >>> current_ds_id(Trace())
        ''
    """
    system = attached_system(trace)
    return "" if system is None else (getattr(system, "ds_id", "") or "")


_HOOK_CACHE: "weakref.WeakKeyDictionary[type, FrozenSet[str]]" = weakref.WeakKeyDictionary()


def implemented_hooks(trace: Trace) -> FrozenSet[str]:
    """The hooks that `trace`'s class overrides, relative to the no-op hooks of `Trace` and `PerDSTrace`.

    The Estimator calls only these, so a trace that, say, only overrides `on_epoch_end` adds no work to a step. The
    answer is computed once per class and cached. A hook counts as implemented when any class between `trace`'s class
    and the base defines it (even if it only calls `super()`). Hooks assigned on an instance (`trace.on_end = f`) are
    not seen: override them in a subclass instead.

    Args:
        trace: The trace to inspect.

    Returns:
        The names of the overridden hooks, among `TRACE_HOOKS` and (for a PerDSTrace) `PER_DS_HOOKS`.

    Example:
        >>> class Stopper(Trace):
        ...     def on_batch_end(self, data):
        ...         self.system.stop_training = True
        >>> implemented_hooks(Stopper())
        frozenset({'on_batch_end'})
    """
    cls = type(trace)
    try:
        return _HOOK_CACHE[cls]
    except KeyError:
        pass
    hooks = {hook for hook in TRACE_HOOKS if getattr(cls, hook, None) is not getattr(Trace, hook)}
    if issubclass(cls, PerDSTrace):
        hooks.update(hook for hook in PER_DS_HOOKS if getattr(cls, hook, None) is not getattr(PerDSTrace, hook))
    result = frozenset(hooks)
    _HOOK_CACHE[cls] = result
    return result
