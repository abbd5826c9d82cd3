"""Input gradients of a torch model's class scores, for `fe_core.xai.saliency.SaliencyNet`."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from fe_torch.devices import model_device

__all__ = ["CHANNEL_AXIS", "class_score_gradients"]

#: Where image channels are in this framework's batches (N, C, H, W).
CHANNEL_AXIS = 1


def class_score_gradients(model: torch.nn.Module, inputs: Sequence[np.ndarray], classes: Optional[np.ndarray] = None
                          ) -> Tuple[np.ndarray, np.ndarray, List[np.ndarray]]:
    """Gradients of each sample's class score with respect to the model inputs (the model in eval mode).

    Args:
        model: The model (called as `model(*inputs)`; with several outputs the first holds the class scores).
        inputs: The model inputs, numpy arrays with a batch axis.
        classes: The class of each sample to explain; None: the predicted (argmax) class.

    Returns:
        (the predicted classes (N,), the explained classes (N,), one gradient array per input (same shapes)).
    """
    device = model_device(model)
    tensors = [torch.as_tensor(np.asarray(value), device=device).float().requires_grad_(True) for value in inputs]
    was_training = model.training
    model.eval()
    try:
        with torch.enable_grad():
            scores = model(*tensors)
            if isinstance(scores, (list, tuple)):
                scores = scores[0]
            scores = scores.reshape(scores.shape[0], -1)
            predicted = torch.argmax(scores, dim=1)
            chosen = predicted if classes is None else torch.as_tensor(np.asarray(classes), device=scores.device
                                                                       ).long().reshape(-1)
            target = scores.gather(1, chosen[:, None]).sum()
            grads = torch.autograd.grad(target, tensors, allow_unused=True)
    finally:
        model.train(was_training)
    out = [np.zeros(np.shape(value), np.float32) if grad is None else grad.detach().cpu().numpy()
           for value, grad in zip(inputs, grads)]
    return predicted.detach().cpu().numpy(), chosen.detach().cpu().numpy(), out
