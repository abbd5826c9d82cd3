"""TensorFlow kernels of fe-core's DiceLoss, FocalLoss, Hinge, L2Regularizaton and SuperLoss (float32; channels last).

SuperLoss keeps its per-mode state (initialized flag, moving-average tau) in tf.Variables created at build time, so
the traced step reads and updates them.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Union

import tensorflow as tf

from fe_tf.precision import to_full_precision

__all__ = ["KERNELS", "lambertw"]

EPSILON = 1e-7


def _float(tensor: Any) -> tf.Tensor:
    tensor = to_full_precision(tf.convert_to_tensor(tensor))
    return tensor if tensor.dtype == tf.float32 else tf.cast(tensor, tf.float32)


def _target(true: Any, pred: tf.Tensor) -> tf.Tensor:
    true = tf.cast(true, pred.dtype)
    return true if true.shape.rank == pred.shape.rank else tf.reshape(true, tf.shape(pred))


def _per_sample(loss: tf.Tensor, reduce: Any = tf.reduce_mean) -> tf.Tensor:
    rank = loss.shape.rank
    return loss if rank is None or rank <= 1 else reduce(loss, axis=list(range(1, rank)))


def _output(op: Any, loss: tf.Tensor) -> Union[tf.Tensor, List[tf.Tensor]]:
    return [loss] if op.out_list else loss


def dice_loss_kernel(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> Union[tf.Tensor, List[tf.Tensor]]:
    """1 - dice per sample (and channel, last axis), averaged as the op says."""
    pred = _float(data[0])
    true = _target(data[1], pred)
    axes = list(range(1, pred.shape.rank - 1))
    if axes:
        intersection = tf.reduce_sum(pred * true, axis=axes)
        area = tf.reduce_sum(true * true, axis=axes) + tf.reduce_sum(pred * pred, axis=axes) if op.soft_dice else \
            tf.reduce_sum(true, axis=axes) + tf.reduce_sum(pred, axis=axes)
    else:
        intersection = pred * true
        area = true * true + pred * pred if op.soft_dice else true + pred
    dice = 2.0 * intersection / (area + op.epsilon)
    weights = op.weight_list(int(dice.shape[-1]))
    if weights is not None:
        dice = dice * tf.constant(weights, dice.dtype)
    if op.channel_average:
        dice = tf.reduce_mean(dice, axis=-1)
    loss = 1.0 - dice
    return _output(op, tf.reduce_mean(loss, axis=0) if op.average_loss else loss)


def focal_loss_kernel(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> Union[tf.Tensor, List[tf.Tensor]]:
    """Sigmoid focal loss with the op's normalization and reductions."""
    pred = _float(data[0])
    true = _target(data[1], pred)
    if op.from_logits:
        probability = tf.sigmoid(pred)
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=true, logits=pred)
    else:
        probability = pred
        clamped = tf.clip_by_value(pred, EPSILON, 1.0 - EPSILON)
        loss = -(true * tf.math.log(clamped) + (1.0 - true) * tf.math.log(1.0 - clamped))
    if op.gamma:
        p_t = probability * true + (1.0 - probability) * (1.0 - true)
        loss = loss * tf.pow(1.0 - p_t, op.gamma)
    if op.alpha is not None and op.alpha >= 0:
        loss = loss * (op.alpha * true + (1.0 - op.alpha) * (1.0 - true))
    rank = loss.shape.rank
    if op.normalize and rank > 1:
        positives = tf.maximum(_per_sample(true, tf.reduce_sum), 1.0)
        loss = loss / tf.reshape(positives, [-1] + [1] * (rank - 1))
    if rank > 1 and op.shape_reduction != "none":
        loss = _per_sample(loss, tf.reduce_sum if op.shape_reduction == "sum" else tf.reduce_mean)
    if op.sample_reduction == "mean":
        loss = tf.reduce_mean(loss, axis=0)
    elif op.sample_reduction == "sum":
        loss = tf.reduce_sum(loss, axis=0)
    return _output(op, loss)


def hinge_kernel(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> Union[tf.Tensor, List[tf.Tensor]]:
    """mean(max(0, 1 - y_true * y_pred)) per sample, then over the batch if `average_loss`."""
    pred = _float(data[0])
    loss = _per_sample(tf.maximum(1.0 - _target(data[1], pred) * pred, 0.0))
    return _output(op, tf.reduce_mean(loss) if op.average_loss else loss)


def l2_regularization_kernel(op: Any, data: Any, state: Dict[str, Any]) -> tf.Tensor:
    """loss + beta * sum(w**2) / 2 over the model's trainable variables."""
    loss = _float(data)
    penalty = tf.add_n([tf.nn.l2_loss(tf.cast(variable, tf.float32)) for variable in op.model.trainable_variables])
    return loss + op.beta * penalty


def lambertw(tensor: tf.Tensor, iterations: int = 6) -> tf.Tensor:
    """The principal branch W0 of the Lambert W function (for inputs >= -1/e), by Halley's method in float64."""
    x = tf.cast(tensor, tf.float64)
    near_branch = tf.sqrt(tf.maximum(2.0 * (math.e * x + 1.0), 0.0))
    series = -1.0 + near_branch - near_branch**2 / 3.0 + 11.0 / 72.0 * near_branch**3
    w = tf.where(x < -0.25, series, tf.math.log1p(tf.maximum(x, -0.25)))
    for _ in range(iterations):
        exp_w = tf.exp(w)
        f = w * exp_w - x
        w_plus_one = tf.where(tf.abs(w + 1.0) < 1e-12, tf.fill(tf.shape(w), tf.constant(1e-12, tf.float64)), w + 1.0)
        w = w - f / (exp_w * w_plus_one - (w + 2.0) * f / (2.0 * w_plus_one))
    return tf.cast(w, tensor.dtype)


def super_loss_init_kernel(op: Any, device: Any, state: Dict[str, Any]) -> None:
    """Per mode two variables: initialized (0/1) and tau; restores any state loaded before the build."""
    if "modes" in op.fe_backend_state:
        return
    pending = op.fe_backend_state.pop("pending", {})
    initial = 0.0 if op.tau_method == "exp" else float(op.tau_method)
    with tf.init_scope():
        op.fe_backend_state["modes"] = {
            mode: [tf.Variable(float(pending.get(mode, (0.0, initial))[0]), trainable=False, dtype=tf.float32),
                   tf.Variable(float(pending.get(mode, (0.0, initial))[1]), trainable=False, dtype=tf.float32)]
            for mode in ("train", "eval", "test", "infer")}


def super_loss_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Union[tf.Tensor, List[tf.Tensor]]:
    """The super loss of the wrapped loss's per-sample values (and the confidences, if asked)."""
    base = op.loss.forward(data, state)
    if isinstance(base, (list, tuple)):
        base = base[0]
    base = _float(base)
    initialized, tau_variable = op.fe_backend_state["modes"][state.get("mode", "train")]
    if op.tau_method == "exp":
        mean = tf.reduce_mean(tf.stop_gradient(base))
        tau = tf.where(initialized > 0.5, tau_variable - 0.1 * (tau_variable - mean), mean)
        tau_variable.assign(tau)
        if not state.get("warmup", False):
            initialized.assign(1.0)
    else:
        tau = tf.identity(tau_variable)
    shifted = base - tau
    ln_sigma = -lambertw(0.5 * tf.maximum(tf.stop_gradient(shifted) / op.lam, op.CAP))
    loss = shifted * tf.exp(ln_sigma) + op.lam * tf.square(ln_sigma)
    if op.average_loss:
        loss = tf.reduce_mean(loss)
    return [loss, tf.exp(ln_sigma)] if len(op.outputs) == 2 else _output(op, loss)


def super_loss_read_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Dict[str, List[float]]:
    """{mode: [initialized, tau]} as floats."""
    return {mode: [float(init.numpy()), float(tau.numpy())]
            for mode, (init, tau) in op.fe_backend_state.get("modes", {}).items()}


def super_loss_write_kernel(op: Any, data: Dict[str, List[float]], state: Dict[str, Any]) -> None:
    """Restore what `super_loss_read_kernel` returned (in place: traced steps keep their variables)."""
    modes = op.fe_backend_state.get("modes")
    if modes is None:
        op.fe_backend_state["pending"] = dict(data)
        return
    for mode, (init, tau) in data.items():
        if mode in modes:
            modes[mode][0].assign(float(init))
            modes[mode][1].assign(float(tau))


KERNELS = {
    "dice_loss": dice_loss_kernel,
    "focal_loss": focal_loss_kernel,
    "hinge": hinge_kernel,
    "l2_regularization": l2_regularization_kernel,
    "super_loss": super_loss_kernel,
    "super_loss_init": super_loss_init_kernel,
    "super_loss_read": super_loss_read_kernel,
    "super_loss_write": super_loss_write_kernel,
}
