"""The TensorFlow kernels of fe's generic TensorOps: model call, gradients and update, losses, argmax.

Each kernel has the contract of `TensorOp.forward(data, state)` and runs eagerly or inside the Network's
`tf.function`. Losses are computed by fe.backend's TensorFlow functions (`fe_tf.backend`, Keras 3 semantics) and
return one value per sample unless `average_loss`; predictions in float16 (mixed precision) are computed in float32.

Gradient accumulation (`UpdateOp(merge_grad=n)`): per-step gradients are added to accumulator variables that the
Network creates before tracing (`prepare_accumulators`); the Network decides in Python, per step, whether this is the
n-th step (`state['merge_apply']`), and only then is the optimizer called, with the mean of the n gradients.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Sequence

import tensorflow as tf

from fe_core.misuse import described, where

from fe_tf.backend import crossentropy, losses, reductions
from fe_tf._keras import keras
from fe_tf.precision import apply_gradients, is_loss_scaled, loss_scale, scale_loss, to_full_precision

__all__ = ["TFKernels", "prepare_accumulators", "accumulator_key", "check_cross_entropy_labels",
           "check_update_reaches_model", "expected_input_hint"]


@contextlib.contextmanager
def _not_recording(tape: Any) -> Iterator[None]:
    """Pause `tape` (when it is recording) so gradient and optimizer computations are not recorded."""
    if tape is not None and getattr(tape, "_recording", False):
        with tape.stop_recording():
            yield
    else:
        yield


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", None) or getattr(model, "name", type(model).__name__))


def _where(state: Dict[str, Any]) -> str:
    epoch = state.get("fe_epoch", state.get("epoch"))
    return f"mode {state.get('mode')!r}, epoch {epoch}, ds_id {state.get('ds_id')!r}"


def accumulator_key(variables: Sequence[Any]) -> tuple:
    """Identifies the variable list an UpdateOp's accumulators were made for."""
    return tuple(id(variable) for variable in variables)


def prepare_accumulators(op: Any, strategy: Optional[tf.distribute.Strategy] = None) -> None:
    """Create (once, eagerly) the gradient accumulators of an UpdateOp with `merge_grad > 1`.

    One zero variable per trainable variable of the op's model, stored in `op.fe_backend_state`. Under a
    MirroredStrategy they are per-replica (on-read) variables, since every replica accumulates its own gradients.
    """
    variables = op.model.trainable_variables
    key = accumulator_key(variables)
    backend_state = op.fe_backend_state
    if backend_state.get("accumulator_key") == key:
        return
    scope = strategy.scope() if strategy is not None else contextlib.nullcontext()
    with scope:
        kwargs: Dict[str, Any] = {}
        if strategy is not None:
            kwargs = {"synchronization": tf.VariableSynchronization.ON_READ,
                      "aggregation": tf.VariableAggregation.SUM}
        accumulators = [tf.Variable(tf.zeros(variable.shape, dtype=tf.as_dtype(variable.dtype)), trainable=False,
                                    name="fe_grad_accumulator", **kwargs) for variable in variables]
    backend_state["accumulators"] = accumulators
    backend_state["accumulator_key"] = key
    backend_state.setdefault("count", 0)


def _per_sample_mean(value: tf.Tensor) -> tf.Tensor:
    rank = value.shape.rank
    if rank is None or rank <= 1:
        return value
    return tf.reduce_mean(value, axis=list(range(1, rank)))


class TFKernels:
    """Mixin of kernel methods (`kernel_<name>(op, data, state)`) for `TFBackend`."""

    # ------------------------------------------------------------------ model
    def kernel_model(self, op: Any, data: Any, state: Dict[str, Any]) -> Any:
        """Run `op.model` (training mode iff the Network is in 'train' mode and the op is trainable)."""
        training = state["mode"] == "train" and op.trainable
        if op.intermediate_layers:
            outputs = self._feature_model(op)(data, training=training)
            return list(outputs)
        return op.model(data, training=training)

    @staticmethod
    def _feature_model(op: Any) -> Any:
        """A functional model sharing `op.model`'s layers that returns its output and the intermediate layers'."""
        cached = getattr(op, "_fe_tf_feature_model", None)
        if cached is not None and cached[0] is op.model:
            return cached[1]
        model = op.model
        if not getattr(model, "inputs", None):
            raise ValueError(f"ModelOp of model {_model_name(model)!r}: intermediate_layers need a functional or "
                             "Sequential Keras model with known inputs")
        layers = []
        for layer_id in op.intermediate_layers:
            try:
                layer = model.layers[layer_id] if isinstance(layer_id, int) else model.get_layer(name=layer_id)
            except (ValueError, IndexError) as error:
                names = [layer.name for layer in model.layers]
                raise ValueError(f"ModelOp of model {_model_name(model)!r}: no layer {layer_id!r} (layers: {names})"
                                 ) from error
            layers.append(layer.output)
        feature_model = keras.Model(inputs=model.inputs, outputs=[model.outputs[0] if len(model.outputs) == 1 else
                                                                  model.outputs] + layers)
        op._fe_tf_feature_model = (model, feature_model)
        return feature_model

    # ------------------------------------------------------------------ update
    def kernel_update(self, op: Any, data: Any, state: Dict[str, Any]) -> None:
        """Differentiate the loss (or take the given gradients) and update the model with its optimizer.

        Nothing changes during warmup. The loss is averaged if it is not a scalar, the model's own `losses`
        (regularization) are added, it is divided by the number of replicas under a MirroredStrategy (gradients are
        summed over replicas) and scaled for mixed precision. With `merge_grad=n` the optimizer runs every n-th step
        with the mean of the n accumulated gradients; with `defer` the update runs after every op of the step.
        """
        if state["warmup"]:
            return None
        model = op.model
        name = _model_name(model)
        optimizer = getattr(model, "current_optimizer", None)
        if optimizer is None:
            raise ValueError(f"UpdateOp cannot update model {name!r} in {_where(state)}: it has no optimizer (give "
                             "build() an optimizer_fn, or schedule the UpdateOp off where the optimizer is None)")
        variables = model.trainable_variables
        if not variables:  # every layer is frozen: nothing to update
            return None
        tape = state.get("tape")
        loss_scaled = is_loss_scaled(optimizer)
        if op.gradients is None:
            if tape is None:
                raise ValueError(f"UpdateOp of model {name!r} in {_where(state)} found no GradientTape")
            loss = to_full_precision(data)
            if loss.shape.rank:
                loss = tf.reduce_mean(loss)
            extra_losses = model.losses
            if extra_losses:
                loss = loss + tf.add_n([tf.cast(extra, loss.dtype) for extra in extra_losses])
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            if replicas > 1:
                loss = loss / replicas
            loss = scale_loss(optimizer, loss)  # recorded: the tape must see every step from the variables
            with _not_recording(tape):
                gradients = tape.gradient(loss, variables)
            grads_scaled = loss_scaled
        else:
            gradients = list(data)
            if len(gradients) != len(variables):
                raise ValueError(f"UpdateOp of model {name!r} in {_where(state)}: got {len(gradients)} gradients for "
                                 f"{len(variables)} trainable variables")
            grads_scaled = False
        if op.merge_grad > 1:
            gradients = self._accumulate(op, gradients, state, optimizer, grads_scaled)
            if gradients is None:
                return None
        elif loss_scaled and not grads_scaled:
            scale = loss_scale(optimizer)
            gradients = [None if g is None else g * tf.cast(scale, g.dtype) for g in gradients]

        def apply() -> None:
            with _not_recording(tape):
                apply_gradients(optimizer, gradients, variables)

        if op.defer:
            state["deferred"].setdefault(name, []).append(apply)
        else:
            apply()
        return None

    @staticmethod
    def _accumulate(op: Any, gradients: List[Any], state: Dict[str, Any], optimizer: Any,
                    grads_scaled: bool) -> Optional[List[Any]]:
        """Add this step's gradients to the accumulators; on an applying step return the (scaled) mean and reset."""
        backend_state = op.fe_backend_state
        variables = op.model.trainable_variables
        if backend_state.get("accumulator_key") != accumulator_key(variables):
            raise RuntimeError(f"UpdateOp of model {_model_name(op.model)!r} in {_where(state)}: gradient "
                               "accumulators were not prepared for the current trainable variables")
        accumulators = backend_state["accumulators"]
        loss_scaled = is_loss_scaled(optimizer)
        scale = loss_scale(optimizer) if loss_scaled else None
        with _not_recording(state.get("tape")):
            if grads_scaled:
                gradients = [None if g is None else g / tf.cast(scale, g.dtype) for g in gradients]
            apply_now = state.get("merge_apply", {}).get(id(op), True)
            if not apply_now:
                for accumulator, gradient in zip(accumulators, gradients):
                    if gradient is not None:
                        accumulator.assign_add(tf.convert_to_tensor(gradient))
                return None
            merged = []
            for accumulator, gradient in zip(accumulators, gradients):
                total = accumulator.read_value() if gradient is None else accumulator.read_value() + gradient
                mean = total / op.merge_grad
                merged.append(mean * tf.cast(scale, mean.dtype) if loss_scaled else mean)
            with tf.control_dependencies(merged):
                for accumulator in accumulators:
                    accumulator.assign(tf.zeros_like(accumulator))
        return merged

    # ------------------------------------------------------------------ losses
    # The math is fe.backend's (fe_tf.backend.crossentropy / losses); these kernels pick the form and reduce.
    def kernel_cross_entropy(self, op: Any, data: Sequence[Any], state: Dict[str, Any]) -> tf.Tensor:
        """Binary, categorical or sparse categorical cross entropy (picked by `op.infer_form`), float32.

        Binary losses are one value per sample (the mean over its elements); the others lose the class axis.
        """
        y_pred, y_true = data
        y_pred = tf.convert_to_tensor(y_pred)
        y_true = tf.convert_to_tensor(y_true)
        form = op.infer_form(tuple(y_pred.shape), tuple(y_true.shape))
        weights = op.class_weights or None
        if form == "binary":
            if y_pred.shape.rank == 1:
                y_pred = y_pred[:, tf.newaxis]
            loss = crossentropy.binary_crossentropy(y_pred, y_true, op.from_logits, False, weights)  # per sample
        elif form == "categorical":
            loss = crossentropy.categorical_crossentropy(y_pred, y_true, op.from_logits, False, weights)
        else:
            loss = crossentropy.sparse_categorical_crossentropy(y_pred, y_true, op.from_logits, False, weights)
        return tf.reduce_mean(loss) if op.average_loss else loss

    @staticmethod
    def _regression_loss(op: Any, data: Sequence[Any], per_element: Any) -> tf.Tensor:
        y_pred, y_true = data
        y_pred = to_full_precision(tf.convert_to_tensor(y_pred))
        if y_pred.shape.rank == 1:  # fe.backend's losses average the last axis: keep one value per sample
            y_pred, y_true = y_pred[:, tf.newaxis], tf.reshape(y_true, (-1, 1))
        loss = _per_sample_mean(per_element(y_true, y_pred))
        return tf.reduce_mean(loss) if op.average_loss else loss

    def kernel_mean_squared_error(self, op: Any, data: Sequence[Any], state: Dict[str, Any]) -> tf.Tensor:
        """Squared error, averaged over the non-batch axes (and the batch if `average_loss`)."""
        return self._regression_loss(op, data, losses.mean_squared_error)

    def kernel_l1_loss(self, op: Any, data: Sequence[Any], state: Dict[str, Any]) -> tf.Tensor:
        """Absolute error ('L1'), smooth L1 ('Smooth', threshold `beta`) or Huber ('Huber', delta `beta`)."""
        if op.loss_type == "L1":
            return self._regression_loss(op, data, losses.l1_loss)
        per_element = losses.smooth_l1_loss if op.loss_type == "Smooth" else losses.huber
        return self._regression_loss(op, data, lambda y_true, y_pred: per_element(y_true, y_pred, op.beta))

    # ------------------------------------------------------------------ small ops
    def kernel_argmax(self, op: Any, data: List[Any], state: Dict[str, Any]) -> List[tf.Tensor]:
        """The index of the maximum of each input along `op.axis`."""
        return [reductions.argmax(value, op.axis) for value in data]


# ---------------------------------------------------------------------------------------------------- misuse
# Warmup-only checks (`kernel.fe_check(op, data, state)`, run by the Network before the kernel in warmup steps): the
# traced training step never contains them.
def check_cross_entropy_labels(op: Any, data: Sequence[Any], state: Dict[str, Any]) -> None:
    """Sparse labels must lie in [0, classes): checked in Python on eager tensors, by assertions in a traced warmup
    step (whose failure the Network explains by re-running the step eagerly)."""
    y_pred, y_true = tf.convert_to_tensor(data[0]), tf.convert_to_tensor(data[1])
    classes = y_pred.shape[-1] if y_pred.shape.rank else None
    if classes is None or op.infer_form(tuple(y_pred.shape), tuple(y_true.shape)) != "sparse":
        return
    if tf.executing_eagerly():
        if not int(tf.size(y_true)):
            return
        low, high = int(tf.reduce_min(y_true)), int(tf.reduce_max(y_true))
        if low < 0 or high >= classes:
            raise op.label_range_error(y_pred, y_true, low, high, state)
        return
    message = (f"CrossEntropy (inputs {op.inputs}): sparse labels in {op.true_key!r} must lie in 0..{classes - 1} "
               f"for {classes} classes in {where(state)}")
    tf.debugging.assert_non_negative(y_true, message=message)
    tf.debugging.assert_less(y_true, tf.cast(classes, y_true.dtype), message=message)


def check_update_reaches_model(op: Any, data: Any, state: Dict[str, Any]) -> None:
    """Some gradient of an UpdateOp's loss must reach a trainable variable of its model (else the update would
    silently never change it). Decided when the step is traced (or run eagerly): unconnected gradients are None."""
    tape = state.get("tape")
    model = op.model
    variables = model.trainable_variables
    if op.gradients is not None or tape is None or not variables:
        return
    loss = to_full_precision(tf.convert_to_tensor(data))
    if loss.shape.rank:
        loss = tf.reduce_mean(loss)
    with _not_recording(tape):
        gradients = tape.gradient(loss, variables)
    if all(gradient is None for gradient in gradients):
        name = _model_name(model)
        raise described(ValueError(
            f"UpdateOp (model {name!r}, loss {op.loss_name!r}) in {where(state)}: no gradient of {op.loss_name!r} "
            f"reaches any of model {name!r}'s {len(variables)} trainable variables, so this UpdateOp would never "
            f"change the model. Compute the loss from this model's output (a ModelOp of {name!r} whose output the "
            f"loss op reads), or update the model the loss depends on"))


def expected_input_hint(model: Any, inputs: Sequence[Any]) -> Optional[str]:
    """The input shape(s) a Keras model was built for (None where any size goes), when it declares them."""
    try:
        shapes = [tuple(tensor.shape) for tensor in model.inputs]
    except (AttributeError, TypeError, ValueError):
        return None
    if not shapes:
        return None
    return (f"Model {_model_name(model)!r} expects input{'s' if len(shapes) > 1 else ''} of shape "
            f"{shapes[0] if len(shapes) == 1 else shapes} (None: any size)")


TFKernels.kernel_cross_entropy.fe_check = check_cross_entropy_labels  # type: ignore[attr-defined]
TFKernels.kernel_update.fe_check = check_update_reaches_model  # type: ignore[attr-defined]
