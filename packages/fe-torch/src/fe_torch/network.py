"""`TorchNetwork`: fe-core's `BaseNetwork` running its ops on torch tensors on one device.

Started by torchrun, it trains data-parallel: its trainable models are wrapped in DistributedDataParallel for the
training steps (see `fe_torch.distributed`). Per (mode, epoch, ds_id) it decides once whether the step needs gradients (`torch.no_grad` otherwise) and autocast,
and defers the trailing UpdateOps so that several models updated in one step (a GAN's generator and discriminator)
all compute their gradients before any weight changes. In the Estimator's warmup (`warmup_rows`), models run on the
batch's first two samples and their outputs are repeated back to the batch's length, so a warmup step costs a
fraction of a forward pass; any failure reruns the step on the whole batch. Per step it only moves the inputs the ops read to the device,
runs the ops, and hands back the detached outputs that traces asked for; fe-core converts them to numpy only when a
trace or postprocessing op reads them. Models are moved to the device once (by `build`); optimizer state is created
on, and stays on, that device.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, ContextManager, Dict, List, Mapping, Optional

import numpy as np
import torch
from fe_core.network import BaseNetwork
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.schedule.scheduler import get_current_items

from fe_torch import distributed, sharding
from fe_torch.devices import NUMERIC_KINDS, model_device, standard_layout, to_device
from fe_torch.kernels import expected_input_hint
from fe_torch.precision import autocast_context
from fe_core.export import fe_export

__all__ = ["TorchNetwork"]


def _few_rows_suit(op: Any) -> bool:
    """Whether a warmup may run `op` on a few samples: a ModelOp, unless its model is compiled (`torch.compile`
    would compile a second graph for the second batch size)."""
    return isinstance(op, ModelOp) and not hasattr(op.model, "_orig_mod")


def _few_rows_model_call(forward: Callable[[Any, Dict[str, Any]], Any],
                         rows: int) -> Callable[[Any, Dict[str, Any]], Any]:
    """A ModelOp's call that runs the model on the first `rows` samples of its inputs and repeats the outputs' rows
    back to the batch's length (the warmup reads their keys and shapes, never their values). Inputs whose first axis
    is not the batch's are passed whole; a model that fails on the few samples runs on all of them."""

    def call(data: Any, state: Dict[str, Any]) -> Any:
        inputs = data if isinstance(data, list) else [data]
        first = next((x for x in inputs if isinstance(x, torch.Tensor) and x.ndim), None)
        size = None if first is None else first.shape[0]
        if size is None or size <= rows:
            return forward(data, state)
        few = [x[:rows] if isinstance(x, torch.Tensor) and x.ndim and x.shape[0] == size else x for x in inputs]
        try:
            result = forward(few if isinstance(data, list) else few[0], state)
        except Exception:  # pylint: disable=broad-except
            return forward(data, state)
        return _repeat_rows(result, rows, size)

    return functools.wraps(forward)(call) if hasattr(forward, "__name__") else call


def _repeat_rows(value: Any, rows: int, size: int) -> Any:
    """`value` (a tensor, or a list / tuple / dict of them) with every tensor of `rows` rows repeated to `size`."""
    if isinstance(value, torch.Tensor):
        if value.ndim and value.shape[0] == rows:
            copies = -(-size // rows)
            repeated = torch.cat([value] * copies)  # one op (indexing with an arange costs three on first use)
            return repeated if copies * rows == size else repeated[:size]
        return value
    if isinstance(value, list):
        return [_repeat_rows(item, rows, size) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_repeat_rows(item, rows, size) for item in value)
    if isinstance(value, dict):
        return {key: _repeat_rows(item, rows, size) for key, item in value.items()}
    return value


@fe_export("fe.network.TorchNetwork")
class TorchNetwork(BaseNetwork):
    """The Network of torch models.

    Args:
        ops: TensorOps (or Schedulers of them) run on every step.
        postprocessing: Postprocessing NumpyOps, run on the numpy batch after the ops (FastEstimator's name; `pops`
            is accepted too).
        slicers: Slicers cutting each batch into minibatches.
        device: The device to run on; None takes the backend's default (the first CUDA GPU, else the CPU).
        pops: The same as `postprocessing` (the name `fe.Network` uses).

    Example:
        >>> import numpy as np
        >>> from fe_core.build import build
        >>> from fe_core.op.tensorop import ModelOp
        >>> model = build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn="sgd", model_name="doc_linear")
        >>> network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y")])
        >>> tuple(network.transform({"x": np.ones((3, 2), dtype=np.float32)}, mode="infer")["y"].shape)
        (3, 1)
    """

    def __init__(self, ops: Any, postprocessing: Any = None, slicers: Any = None,
                 device: Optional[torch.device] = None, pops: Any = None) -> None:
        if postprocessing is not None and pops is not None:
            raise ValueError("TorchNetwork: give postprocessing ops as `postprocessing` or `pops`, not both")
        distributed.setup()  # started by torchrun: join the process group before choosing the device
        super().__init__(target_type="torch", device=device, ops=ops,
                         postprocessing=postprocessing if postprocessing is not None else pops, slicers=slicers)
        self.device = torch.device(self.device)
        self._on_cpu = self.device.type == "cpu"
        for model in self.models:
            if not isinstance(model, torch.nn.Module):
                raise TypeError(f"TorchNetwork got a model that is not a torch.nn.Module: "
                                f"{getattr(model, 'model_name', model)!r} ({type(model).__name__})")
            if model_device(model) != self.device:  # only for a model built elsewhere or moved by the user
                model.to(self.device)
            if getattr(model, "current_optimizer", None) is not None or getattr(model, "optimizer", None) is not None:
                distributed.wrap_model(model)  # data-parallel: DDP for training steps (no-op in one process)
        self._register_update_states()
        self._deferred_by_network: List[Any] = []
        self._grad_enabled = False
        self._autocast = False

    def _register_update_states(self) -> None:
        """Let each model reach its UpdateOps' accumulation state (saved with the optimizer by `save_model`)."""
        states: Dict[int, List[Dict[str, Any]]] = {id(model): [] for model in self.models}
        for op in get_current_items(self.ops):
            if isinstance(op, UpdateOp) and id(op.model) in states:
                states[id(op.model)].append(op.fe_backend_state)
        for model in self.models:
            model.fe_update_states = states[id(model)]

    # ------------------------------------------------------------------ epoch context
    def _begin_epoch(self) -> None:
        state = self.ctx.state
        self._grad_enabled = bool(state["req_grad"])
        self._autocast = self.mixed_precision
        self._deferred_by_network = []
        rows = state.get("warmup_rows")
        if rows and any(_few_rows_suit(op) for op in self.ctx.ops):
            self._full_plan = self.ctx.op_plan
            self.ctx = dataclasses.replace(self.ctx, op_plan=[
                (op, _few_rows_model_call(forward, rows), *rest) if _few_rows_suit(op) else (op, forward, *rest)
                for op, forward, *rest in self.ctx.op_plan])
            self._run_step = self._few_rows_warmup_step  # an instance attribute: ordinary steps never see it
        for op in self.ctx.ops:
            if isinstance(op, UpdateOp):
                op.fe_backend_state.pop("params", None)  # re-read requires_grad once per epoch
                if op.model.current_optimizer is None:
                    raise ValueError(f"UpdateOp cannot update model {op.model.model_name!r}: it has no optimizer in "
                                     f"mode {self.ctx.mode!r}, epoch {self.ctx.epoch}, ds_id {self.ctx.ds_id!r}")
        trailing = []
        for op in reversed(self.ctx.ops):
            if not isinstance(op, UpdateOp):
                break
            trailing.append(op)
        if len(trailing) == 1 and not any(getattr(op, "defer", False) for op in self.ctx.ops):
            return  # one update, after every other op, and nothing else deferred: deferring it would change nothing
        for op in trailing:
            if not op.defer:
                op.defer = True
                self._deferred_by_network.append(op)

    def _end_epoch(self) -> None:
        for model in self.models:
            if model.__dict__.get("fe_sharding") is not None:
                sharding.reshard(model)
        for op in self._deferred_by_network:
            op.defer = False
        self._deferred_by_network = []
        self.__dict__.pop("_run_step", None)
        self.__dict__.pop("_full_plan", None)

    def _few_rows_warmup_step(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """A warmup step whose models run on a few samples; if anything fails, the step again on the whole batch
        (for the error's true shapes, and for code that depends on the batch's size)."""
        try:
            return TorchNetwork._run_step(self, dict(batch))
        except Exception:  # pylint: disable=broad-except
            self.ctx = dataclasses.replace(self.ctx, op_plan=self.__dict__.pop("_full_plan"))
            self.ctx.state["warmup_rows"] = None
            del self._run_step
        return self._run_step(batch)

    def _model_input_hint(self, model: Any, inputs: List[Any]) -> Optional[str]:
        return expected_input_hint(model, inputs) if isinstance(model, torch.nn.Module) else None

    # ------------------------------------------------------------------ stepping
    def _grad_context(self) -> ContextManager[None]:
        return torch.enable_grad() if self._grad_enabled else torch.no_grad()

    def _device_batch(self, batch: Mapping[str, Any]) -> Dict[str, Any]:
        """The inputs the ops read, as tensors on the device (numpy arrays are wrapped without a copy on the CPU)."""
        device, cpu = self.device, self._on_cpu
        store = {}
        for key in self.ctx.gpu_inputs:
            try:
                value = batch[key]
            except KeyError:
                raise self._missing_input(key, batch) from None
            # to_device's common case inline: this runs for every input of every step
            if cpu and type(value) is np.ndarray and value.dtype.kind in NUMERIC_KINDS and value.flags.writeable:
                store[key] = torch.from_numpy(standard_layout(value))  # row-major, as torch's layout guess needs
            else:
                store[key] = to_device(value, device)
        return store

    def _run_step(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        store = batch  # already on the device (_device_batch), and the caller's to keep: the ops write into it
        if self._autocast:
            with self._grad_context(), autocast_context(self.device, True):
                self.run_ops(store, self.ctx.state)
        elif torch.is_grad_enabled() is self._grad_enabled:
            self.run_ops(store, self.ctx.state)
        else:
            with self._grad_context():
                self.run_ops(store, self.ctx.state)
        predictions = {}
        for key in self.ctx.outputs:
            if key in store:
                value = store[key]
                predictions[key] = value.detach() if isinstance(value, torch.Tensor) else value
        return predictions
