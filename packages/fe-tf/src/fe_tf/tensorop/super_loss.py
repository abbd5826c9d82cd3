"""TensorFlow kernels of fe-core's SuperLoss: per-mode state (initialized flag, moving-average tau) in tf.Variables
created at build time, so the traced step reads and updates them; Lambert W from fe.backend."""
from __future__ import annotations

from typing import Any, Dict, List, Union

import tensorflow as tf

from fe_core.backend.elementwise import lambertw
from fe_tf.precision import to_full_precision

__all__ = ["KERNELS"]


def _float(tensor: Any) -> tf.Tensor:
    tensor = to_full_precision(tf.convert_to_tensor(tensor))
    return tensor if tensor.dtype == tf.float32 else tf.cast(tensor, tf.float32)


def _output(op: Any, loss: tf.Tensor) -> Union[tf.Tensor, List[tf.Tensor]]:
    return [loss] if op.out_list else loss


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
    "super_loss": super_loss_kernel,
    "super_loss_init": super_loss_init_kernel,
    "super_loss_read": super_loss_read_kernel,
    "super_loss_write": super_loss_write_kernel,
}
