"""Gradient TensorOps: `Watch`, `GradientOp`, `FGSM` (torch autograd / the tf step's GradientTape)."""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Set, Union

from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.tensorop.tensorop import StatelessOp, TensorOp

__all__ = ["Watch", "GradientOp", "FGSM"]


class _GradientComputing(StatelessOp, TensorOp):
    """A TensorOp that differentiates: it makes the Network record gradients, and keeps the graph when a later op
    differentiates too (the Network decides that once per epoch through `fe_retain_graph`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.retain_graph = False

    def fe_retain_graph(self, retain: Optional[bool] = None) -> Optional[bool]:
        if retain is not None:
            self.retain_graph = retain
        return self.retain_graph


@fe_export("fe.op.tensorop.gradient.watch.Watch", "fe.op.tensorop.gradient.Watch")
class Watch(_GradientComputing):
    """Watch tensors (for example the model's input) so that later ops can differentiate with respect to them.

    On torch the tensors start requiring gradients; on TensorFlow the step's GradientTape watches them.

    Args:
        inputs: Key(s) of the tensors to watch.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    kernel_name = "watch"

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=inputs, mode=mode, ds_id=ds_id)
        self.in_list, self.out_list = True, True


@fe_export("fe.op.tensorop.gradient.gradient.GradientOp", "fe.op.tensorop.gradient.GradientOp")
class GradientOp(_GradientComputing):
    """The gradients of `finals` with respect to `inputs` (tensors) or to a model's trainable weights.

    A non-scalar final is differentiated as the sum of its elements. With `model`, each output holds the list of
    gradients of one final w.r.t. the model's trainable weights (in their order), ready for
    `UpdateOp(gradients=...)`; with `inputs` given as one key, each output is one gradient tensor, with a list of keys
    a list of gradients (one per input). On TensorFlow, batch tensors must be watched (`Watch`) to be differentiated.

    Args:
        finals: Key(s) of the tensors to differentiate.
        outputs: Key(s) of the gradients (one per final).
        inputs: Key(s) of the tensors to differentiate with respect to (exclusive with `model`).
        model: The model whose trainable weights to differentiate with respect to (exclusive with `inputs`).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If both or neither of `inputs` and `model` are given, or finals and outputs differ in number.
    """

    kernel_name = "gradient"

    def __init__(self,
                 finals: Union[str, List[str]],
                 outputs: Union[str, List[str]],
                 inputs: Union[None, str, List[str]] = None,
                 model: Any = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        if (inputs is None) == (model is None):
            raise ValueError("GradientOp needs exactly one of inputs or model")
        final_keys = to_list(finals)
        source_keys = to_list(inputs)
        super().__init__(inputs=source_keys + final_keys, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(final_keys) != len(self.outputs):
            raise ValueError(f"GradientOp needs one output per final, got finals {final_keys} and outputs "
                             f"{self.outputs}")
        self.model = model
        self.num_sources = len(source_keys)
        self.single_source = isinstance(inputs, str)
        self.in_list, self.out_list = True, True

    def get_fe_models(self) -> Set[Any]:
        return set() if self.model is None else {self.model}


@fe_export("fe.op.tensorop.gradient.fgsm.FGSM", "fe.op.tensorop.gradient.FGSM")
class FGSM(_GradientComputing):
    """An adversarial version of the input by the Fast Gradient Sign Method (https://arxiv.org/abs/1412.6572):
    clip(data + epsilon * sign(d loss / d data), clip_low, clip_high).

    `data` must be differentiable: on torch it must require gradients and on TensorFlow be watched, so put a
    `Watch(inputs=data)` before the model runs on it.

    Args:
        data: Key of the input to attack.
        loss: Key of the loss to increase.
        outputs: Key of the adversarial input (detached from the graph).
        epsilon: The size of the perturbation.
        clip_low: The lower clip value (default: the minimum of `data`).
        clip_high: The upper clip value (default: the maximum of `data`).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    kernel_name = "fgsm"

    def __init__(self,
                 data: str,
                 loss: str,
                 outputs: str,
                 epsilon: float = 0.01,
                 clip_low: Optional[float] = None,
                 clip_high: Optional[float] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=[data, loss], outputs=outputs, mode=mode, ds_id=ds_id)
        self.epsilon = epsilon
        self.clip_low = clip_low
        self.clip_high = clip_high
