"""`EigenCAM`: heat maps of the principal components of a convolution layer's activations."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.trace.xai.cam import CAMTrace
from fe_core.trace.xai.heatmap import resize_bilinear

__all__ = ["EigenCAM"]


@fe_export("fe.trace.xai.eigen_cam.EigenCAM", "fe.trace.xai.EigenCAM")
class EigenCAM(CAMTrace):
    """A trace which draws EigenCAM heatmaps on top of images.

    These are useful for visualizing the outputs of the feature extractor component of a model. They are relatively
    insensitive to adversarial attacks, so don't use them to try and detect those. See https://arxiv.org/abs/2008.00299
    for more details. For each sample the activations (h*w positions x C channels, centred per channel) are
    decomposed by SVD; the k-th heat map is the projection of every position onto the k-th principal direction, with
    its sign chosen so that its largest magnitude is positive, then ReLU'd, resized and min-max scaled. The figure (a
    `fe.util.GridDisplay`: labels, predictions, images, one column per component) is written to `data[outputs]`.

    Args:
        images: The key corresponding to images onto which to draw the CAM outputs.
        activations: The key corresponding to outputs from a convolution layer from which to draw the CAM outputs. You
            can easily extract these from any model by using the 'intermediate_layers' variable in a ModelOp.
        n_components: How many principal components to visualize. If you pass a float between 0 and 1 it will instead
            visualize however many components are required in order to capture the corresponding percentage of the
            variance in the image (the most any sample needs; samples that need fewer get empty maps).
        n_samples: How many images in total to display every epoch (or None to display all available images).
        downsize: Whether to downsize the inputs before svd decomposition in order to speed up processing. If provided,
            the inputs will be proportionally downscaled such that their longest axis length is equal to the `downsize`
            parameter. 64 seems like a good value to try if you are having performance problems.
        labels: The key corresponding to the true labels of the images to be visualized.
        preds: The key corresponding to the model prediction for each image.
        label_mapping: {class_string: model_output_value}.
        outputs: The key into which to write the eigencam images.
        mode: What mode(s) to execute this Op in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".

    Raises:
        ValueError: If `n_components` is not a positive integer or a float in (0, 1).
    """

    def __init__(self,
                 images: str,
                 activations: str,
                 n_components: Union[int, float] = 3,
                 n_samples: Optional[int] = 5,
                 downsize: Optional[int] = None,
                 labels: Optional[str] = None,
                 preds: Optional[str] = None,
                 label_mapping: Optional[Dict[str, Any]] = None,
                 outputs: str = "eigencam",
                 mode: Union[None, str, Iterable[str]] = "!train",
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        if isinstance(n_components, float) and not 0 < n_components < 1 or \
                not isinstance(n_components, float) and (not isinstance(n_components, int) or n_components < 1):
            raise ValueError(f"EigenCAM n_components must be a positive integer or a float in (0, 1), got "
                             f"{n_components!r}")
        super().__init__(images=images, map_key=activations, n_samples=n_samples, labels=labels, preds=preds,
                         label_mapping=label_mapping, outputs=outputs, mode=mode, ds_id=ds_id)
        self.n_components = n_components
        self.downsize = downsize

    def component_titles(self, count: int) -> List[str]:
        return [f"{self.outputs[0]} component {k + 1}" for k in range(count)]

    def component_maps(self, maps: np.ndarray) -> np.ndarray:
        """The principal-component maps (components, N, h, w) of activations (N, h, w, C)."""
        maps = np.asarray(maps, dtype=np.float64)
        n, h, w, c = maps.shape
        if self.downsize and max(h, w) > self.downsize:
            scale = self.downsize / max(h, w)
            h2, w2 = max(1, round(h * scale)), max(1, round(w * scale))
            maps = np.moveaxis(resize_bilinear(np.moveaxis(maps, -1, 1), h2, w2), 1, -1)
            h, w = h2, w2
        flat = maps.reshape(n, h * w, c)
        flat = flat - flat.mean(axis=1, keepdims=True)
        _, singular, vt = np.linalg.svd(flat, full_matrices=False)  # batched: (N, k), (N, k, C)
        if isinstance(self.n_components, float):
            energy = np.cumsum(singular ** 2, axis=1) / np.maximum((singular ** 2).sum(axis=1, keepdims=True), 1e-12)
            needed = 1 + np.argmax(energy >= self.n_components, axis=1)
            count = int(needed.max())
        else:
            count = min(int(self.n_components), vt.shape[1])
            needed = np.full(n, count)
        projections = np.einsum("npc,nkc->knp", flat, vt[:, :count])  # (count, N, h*w)
        peak = np.take_along_axis(projections, np.argmax(np.abs(projections), axis=2)[..., None], axis=2)
        projections = np.maximum(projections * np.where(peak < 0, -1.0, 1.0), 0.0)
        projections[np.arange(count)[:, None] >= needed[None, :]] = 0.0
        return projections.reshape(count, n, h, w)
