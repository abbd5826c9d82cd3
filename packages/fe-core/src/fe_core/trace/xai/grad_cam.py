"""`GradCAM`: heat maps of where a classifier's decision is sensitive, from gradients at a convolution layer."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.trace.xai.cam import CAMTrace

__all__ = ["GradCAM"]


@fe_export("fe.trace.xai.grad_cam.GradCAM", "fe.trace.xai.GradCAM")
class GradCAM(CAMTrace):
    """A trace which draws GradCAM heatmaps on top of images.

    These are useful for visualizing supports for a model's classification. See https://arxiv.org/pdf/1610.02391.pdf
    for more details. The heat map of a sample is the ReLU of its gradients averaged over the channels of the
    convolution layer, resized to the image and min-max scaled, drawn in the jet colour map over the image. The
    figure (a `fe.util.GridDisplay`: labels, predictions, images, heat maps) is written to `data[outputs]` at the end
    of each epoch; save it with `ImageSaver(outputs)`.

    Args:
        images: The key corresponding to images onto which to draw the CAM outputs.
        grads: The key corresponding to gradients of the model output with respect to a convolution layer of the model.
            You can easily extract these from any model by using the 'intermediate_layers' variable in a ModelOp, along
            with the GradientOp. Make sure to select a particular component of y_pred when computing gradients rather
            than using the entire vector. See our GradCAM XAI tutorial for an example.
        n_components: How many principal components to visualize (kept for FastEstimator compatibility: GradCAM
            draws one map per sample).
        n_samples: How many images in total to display every epoch (or None to display all available images).
        labels: The key corresponding to the true labels of the images to be visualized.
        preds: The key corresponding to the model prediction for each image.
        label_mapping: {class_string: model_output_value}.
        outputs: The key into which to write the eigencam images.
        mode: What mode(s) to execute this Op in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
    """

    def __init__(self,
                 images: str,
                 grads: str,
                 n_components: int = 3,
                 n_samples: Optional[int] = 5,
                 labels: Optional[str] = None,
                 preds: Optional[str] = None,
                 label_mapping: Optional[Dict[str, Any]] = None,
                 outputs: str = "gradcam",
                 mode: Union[None, str, Iterable[str]] = "!train",
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(images=images, map_key=grads, n_samples=n_samples, labels=labels, preds=preds,
                         label_mapping=label_mapping, outputs=outputs, mode=mode, ds_id=ds_id)
        self.n_components = n_components

    def component_maps(self, maps: np.ndarray) -> np.ndarray:
        """One map per sample: ReLU(mean of the gradients over channels), shape (1, N, h, w)."""
        return np.maximum(np.mean(maps, axis=-1), 0.0)[None]
