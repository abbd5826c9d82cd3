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
import torch.nn.functional as F

__all__ = ["model_kernel", "update_kernel", "cross_entropy_kernel", "mean_squared_error_kernel", "l1_loss_kernel",
           "argmax_kernel", "trainable_parameters", "EPSILON"]

EPSILON = 1e-7  # probabilities are clamped to [EPSILON, 1 - EPSILON] before their log is taken

Tensor = torch.Tensor


# torch's fused losses skip labels equal to ignore_index (-100 by default); fe ignores no label, so a bad label
# still raises instead of silently vanishing from the loss.
_NO_IGNORED_LABEL = torch.iinfo(torch.int64).min

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

    Several inputs are passed as positional arguments. With `op.intermediate_layers` the result is the final output
    followed by each named layer's output (captured by forward hooks that exist only during this call).
    """
    model = op.model
    training = op.trainable and state["mode"] == "train"
    if model.training != training:
        model.train(training)
    if not op.intermediate_layers:
        result = model(*data) if op.in_list else model(data)
        if op.out_list and len(op.outputs) == 1 and not isinstance(result, (list, tuple)):
            return [result]
        return result
    modules = _resolve_layers(op)
    captured: List[Any] = [None] * len(modules)
    handles = [module.register_forward_hook(functools.partial(_capture, captured, index))
               for index, module in enumerate(modules)]
    try:
        result = model(*data) if op.in_list else model(data)
    finally:
        for handle in handles:
            handle.remove()
    for layer, output in zip(op.intermediate_layers, captured):
        if output is None:
            raise ValueError(f"ModelOp of model {_model_name(model)!r}: intermediate layer {layer!r} did not run "
                             f"during the forward pass in {_where(state)}")
    return [result, *captured]


# ---------------------------------------------------------------------------------------------------- update
def trainable_parameters(model: torch.nn.Module) -> List[torch.nn.Parameter]:
    """The parameters of `model` that require gradients, in `model.parameters()` order."""
    return [parameter for parameter in model.parameters() if parameter.requires_grad]


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
    return torch.autograd.grad(loss, params, retain_graph=op.retain_graph, allow_unused=True)


def _gradients_from_input(op: Any, gradients: Any, model: torch.nn.Module,
                          state: Dict[str, Any]) -> tuple:
    gradients = list(gradients) if isinstance(gradients, (list, tuple)) else [gradients]
    params = trainable_parameters(model)
    if len(gradients) != len(params):
        every = list(model.parameters())
        if len(gradients) != len(every):
            raise ValueError(f"UpdateOp of model {_model_name(model)!r}: gradients {op.gradients!r} hold "
                             f"{len(gradients)} tensors, but the model has {len(params)} trainable parameters "
                             f"({len(every)} in all) in {_where(state)}")
        pairs = [(p, g) for p, g in zip(every, gradients) if p.requires_grad]
        params, gradients = [p for p, _ in pairs], [g for _, g in pairs]
    return params, [None if g is None else g.detach() for g in gradients]


def _step(params: List[Tensor], gradients: Sequence[Optional[Tensor]], optimizer: torch.optim.Optimizer,
          scaler: Any) -> None:
    for parameter, gradient in zip(params, gradients):
        parameter.grad = gradient
    try:
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
    finally:
        for parameter in params:
            parameter.grad = None


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
            params = backend_state["params"] = trainable_parameters(model)
        gradients: Sequence[Optional[Tensor]] = _gradients_from_loss(op, data, params, scaler, state)
    else:
        scaler = None
        params, gradients = _gradients_from_input(op, data, model, state)
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
            functools.partial(_step, params, gradients, optimizer, scaler))
    else:
        _step(params, gradients, optimizer, scaler)
    return None


# ---------------------------------------------------------------------------------------------------- losses
def _reduce(op: Any, loss: Tensor) -> Tensor:
    """Mean over the non-batch axes (one value per sample), then over the batch if `op.average_loss`."""
    if loss.ndim > 1:
        loss = loss.reshape(loss.shape[0], -1).mean(dim=1)
    if op.average_loss:
        loss = loss.mean()
    return loss


def _loss_output(op: Any, loss: Tensor) -> Union[Tensor, List[Tensor]]:
    return [loss] if op.out_list else loss


def _class_weight_table(op: Any, size: int, device: torch.device) -> Tensor:
    cached = getattr(op, "_fe_torch_class_weights", None)
    if cached is not None and cached.device == device and cached.numel() >= size:
        return cached
    weights = op.class_weights
    size = max(size, max(int(key) for key in weights) + 1)
    table = torch.ones(size, dtype=torch.float32, device=device)
    for key, value in weights.items():
        table[int(key)] = float(value)
    op._fe_torch_class_weights = table  # pylint: disable=protected-access
    return table


def _log_probabilities(op: Any, pred: Tensor) -> Tensor:
    if op.from_logits:
        return torch.log_softmax(pred, dim=-1)
    return torch.log(pred.clamp(EPSILON, 1.0))


def cross_entropy_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """Cross entropy in the form `op.infer_form` picks from the shapes; the class axis is the last one.

    - sparse: integer labels, one axis fewer than the prediction (or a trailing axis of 1);
    - categorical: one-hot or soft labels shaped like the prediction;
    - binary: a prediction with one unit (or no class axis) and 0/1 labels.

    With `from_logits=False` predictions are probabilities, clamped to [1e-7, 1 - 1e-7] before the log. With
    `class_weights` each sample's loss is multiplied by the weight of its label (1 for classes not listed).
    Computed in float32 even under autocast.
    """
    pred, true = data
    form = op.infer_form(pred.shape, true.shape)  # torch.Size is a tuple
    if pred.dtype is not torch.float32:
        pred = pred.float()
    if pred.ndim == 2 and form != "binary" and not op.class_weights:
        # (batch, classes): torch's fused losses compute the same values with a fraction of the kernel launches.
        reduction = "mean" if op.average_loss else "none"
        if form == "sparse":
            labels = true.reshape(true.shape[:-1]) if true.ndim == 2 else true
            if labels.dtype is not torch.int64:
                labels = labels.long()
            if op.from_logits:
                loss = F.cross_entropy(pred, labels, reduction=reduction, ignore_index=_NO_IGNORED_LABEL)
            else:
                loss = F.nll_loss(_log_probabilities(op, pred), labels, reduction=reduction,
                                  ignore_index=_NO_IGNORED_LABEL)
            return [loss] if op.out_list else loss
        if op.from_logits:
            loss = F.cross_entropy(pred, true.to(pred.dtype), reduction=reduction)
            return [loss] if op.out_list else loss
    if form == "sparse":
        labels = true.reshape(true.shape[:-1]) if true.ndim == pred.ndim else true
        labels = labels.long()
        loss = -_log_probabilities(op, pred).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        classes, num_classes = labels, pred.shape[-1]
    elif form == "categorical":
        target = true.to(pred.dtype)
        loss = -(target * _log_probabilities(op, pred)).sum(dim=-1)
        classes, num_classes = (target.argmax(dim=-1) if op.class_weights else None), pred.shape[-1]
    else:
        target = true.to(pred.dtype)
        if target.shape != pred.shape:
            target = target.reshape(pred.shape) if target.numel() == pred.numel() else target.expand_as(pred)
        if op.from_logits:
            loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none")
        else:
            probability = pred.clamp(EPSILON, 1.0 - EPSILON)
            loss = -(target * torch.log(probability) + (1.0 - target) * torch.log(1.0 - probability))
        classes, num_classes = ((target > 0.5).long() if op.class_weights else None), 2
    if op.class_weights:
        loss = loss * _class_weight_table(op, num_classes, loss.device)[classes]
    return _loss_output(op, _reduce(op, loss))


def _matched_target(pred: Tensor, true: Tensor) -> Tensor:
    true = true.float()
    if true.shape != pred.shape and true.numel() == pred.numel():
        true = true.reshape(pred.shape)
    return true


def mean_squared_error_kernel(op: Any, data: Sequence[Tensor],
                              state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """Squared error averaged over the non-batch axes, then over the batch if `op.average_loss` (float32)."""
    pred, true = data
    pred = pred.float()
    return _loss_output(op, _reduce(op, (pred - _matched_target(pred, true))**2))


def l1_loss_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """L1, smooth L1 (`beta`) or Huber (`delta = beta`) loss, reduced like `mean_squared_error_kernel` (float32)."""
    pred, true = data
    pred = pred.float()
    true = _matched_target(pred, true)
    if op.loss_type == "Smooth":
        loss = F.smooth_l1_loss(pred, true, reduction="none", beta=op.beta)
    elif op.loss_type == "Huber":
        loss = F.huber_loss(pred, true, reduction="none", delta=op.beta)
    else:
        loss = (pred - true).abs()
    return _loss_output(op, _reduce(op, loss))


# ---------------------------------------------------------------------------------------------------- argmax
def argmax_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """The index of the maximum of each input along `op.axis` (counted on the whole tensor, batch axis included)."""
    return [torch.argmax(tensor, dim=op.axis) for tensor in data]


KERNELS: Dict[str, Callable[[Any, Any, Dict[str, Any]], Any]] = {
    "model": model_kernel,
    "update": update_kernel,
    "cross_entropy": cross_entropy_kernel,
    "mean_squared_error": mean_squared_error_kernel,
    "l1_loss": l1_loss_kernel,
    "argmax": argmax_kernel,
}
