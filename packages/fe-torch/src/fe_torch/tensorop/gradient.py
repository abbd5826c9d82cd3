"""Torch kernels of fe-core's Watch, GradientOp and FGSM (torch.autograd)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import torch

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _where(state: Dict[str, Any]) -> str:
    return f"mode {state.get('mode')!r}, epoch {state.get('epoch')}, ds_id {state.get('ds_id')!r}"


def watch_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Make the tensors require gradients (a tensor cut off from the graph is detached and re-attached as a leaf)."""
    watched = []
    keys = list(op.inputs) + [f"input {index}" for index in range(len(op.inputs), len(data))]
    for key, tensor in zip(keys, data):  # every value given, in order, as FastEstimator's Watch returns them
        if not tensor.is_floating_point():
            raise TypeError(f"Watch cannot differentiate with respect to {key!r}: it holds {tensor.dtype} values, and "
                            f"only floating point tensors have gradients ({_where(state)})")
        if not tensor.requires_grad:
            tensor = tensor.requires_grad_(True) if tensor.is_leaf else tensor.detach().requires_grad_(True)
        watched.append(tensor)
    return watched


def _gradients(final: Tensor, sources: Sequence[Tensor], retain: bool, what: str) -> List[Optional[Tensor]]:
    if not final.requires_grad:
        raise ValueError(f"{what} does not depend on anything that requires gradients (watch inputs with Watch, or "
                         "check that the model's parameters are trainable)")
    grad_outputs = None if final.ndim == 0 else torch.ones_like(final)
    return list(torch.autograd.grad(final, sources, grad_outputs=grad_outputs, retain_graph=retain,
                                    allow_unused=True))


def gradient_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Any]:
    """Gradients of each final (summed if not scalar) w.r.t. the input tensors or the model's trainable parameters;
    missing gradients (unconnected sources) come back as zeros. For a sharded model they are this process's whole
    gradients of the gathered weights (as for a DDP model: `UpdateOp(gradients=...)` averages them)."""
    finals = data[op.num_sources:]
    if op.model is not None and op.model.__dict__.get("fe_sharding") is not None:
        from fe_torch.sharding import graph_leaves  # pylint: disable=import-outside-toplevel
        sources = graph_leaves(op.model)  # the gathered weights this step's forward pass computed with
    elif op.model is not None:
        cached = op.__dict__.get("_fe_torch_parameters")
        if cached is None or cached[0] is not op.model:  # walking the module tree every step costs more than the op
            cached = op.__dict__["_fe_torch_parameters"] = (op.model, list(op.model.parameters()))
        sources = [parameter for parameter in cached[1] if parameter.requires_grad]
    else:
        sources = data[:op.num_sources]
    results: List[Any] = []
    for index, (key, final) in enumerate(zip(op.inputs[op.num_sources:], finals)):
        retain = op.retain_graph or index < len(finals) - 1
        grads = _gradients(final, sources, retain, f"GradientOp final {key!r} ({_where(state)})")
        grads = [torch.zeros_like(source) if grad is None else grad for source, grad in zip(sources, grads)]
        results.append(grads[0] if op.model is None and op.single_source else grads)
    return results


def fgsm_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> Tensor:
    """clip(x + epsilon * sign(d loss / d x)), detached."""
    x, loss = data
    if not x.requires_grad:
        raise ValueError(f"FGSM: {op.inputs[0]!r} does not require gradients in {_where(state)}; put "
                         f"Watch(inputs={op.inputs[0]!r}) before the ops that use it")
    gradient = _gradients(loss, [x], op.retain_graph, f"FGSM loss {op.inputs[1]!r} ({_where(state)})")[0]
    x = x.detach()
    if gradient is None:
        return x
    adversarial = x + op.epsilon * torch.sign(gradient)
    low = x.min() if op.clip_low is None else op.clip_low
    high = x.max() if op.clip_high is None else op.clip_high
    return torch.clamp(adversarial, min=low, max=high)


def model_without_gradients_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Any:
    """`ModelOp(gradients=False)`: the model call under `torch.no_grad` (nothing is recorded for backward)."""
    from fe_torch.kernels import model_kernel  # pylint: disable=import-outside-toplevel
    with torch.no_grad():
        return model_kernel(op, data, state)


KERNELS = {"watch": watch_kernel, "gradient": gradient_kernel, "fgsm": fgsm_kernel,
           "model_without_gradients": model_without_gradients_kernel}
