"""Torch kernels of fe-core's generic TensorOps: model call, update, the losses and argmax.

Each kernel has the signature `kernel(op, data, state)` of `TensorOp.forward`; `TorchBackend.kernel_<name>` hands them
out. They run inside `TorchNetwork._run_step`, under `torch.no_grad` (when no op of the epoch computes gradients)
and autocast (for mixed-precision models).

Gradients are computed with `torch.autograd.grad` for the updated model's own trainable parameters only, so a loss
never writes into another model's `.grad` (a GAN's generator loss, which flows through the discriminator, leaves the
discriminator's gradients alone), and `.grad` is set only for the duration of the optimizer step.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import torch
from fe_core.backend.crossentropy import EPSILON  # probabilities are clipped to [EPSILON, 1 - EPSILON] for the log
from fe_core.misuse import described

from fe_torch import distributed, sharding
from fe_torch.backend import crossentropy, losses, reductions
from fe_torch.backend.models import apply_gradients, trainable_parameters

__all__ = ["model_kernel", "update_kernel", "cross_entropy_kernel", "mean_squared_error_kernel", "l1_loss_kernel",
           "argmax_kernel", "trainable_parameters", "EPSILON", "expected_input_hint", "check_cross_entropy_labels",
           "check_update_reaches_model"]


Tensor = torch.Tensor


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", type(model).__name__))


def _where(state: Dict[str, Any]) -> str:
    return f"mode {state.get('mode')!r}, epoch {state.get('epoch')}, ds_id {state.get('ds_id')!r}"


# ---------------------------------------------------------------------------------------------------- model call
def _resolve_layers(op: Any) -> List[torch.nn.Module]:
    """The modules named by `op.intermediate_layers` (cached on the op after the first call)."""
    cached = getattr(op, "_fe_torch_layers", None)
    if cached is not None:
        return cached
    model = op.model
    named = dict(model.named_modules())
    children = list(model.children())
    modules = []
    for layer in op.intermediate_layers:
        if isinstance(layer, int) and not isinstance(layer, bool):
            if not -len(children) <= layer < len(children):
                raise IndexError(f"ModelOp of model {_model_name(model)!r}: intermediate layer index {layer} is out "
                                 f"of range; the model has {len(children)} top-level children")
            modules.append(children[layer])
        elif isinstance(layer, str) and layer in named and layer:
            modules.append(named[layer])
        else:
            raise ValueError(f"ModelOp of model {_model_name(model)!r}: no layer named {layer!r}; layers are named "
                             f"{[name for name in named if name]} (or give an index into the top-level children)")
    op._fe_torch_layers = modules  # pylint: disable=protected-access
    return modules


def _capture(store: List[Any], index: int, module: torch.nn.Module, inputs: Any, output: Any) -> None:
    store[index] = output


def model_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Any:
    """Run `op.model` on the input(s): in training mode iff the network is in 'train' mode and the op is trainable.

    The model is called with one argument, as in FastEstimator: the input tensor, or, when the op's `inputs` is a
    list of keys, the list of their tensors (`ModelOp(inputs=["x_a", "x_b"])` calls `model([x_a, x_b])`). With
    `op.intermediate_layers` the result is the final output followed by each named layer's output (captured by forward
    hooks that exist only during this call).
    """
    model = op.model
    training = op.trainable and state["mode"] == "train"
    if model.training != training:
        model.train(training)
    call = model
    if training:  # data-parallel training steps run through the model's DDP wrapper (fe_torch.distributed)
        call = model.__dict__.get("fe_ddp") or model
        if call is model and sharding.is_sharded(model):  # what DDP's broadcast_buffers does in its forward
            sharding.sync_buffers(model)
    if not op.intermediate_layers:
        result = call(data)
        if op.out_list and len(op.outputs) == 1 and not isinstance(result, (list, tuple)):
            return [result]
        return result
    modules = _resolve_layers(op)
    captured: List[Any] = [None] * len(modules)
    handles = [module.register_forward_hook(functools.partial(_capture, captured, index))
               for index, module in enumerate(modules)]
    try:
        result = call(data)
    finally:
        for handle in handles:
            handle.remove()
    for layer, output in zip(op.intermediate_layers, captured):
        if output is None:
            raise ValueError(f"ModelOp of model {_model_name(model)!r}: intermediate layer {layer!r} did not run "
                             f"during the forward pass in {_where(state)}")
    return [result, *captured]


# ---------------------------------------------------------------------------------------------------- misuse
_CONVS = {torch.nn.Conv1d: 1, torch.nn.Conv2d: 2, torch.nn.Conv3d: 3}
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def expected_input_hint(model: torch.nn.Module, inputs: Sequence[Any]) -> Optional[str]:
    """What `model` expects as input, read from its first Linear or Conv layer, and what looks wrong with `inputs`
    (a channels-last image for a channels-first convolution, a missing channel axis, a wrong feature width).

    Used only to explain a failed model call; returns None when the model has no such layer.
    """
    first = next((module for module in model.modules()
                  if isinstance(module, (torch.nn.Linear, *_CONVS))), None)
    if first is None:
        return None
    x = inputs[0] if inputs else None
    shape = tuple(x.shape) if isinstance(x, torch.Tensor) else None
    name = _model_name(model)
    if isinstance(first, torch.nn.Linear):
        width = first.in_features
        hint = f"Model {name!r} starts with {first}, so it expects inputs of shape (N, ..., {width})"
        if shape is not None and shape and shape[-1] != width:
            hint += f", but the input's last axis has {shape[-1]} values"
        return hint
    dims = next(n for kind, n in _CONVS.items() if isinstance(first, kind))
    channels = first.in_channels
    hint = (f"Model {name!r} starts with {first}, so it expects inputs of shape (N, {channels}, {_SPATIAL[dims]}): "
            f"torch takes the channel axis first")
    if shape is not None:
        if len(shape) == dims + 2 and shape[1] != channels and shape[-1] == channels:
            hint += (f"; the input {shape} looks channels-last: put the channel axis first (for example "
                     f"ExpandDims(axis=0) instead of axis=-1 for a missing channel, or ChannelTranspose for "
                     f"(H, W, C) images)")
        elif len(shape) == dims + 1:
            hint += f"; the input {shape} has no channel axis: add one with ExpandDims(axis=0) in the Pipeline"
    return hint


def _graph_reaches(root: Any, params: Sequence[Tensor]) -> bool:
    """Whether the autograd graph below `root` accumulates into one of `params` (an `AccumulateGrad` node of it).

    A walk over the recorded graph: it finds a gradient path without running a backward pass, so the warmup step costs
    a forward pass only and the first real step is the first backward, as in a hand-written loop.
    """
    targets = {id(param) for param in params}
    # Visited nodes are held, not only their ids: torch makes a node's Python wrapper on demand and drops it when
    # unreferenced, so a freed wrapper's id can come back for another node, which would then be skipped as seen.
    stack, seen = [root], {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        variable = getattr(node, "variable", None)  # AccumulateGrad: the leaf tensor it writes .grad of
        if variable is not None and id(variable) in targets:
            return True
        stack.extend(child for child, _ in node.next_functions)
    return False


def check_update_reaches_model(op: Any, data: Any, state: Dict[str, Any]) -> None:
    """Warmup check of an UpdateOp (`update_kernel.fe_check`): some gradient of its loss must reach a trainable
    weight of its model, else the update would silently never change the model."""
    if op.gradients is not None or not isinstance(data, torch.Tensor):
        return
    model = op.model
    if model.__dict__.get("fe_ddp") is not None:  # DDP owns the backward pass of its model
        return
    params = _trainable(model)
    if not params:
        return
    grads: Sequence[Optional[Tensor]] = ()
    if data.requires_grad:
        if _graph_reaches(data.grad_fn, params):
            return
        # Not found in the recorded graph (e.g. a reentrant activation checkpoint recomputes its part in backward):
        # ask autograd itself, which is the slow path (a whole backward pass) but the final word.
        loss = data.mean() if data.ndim else data
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    if all(grad is None for grad in grads):
        raise described(ValueError(
            f"UpdateOp (model {_model_name(model)!r}, loss {op.loss_name!r}) in {_where(state)}: no gradient of "
            f"{op.loss_name!r} reaches any of model {_model_name(model)!r}'s {len(params)} trainable weight "
            f"tensors, so this UpdateOp would never change the model. Compute the loss from this model's output (a "
            f"ModelOp of {_model_name(model)!r} whose output the loss op reads), or update the model the loss "
            f"depends on" + ("" if data.requires_grad else "; no trainable tensor reaches the loss at all (was it "
                             "computed under no_grad, by ModelOp(gradients=False), or are all weights frozen?)")))


# ---------------------------------------------------------------------------------------------------- update
def _gradients_from_loss(op: Any, loss: Tensor, params: List[Tensor], scaler: Any,
                         state: Dict[str, Any]) -> Sequence[Optional[Tensor]]:
    if not isinstance(loss, torch.Tensor):
        raise TypeError(f"UpdateOp of model {_model_name(op.model)!r}: loss {op.loss_name!r} is a "
                        f"{type(loss).__name__}, not a tensor, in {_where(state)}")
    if loss.ndim:
        loss = loss.mean()
    if not loss.requires_grad:
        raise ValueError(f"UpdateOp of model {_model_name(op.model)!r}: loss {op.loss_name!r} does not depend on "
                         f"any trainable tensor in {_where(state)} (was it computed under no_grad, or are all "
                         f"parameters frozen?)")
    if scaler is not None:
        loss = scaler.scale(loss)
    if op.model.__dict__.get("fe_ddp") is not None:  # DDP all-reduces in .grad accumulation hooks: backward, not grad
        for parameter in params:
            parameter.grad = None
        # A sharded (FSDP2) model's forward runs on gathered copies of its slices: those are the graph's leaves, and
        # FSDP2's hooks reduce-scatter their gradients into the slices' .grad
        sharded = op.model.__dict__.get("fe_sharding") is not None
        torch.autograd.backward(loss, inputs=sharding.graph_leaves(op.model) if sharded else params,
                                retain_graph=op.retain_graph)
        gradients = [parameter.grad for parameter in params]
        for parameter in params:
            parameter.grad = None
        return gradients
    return torch.autograd.grad(loss, params, retain_graph=op.retain_graph, allow_unused=True)


def _trainable(model: torch.nn.Module) -> List[Tensor]:
    """The parameters an update steps: a sharded model's slices (never the gathered copies FSDP2 sets on the modules
    between a forward pass and its backward pass), else `model.parameters()`' trainable ones."""
    if sharding.is_sharded(model):
        return [parameter for parameter in sharding.sharded_parameters(model) if parameter.requires_grad]
    return trainable_parameters(model)


def _gradients_from_input(op: Any, gradients: Any, model: torch.nn.Module,
                          state: Dict[str, Any]) -> tuple:
    gradients = list(gradients) if isinstance(gradients, (list, tuple)) else [gradients]
    params = op.fe_backend_state.get("params")  # read once per epoch, as for a loss (TorchNetwork resets it)
    if params is None:
        params = op.fe_backend_state["params"] = _trainable(model)
    if len(gradients) != len(params):
        every = sharding.sharded_parameters(model) if sharding.is_sharded(model) else list(model.parameters())
        if len(gradients) != len(every):
            raise ValueError(f"UpdateOp of model {_model_name(model)!r}: gradients {op.gradients!r} hold "
                             f"{len(gradients)} tensors, but the model has {len(params)} trainable parameters "
                             f"({len(every)} in all) in {_where(state)}")
        pairs = [(p, g) for p, g in zip(every, gradients) if p.requires_grad]
        params, gradients = [p for p, _ in pairs], [g for _, g in pairs]
    return params, [None if g is None else g.detach() for g in gradients]


def update_kernel(op: Any, data: Any, state: Dict[str, Any]) -> None:
    """Update `op.model` with its current optimizer from a loss or from precomputed gradients.

    Nothing happens in warmup. Gradients of the mean loss w.r.t. the model's trainable parameters are accumulated in
    `op.fe_backend_state` (`count`, `grads`); every `op.merge_grad`-th call the parameters' `.grad` is set to the mean
    of the accumulated gradients and the optimizer steps (through the `GradScaler` in float16 mixed precision). With
    `op.defer` the step is queued in `state['deferred']` and runs after all ops of the step.

    Precomputed gradients (`UpdateOp(gradients=...)`) are taken as unscaled: they bypass the GradScaler.
    """
    if state["warmup"]:
        return None
    model = op.model
    optimizer = model.current_optimizer
    if optimizer is None:
        raise ValueError(f"UpdateOp cannot update model {_model_name(model)!r}: it has no optimizer in "
                         f"{_where(state)}")
    backend_state = op.fe_backend_state
    if op.gradients is None:
        scaler = getattr(optimizer, "scaler", None)  # the GradScaler `build` attached (None without float16 AMP)
        params = backend_state.get("params")
        if params is None:
            params = backend_state["params"] = _trainable(model)
        gradients: Sequence[Optional[Tensor]] = _gradients_from_loss(op, data, params, scaler, state)
    else:
        scaler = None
        params, gradients = _gradients_from_input(op, data, model, state)
        if sharding.is_sharded(model):  # whole gradients of the gathered weights: averaged, then this rank's slices
            gradients = sharding.shard_gradients(params, list(gradients))
        elif model.__dict__.get("fe_ddp") is not None:  # data-parallel: DDP's hooks never saw these; average them
            gradients = distributed.average_gradients(list(gradients))
    merge = op.merge_grad
    if merge > 1:
        count = backend_state.get("count", 0) + 1
        accumulated = backend_state.get("grads")
        if accumulated is None:
            accumulated = [None if g is None else g.detach().clone() for g in gradients]
        else:
            for index, gradient in enumerate(gradients):
                if gradient is None:
                    continue
                if accumulated[index] is None:
                    accumulated[index] = gradient.detach().clone()
                else:
                    accumulated[index].add_(gradient)
        if count < merge:
            backend_state["count"], backend_state["grads"] = count, accumulated
            return None
        backend_state["count"], backend_state["grads"] = 0, None
        gradients = [None if g is None else g.div_(merge) for g in accumulated]
    if op.defer:
        state["deferred"].setdefault(_model_name(model), []).append(
            functools.partial(apply_gradients, params, gradients, optimizer, scaler))
    else:
        apply_gradients(params, gradients, optimizer, scaler)
    return None


# ---------------------------------------------------------------------------------------------------- losses
# The math is fe.backend's (fe_torch.backend.crossentropy / losses): these kernels pick the form, put the class axis
# where those functions take it (axis 1) and reduce to one value per sample (then the batch mean if average_loss).
def _reduce(op: Any, loss: Tensor) -> Tensor:
    """Mean over the non-batch axes (one value per sample), then over the batch if `op.average_loss`."""
    if loss.ndim > 1:
        loss = loss.reshape(loss.shape[0], -1).mean(dim=1)
    if op.average_loss:
        loss = loss.mean()
    return loss


def _loss_output(op: Any, loss: Tensor) -> Union[Tensor, List[Tensor]]:
    return [loss] if op.out_list else loss


def cross_entropy_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """Cross entropy in the form `op.infer_form` picks from the shapes; the class axis is the last one.

    - sparse: integer labels, one axis fewer than the prediction (or a trailing axis of 1);
    - categorical: one-hot or soft labels shaped like the prediction;
    - binary: a prediction with one unit (or no class axis) and 0/1 labels.

    With `from_logits=False` predictions are probabilities, clipped to [1e-7, 1 - 1e-7] before the log. With
    `class_weights` each sample's loss is multiplied by the weight of its label (1 for classes not listed).
    Computed in float32 even under autocast (by `fe.backend`'s cross entropies).
    """
    pred, true = data
    form = op.infer_form(pred.shape, true.shape)  # torch.Size is a tuple
    weights = op.class_weights or None
    if form == "binary":
        if true.shape != pred.shape and true.numel() != pred.numel():
            true = true.expand_as(pred)
        loss = crossentropy.binary_crossentropy(pred, true, op.from_logits, False, weights)
        return _loss_output(op, _reduce(op, loss))
    if pred.ndim == 2:  # (batch, classes): the class axis is already axis 1; one fused call where possible
        if form == "sparse":
            if true.ndim == 2:
                true = true.reshape(true.shape[:-1])
            loss = crossentropy.sparse_categorical_crossentropy(pred, true, op.from_logits, op.average_loss, weights)
        else:
            loss = crossentropy.categorical_crossentropy(pred, true, op.from_logits, op.average_loss, weights)
        return _loss_output(op, loss)
    pred = pred.movedim(-1, 1)
    if form == "sparse":
        labels = true.reshape(true.shape[:-1]) if true.ndim == pred.ndim else true
        loss = crossentropy.sparse_categorical_crossentropy(pred, labels, op.from_logits, False, weights)
    else:
        loss = crossentropy.categorical_crossentropy(pred, true.movedim(-1, 1), op.from_logits, False, weights)
    return _loss_output(op, _reduce(op, loss))


def check_cross_entropy_labels(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> None:
    """Warmup check of CrossEntropy (`cross_entropy_kernel.fe_check`): sparse labels lie in [0, classes)."""
    pred, true = data
    if not isinstance(pred, torch.Tensor) or not isinstance(true, torch.Tensor) or not true.numel():
        return
    if op.infer_form(pred.shape, true.shape) != "sparse":
        return
    low, high = int(true.min()), int(true.max())
    if low < 0 or high >= pred.shape[-1]:
        raise op.label_range_error(pred, true, low, high, state)


cross_entropy_kernel.fe_check = check_cross_entropy_labels  # type: ignore[attr-defined]
update_kernel.fe_check = check_update_reaches_model  # type: ignore[attr-defined]


def _per_sample_input(pred: Tensor, true: Tensor) -> tuple:
    """fe.backend's regression losses average the last axis: give a 1-D (batch,) input a last axis of 1."""
    if pred.ndim == 1:
        return pred.unsqueeze(-1), true.reshape(pred.shape[0], -1) if true.numel() == pred.numel() else true
    return pred, true


def mean_squared_error_kernel(op: Any, data: Sequence[Tensor],
                              state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """Squared error averaged over the non-batch axes, then over the batch if `op.average_loss` (float32)."""
    pred, true = _per_sample_input(*data)
    return _loss_output(op, _reduce(op, losses.mean_squared_error(true, pred.float())))


def l1_loss_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """L1, smooth L1 (`beta`) or Huber (`delta = beta`) loss, reduced like `mean_squared_error_kernel` (float32)."""
    pred, true = _per_sample_input(*data)
    pred = pred.float()
    if op.loss_type == "Smooth":
        loss = losses.smooth_l1_loss(true, pred, op.beta)
    elif op.loss_type == "Huber":
        loss = losses.huber(true, pred, op.beta)
    else:
        loss = losses.l1_loss(true, pred)
    return _loss_output(op, _reduce(op, loss))


# ---------------------------------------------------------------------------------------------------- argmax
def argmax_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """The index of the maximum of each input along `op.axis` (counted on the whole tensor, batch axis included)."""
    return [reductions.argmax(tensor, op.axis) for tensor in data]


KERNELS: Dict[str, Callable[[Any, Any, Dict[str, Any]], Any]] = {
    "model": model_kernel,
    "update": update_kernel,
    "cross_entropy": cross_entropy_kernel,
    "mean_squared_error": mean_squared_error_kernel,
    "l1_loss": l1_loss_kernel,
    "argmax": argmax_kernel,
}
