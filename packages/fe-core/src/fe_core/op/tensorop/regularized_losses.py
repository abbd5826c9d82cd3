"""Losses built on other losses: `L2Regularizaton` (adds a weight penalty) and `SuperLoss` (curriculum learning)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.backend.models import l2_regularization
from fe_core.export import fe_export
from fe_core.op.tensorop.loss import LossOp
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["L2Regularizaton", "SuperLoss"]

MODES = ("train", "eval", "test", "infer")


@fe_export("fe.op.tensorop.loss.l2_regularization.L2Regularizaton", "fe.op.tensorop.loss.L2Regularizaton")
class L2Regularizaton(TensorOp):  # FastEstimator's spelling
    """Add an L2 penalty on a model's weights to a loss: loss + beta * sum(w**2) / 2 over its trainable weights.

    Args:
        inputs: The key of the loss.
        outputs: The key of the regularized loss.
        model: The model (built with `fe.build`, or any torch / Keras model) whose weights are penalized.
        mode: Mode(s) to run in.
        beta: The weight of the penalty.
    """

    def __init__(self,
                 inputs: str,
                 outputs: str,
                 model: Any,
                 mode: Union[None, str, Iterable[str]] = None,
                 beta: float = 0.01) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode)
        self.model = model
        self.beta = beta

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return data + l2_regularization(self.model, self.beta)


@fe_export("fe.op.tensorop.loss.super_loss.SuperLoss", "fe.op.tensorop.loss.SuperLoss")
class SuperLoss(LossOp):
    """SuperLoss (https://papers.nips.cc/paper/2020/file/2cfa8f9e50e0f510ede9d12338a5f564-Paper.pdf): automatic
    curriculum learning on top of another loss.

    Per sample, with base loss l, threshold tau and regularization lam: sigma = exp(-W(max(-2/e, (l - tau) / lam) / 2))
    (W: the principal Lambert W branch) and the super loss is (l - tau) * sigma + lam * log(sigma)**2. With
    threshold='exp', tau is an exponential moving average of the batch loss (per mode, 0.1 update rate), saved in
    checkpoints.

    Args:
        loss: The underlying LossOp (one output); it is switched to per-sample losses.
        threshold: A constant tau (for example log(n_classes) for cross entropy) or 'exp' for the moving average.
        regularization: lam > 0 (as it grows the super loss approaches the regular loss).
        average_loss: Average the result over the batch.
        output_confidence: A key to also write each sample's confidence sigma to.

    Raises:
        ValueError: If `loss` has several outputs, or `threshold` / `regularization` are invalid.
    """

    kernel_name = "super_loss"
    output_count = None
    CAP = -1.9999998 / math.e  # slightly above -2/e, where W is defined, for numerical safety

    def __init__(self,
                 loss: LossOp,
                 threshold: Union[float, str] = "exp",
                 regularization: float = 1.0,
                 average_loss: bool = True,
                 output_confidence: Optional[str] = None) -> None:
        if not isinstance(loss, LossOp) or len(loss.outputs) != 1 or loss.out_list:
            raise ValueError("SuperLoss needs a LossOp with a single (string) output key")
        if isinstance(threshold, str):
            if threshold != "exp":
                raise ValueError(f"SuperLoss threshold must be 'exp' or a number, got {threshold!r}")
        else:
            threshold = float(np.asarray(threshold).item())
        if regularization <= 0:
            raise ValueError(f"SuperLoss regularization must be greater than 0, got {regularization}")
        loss.average_loss = False
        outputs = loss.outputs[0] if output_confidence is None else [loss.outputs[0], output_confidence]
        super().__init__(inputs=loss.inputs, outputs=outputs, mode=None, ds_id=None, average_loss=average_loss)
        self.mode, self.ds_id = loss.mode, loss.ds_id
        self.in_list = loss.in_list
        self.loss = loss
        self.tau_method = threshold
        self.lam = float(regularization)
        # per mode: [initialized, tau]; the backend keeps them as tensors/variables in fe_backend_state
        self.fe_backend_state: Dict[str, Any] = {}

    def build(self, framework: str, device: Any = None) -> None:
        self.loss.build(framework, device)
        super().build(framework, device)
        from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
        get_backend(framework).kernel("super_loss_init")(self, device, {})  # tau state, on the device

    @property
    def initialized(self) -> Dict[str, Any]:
        """FastEstimator's {mode: whether the moving-average threshold has started} (torch: a bool tensor;
        TensorFlow: a 0/1 variable), once the op is built ({} before)."""
        return {mode: entry[0] for mode, entry in self.fe_backend_state.get("modes", {}).items()}

    @property
    def tau(self) -> Dict[str, Any]:
        """FastEstimator's {mode: threshold tau} (the framework's tensor or variable, on the op's device), once the
        op is built ({} before)."""
        return {mode: entry[1] for mode, entry in self.fe_backend_state.get("modes", {}).items()}

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: per mode, [initialized (0/1), tau] as plain floats."""
        if getattr(self, "framework", None) is None:
            return {"tau": dict(self.fe_backend_state.get("pending", {}))}
        from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
        return {"tau": get_backend(self.framework).kernel("super_loss_read")(self, None, {})}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned (kept until the op is built, if it is not yet)."""
        saved = {mode: [float(value) for value in pair] for mode, pair in dict(state.get("tau", {})).items()}
        if getattr(self, "framework", None) is None:
            self.fe_backend_state["pending"] = saved
            return
        from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
        get_backend(self.framework).kernel("super_loss_write")(self, saved, {})
