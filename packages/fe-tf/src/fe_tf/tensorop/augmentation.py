"""TensorFlow kernels of fe-core's MixUpBatch and CutMixBatch.

Random numbers come from TensorFlow's global `tf.random.Generator`, read inside the traced step (a stateful
variable, seeded by `enable_deterministic` and saved in checkpoints), so runs repeat and resume exactly. Beta samples
are two stateless gamma draws seeded from that generator.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

import tensorflow as tf

__all__ = ["KERNELS", "sample_beta", "global_generator"]


def global_generator() -> tf.random.Generator:
    """TensorFlow's global generator, created eagerly if it does not exist yet (so a traced step that first touches it
    is not traced twice for creating a variable)."""
    with tf.init_scope():
        return tf.random.get_global_generator()


def prepare_generator(op: Any) -> None:
    """Create the global generator now (eagerly, when the op is built), before any step is traced."""
    global_generator()


def sample_beta(alpha: float, shape: Sequence[int]) -> tf.Tensor:
    """Beta(alpha, alpha) samples of `shape` (float32) from the global generator."""
    seeds = global_generator().make_seeds(2)
    first = tf.random.stateless_gamma(shape, seed=seeds[:, 0], alpha=alpha)
    second = tf.random.stateless_gamma(shape, seed=seeds[:, 1], alpha=alpha)
    return first / (first + second)


class GeneratorBeta:
    """Beta(alpha, alpha) drawn from the global generator: the default `beta` attribute of MixUpBatch/CutMixBatch
    (FastEstimator's name; a user may replace it with any object whose `sample()` gives the mixing ratio)."""

    def __init__(self, alpha: float) -> None:
        self.alpha = float(alpha)

    def sample(self, sample_shape: Sequence[int] = ()) -> tf.Tensor:
        """Samples of `sample_shape` (float32)."""
        return sample_beta(self.alpha, sample_shape)


class GeneratorUniform:
    """Uniform(0, 1) drawn from the global generator: the default `uniform` attribute of CutMixBatch."""

    def sample(self, sample_shape: Sequence[int] = ()) -> tf.Tensor:
        """Samples of `sample_shape` (float32)."""
        return global_generator().uniform(sample_shape)


def prepare_distributions(op: Any) -> None:
    """Give the op its `beta` (and `uniform`) distributions unless the user set them (before any step is traced)."""
    prepare_generator(op)
    if getattr(op, "beta", None) is None:
        op.beta = GeneratorBeta(op.alpha)
    if getattr(op, "uniform", None) is None:
        op.uniform = GeneratorUniform()


def _draw(distribution: Any, shape: Any = ()) -> tf.Tensor:
    """`distribution.sample(shape)` as float32 (a stand-in whose `sample()` takes no shape, or gives one value, is
    broadcast to `shape`)."""
    try:
        value = distribution.sample(shape) if not (isinstance(shape, (tuple, list)) and not shape) else \
            distribution.sample()
    except TypeError:
        value = distribution.sample()
    value = tf.cast(tf.convert_to_tensor(value), tf.float32)
    if value.shape.rank is not None and value.shape.num_elements() == 1:
        value = tf.reshape(value, [])
    if not (isinstance(shape, (tuple, list)) and not shape) and value.shape.rank == 0:
        value = tf.broadcast_to(value, shape)
    return value


def _float_labels(labels: Any, images: tf.Tensor) -> tf.Tensor:
    dtype = images.dtype if images.dtype.is_floating else tf.float32
    labels = tf.convert_to_tensor(labels)
    return labels if labels.dtype == dtype else tf.cast(labels, dtype)


def mixup_batch_kernel(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> List[tf.Tensor]:
    """lam * x + (1 - lam) * x rolled by one sample, for the images and the labels."""
    images = tf.convert_to_tensor(data[0])
    labels = _float_labels(data[1], images)
    prepare_distributions(op)
    if op.shared_beta:
        lam = _draw(op.beta)
        lam_images, lam_labels = lam, lam
    else:
        lam = _draw(op.beta, tf.shape(images)[:1])
        lam_images = tf.reshape(lam, [-1] + [1] * (images.shape.rank - 1))
        lam_labels = tf.reshape(lam, [-1] + [1] * (labels.shape.rank - 1))
    lam_images = tf.cast(lam_images, images.dtype)
    lam_labels = tf.cast(lam_labels, labels.dtype)
    mixed_images = lam_images * images + (1.0 - lam_images) * tf.roll(images, shift=1, axis=0)
    mixed_labels = lam_labels * labels + (1.0 - lam_labels) * tf.roll(labels, shift=1, axis=0)
    return [mixed_images, mixed_labels]


def cutmix_batch_kernel(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> List[tf.Tensor]:
    """Paste a box of the rolled batch into (batch, H, W, channels) images; mix labels by the box area."""
    images = tf.convert_to_tensor(data[0])
    labels = _float_labels(data[1], images)
    height, width = images.shape[1], images.shape[2]
    prepare_distributions(op)
    lam = _draw(op.beta)
    center = tf.stack([_draw(op.uniform), _draw(op.uniform)])  # (y, x) of the box centre
    cut = tf.sqrt(1.0 - lam)
    cut_h, cut_w = height * cut, width * cut
    y1 = tf.round(tf.maximum(center[0] * height - cut_h / 2, 0.0))
    y2 = tf.round(tf.minimum(center[0] * height + cut_h / 2, float(height)))
    x1 = tf.round(tf.maximum(center[1] * width - cut_w / 2, 0.0))
    x2 = tf.round(tf.minimum(center[1] * width + cut_w / 2, float(width)))
    rows = tf.range(height, dtype=tf.float32)
    cols = tf.range(width, dtype=tf.float32)
    mask = tf.logical_and(((rows >= y1) & (rows < y2))[:, tf.newaxis], ((cols >= x1) & (cols < x2))[tf.newaxis, :])
    mixed_images = tf.where(mask[tf.newaxis, :, :, tf.newaxis], tf.roll(images, shift=1, axis=0), images)
    kept = tf.cast(1.0 - (x2 - x1) * (y2 - y1) / float(height * width), labels.dtype)
    mixed_labels = kept * labels + (1.0 - kept) * tf.roll(labels, shift=1, axis=0)
    return [mixed_images, mixed_labels]


mixup_batch_kernel.fe_prepare = prepare_distributions  # type: ignore[attr-defined]
cutmix_batch_kernel.fe_prepare = prepare_distributions  # type: ignore[attr-defined]

KERNELS = {"mixup_batch": mixup_batch_kernel, "cutmix_batch": cutmix_batch_kernel}
