"""Batch augmentation TensorOps: `MixUpBatch` and `CutMixBatch`.

Their randomness comes from the framework's seeded generator inside the step (torch's global generator on the data's
device; TensorFlow's global `tf.random.Generator`, read inside the traced step), so runs repeat under
`enable_deterministic` and resume exactly from a checkpoint (which saves those generators' states).
"""
from __future__ import annotations

from typing import Any, Iterable, Union

from fe_core.config_error import ConfigurationError
from fe_core.export import fe_export
from fe_core.op.tensorop.tensorop import StatelessOp, TensorOp

__all__ = ["MixUpBatch", "CutMixBatch"]


def _check_pair(op: TensorOp, alpha: float) -> None:
    name = type(op).__name__
    if not alpha > 0:
        raise ConfigurationError(f"{name} alpha must be greater than 0, got {alpha}")
    if len(op.inputs) != 2 or len(op.outputs) != 2:
        raise ConfigurationError(f"{name} needs inputs (images, labels) and outputs (mixed images, mixed labels), "
                                 f"got {op.inputs} -> {op.outputs}")


@fe_export("fe.op.tensorop.augmentation.mixup_batch.MixUpBatch", "fe.op.tensorop.augmentation.MixUpBatch")
class MixUpBatch(StatelessOp, TensorOp):
    """MixUp (https://arxiv.org/abs/1710.09412): mix every sample with the previous one in the batch (rolled by one).

    With lam ~ Beta(alpha, alpha): x' = lam * x + (1 - lam) * roll(x), y' = lam * y + (1 - lam) * roll(y). Labels
    should be one-hot (or soft) so the mixed label is meaningful; they come back in the images' float dtype.

    Args:
        inputs: Keys of the image batch and the label batch.
        outputs: Keys of the mixed images and mixed labels.
        mode: Mode(s) to run in (train by default).
        ds_id: Dataset id(s) to run on.
        alpha: The Beta distribution's parameter.
        shared_beta: One lam for the whole batch (True) or one per sample (False).

    Raises:
        ValueError: If `alpha` <= 0 or inputs/outputs are not pairs.
    """

    kernel_name = "mixup_batch"

    def __init__(self,
                 inputs: Iterable[str],
                 outputs: Iterable[str],
                 mode: Union[None, str, Iterable[str]] = "train",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 alpha: float = 1.0,
                 shared_beta: bool = False) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        _check_pair(self, alpha)
        self.alpha = float(alpha)
        self.shared_beta = shared_beta
        self.in_list, self.out_list = True, True
        # FastEstimator's attribute: the Beta distribution lam is sampled from (`beta.sample()`), made for the
        # framework when the op is built; a test may put any object with `sample()` here
        self.beta: Any = None


@fe_export("fe.op.tensorop.augmentation.cutmix_batch.CutMixBatch", "fe.op.tensorop.augmentation.CutMixBatch")
class CutMixBatch(StatelessOp, TensorOp):
    """CutMix (https://arxiv.org/abs/1905.04899): paste a box of the previous sample (batch rolled by one) into each
    image, and mix the labels by the box's area.

    With lam ~ Beta(alpha, alpha), a box of (1 - lam) of the image area (same aspect ratio as the image) is centred
    at a uniformly drawn point and clipped to the image; the labels mix with the actual area kept. Images are
    (batch, channels, H, W) on torch and (batch, H, W, channels) on TensorFlow.

    Args:
        inputs: Keys of the image batch and the label batch.
        outputs: Keys of the cut-mixed images and mixed labels.
        mode: Mode(s) to run in (train by default).
        ds_id: Dataset id(s) to run on.
        alpha: The Beta distribution's parameter.

    Raises:
        ValueError: If `alpha` <= 0 or inputs/outputs are not pairs.
    """

    kernel_name = "cutmix_batch"

    def __init__(self,
                 inputs: Iterable[str],
                 outputs: Iterable[str],
                 mode: Union[None, str, Iterable[str]] = "train",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 alpha: float = 1.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        _check_pair(self, float(alpha))
        self.alpha = float(alpha)
        # FastEstimator's attributes: the Beta distribution of lam and the Uniform(0, 1) one of the box centre
        # (`sample()` each), made for the framework when the op is built; a test may replace them
        self.beta: Any = None
        self.uniform: Any = None
        self.in_list, self.out_list = True, True
