"""The torch half of `fe.util.export_model`: ONNX, TorchScript and `torch.export` programs, each checked on load.

ONNX uses `torch.onnx.export` (the `torch.export`-based exporter, which needs `onnxscript`) and is checked with
onnxruntime; the three come with `pip install "fe-torch[export]"`. TorchScript and `torch.export` need only torch.
"""
from __future__ import annotations

import contextlib
import importlib
import logging
import warnings
from typing import Any, Callable, Iterator, List, Sequence, Tuple

import numpy as np
import torch

from fe_core.install_hint import install_command
from fe_core.util.export import max_difference, staged_path

__all__ = ["export_model", "FORMATS", "DEFAULT_FORMAT", "FRAMEWORK"]

FRAMEWORK = "torch"
FORMATS = ("onnx", "torchscript", "torch.export")
DEFAULT_FORMAT = "onnx"


def _import(module: str, feature: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"{feature} needs {module}, which is not installed: "
                          f"{install_command('fe-torch', 'export')}") from error


def _as_inputs(example_inputs: Any, device: torch.device) -> Tuple[torch.Tensor, ...]:
    items = tuple(example_inputs) if isinstance(example_inputs, (list, tuple)) else (example_inputs,)
    if not items:
        raise ValueError("export_model: example_inputs is empty")
    tensors = []
    for item in items:
        tensor = item if isinstance(item, torch.Tensor) else torch.as_tensor(np.asarray(item))
        tensors.append(tensor.detach().to(device))
    return tuple(tensors)


def _flatten(outputs: Any) -> List[np.ndarray]:
    """A model's outputs as a flat list of numpy arrays (tensors in tuples, lists and dicts, in order)."""
    if isinstance(outputs, torch.Tensor):
        return [outputs.detach().cpu().numpy()]
    if isinstance(outputs, dict):
        return [array for value in outputs.values() for array in _flatten(value)]
    if isinstance(outputs, (list, tuple)):
        return [array for value in outputs for array in _flatten(value)]
    return [np.asarray(outputs)]


def _device_of(model: torch.nn.Module) -> torch.device:
    for tensor in model.parameters():
        return tensor.device
    for tensor in model.buffers():
        return tensor.device
    return torch.device("cpu")


def _doubled(inputs: Tuple[torch.Tensor, ...]) -> Tuple[torch.Tensor, ...]:
    return tuple(torch.cat([x, x], dim=0) for x in inputs)


def _names(count: int, prefix: str) -> List[str]:
    return [f"{prefix}_{index}" for index in range(count)]


def _export_onnx(model: torch.nn.Module, path: str, inputs: Tuple[torch.Tensor, ...], dynamic: bool) -> None:
    _import("onnxscript", "Exporting a torch model to ONNX")  # the torch.export-based exporter's dependency
    _import("onnx", "Exporting a torch model to ONNX")
    with torch.no_grad():
        outputs = _flatten(model(*inputs))
    input_names, output_names = _names(len(inputs), "input"), _names(len(outputs), "output")
    dynamic_shapes = None
    if dynamic:
        batch = torch.export.Dim("batch")
        dynamic_shapes = tuple({0: batch} for _ in inputs)
    with _quiet_exporter():
        torch.onnx.export(model, inputs, path, input_names=input_names, output_names=output_names,
                          dynamic_shapes=dynamic_shapes, dynamo=True, external_data=False, verbose=False)


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """While fe exports, hide what torch's ONNX exporter says about itself, not about the model: a "torchvision is
    not installed. Skipping torchvision::nms" line per torchvision op it could register, and pytree's
    FutureWarning about `LeafSpec` from its own internals. Errors, and other warnings, still show."""
    exporter_logs = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = exporter_logs.level
    exporter_logs.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*treespec, LeafSpec.*", category=FutureWarning)
            yield
    finally:
        exporter_logs.setLevel(level)


def _run_onnx(path: str) -> Callable[[Tuple[torch.Tensor, ...]], List[np.ndarray]]:
    runtime = _import("onnxruntime", "Checking an ONNX export")
    session = runtime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [node.name for node in session.get_inputs()]

    def run(inputs: Tuple[torch.Tensor, ...]) -> List[np.ndarray]:
        return list(session.run(None, {name: x.detach().cpu().numpy() for name, x in zip(names, inputs)}))
    return run


def _export_torchscript(model: torch.nn.Module, path: str, inputs: Tuple[torch.Tensor, ...], dynamic: bool) -> None:
    del dynamic  # a traced program records shape arithmetic (x.size(0)), so any batch size runs
    try:
        with torch.no_grad():
            program = torch.jit.trace(model, inputs, check_trace=False)
    except Exception:  # pylint: disable=broad-except  (data-dependent python control flow): script it instead
        program = torch.jit.script(model)
    torch.jit.save(program, path)


def _run_torchscript(path: str) -> Callable[[Tuple[torch.Tensor, ...]], List[np.ndarray]]:
    program = torch.jit.load(path, map_location="cpu")
    program.eval()

    def run(inputs: Tuple[torch.Tensor, ...]) -> List[np.ndarray]:
        with torch.no_grad():
            return _flatten(program(*(x.cpu() for x in inputs)))
    return run


def _export_program(model: torch.nn.Module, path: str, inputs: Tuple[torch.Tensor, ...], dynamic: bool) -> None:
    dynamic_shapes = None
    if dynamic:
        batch = torch.export.Dim("batch")
        dynamic_shapes = tuple({0: batch} for _ in inputs)
    program = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
    torch.export.save(program, path)


def _run_program(path: str) -> Callable[[Tuple[torch.Tensor, ...]], List[np.ndarray]]:
    module = torch.export.load(path).module()

    def run(inputs: Tuple[torch.Tensor, ...]) -> List[np.ndarray]:
        with torch.no_grad():
            return _flatten(module(*inputs))
    return run


_FORMATS = {
    "onnx": (_export_onnx, _run_onnx, "ONNX export"),
    "torchscript": (_export_torchscript, _run_torchscript, "TorchScript export"),
    "torch.export": (_export_program, _run_program, "torch.export program"),
}


def export_model(model: torch.nn.Module, path: str, example_inputs: Any, format: str,  # pylint: disable=W0622
                 atol: float, dynamic_batch: bool) -> float:
    """Export `model` to `path` in `format`, verified against the model in eval mode (see `fe.util.export_model`).

    Returns:
        The largest absolute output difference measured.
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"export_model: expected a torch.nn.Module, got {type(model).__qualname__}")
    export, load, what = _FORMATS[format]
    device = _device_of(model)
    inputs = _as_inputs(example_inputs, device)
    checks: Sequence[Tuple[torch.Tensor, ...]] = [inputs, _doubled(inputs)] if dynamic_batch else [inputs]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            expected = [_flatten(model(*batch)) for batch in checks]
        with staged_path(path) as staging:
            export(model, staging, inputs, dynamic_batch)
            run = load(staging)
            worst = 0.0
            for batch, want in zip(checks, expected):
                worst = max(worst, max_difference(want, run(batch), atol, what))
    finally:
        model.train(was_training)
    return worst
