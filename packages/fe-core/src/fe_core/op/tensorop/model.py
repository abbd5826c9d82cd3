"""`ModelOp` and `UpdateOp`: run a model, and update it from a loss or from gradients."""
from __future__ import annotations

from typing import AbstractSet, Any, Dict, Iterable, List, Optional, Set, Union

from fe_core.containers import to_list
from fe_core.op.tensorop.tensorop import StatelessOp, TensorOp
from fe_core.export import fe_export

__all__ = ["ModelOp", "UpdateOp"]


def _model_name(model: Any) -> str:
    return getattr(model, "model_name", type(model).__name__)


def _check_compiled(model: Any, op_name: str) -> None:
    if not getattr(model, "fe_compiled", False):
        raise ValueError(f"{op_name} got a model that was not built with fe.build(): {type(model).__name__}. "
                         "Create models with fe.build(model_fn, optimizer_fn) so they get a name, an optimizer and "
                         "a backend.")


def _record_loss_name(model: Any, loss_name: str) -> None:
    """Add `loss_name` to `model.loss_name`, the set of losses UpdateOps update the model with, as FastEstimator
    records it: BestModelSaver and ReduceLROnPlateau given no metric read it when they are created."""
    names = getattr(model, "loss_name", None)
    try:
        if names is None:
            model.loss_name = {loss_name}
        elif isinstance(names, AbstractSet) and callable(getattr(names, "add", None)):
            names.add(loss_name)
        # a model's own, different `loss_name` attribute stays as it is (the network is searched instead)
    except (AttributeError, TypeError):  # a model that takes no new attributes: the network is searched instead
        pass


@fe_export("fe.op.tensorop.model.model.ModelOp", "fe.op.tensorop.model.ModelOp")
class ModelOp(StatelessOp, TensorOp):
    """Run a model on the input key(s) and write its prediction(s).

    Args:
        model: A model built with `fe.build`.
        inputs: The key(s) of the model's input(s). The model is called with one argument, as in FastEstimator: the
            tensor of a single key, or for a list of keys the list of their tensors (`inputs=["x_a", "x_b"]` calls
            `model([x_a, x_b])`, on torch as on TensorFlow).
        outputs: The key(s) of the prediction(s); with `intermediate_layers`, the final output comes first and the
            requested layers' outputs follow in order.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        trainable: Whether the model runs in training mode (dropout, batch-norm updates) when the Network is in
            'train' mode; False freezes it for this op (for example a GAN's discriminator while training the
            generator: gradients still flow through it, its layers run in inference mode).
        gradients: Whether gradients flow through this forward pass; False computes the prediction without a
            gradient path (torch: under `no_grad`; TensorFlow: behind `stop_gradient`), for example for a teacher
            model or a target network.
        intermediate_layers: Layer name(s) (or for torch, also module attribute paths / indices) whose outputs are
            returned too.

    Example:
        >>> # ModelOp(model=model, inputs="x", outputs="y_pred")  # doctest: +SKIP
    """

    kernel_name = "model"

    def __init__(self,
                 model: Any,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 trainable: bool = True,
                 gradients: bool = True,
                 intermediate_layers: Union[None, str, int, List[Union[str, int]]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        _check_compiled(model, "ModelOp")
        self.model = model
        self.trainable = trainable
        self.gradients = gradients
        if not gradients:
            self.kernel_name = "model_without_gradients"
        self.intermediate_layers = to_list(intermediate_layers)
        if self.intermediate_layers and len(self.outputs) != 1 + len(self.intermediate_layers):
            raise ValueError(f"ModelOp of model {_model_name(model)!r} has {len(self.intermediate_layers)} "
                             f"intermediate layer(s), so it needs {1 + len(self.intermediate_layers)} outputs "
                             f"(final output first), got {self.outputs}")

    def get_fe_models(self) -> Set[Any]:
        return {self.model}


@fe_export("fe.op.tensorop.model.update.UpdateOp", "fe.op.tensorop.model.UpdateOp")
class UpdateOp(TensorOp):
    """Update a model's weights from a loss (or from precomputed gradients) with the model's optimizer.

    Args:
        model: A model built with `fe.build` (with an optimizer).
        loss_name: The key of the loss to minimise.
        gradients: The key of precomputed gradients to apply instead of differentiating `loss_name`.
        mode: Mode(s) to run in (train only by default).
        ds_id: Dataset id(s) to run on.
        merge_grad: Accumulate gradients over this many steps and apply their mean once every `merge_grad` steps.
        defer: Apply the update after every op of the step has run (needed when a later op still differentiates
            through the weights this op changes). The Network also defers trailing UpdateOps automatically where its
            framework needs it.

    During warmup an UpdateOp computes nothing that changes weights or optimizer state.
    """

    kernel_name = "update"

    def __init__(self,
                 model: Any,
                 loss_name: Optional[str] = None,
                 gradients: Optional[str] = None,
                 mode: Union[None, str, Iterable[str]] = "train",
                 ds_id: Union[None, str, Iterable[str]] = None,
                 merge_grad: int = 1,
                 defer: bool = False) -> None:
        if (loss_name is None) == (gradients is None):
            raise ValueError("UpdateOp needs exactly one of loss_name or gradients "
                             f"(got loss_name={loss_name!r}, gradients={gradients!r})")
        if isinstance(merge_grad, bool) or not isinstance(merge_grad, int) or merge_grad < 1:
            raise ValueError(f"UpdateOp merge_grad must be a positive integer, got {merge_grad!r}")
        super().__init__(inputs=loss_name if gradients is None else gradients, outputs=None, mode=mode, ds_id=ds_id)
        _check_compiled(model, "UpdateOp")
        self.model = model
        self.loss_name = loss_name
        if loss_name is not None:
            _record_loss_name(model, loss_name)
        self.gradients = gradients
        self.merge_grad = merge_grad
        self.defer = defer
        self.retain_graph = False
        self.fe_backend_state: Dict[str, Any] = {}  # accumulation buffers etc., owned by the backend kernel

    def get_fe_models(self) -> Set[Any]:
        return {self.model}

    def get_fe_loss_keys(self) -> Set[str]:
        return {self.loss_name} if self.loss_name is not None else set()

    def fe_retain_graph(self, retain: Optional[bool] = None) -> Optional[bool]:
        if retain is not None:
            self.retain_graph = retain
        return self.retain_graph

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: the backend's pending gradient accumulation (the rest is configuration from the
        user's script)."""
        framework = getattr(self, "framework", None)
        if framework is None:
            return {}
        from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
        return {"update": get_backend(framework).get_update_state(self)}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned."""
        framework = getattr(self, "framework", None)
        if framework is not None and "update" in state:
            from fe_core.framework.registry import get_backend  # pylint: disable=import-outside-toplevel
            get_backend(framework).set_update_state(self, state["update"])
