"""TensorFlow kernels of fe-core's Watch, GradientOp and FGSM, using the step's GradientTape (`state['tape']`)."""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List

import tensorflow as tf

__all__ = ["KERNELS"]


def _where(state: Dict[str, Any]) -> str:
    epoch = state.get("fe_epoch", state.get("epoch"))
    return f"mode {state.get('mode')!r}, epoch {epoch}, ds_id {state.get('ds_id')!r}"


@contextlib.contextmanager
def _paused(tape: Any) -> Iterator[None]:
    """Stop `tape` recording while gradients are computed (when it is recording)."""
    if getattr(tape, "_recording", False):
        with tape.stop_recording():
            yield
    else:
        yield


def _tape(op: Any, state: Dict[str, Any]) -> tf.GradientTape:
    tape = state.get("tape")
    if tape is None:
        raise ValueError(f"{type(op).__name__} needs the Network's GradientTape, which this step does not have "
                         f"({_where(state)}); run it inside a Network")
    return tape


def watch_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Make the step's tape watch the tensors."""
    tape = state.get("tape")
    tensors = [tf.convert_to_tensor(value) for value in data]
    if tape is not None:
        keys = list(op.inputs) + [f"input {index}" for index in range(len(op.inputs), len(tensors))]
        for key, tensor in zip(keys, tensors):  # every value given, in order, as FastEstimator's Watch returns them
            if not tensor.dtype.is_floating:
                raise TypeError(f"Watch cannot differentiate with respect to {key!r}: it holds {tensor.dtype.name} "
                                f"values, and only floating point tensors have gradients ({_where(state)})")
            tape.watch(tensor)
    return tensors


def gradient_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Gradients of each final (summed if not scalar) w.r.t. the input tensors or the model's trainable variables;
    missing gradients (unconnected sources) come back as zeros.

    Several finals with a tape that can be asked only once: inside the traced step each is differentiated
    symbolically (`tf.gradients`, which leaves the tape to later ops); eagerly that needs a persistent tape.
    """
    tape = _tape(op, state)
    finals = data[op.num_sources:]
    sources = list(op.model.trainable_variables) if op.model is not None else list(data[:op.num_sources])
    symbolic = len(finals) > 1 and not getattr(tape, "_persistent", False)
    if symbolic and tf.executing_eagerly():
        raise ValueError(f"GradientOp with {len(finals)} finals needs a persistent GradientTape when run eagerly "
                         f"({_where(state)}); use one GradientOp per final")
    results: List[Any] = []
    with _paused(tape):
        for final in finals:
            if symbolic:
                grads = tf.gradients(final, sources, unconnected_gradients=tf.UnconnectedGradients.ZERO)
            else:
                grads = tape.gradient(final, sources, unconnected_gradients=tf.UnconnectedGradients.ZERO)
            grads = [tf.convert_to_tensor(grad) for grad in grads]  # IndexedSlices (embeddings) become dense
            results.append(grads[0] if op.model is None and op.single_source else grads)
    return results


def fgsm_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> tf.Tensor:
    """clip(x + epsilon * sign(d loss / d x)), without a gradient path."""
    x, loss = data
    tape = _tape(op, state)
    with _paused(tape):
        gradient = tape.gradient(loss, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        x = tf.stop_gradient(x)
        adversarial = x + op.epsilon * tf.sign(tf.cast(gradient, x.dtype))
        low = tf.reduce_min(x) if op.clip_low is None else tf.cast(op.clip_low, x.dtype)
        high = tf.reduce_max(x) if op.clip_high is None else tf.cast(op.clip_high, x.dtype)
        return tf.stop_gradient(tf.clip_by_value(adversarial, low, high))


def model_without_gradients_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Any:
    """`ModelOp(gradients=False)`: the model call with its outputs behind `tf.stop_gradient`."""
    from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
    result = get_backend("tf").kernel_model(op, data, state)
    return tf.nest.map_structure(tf.stop_gradient, result)


KERNELS = {"watch": watch_kernel, "gradient": gradient_kernel, "fgsm": fgsm_kernel,
           "model_without_gradients": model_without_gradients_kernel}
