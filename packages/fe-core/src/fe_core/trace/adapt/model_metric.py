"""`ModelMetricTrace`: the base of traces that watch one eval metric of one model (by default the model's loss), and
`model_loss_keys`, which finds that loss in the network.

FastEstimator 1.x lets `BestModelSaver(model, save_dir)` and `ReduceLROnPlateau(model)` omit the metric: the model's
loss is used. The loss is the `loss_name` of the UpdateOp that updates the model: when one UpdateOp already updates
it (UpdateOp records it in `model.loss_name`, as FastEstimator does), the trace takes it when it is created; otherwise
it resolves it from the network when the Estimator attaches its System (before warmup, sorting and the first hook),
and raises there if the model has no loss or several.
"""
from __future__ import annotations

from typing import Any, Collection, Iterable, List, Optional, Union

from fe_core.config_error import ConfigurationError
from fe_core.schedule.scheduler import get_current_items
from fe_core.trace.trace import Trace

__all__ = ["ModelMetricTrace", "model_loss_keys", "model_name_of"]


def model_name_of(model: Any) -> str:
    """The `model_name` given to `model` by `build`, or a description of it when it has none."""
    name = getattr(model, "model_name", None)
    return str(name) if name is not None else f"<unnamed {type(model).__name__}>"


def model_loss_keys(model: Any, network: Any) -> List[str]:
    """The keys of the losses that ops in `network` update `model` with (in any mode or epoch), sorted.

    Args:
        model: A model built with `build`.
        network: The network whose ops (and Schedulers of ops) are searched.

    Returns:
        The loss keys of every op (an UpdateOp) that uses `model` and declares losses.

    Example:
        >>> # network = Network([ModelOp(model, "x", "y_pred"), CrossEntropy(...), UpdateOp(model, loss_name="ce")])
        >>> # model_loss_keys(model, network) -> ['ce']
    """
    keys = set()
    for op in get_current_items(getattr(network, "ops", None) or []):
        losses = op.get_fe_loss_keys() if hasattr(op, "get_fe_loss_keys") else set()
        if losses and any(used is model for used in op.get_fe_models()):
            keys |= set(losses)
    return sorted(keys)


class ModelMetricTrace(Trace):
    """A trace that watches one metric for one model; with no metric given, the model's loss key.

    Subclasses say what they write for a metric by overriding `outputs_for`. With `metric` None, the metric (and so
    the trace's inputs and outputs) is filled in when the Estimator sets `trace.system`, from the UpdateOp of `model`
    in `system.network`.

    Args:
        model: The model the metric belongs to.
        metric: The key to watch, or None for the model's loss.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Attributes:
        model: The model.
        metric: The watched key (None until resolved when the metric was left out).

    Raises:
        ValueError: When the System is attached, if the metric was left out and the model is updated with no loss or
            with several (the message names the trace, the model and the losses found).
    """

    def __init__(self,
                 model: Any,
                 metric: Optional[str],
                 mode: Union[None, str, Iterable[str]],
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        if metric is not None and not isinstance(metric, str):
            raise ValueError(f"{type(self).__name__} watches one metric (a key string), got {metric!r}")
        super().__init__(mode=mode, ds_id=ds_id)
        self.model = model
        self.metric: Optional[str] = None
        if not metric:  # FastEstimator's way: the one loss an UpdateOp already updates the model with
            losses = getattr(model, "loss_name", None)
            if isinstance(losses, Collection) and not isinstance(losses, str) and len(losses) == 1:
                metric = next(iter(losses))
        if metric:
            self._use_metric(metric)
            self.fe_monitor_names.add(metric)  # so the eval Essential averages it over each epoch

    @property
    def system(self) -> Any:  # type: ignore[override]
        """The run's System. Setting it (the Estimator does) resolves a left-out metric from `system.network`."""
        try:
            return self.__dict__["system"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no System yet: the Estimator attaches it") from None

    @system.setter
    def system(self, system: Any) -> None:
        self.__dict__["system"] = system  # 'system' in __dict__ is skipped by checkpoints
        if self.metric is None:
            self._use_metric(self._default_metric(getattr(system, "network", None)))

    def _default_metric(self, network: Any) -> str:
        name = type(self).__name__
        model_name = model_name_of(self.model)
        if network is None:
            raise ConfigurationError(f"{name} for model {model_name!r} was given no metric and there is no network to "
                                     f"find the model's loss in; pass metric=<key>")
        keys = model_loss_keys(self.model, network)
        if len(keys) == 1:
            return keys[0]
        if not keys:
            raise ConfigurationError(f"{name} cannot infer the loss of model {model_name!r}: no UpdateOp in the network "
                                     f"updates it with a loss_name. Pass metric=<key>, or use the model in an UpdateOp")
        raise ConfigurationError(f"{name}: model {model_name!r} is updated with several losses {keys}; pass the metric "
                                 f"to watch explicitly (metric=<key>)")

    def _use_metric(self, metric: str) -> None:
        self.metric = metric
        self.inputs = [metric]
        self.outputs = self.outputs_for(metric)

    def outputs_for(self, metric: str) -> List[str]:
        """The keys this trace writes when it watches `metric`.

        Args:
            metric: The watched key.

        Returns:
            The output keys (none by default).
        """
        return []

    def read_metric(self, data: Any) -> Any:
        """The value of the watched metric in `data`.

        Raises:
            KeyError: If nothing logged or produced the metric by now (the message names the trace, the key, the mode
                and the epoch).
        """
        metric = self.metric
        try:
            return data[metric]
        except KeyError:
            system = self.system
            raise KeyError(f"{type(self).__name__} watches {metric!r}, but no trace, op or Essential has written it "
                           f"in mode {system.mode!r}, epoch {system.epoch_idx}; available keys: {sorted(data)}"
                           ) from None
