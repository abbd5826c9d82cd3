"""Losses written once for every backend: `CrossEntropy`, `MeanSquaredError`, `L1_Loss`."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from fe_core.config_error import ConfigurationError
from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.export import fe_export
from fe_core.misuse import described, describe_value, where

__all__ = ["LossOp", "CrossEntropy", "MeanSquaredError", "L1_Loss"]


@fe_export("fe.op.tensorop.loss.loss.LossOp", "fe.op.tensorop.loss.LossOp")
class LossOp(TensorOp):
    """The base of loss ops: inputs are `(y_pred, y_true)`, the output is the loss.

    Used directly it passes its input(s) through unchanged (FastEstimator's adversarial training uses that to give a
    value a loss key).

    Args:
        inputs: The keys of the prediction and the ground truth.
        outputs: The key of the loss.
        mode: Mode(s) to run in (every mode but 'infer' by default, as in FastEstimator: inference has no labels).
        ds_id: Dataset id(s) to run on.
        average_loss: Return the batch mean (True) or one loss per sample (False).

    Any `inputs` and `outputs` are accepted here, so the op can be driven directly with
    `op.forward(data=[y_pred, y_true], state)`; the built-in losses check their number of keys when they join a
    Network. A LossOp subclass may declare several outputs (its `forward` returns one value per output).

    Raises:
        ValueError: When a loss that needs (y_pred, y_true) and one output key joins a Network with other keys.
    """

    input_arity: Optional[int] = None  # the number of input keys a subclass needs in a Network (None: any)
    output_count: Optional[int] = None  # the number of output keys it needs in a Network (None: any)

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = "!infer",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 average_loss: bool = True) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.average_loss = average_loss

    def build(self, framework: str, device: Any = None) -> None:
        """Prepare the op for `framework` (the Network calls this when the op joins it, after checking its keys).

        Raises:
            ValueError: If the loss needs (y_pred, y_true) or one output key and was given others.
        """
        if not getattr(self, "_fe_building_direct", False):
            self.fe_check_keys()
        super().build(framework, device)

    def ensure_built(self, data: Any) -> None:
        """Build for the framework of `data` when called outside a Network (no key-count check: the keys are not
        used there)."""
        self._fe_building_direct = True
        try:
            super().ensure_built(data)
        finally:
            del self._fe_building_direct

    def fe_check_keys(self) -> None:
        """Raise a ValueError when the op's number of input or output keys cannot work in a Network."""
        if self.input_arity is not None and len(self.inputs) != self.input_arity:
            raise ConfigurationError(f"{type(self).__name__} needs inputs (y_pred, y_true), got {self.inputs}")
        if self.output_count is not None and len(self.outputs) != self.output_count:
            raise ConfigurationError(f"{type(self).__name__} needs exactly one output key, got {self.outputs}")

    @property
    def pred_key_idx(self) -> int:
        """The position of the prediction among the inputs."""
        return 0

    @property
    def true_key_idx(self) -> int:
        """The position of the ground truth among the inputs."""
        return 1

    @property
    def pred_key(self) -> str:
        """The key of the prediction."""
        return self.inputs[self.pred_key_idx]

    @property
    def true_key(self) -> str:
        """The key of the ground truth."""
        return self.inputs[self.true_key_idx]


@fe_export("fe.op.tensorop.loss.cross_entropy.CrossEntropy", "fe.op.tensorop.loss.CrossEntropy")
class CrossEntropy(LossOp):
    """Cross entropy between predictions and labels, picking its form from the label shape.

    Labels may be sparse class indices (one dimension fewer than the prediction, or a trailing dimension of 1 with
    more than one class), one-hot / soft distributions (same shape as the prediction), or binary (prediction with one
    unit or no class axis, labels 0/1).

    Args:
        inputs: (y_pred, y_true) keys.
        outputs: The loss key.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        from_logits: Whether y_pred holds logits (True) or probabilities (False).
        average_loss: Mean over the batch (True) or one value per sample.
        form: Force 'binary', 'categorical' or 'sparse' instead of inferring it from the shapes.
        class_weights: Optional {class_index: weight} applied per sample by its label.
    """

    kernel_name = "cross_entropy"
    input_arity = 2
    output_count = 1
    FORMS = ("binary", "categorical", "sparse")

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = "!infer",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 from_logits: bool = False,
                 average_loss: bool = True,
                 form: Optional[str] = None,
                 class_weights: Optional[Dict[int, float]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, average_loss=average_loss)
        if form is not None and form not in self.FORMS:
            raise ConfigurationError(f"CrossEntropy form must be one of {self.FORMS} or None, got {form!r}")
        self.from_logits = from_logits
        self.form = form
        self.class_weights = class_weights

    def infer_form(self, pred_shape: tuple, true_shape: tuple) -> str:
        """Which cross entropy applies to predictions and labels of these shapes (used by the backend kernels)."""
        if self.form is not None:
            return self.form
        if len(pred_shape) <= 1 or pred_shape[-1] == 1:
            return "binary"
        if len(true_shape) == len(pred_shape) - 1 or (len(true_shape) == len(pred_shape) and true_shape[-1] == 1):
            return "sparse"
        if tuple(true_shape) == tuple(pred_shape):
            return "categorical"
        raise ValueError(f"CrossEntropy cannot match prediction shape {tuple(pred_shape)} with label shape "
                         f"{tuple(true_shape)} (inputs {self.inputs}); pass form= to choose explicitly")

    def label_range_error(self, y_pred: Any, y_true: Any, low: int, high: int, state: Dict[str, Any]) -> ValueError:
        """The error for sparse labels outside [0, classes) (backends check the range in warmup only).

        Args:
            y_pred: The prediction (its last axis counts the classes).
            y_true: The labels.
            low: The smallest label.
            high: The largest label.
            state: The op's state (mode, epoch, ds_id).
        """
        classes = int(y_pred.shape[-1])
        bad = high if high >= classes else low
        message = (f"CrossEntropy (inputs {self.inputs}) got label {bad} in {self.true_key!r} "
                   f"({describe_value(y_true)}, labels {low}..{high}) for {classes} classes ({self.pred_key!r} "
                   f"{describe_value(y_pred)}) in {where(state)}: sparse labels must lie in 0..{classes - 1}")
        if low >= 1 and high == classes:  # one batch cannot tell labels counting from 1 from one stray label
            message += (f". If the labels count from 1 (no label 0 anywhere in the data), subtract 1 in the "
                        f"Pipeline; if label {high} should not be there, fix the data; or give the model "
                        f"{classes + 1} outputs")
        elif high >= classes:
            message += f", so the model needs at least {high + 1} outputs or the labels need re-encoding"
        return described(ValueError(message))  # type: ignore[return-value]


def _static_shape(value: Any) -> Optional[Tuple[Optional[int], ...]]:
    shape = getattr(value, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(None if dim is None else int(dim) for dim in shape)
    except (TypeError, ValueError):  # unknown rank
        return None


class _ElementwiseLoss(LossOp):
    """A loss comparing predictions and targets element by element; warmup checks that their shapes agree."""

    input_arity = 2
    output_count = 1

    def fe_check_inputs(self, data: Sequence[Any], state: Dict[str, Any]) -> None:
        """Raise a ValueError naming the op, keys, shapes and context when y_pred and y_true cannot be compared
        element by element (called by the Network in warmup only).

        Accepted: equal per-sample shapes, shapes equal up to axes of size 1 ((N,) and (N, 1)), and same-rank shapes
        that broadcast ((N, C) and (N, 1)). Unknown dimensions are not judged.
        """
        pred_shape, true_shape = _static_shape(data[0]), _static_shape(data[1])
        if pred_shape is None or true_shape is None:
            return
        pred_sample, true_sample = pred_shape[1:], true_shape[1:]
        if None in pred_sample or None in true_sample or pred_sample == true_sample:
            return
        if [d for d in pred_sample if d != 1] == [d for d in true_sample if d != 1]:
            return
        if len(pred_sample) == len(true_sample) and all(p == t or 1 in (p, t) for p, t in zip(pred_sample,
                                                                                             true_sample)):
            return
        message = (f"{type(self).__name__} (inputs {self.inputs}) compares y_pred {self.pred_key!r} "
                   f"({describe_value(data[0])}) with y_true {self.true_key!r} ({describe_value(data[1])}) in "
                   f"{where(state)}: it needs a target of the prediction's shape, one value per predicted value")
        if not [d for d in true_sample if d != 1] and len([d for d in pred_sample if d != 1]) == 1:
            message += (f". {self.true_key!r} looks like class labels for {pred_sample[-1]} classes: use "
                        f"CrossEntropy(inputs=({self.pred_key!r}, {self.true_key!r})) for classification")
        raise described(ValueError(message))


@fe_export("fe.op.tensorop.loss.mean_squared_error.MeanSquaredError", "fe.op.tensorop.loss.MeanSquaredError")
class MeanSquaredError(_ElementwiseLoss):
    """Mean squared error between predictions and targets (mean over all non-batch axes, then the batch)."""

    kernel_name = "mean_squared_error"
    input_arity = 2


@fe_export("fe.op.tensorop.loss.l1_loss.L1_Loss", "fe.op.tensorop.loss.L1_Loss")
class L1_Loss(_ElementwiseLoss):  # pylint: disable=invalid-name  (FastEstimator's public name)
    """L1 loss between predictions and targets, or its smooth/Huber variants.

    Args:
        inputs: (y_pred, y_true) keys.
        outputs: The loss key.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        average_loss: Mean over the batch (True) or one value per sample.
        loss_type: 'L1', 'Smooth' (smooth L1 with `beta`) or 'Huber' (with delta `beta`).
        beta: The threshold of the smooth/Huber variants.
    """

    kernel_name = "l1_loss"
    input_arity = 2
    LOSS_TYPES = ("L1", "Smooth", "Huber")

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = "!infer",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 average_loss: bool = True,
                 loss_type: str = "L1",
                 beta: float = 1.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, average_loss=average_loss)
        if loss_type not in self.LOSS_TYPES:
            raise ValueError(f"L1_Loss loss_type must be one of {self.LOSS_TYPES}, got {loss_type!r}")
        if beta <= 0:
            raise ValueError(f"L1_Loss beta must be positive, got {beta}")
        self.loss_type = loss_type
        self.beta = beta
