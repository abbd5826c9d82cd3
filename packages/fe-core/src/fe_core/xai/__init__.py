"""Explaining models: `SaliencyNet` (saliency masks from input gradients, computed by the model's backend)."""
from fe_core.xai.saliency import SaliencyNet

__all__ = ["SaliencyNet"]
