"""Losses beyond the basic three: `DiceLoss`, `FocalLoss`, `Hinge`, computed with fe.backend's loss functions (so
they work on torch and TensorFlow tensors alike, inside the traced tf step too)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.backend.losses import dice_score, focal_loss, hinge
from fe_core.backend.reductions import reduce_mean
from fe_core.export import fe_export
from fe_core.op.tensorop.loss import LossOp
from fe_core.op.tensorop.tensorop import framework_of_data

__all__ = ["DiceLoss", "FocalLoss", "Hinge"]

_REDUCTIONS = ("none", "mean", "sum")


@fe_export("fe.op.tensorop.loss.dice_loss.DiceLoss", "fe.op.tensorop.loss.DiceLoss")
class DiceLoss(LossOp):
    """1 - Dice score between a predicted and a true mask.

    The channel axis is axis 1 on torch (batch, channels, ...) and the last axis on TensorFlow (batch, ..., channels).
    Per sample and channel, dice = 2 * sum(pred * true) / (sum(true) + sum(pred) + epsilon) (with `soft_dice` the
    denominator sums squares).

    Args:
        inputs: (y_pred, y_true) keys.
        outputs: The loss key.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        soft_dice: Whether to square the elements in the denominator.
        average_loss: Average the loss over the batch (True) or keep one value per sample.
        channel_average: Average over the channels (True) or keep one value per channel.
        channel_weights: {channel index: weight} multiplying each channel's score before the reduction (1 for
            channels not listed).
        epsilon: Added to the denominator against division by zero.

    Raises:
        ValueError: For inputs other than (y_pred, y_true), or channel weights that are not {int: number}.
    """

    input_arity = 2
    output_count = 1

    def __init__(self,
                 inputs: Union[Tuple[str, str], List[str]],
                 outputs: str,
                 mode: Union[None, str, Iterable[str]] = "!infer",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 soft_dice: bool = False,
                 average_loss: bool = True,
                 channel_average: bool = True,
                 channel_weights: Optional[Dict[int, float]] = None,
                 epsilon: float = 1e-6) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, average_loss=average_loss)
        if channel_weights is not None and (not isinstance(channel_weights, dict) or not all(
                isinstance(key, int) and isinstance(value, (int, float)) for key, value in channel_weights.items())):
            raise ValueError(f"DiceLoss channel_weights must be a dict of {{channel index: weight}}, got "
                             f"{channel_weights!r}")
        self.soft_dice = soft_dice
        self.channel_average = channel_average
        self.channel_weights = channel_weights
        self.epsilon = epsilon

    def weight_list(self, channels: int) -> Optional[List[float]]:
        """The per-channel weights for a tensor with `channels` channels, or None without `channel_weights`."""
        if not self.channel_weights:
            return None
        weights = [1.0] * channels
        for channel, weight in self.channel_weights.items():
            if not -channels <= channel < channels:
                raise ValueError(f"DiceLoss channel_weights names channel {channel}, but the prediction has "
                                 f"{channels} channels")
            weights[channel] = float(weight)
        return weights

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        y_pred, y_true = data
        weights = None
        if self.channel_weights:
            framework = getattr(self, "framework", None) or framework_of_data(y_pred)
            channels = y_pred.shape[1] if framework == "torch" else y_pred.shape[-1]
            weights = np.asarray([self.weight_list(int(channels))], dtype=np.float32)
        dice = dice_score(y_pred, y_true, soft_dice=self.soft_dice, sample_average=self.average_loss,
                          channel_average=self.channel_average, channel_weights=weights, epsilon=self.epsilon)
        loss = 1.0 - dice
        return [loss] if self.out_list else loss


@fe_export("fe.op.tensorop.loss.focal_loss.FocalLoss", "fe.op.tensorop.loss.FocalLoss")
class FocalLoss(LossOp):
    """Sigmoid focal loss (RetinaNet, https://arxiv.org/abs/1708.02002) between scores and 0/1 labels.

    Per element: bce * (1 - p_t)**gamma, times alpha_t = alpha * t + (1 - alpha) * (1 - t) when alpha >= 0.

    Args:
        inputs: (y_pred, y_true) keys; y_pred holds probabilities (or logits with `from_logits`), y_true 0/1 labels of
            the same shape.
        outputs: The loss key.
        gamma: Exponent of the modulating factor (1 - p_t) (None or 0: plain cross entropy).
        alpha: Weight of positives in (0, 1); -1 or None disables the weighting.
        sample_reduction: 'mean', 'sum' or 'none' over the batch.
        shape_reduction: 'sum', 'mean' or 'none' over each sample's non-batch axes.
        from_logits: Whether y_pred holds logits (a sigmoid is applied).
        normalize: Divide each sample's loss by its number of positive labels (at least 1).
        mode: Mode(s) to run in.

    Raises:
        ValueError: For invalid reductions or inputs other than (y_pred, y_true).
    """

    input_arity = 2
    output_count = 1

    def __init__(self,
                 inputs: Union[Tuple[str, str], List[str]],
                 outputs: str,
                 gamma: Optional[float] = 2.0,
                 alpha: Optional[float] = 0.25,
                 sample_reduction: str = "mean",
                 shape_reduction: str = "sum",
                 from_logits: bool = False,
                 normalize: bool = True,
                 mode: Union[None, str, Iterable[str]] = "!infer") -> None:
        if sample_reduction not in _REDUCTIONS or shape_reduction not in _REDUCTIONS:
            raise ValueError(f"FocalLoss sample_reduction and shape_reduction must be one of {_REDUCTIONS}, got "
                             f"{sample_reduction!r} and {shape_reduction!r}")
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, average_loss=sample_reduction == "mean")
        self.gamma = gamma
        self.alpha = alpha
        self.sample_reduction = sample_reduction
        self.shape_reduction = shape_reduction
        self.from_logits = from_logits
        self.normalize = normalize

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        y_pred, y_true = data
        loss = focal_loss(y_true, y_pred, gamma=self.gamma, alpha=self.alpha, from_logits=self.from_logits,
                          normalize=self.normalize, shape_reduction=self.shape_reduction,
                          sample_reduction=self.sample_reduction)
        return [loss] if self.out_list else loss


@fe_export("fe.op.tensorop.loss.hinge.Hinge", "fe.op.tensorop.loss.Hinge")
class Hinge(LossOp):
    """Hinge loss: mean over the non-batch axes of max(0, 1 - y_true * y_pred), with labels of -1 or 1.

    Args:
        inputs: (y_pred, y_true) keys.
        outputs: The loss key.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        average_loss: Average over the batch (True) or keep one value per sample.
    """

    input_arity = 2
    output_count = 1

    def __init__(self,
                 inputs: Union[Tuple[str, str], List[str]],
                 outputs: str,
                 mode: Union[None, str, Iterable[str]] = "!infer",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 average_loss: bool = True) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, average_loss=average_loss)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        y_pred, y_true = data
        loss = hinge(y_true, y_pred)  # the mean over the last axis
        rank = len(loss.shape)
        if rank > 1:
            loss = reduce_mean(loss, axis=list(range(1, rank)))
        if self.average_loss:
            loss = reduce_mean(loss)
        return [loss] if self.out_list else loss
