"""`BaseNetwork`: runs the TensorOps of one step, framework-free; backends subclass it.

Per (mode, epoch, ds_id) the network resolves, once, which ops, postprocessing ops (pops) and slicers run, which keys
it needs from the pipeline, which of those go to the device, and which predictions it returns. Per step it only
runs the ops. Predictions come back as framework tensors and are converted to numpy lazily, the first time a trace
or pop reads them, so a loss nobody logs this step is never copied off the device.
"""
from __future__ import annotations

import functools
import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, MutableMapping, Optional, Sequence, Set,
                    Tuple, Union, overload)

from fe_core.config_error import ConfigurationError, ConfigurationTypeError
from fe_core.framework.registry import backend_for_model, get_backend
from fe_core.containers import filter_nones, to_list
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import Op, check_output_count
from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.schedule.scheduler import Scheduler, get_current_items
from fe_core.export import fe_export
from fe_core.misuse import (add_note, describe_inputs, described, find_unavailable_input, is_described, op_label,
                             rewrap, suggest_keys, unavailable_key_message, where)

__all__ = ["BaseNetwork", "PredictionBatch", "StepContext", "make_network", "collect_models"]

OpList = Union[None, Op, Scheduler, Sequence[Union[None, Op, Scheduler]]]


class PredictionBatch(MutableMapping[str, Any]):
    """A batch (numpy) overlaid with predictions (framework tensors) that become numpy on first read.

    Args:
        batch: The input batch (numpy arrays).
        predictions: The network's outputs as framework tensors.
        to_numpy: Converts one framework value to numpy.
    """

    __slots__ = ("_batch", "_pending", "_to_numpy")

    def __init__(self, batch: MutableMapping[str, Any], predictions: Dict[str, Any], to_numpy: Any) -> None:
        self._batch = batch
        self._pending = predictions
        self._to_numpy = to_numpy

    def __getitem__(self, key: str) -> Any:
        pending = self._pending
        if key in pending:
            value = self._to_numpy(pending.pop(key))
            self._batch[key] = value
            return value
        return self._batch[key]

    def __contains__(self, key: object) -> bool:
        return key in self._pending or key in self._batch

    def __setitem__(self, key: str, value: Any) -> None:
        self._pending.pop(key, None)
        self._batch[key] = value

    def __delitem__(self, key: str) -> None:
        found = self._pending.pop(key, _MISSING) is not _MISSING
        if key in self._batch:
            del self._batch[key]
            found = True
        if not found:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        pending = list(self._pending)  # reading a key while iterating converts it: iterate over snapshots
        yield from pending
        for key in list(self._batch):
            if key not in pending:
                yield key

    def __len__(self) -> int:
        return len(set(self._pending) | set(self._batch))

    def materialize(self) -> Dict[str, Any]:
        """Convert every pending prediction and return a plain dict."""
        return {key: self[key] for key in list(self)}


_MISSING = object()


def collect_models(ops: Iterable[Any]) -> List[Any]:
    """The distinct models used by `ops` (schedulers expanded), in order of first use."""
    models: List[Any] = []
    seen: Set[int] = set()
    for op in get_current_items(to_list(ops)):
        for model in sorted(op.get_fe_models(), key=lambda m: getattr(m, "model_name", "")) if isinstance(
                op, TensorOp) else []:
            if id(model) not in seen:
                seen.add(id(model))
                models.append(model)
    return models


# What run_ops needs of one op, looked up once per epoch: (op, forward, inputs, in_list, outputs, out_list, deletes).
_OpPlan = Tuple[Any, Callable[[Any, Dict[str, Any]], Any], List[str], bool, List[str], bool, Optional[List[str]]]


@dataclass(frozen=True)
class StepContext:
    """What `network(mode, epoch, ds_id, ...)` resolved for the steps run inside its `with` block: built once per call
    and replaced, never edited, while it is in force (a backend that runs a variant of the op plan for a while swaps
    in `dataclasses.replace(ctx, op_plan=...)` and puts the context back).

    Attributes:
        mode: The mode (None outside a `with` block).
        epoch: The epoch.
        ds_id: The dataset id.
        inputs: Keys the ops read from the batch.
        gpu_inputs: The batch keys moved to the device for the step.
        outputs: Keys `run_step` returns.
        ops: The TensorOps in force.
        op_plan: Each op compiled for the step loop (`_plan_op`).
        postprocessing: The NumpyOps run on the step's outputs.
        slicers: The Slicers in force.
        models: The models the ops use.
        state: The `state` dict ops receive ({} outside a `with` block).
    """
    mode: Optional[str] = None
    epoch: int = 0
    ds_id: str = ""
    inputs: Set[str] = field(default_factory=set)
    gpu_inputs: List[str] = field(default_factory=list)
    outputs: Set[str] = field(default_factory=set)
    ops: List[TensorOp] = field(default_factory=list)
    op_plan: List[_OpPlan] = field(default_factory=list)
    postprocessing: List[NumpyOp] = field(default_factory=list)
    slicers: List[Any] = field(default_factory=list)
    models: List[Any] = field(default_factory=list)
    state: Dict[str, Any] = field(default_factory=dict)


_NO_CONTEXT = StepContext()  # outside a `with network(...)` block


def _plan_op(op: Any, warmup: bool = False) -> _OpPlan:
    """Resolve `op` for `BaseNetwork.run_ops`. A generic op's backend kernel is called directly (what
    `TensorOp.forward` would do, without its per-call lookup). In warmup the op runs through `_checked_forward`."""
    forward = op.forward
    kernel = getattr(op, "_kernel", None)
    if kernel is not None and type(op).forward is TensorOp.forward and "forward" not in vars(op):
        forward = functools.partial(kernel, op)
    if warmup:
        forward = _checked_forward(op, forward, kernel)
    return (op, forward, op.inputs, op.in_list, op.outputs, op.out_list, getattr(op, "fe_deletes", None) or None)


def _checked_forward(op: Any, forward: Callable[[Any, Dict[str, Any]], Any],
                     kernel: Any) -> Callable[[Any, Dict[str, Any]], Any]:
    """`forward` with the checks that run only in warmup (so an ordinary step pays nothing for them).

    Before the call: the op's own framework-free input check (`op.fe_check_inputs(data, state)`, e.g. a regression
    loss comparing shapes) and its kernel's (`kernel.fe_check(op, data, state)`, e.g. cross entropy's label range, or
    UpdateOp checking that some gradient reaches the model). After it: an op declaring outputs must return a value.
    """
    checks = []
    op_check = getattr(op, "fe_check_inputs", None)
    if callable(op_check):
        checks.append(op_check)
    kernel_check = getattr(kernel, "fe_check", None)
    if callable(kernel_check):
        checks.append(functools.partial(kernel_check, op))
    outputs = op.outputs

    def checked(data: Any, state: Dict[str, Any]) -> Any:
        for check in checks:
            check(data, state)
        result = forward(data, state)
        if outputs and result is None:
            raise described(ValueError(f"{op_label(op)} returned None in {where(state)}, but it declares outputs "
                                       f"{outputs}: its forward must return the value(s) to write there"))
        return result

    return checked


_ANSI_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # terminal escape sequences (colours, bold)


def explain_with_warmup_checks(op: Any, store: Mapping[str, Any], state: Dict[str, Any], error: BaseException) -> None:
    """An op failed outside warmup: run the checks warmup runs on its inputs (e.g. cross entropy's label range), and
    raise the named error they give, chained to `error`, so a bad batch late in training reads as in warmup.
    Returns when no check applies or they all pass."""
    checks = []
    op_check = getattr(op, "fe_check_inputs", None)
    if callable(op_check):
        checks.append(op_check)
    kernel_check = getattr(getattr(op, "_kernel", None), "fe_check", None)
    if callable(kernel_check):
        checks.append(functools.partial(kernel_check, op))
    if not checks or any(key not in store for key in op.inputs):
        return
    data = [store[key] for key in op.inputs] if op.in_list else store[op.inputs[0]] if op.inputs else None
    try:
        for check in checks:
            check(data, state)
    except Exception as named:  # pylint: disable=broad-except
        if is_described(named):
            raise named from error


# The Network class of each built-in backend, as messages name it.
_NETWORK_OF = {"torch": "fe.network.TorchNetwork", "tf": "fe.network.TFNetwork"}


@fe_export("fe.network.BaseNetwork")
class BaseNetwork:
    """The framework-free part of a Network: key resolution, op execution, slicing and postprocessing.

    Backends subclass it and implement `_run_step` (run `self.run_ops` on device tensors and return predictions); they
    may override `_begin_epoch` / `_end_epoch` to prepare per-epoch resources.

    Args:
        target_type: The backend name ('torch', 'tf', or a registered test backend).
        device: The backend's device (None to ask the backend for its default).
        ops: TensorOps (or Schedulers of them) run on every step.
        postprocessing: NumpyOps run on the numpy batch after the ops (and after un-slicing).
        slicers: Slicers cutting each batch into minibatches for the ops.

    Raises:
        ValueError: For a mix of mixed-precision and full-precision models, or unsupported pops.
        TypeError: When an op, pop or slicer is of the wrong kind.
    """

    def __init__(self,
                 target_type: str,
                 device: Any,
                 ops: OpList,
                 postprocessing: OpList = None,
                 slicers: Any = None) -> None:
        self.backend = get_backend(target_type)
        self.target_type = target_type
        self.device = device if device is not None else self.backend.default_device()
        self.ops: List[Any] = filter_nones(to_list(ops))
        self.postprocessing: List[Any] = filter_nones(to_list(postprocessing))
        self.slicers: List[Any] = filter_nones(to_list(slicers))
        self._verify_inputs()
        self._verify_model_frameworks()
        for op in get_current_items(self.ops):
            op.build(framework=self.target_type, device=self.device)
        self.models = collect_models(self.ops)
        precisions = {bool(getattr(model, "mixed_precision", False)) for model in self.models}
        if len(precisions) > 1:
            raise ValueError("Cannot mix full precision and mixed-precision models in one Network: " + ", ".join(
                f"{getattr(m, 'model_name', m)}={bool(getattr(m, 'mixed_precision', False))}" for m in self.models))
        self.mixed_precision = precisions == {True}
        self.ctx_lock = threading.Lock()
        self._clear_ctx()

    # ------------------------------------------------------------------ construction checks
    def _verify_inputs(self) -> None:
        from fe_core.op.numpyop import Batch, RemoveIf  # pylint: disable=import-outside-toplevel
        from fe_core.slicer import Slicer  # pylint: disable=import-outside-toplevel
        for op in get_current_items(self.ops):
            if not isinstance(op, TensorOp):
                raise ConfigurationTypeError(f"Network ops must be TensorOps, got {type(op).__name__} ({op!r})")
        for op in get_current_items(self.postprocessing):
            if not isinstance(op, NumpyOp):
                raise ConfigurationTypeError(f"Network postprocessing ops must be NumpyOps, got {type(op).__name__}")
            if isinstance(op, RemoveIf):
                raise ValueError("Filtering (RemoveIf) is not supported in network postprocessing")
            if isinstance(op, Batch):
                raise ValueError("Postprocessing data is already batched, so Batch is not supported there")
        for slicer in get_current_items(self.slicers):
            if not isinstance(slicer, Slicer):
                raise ConfigurationTypeError(f"Network slicers must be Slicers, got {type(slicer).__name__}")

    def _verify_model_frameworks(self) -> None:
        """Refuse, before any op is built or step run, a model of another framework than this Network's (a torch
        model in a TFNetwork fails deep in its first step otherwise), naming the model and the Network to use."""
        for model in collect_models(self.ops):
            owner = backend_for_model(model)
            if owner is None or owner.name == self.target_type:
                continue
            network = _NETWORK_OF.get(owner.name, f"the {owner.name} backend's Network")
            raise ConfigurationError(
                f"{type(self).__name__} got model {getattr(model, 'model_name', type(model).__name__)!r}, a "
                f"{owner.name} model ({type(model).__module__}.{type(model).__qualname__}); a {type(self).__name__} "
                f"runs {self.target_type} models only. Use fe.Network(ops=...), which picks the Network from the "
                f"models, or {network}")

    def _clear_ctx(self) -> None:
        self.ctx: StepContext = _NO_CONTEXT

    # ------------------------------------------------------------------ queries
    def get_scheduled_items(self, mode: str) -> List[Any]:
        """Items whose schedules matter for `mode` (ops, optimizers in train, pops, slicers)."""
        items = list(self.ops)
        if mode == "train":
            items += [getattr(model, "optimizer", None) for model in self.models]
        return items + list(self.postprocessing) + list(self.slicers)

    def get_loss_keys(self) -> Set[str]:
        """The keys of every loss an op updates a model with (all epochs and modes)."""
        keys: Set[str] = set()
        for op in get_current_items(self.ops):
            keys |= op.get_fe_loss_keys()
        return keys

    def get_keys(self, mode: str, epoch: int, ds_id: str = "",
                 desired_keys: Optional[Set[str]] = None) -> Tuple[Set[str], List[str], Set[str], Set[str]]:
        """Resolve the network's keys for one (mode, epoch, ds_id).

        Args:
            mode: The mode.
            epoch: The epoch.
            ds_id: The dataset id.
            desired_keys: The keys traces want (None: every key the ops and pops produce).

        Returns:
            (pipeline keys the network needs, keys that go to the device, keys the ops return, every key the network
            produces including pops').

        Raises:
            ValueError: If slicers are used and a postprocessing op reads a prediction no slicer un-slices. Other keys
                no slicer un-slices are passed through (sliced inputs, whole) or dropped (predictions), with a
                one-time warning.
        """
        slicers = get_current_items(self.slicers, mode, epoch, ds_id=ds_id)
        ops = get_current_items(self.ops, mode, epoch, ds_id=ds_id)
        pops = get_current_items(self.postprocessing, mode, epoch, ds_id=ds_id)
        needed: Set[str] = set()
        slice_inputs: Set[str] = set()
        unslice_inputs: Set[str] = set()
        for slicer in slicers:
            slice_inputs.update(slicer.slice_inputs)
            unslice_inputs.update(slicer.unslice_inputs)
        needed |= slice_inputs
        device_inputs: List[str] = []
        op_produced: Set[str] = set()
        for op in ops:
            for key in op.inputs:
                if key not in op_produced and key not in device_inputs:
                    device_inputs.append(key)
            op_produced.update(op.outputs)
        needed.update(device_inputs)
        needed |= unslice_inputs - op_produced
        produced = set(op_produced)
        pop_inputs: Set[str] = set()  # keys pops read before any pop produced them
        pop_produced: Set[str] = set()
        for op in pops:
            for key in op.inputs:
                if key not in produced:
                    needed.add(key)
                if key not in pop_produced:
                    pop_inputs.add(key)
            produced.update(op.outputs)
            pop_produced.update(op.outputs)
        outputs = set(op_produced)
        if desired_keys is not None:
            outputs = (outputs & set(desired_keys)) | (pop_inputs & op_produced)
        if slicers:
            wanted = set(desired_keys) if desired_keys is not None else set(produced)
            wanted |= pop_inputs
            # Keys produced by pops are computed after un-slicing, so they never need un-slicing.
            not_unsliced = (wanted & (slice_inputs | op_produced)) - unslice_inputs
            if not_unsliced:
                outputs -= not_unsliced
                self._warn_not_unsliced(not_unsliced, slice_inputs, pop_inputs, mode, epoch, ds_id)
        return needed, device_inputs, outputs, produced

    def _warn_not_unsliced(self, keys: Set[str], slice_inputs: Set[str], pop_inputs: Set[str], mode: str,
                           epoch: int, ds_id: str) -> None:
        """Keys wanted after the ops that no slicer un-slices: a sliced input comes back whole (as the batch had it),
        a prediction is dropped. Warned once per network and key (FastEstimator ran such networks as long as nobody
        read the prediction). A postprocessing op reading a dropped prediction could never run: that is an error."""
        dropped = keys - slice_inputs
        unreadable = sorted(dropped & pop_inputs)
        if unreadable:
            raise ValueError(f"Since you are using Slicers, postprocessing ops can only read predictions a slicer "
                             f"un-slices, but no slicer un-slices {unreadable} in mode {mode!r}, epoch {epoch}, ds_id "
                             f"{ds_id!r}: add them to a slicer's `unslice` keys (e.g. MeanUnslicer for losses)")
        warned = self.__dict__.setdefault("_warned_not_unsliced", set())
        new = sorted(keys - warned)
        if not new:
            return
        warned.update(new)
        passed = [key for key in new if key in slice_inputs]
        dropped_new = [key for key in new if key not in slice_inputs]
        parts = []
        if passed:
            parts.append(f"sliced input(s) {passed} come back whole, as the batch had them")
        if dropped_new:
            parts.append(f"prediction(s) {dropped_new} are dropped")
        warnings.warn(f"No slicer un-slices key(s) {new} (mode {mode!r}, epoch {epoch}, ds_id {ds_id!r}): "
                      f"{'; '.join(parts)}. Name them in a slicer's `unslice` keys to fuse them back.",
                      UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ epoch context
    def __call__(self,
                 mode: str,
                 epoch: int,
                 ds_id: str = "",
                 desired_output_keys: Optional[Set[str]] = None,
                 warmup: bool = False,
                 eager: bool = False,
                 warmup_rows: Optional[int] = None) -> "BaseNetwork":
        """Configure the network for one (mode, epoch, ds_id); use the result as a context manager.

        Args:
            mode: The mode whose ops run.
            epoch: The epoch whose schedules apply.
            ds_id: The dataset id.
            desired_output_keys: The keys `run_step` must return (None: every key).
            warmup: A warmup step: checks run, no weights change.
            eager: Run TensorFlow ops eagerly.
            warmup_rows: In warmup, a backend may run its models on this many samples of the batch (the Estimator's
                warmup checks keys, shapes and gradient paths, which a few samples decide as well as all of them);
                whenever that fails, it runs the whole batch instead. None: always the whole batch.

        Example:
            >>> # with network(mode="train", epoch=1, ds_id=""):  # doctest: +SKIP
            >>> #     prediction = network.run_step(batch)
        """
        if not self.ctx_lock.acquire(blocking=False):
            raise ValueError("You cannot configure a Network while it is in use (it is already inside a `with`).")
        try:
            inputs, gpu_inputs, outputs, _ = self.get_keys(mode, epoch, ds_id, desired_output_keys)
            ops = get_current_items(self.ops, mode, epoch, ds_id=ds_id)
            slicers = get_current_items(self.slicers, mode, epoch, ds_id=ds_id)
            if slicers:
                from fe_core.slicer import sanity_assert_slicers  # pylint: disable=import-outside-toplevel
                sanity_assert_slicers(slicers)
            gradient_ops = [op for op in ops if op.fe_retain_graph() is not None]
            for index, op in enumerate(gradient_ops):
                op.fe_retain_graph(index != len(gradient_ops) - 1)
            state = {
                "warmup": warmup,
                "warmup_rows": warmup_rows if warmup else None,
                "mode": mode,
                "req_grad": bool(gradient_ops),
                "epoch": epoch,
                "ds_id": ds_id,
                "deferred": {},
                "eager": eager,
            }
            self.ctx = StepContext(mode=mode, epoch=epoch, ds_id=ds_id, inputs=inputs, gpu_inputs=gpu_inputs,
                                   outputs=outputs, ops=ops, op_plan=[_plan_op(op, warmup) for op in ops],
                                   postprocessing=get_current_items(self.postprocessing, mode, epoch, ds_id=ds_id),
                                   slicers=slicers, models=collect_models(ops), state=state)
            self.load_epoch_optimizers(epoch, self.ctx.models)
            self._begin_epoch()
        except BaseException:
            self._clear_ctx()
            raise
        finally:
            self.ctx_lock.release()
        return self

    def load_epoch_optimizers(self, epoch: int, models: Optional[Iterable[Any]] = None) -> None:
        """Set each model's `current_optimizer` to the optimizer scheduled for `epoch`.

        Args:
            epoch: The epoch.
            models: The models to update (default: every model of the network).
        """
        for model in self.models if models is None else models:
            optimizer = getattr(model, "optimizer", None)
            model.current_optimizer = optimizer.get_current_value(epoch) if isinstance(optimizer,
                                                                                       Scheduler) else optimizer

    def __enter__(self) -> "BaseNetwork":
        if not self.ctx_lock.acquire(blocking=False):
            raise ValueError("This network is already in use.")
        if not self.ctx.state:
            self.ctx_lock.release()
            raise ValueError("Configure the network before entering it: `with network(mode, epoch, ds_id):`")
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._end_epoch()
        finally:
            self._clear_ctx()
            self.ctx_lock.release()

    def _begin_epoch(self) -> None:
        """Backend hook: called after the epoch context is resolved."""

    def _end_epoch(self) -> None:
        """Backend hook: called when the epoch context is left."""

    # ------------------------------------------------------------------ stepping
    def run_ops(self, store: MutableMapping[str, Any], state: Dict[str, Any]) -> None:
        """Run this epoch's ops on `store` (framework tensors), then any deferred updates.

        Backends call this inside their `_run_step` (under their gradient tape, autocast, tf.function, ...).
        """
        op = None
        try:
            for op, forward, inputs, in_list, outputs, out_list, deletes in self.ctx.op_plan:
                result = forward([store[key] for key in inputs] if in_list else store[inputs[0]], state)
                if outputs:
                    if out_list:
                        if len(result) != len(outputs):
                            check_output_count(op, outputs, len(result))
                        for key, value in zip(outputs, result):
                            store[key] = value
                    else:
                        store[outputs[0]] = result
                if deletes:
                    for key in deletes:
                        store.pop(key, None)
        except Exception as error:  # costs nothing until an op fails
            if op is None or is_described(error):
                raise
            if not state.get("warmup"):
                explain_with_warmup_checks(op, store, state, error)  # e.g. a label out of range in a later batch
            key = error.args[0] if isinstance(error, KeyError) and error.args else None
            if isinstance(key, str) and key in op.inputs and key not in store:
                raise described(KeyError(self._unavailable_key(op, key, store))) from None
            message = self._op_failure(op, store, error)
            wrapped = rewrap(error, message)
            if wrapped is None:
                add_note(error, message)
                raise
            raise wrapped from error
        deferred = state["deferred"]
        if deferred:
            for functions in deferred.values():
                for function in functions:
                    function()
            deferred.clear()

    # ------------------------------------------------------------------ failures (never on an ordinary step)
    def _where(self) -> str:
        return f"mode {self.ctx.mode!r}, epoch {self.ctx.epoch}, ds_id {self.ctx.ds_id!r}"

    def _unavailable_key(self, op: Any, key: str, store: Mapping[str, Any]) -> str:
        """The message for `op` reading `key`, which no earlier op wrote and the batch lacks."""
        index = next((i for i, item in enumerate(self.ctx.ops) if item is op), 0)
        earlier = [out for item in self.ctx.ops[:index] for out in item.outputs]
        pipeline_keys = [name for name in store if name not in earlier]
        return unavailable_key_message(self.ctx.ops, index, key, list(dict.fromkeys(earlier)), pipeline_keys,
                                       self._where())

    def _op_failure(self, op: Any, store: Mapping[str, Any], error: BaseException) -> str:
        """The message for an exception raised inside `op`: the op (and model), where, its inputs' shapes, what the
        model expects (when the backend can tell) and the original error."""
        # Keras puts terminal colour codes (bold) into its messages: they are noise inside fe's message and in logs
        text = _ANSI_CODES.sub("", str(error))
        message = (f"{op_label(op)} failed in {self._where()} on inputs {describe_inputs(op.inputs, store)}: "
                   f"{type(error).__name__}: {text}")
        model = getattr(op, "model", None)
        if model is not None and getattr(op, "kernel_name", None) in ("model", "model_without_gradients"):
            hint = self._model_input_hint(model, [store[key] for key in op.inputs if key in store])
            if hint:
                message += f". {hint}"
        return message

    def _model_input_hint(self, model: Any, inputs: List[Any]) -> Optional[str]:
        """Backend hook: what input `model` expects (and why `inputs` may not fit), when it can be known."""
        return None

    def _run_step(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """Backend hook: run the ops on `batch` (what `_device_batch` made of the pipeline's batch) and return the
        predictions named in `self.ctx.outputs` as (detached) framework tensors."""
        raise NotImplementedError

    def _device_batch(self, batch: Mapping[str, Any]) -> Dict[str, Any]:
        """The inputs the ops read (`ctx.gpu_inputs`), as `_run_step` takes them. Backends may override this to
        convert the values to device tensors on the way (raising `_missing_input` for an absent key)."""
        try:
            return {key: batch[key] for key in self.ctx.gpu_inputs}
        except KeyError as error:
            raise self._missing_input(error.args[0], batch) from None

    def _missing_input(self, key: str, batch: Mapping[str, Any]) -> KeyError:
        """The error for an input key the ops read but `batch` lacks, naming its readers and the context."""
        readers = [type(op).__name__ for op in self.ctx.ops if key in op.inputs]
        message = (f"{', '.join(readers)} read(s) key {key!r}, which the batch does not have in mode "
                   f"{self.ctx.mode!r}, epoch {self.ctx.epoch}, ds_id {self.ctx.ds_id!r}; batch keys: "
                   f"{sorted(batch)}")
        found = find_unavailable_input(self.ctx.ops, batch)
        if found is not None and found[1] == key:
            index, _, produced = found
            message += f", earlier network ops' outputs: {produced}"
            close = suggest_keys(key, list(batch) + produced, self.ctx.ops[index], self.ctx.ops[:index], batch,
                                 self.ctx.ops)
            if close:
                message += ". Did you mean " + " or ".join(repr(name) for name in close) + "?"
        return KeyError(message)

    def run_step(self, batch: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        """Run one step (slicers, ops, un-slicing, postprocessing) on a numpy batch.

        Must be called inside `with network(mode, epoch, ds_id):`. The result maps the input keys and the
        predictions (numpy on first read) and may reuse `batch`.
        """
        if not self.ctx.state:
            raise ValueError("Call run_step inside `with network(mode=..., epoch=..., ds_id=...):`")
        if self.ctx.slicers:
            from fe_core.slicer import forward_slicers, reverse_slicers  # pylint: disable=import-outside-toplevel
            to_numpy = self.backend.to_numpy
            results = []
            for minibatch in forward_slicers(self.ctx.slicers, batch, tensors=self.backend):
                predictions = self._run_step(self._device_batch(minibatch))
                merged = dict(minibatch)
                merged.update({key: to_numpy(value) for key, value in predictions.items()})
                results.append(merged)
            result: MutableMapping[str, Any] = dict(reverse_slicers(self.ctx.slicers, results, batch,
                                                                    tensors=self.backend))
        else:
            result = PredictionBatch(batch, self._run_step(self._device_batch(batch)), self.backend.to_numpy)
        state = self.ctx.state
        for op in self.ctx.postprocessing:
            data = [result[key] for key in op.inputs] if op.in_list else result[op.inputs[0]]
            output = op.forward_batch(data, state)
            if op.outputs:
                if op.out_list:
                    for key, value in zip(op.outputs, output):
                        result[key] = value
                else:
                    result[op.outputs[0]] = output
        return result

    # ------------------------------------------------------------------ inference
    @overload
    def transform(self, data: Dict[str, Any], mode: str, epoch: int = 1, ds_id: str = "") -> Dict[str, Any]:
        ...

    @overload
    def transform(self, data: Any, mode: str, epoch: int = 1, ds_id: str = "") -> List[Dict[str, Any]]:
        ...

    def transform(self, data: Any, mode: str, epoch: int = 1, ds_id: str = "") -> Any:
        """Run the network on one batch (a dict), a list of batches, or every batch of a Pipeline.

        As in FastEstimator, this is one real step of `mode`: in 'train' mode UpdateOps run and the models' weights
        change (scripts that step a model by hand rely on it); in other modes no weights change.

        Args:
            data: A dict of arrays or tensors (one batch: numpy arrays, torch or tf tensors), an iterable of such
                dicts, or a Pipeline (every batch of its `mode` data, unshuffled).
            mode: The mode to run the ops of ('train', 'eval', 'test', 'infer').
            epoch: The epoch whose schedules apply.
            ds_id: The dataset id.

        Returns:
            The predictions overlaid on the input batch, for a dict; else a list of them. Values are the network's
            framework tensors on the host (torch tensors for a torch network, tf tensors for a TensorFlow one, as
            FastEstimator returns them); strings and other non-numeric values are left as they are. Each is a dict
            whose `maps` attribute holds FastEstimator's ChainMap layers: `maps[0]` what the ops produced (a key a
            `Delete` removed is not there), `maps[1]` the input batch.

        Raises:
            TypeError: If `data` is not a dict, an iterable of dicts, or a Pipeline.
        """
        from fe_core.framework.public import to_host  # pylint: disable=import-outside-toplevel
        from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
        single = isinstance(data, Mapping)
        if not single and not isinstance(data, Pipeline):
            try:
                data = list(data)
            except TypeError:
                raise TypeError(f"Network.transform takes a dict of arrays, an iterable of such dicts, or a Pipeline; "
                                f"got {type(data).__name__}") from None
            for index, batch in enumerate(data):
                if not isinstance(batch, Mapping):
                    raise TypeError(f"Network.transform: element {index} of the data is a {type(batch).__name__}, "
                                    f"not a dict of arrays")
        results = []
        with self(mode=mode, epoch=epoch, ds_id=ds_id, eager=single and not self.slicers):
            if isinstance(data, Pipeline):
                with data(mode=mode, epoch=epoch, ds_id=ds_id, shuffle=False) as loader:
                    for batch in loader:  # numpy, or a framework loader's own tensors
                        results.append(self._transformed(to_host(dict(batch))))
            else:
                for batch in [data] if single else data:
                    results.append(self._transformed(to_host(dict(batch))))
        return results[0] if single else results

    def _transformed(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """One batch's `transform` result: a dict of this backend's host tensors, with FastEstimator's
        `maps` = [predictions, inputs] (see `fe_core.transform_result`)."""
        from fe_core.framework.public import to_public  # pylint: disable=import-outside-toplevel
        from fe_core.transform_result import transform_result  # pylint: disable=import-outside-toplevel
        inputs = dict(batch)  # run_step may write predictions into `batch`
        return transform_result(self._materialize(self.run_step(batch)), inputs,
                                lambda values: to_public(values, self.backend))

    @staticmethod
    def _materialize(result: MutableMapping[str, Any]) -> Dict[str, Any]:
        if isinstance(result, PredictionBatch):
            return result.materialize()
        return dict(result)


def make_network(ops: OpList,
                 pops: OpList = None,
                 slicers: Any = None,
                 default_backend: Optional[str] = None) -> BaseNetwork:
    """Create the Network of whichever backend owns the models in `ops`.

    Args:
        ops: The TensorOps (the models are found in them).
        pops: Postprocessing NumpyOps.
        slicers: Slicers.
        default_backend: The backend to use when `ops` contain no model.

    Raises:
        ValueError: If models of different frameworks are mixed, model names collide (case-insensitively, as file
            systems may), a model belongs to no known backend, or there is no model and no default backend.
    """
    models = collect_models(filter_nones(to_list(ops)))
    backends = {}
    names: Dict[str, str] = {}
    for model in models:
        backend = backend_for_model(model)
        if backend is None:
            raise ValueError(f"No installed backend recognises model {getattr(model, 'model_name', model)!r} of type "
                             f"{type(model).__module__}.{type(model).__qualname__}")
        backends[backend.name] = backend
        name = str(getattr(model, "model_name", ""))
        if name.lower() in names:
            raise ConfigurationError(f"Model names must be unique (case-insensitive): {names[name.lower()]!r} and "
                                     f"{name!r}")
        names[name.lower()] = name
    if len(backends) > 1:
        raise ConfigurationError("A Network cannot mix frameworks; found models of: " + ", ".join(sorted(backends)))
    if backends:
        backend = next(iter(backends.values()))
    elif default_backend is not None:
        backend = get_backend(default_backend)
    else:
        raise ConfigurationError("The Network's ops contain no model and no default backend was given")
    return backend.make_network(ops, pops, slicers)
