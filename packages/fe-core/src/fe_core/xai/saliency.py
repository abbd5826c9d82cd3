"""`SaliencyNet`: saliency masks of a model (plain gradients, SmoothGrad and Integrated Gradients).

The gradients come from the model's backend: `fe_torch.xai.saliency` or `fe_tf.xai.saliency` (mirrored modules with
`class_score_gradients`), chosen by the model's class without importing a framework here. The masks are computed on
numpy and handed back as the model's framework tensors (on the host), as FastEstimator returns them. The noise of
SmoothGrad is drawn from numpy's global random generator, so runs repeat under `fe.enable_deterministic`.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from fe_core.backend.dispatch import framework_of
from fe_core.framework.public import to_host, to_public
from fe_core.framework.registry import backend_for_model
from fe_core.containers import to_list
from fe_core.export import fe_export

__all__ = ["SaliencyNet", "to_greyscale_mask"]


def _backend(model: Any) -> ModuleType:
    package = framework_of(type(model))
    if package is None:
        raise ValueError(f"SaliencyNet needs a torch.nn.Module or a Keras model, got {type(model).__name__}")
    return importlib.import_module(f"{package}.xai.saliency")


def to_greyscale_mask(gradients: np.ndarray, channel_axis: int, percentile: float = 99.0) -> np.ndarray:
    """Gradient maps to greyscale masks in [0, 1]: absolute values summed over the channel axis of image batches
    (rank 4), which stays as an axis of size 1 (as FastEstimator's masks: (N, H, W, 1) channels last, (N, 1, H, W)
    channels first), then per sample scaled from its minimum to its `percentile`-th percentile and clipped.

    Example:
        >>> to_greyscale_mask(np.array([[[[1.0, -3.0], [0.0, 2.0]]]]), channel_axis=-1, percentile=100).tolist()
        [[[[1.0], [0.0]]]]
    """
    grads = np.abs(np.asarray(gradients, dtype=np.float64))
    if grads.ndim == 4:
        grads = grads.sum(axis=channel_axis, keepdims=True)
    flat = grads.reshape(grads.shape[0], -1)
    vmax = np.percentile(flat, percentile, axis=1).reshape((-1,) + (1,) * (grads.ndim - 1))
    vmin = flat.min(axis=1).reshape((-1,) + (1,) * (grads.ndim - 1))
    span = vmax - vmin
    return np.clip(np.where(span > 0, (grads - vmin) / np.where(span > 0, span, 1.0), 0.0), 0.0, 1.0
                   ).astype(np.float32)


@fe_export("fe.xai.saliency.SaliencyNet", "fe.xai.SaliencyNet")
class SaliencyNet:
    """A class to generate saliency masks from a given model.

    Each mask shows how strongly each input pixel moves the score of the sample's predicted class (the gradient of
    that score with respect to the input), as a greyscale image in [0, 1].

    Args:
        model: The model, compiled with fe.build, which is to be inspected.
        model_inputs: The key(s) corresponding to the model inputs within the data dictionary.
        model_outputs: The key(s) corresponding to the model outputs which are written into the data dictionary.
        outputs: The keys(s) under which to write the generated saliency images (one per model input).

    Raises:
        ValueError: If the number of `outputs` differs from the number of `model_inputs`.

    Example:
        >>> # net = SaliencyNet(model, model_inputs="x", model_outputs="y_pred")
        >>> # masks = net.get_smoothed_masks({"x": images})  # {'y_pred': classes, 'saliency': masks}
        >>> # masks of image batches keep the input's layout with one channel: (N, H, W, 1) for a Keras model,
        >>> # (N, 1, H, W) for a torch one
    """

    def __init__(self,
                 model: Any,
                 model_inputs: Union[str, Sequence[str]],
                 model_outputs: Union[str, Sequence[str]],
                 outputs: Union[str, List[str]] = "saliency") -> None:
        self.model = model
        self._model_inputs = to_list(model_inputs)
        self._model_outputs = to_list(model_outputs)
        self.outputs = to_list(outputs)
        if len(self.outputs) != len(self._model_inputs):
            raise ValueError(f"SaliencyNet needs one output key per model input: {self._model_inputs} vs "
                             f"{self.outputs}")
        self.backend = _backend(model)

    @property
    def model_inputs(self) -> List[str]:
        """The keys of the model inputs."""
        return list(self._model_inputs)

    @property
    def model_outputs(self) -> List[str]:
        """The keys of the model outputs (the first receives the predicted classes)."""
        return list(self._model_outputs)

    def _inputs(self, batch: Dict[str, Any]) -> List[np.ndarray]:
        return [np.asarray(to_host(batch[key]), dtype=np.float32) for key in self._model_inputs]

    def _result(self, predicted: np.ndarray, grads: List[np.ndarray]) -> Dict[str, Any]:
        result = {self._model_outputs[0]: predicted}
        for key, grad in zip(self.outputs, grads):
            result[key] = to_greyscale_mask(grad, self.backend.CHANNEL_AXIS)
        return to_public(result, backend_for_model(self.model))

    def get_masks(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """Generates greyscale saliency mask(s) from a given `batch` of data.

        Args:
            batch: A batch of input data to be fed to the model (numpy arrays or framework tensors).

        Returns:
            The model's classification decisions and greyscale saliency mask(s) for the given `batch` of data, as the
            model's framework tensors (on the host).
        """
        predicted, _, grads = self.backend.class_score_gradients(self.model, self._inputs(batch))
        return self._result(predicted, grads)

    def _integrated(self, inputs: List[np.ndarray], classes: np.ndarray, nsamples: int) -> List[np.ndarray]:
        """Integrated gradients from a zero baseline, for fixed classes."""
        totals = [np.zeros_like(value) for value in inputs]
        for step in range(1, nsamples + 1):
            scaled = [value * (step / nsamples) for value in inputs]
            _, _, grads = self.backend.class_score_gradients(self.model, scaled, classes)
            for total, grad in zip(totals, grads):
                total += grad
        return [total / nsamples * value for total, value in zip(totals, inputs)]

    def get_smoothed_masks(self,
                           batch: Dict[str, Any],
                           stdev_spread: float = 0.15,
                           nsamples: int = 25,
                           nintegration: Optional[int] = None,
                           magnitude: bool = True) -> Dict[str, Any]:
        """Generates smoothed greyscale saliency mask(s) from a given `batch` of data.

        Args:
            batch: An input batch of data.
            stdev_spread: Amount of noise to add to the input, as fraction of the total spread (x_max - x_min).
            nsamples: Number of samples to average across to get the smooth gradient.
            nintegration: Number of samples to compute when integrating (None to disable).
            magnitude: If true, computes the sum of squares of gradients instead of just the sum.

        Returns:
            The classification decisions and greyscale saliency mask(s) smoothed via the SmoothGrad method, as the
            model's framework tensors (on the host).
        """
        inputs = self._inputs(batch)
        predicted, classes, _ = self.backend.class_score_gradients(self.model, inputs)
        spreads = [stdev_spread * (value.reshape(value.shape[0], -1).max(axis=1) -
                                   value.reshape(value.shape[0], -1).min(axis=1)).reshape(
                                       (-1,) + (1,) * (value.ndim - 1)) for value in inputs]
        totals = [np.zeros_like(value) for value in inputs]
        for _ in range(nsamples):
            noisy = [(value + np.random.normal(size=value.shape) * spread).astype(np.float32)
                     for value, spread in zip(inputs, spreads)]
            if nintegration:
                grads = self._integrated(noisy, classes, nintegration)
            else:
                _, _, grads = self.backend.class_score_gradients(self.model, noisy, classes)
            for total, grad in zip(totals, grads):
                total += grad * grad if magnitude else grad
        return self._result(predicted, [total / max(nsamples, 1) for total in totals])

    def get_integrated_masks(self, batch: Dict[str, Any], nsamples: int = 25) -> Dict[str, Any]:
        """Generates integrated greyscale saliency mask(s) from a given `batch` of data.

        See https://arxiv.org/abs/1703.01365 for background on the IntegratedGradient method (here from an all-zero
        baseline).

        Args:
            batch: An input batch of data.
            nsamples: Number of samples to average across to get the integrated gradient.

        Returns:
            The classification decisions and greyscale saliency masks smoothed via the IntegratedGradient method, as
            the model's framework tensors (on the host).
        """
        inputs = self._inputs(batch)
        predicted, classes, _ = self.backend.class_score_gradients(self.model, inputs)
        return self._result(predicted, self._integrated(inputs, classes, nsamples))
