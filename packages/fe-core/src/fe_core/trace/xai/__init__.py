"""Explanation traces: `GradCAM` and `EigenCAM` (heat maps over images), `Saliency` (input-gradient maps of a model),
`InstanceTracker` and `LabelTracker` (a per-sample metric followed per sample or per class over training)."""
from fe_core.trace.xai.eigen_cam import EigenCAM
from fe_core.trace.xai.grad_cam import GradCAM
from fe_core.trace.xai.instance_tracker import InstanceTracker
from fe_core.trace.xai.label_tracker import LabelTracker
from fe_core.trace.xai.saliency import Saliency

__all__ = ["EigenCAM", "GradCAM", "InstanceTracker", "LabelTracker", "Saliency"]
