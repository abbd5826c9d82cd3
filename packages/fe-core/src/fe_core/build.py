"""`build`: create models with `model_fn` and compile them with optimizers through their backend."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, List, Optional, Sequence, Union

from fe_core.config_error import ConfigurationError
from fe_core.framework.registry import backend_for_model, framework_backends
from fe_core.containers import to_list
from fe_core.export import fe_export

__all__ = ["build", "reset_build_count"]

_build_count = 0


def reset_build_count() -> None:
    """Restart automatic model names at 'model' (mainly for tests)."""
    global _build_count  # pylint: disable=global-statement
    _build_count = 0


def _default_names(count: int) -> List[str]:
    global _build_count  # pylint: disable=global-statement
    names = ["model" if _build_count + i == 0 else f"model{_build_count + i}" for i in range(count)]
    _build_count += count
    return names


def _per_model(value: Any) -> List[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _build_scopes(mixed_precision: bool) -> contextlib.ExitStack:
    """Enter the build scope of every backend whose framework is loaded (mixed-precision policy, strategy scope)."""
    stack = contextlib.ExitStack()
    for backend in framework_backends():
        stack.enter_context(backend.build_scope(mixed_precision))
    return stack


def _sharded_scopes(model_fn: Callable[[], Any], sharding: Any) -> contextlib.ExitStack:
    """When every model is to be sharded, let the backends that shard build `model_fn` without materialising it
    (torch: on the meta device; each process then materialises its slices only)."""
    stack = contextlib.ExitStack()
    stack.fe_entered = False  # type: ignore[attr-defined]
    every = all(shard is not None for shard in sharding) if isinstance(sharding, (list, tuple)) else True
    if sharding is None or not every:
        return stack
    for backend in framework_backends():
        scope = getattr(backend, "sharded_build_scope", None)
        if scope is not None:
            stack.enter_context(scope(model_fn))
            stack.fe_entered = True  # type: ignore[attr-defined]
    return stack


@fe_export("fe.network.build", "fe.build")
def build(model_fn: Callable[[], Any],
          optimizer_fn: Union[None, str, Callable, Any, Sequence[Union[None, str, Callable, Any]]],
          weights_path: Union[None, str, Sequence[Optional[str]]] = None,
          model_name: Union[None, str, Sequence[str]] = None,
          mixed_precision: bool = False,
          sharding: Any = None) -> Any:
    """Build model(s) and attach optimizer(s), names and precision settings.

    Args:
        model_fn: A no-argument function returning a model or a list of models (torch `nn.Module`s or Keras models).
        optimizer_fn: One per model: an optimizer name ('adam', 'sgd', 'rmsprop', 'adadelta', 'adagrad', 'adamax'),
            a function creating the optimizer (torch: taking the parameters; tf: taking nothing), None for a model
            that is not trained, or a Scheduler of those.
        weights_path: One per model: a file to load weights from, or None.
        model_name: One per model; defaults to 'model', 'model1', ... counted across calls.
        mixed_precision: Train in mixed precision (fp16 with loss scaling on GPUs, bf16 autocast on torch CPU).
        sharding: Shard the model(s) across the processes of a distributed run instead of replicating them (torch
            only): 'fsdp' (FSDP2 with its defaults) or `fe.distributed.FSDP(...)`; see `fe_torch.sharding`. One
            value for all models, or one per model (None: replicated, as without it).

    Returns:
        The model, or a list of models when `model_fn` returns several.

    Raises:
        ValueError: If the numbers of models, optimizers, weight paths and names differ, or a model belongs to no
            installed backend.

    Example:
        >>> # model = build(model_fn=LeNet, optimizer_fn="adam")  # doctest: +SKIP
    """
    sharded_scopes = _sharded_scopes(model_fn, sharding)
    try:
        with _build_scopes(mixed_precision), sharded_scopes:
            models = to_list(model_fn())
    except Exception as error:  # pylint: disable=broad-except
        if not sharded_scopes.fe_entered:
            raise
        # model_fn cannot run without memory (it reads weights' values, moves them to a device, ...): build it
        # whole in every process, as without sharding, and shard it afterwards
        warnings.warn(f"build(sharding=...): model_fn could not run on the meta device ({type(error).__name__}: "
                      f"{str(error)[:200]}), so every process builds the model whole before sharding it",
                      stacklevel=2)
        with _build_scopes(mixed_precision):
            models = to_list(model_fn())
    if not models:
        raise ValueError("model_fn returned no model")
    optimizers = [None] * len(models) if optimizer_fn is None else _per_model(optimizer_fn)
    weights = [None] * len(models) if weights_path is None else _per_model(weights_path)
    automatic = model_name is None
    names = to_list(model_name) if model_name is not None else _default_names(len(models))
    counts = {"models": len(models), "optimizers": len(optimizers), "weights paths": len(weights),
              "model names": len(names)}
    if len(set(counts.values())) != 1:
        raise ConfigurationError("build() needs one optimizer, weights path and name per model; got " +
                                 ", ".join(f"{count} {what}" for what, count in counts.items()))
    shardings = sharding if isinstance(sharding, (list, tuple)) else [sharding] * len(models)
    if len(shardings) != len(models):
        raise ConfigurationError(f"build() needs one sharding per model; got {len(shardings)} for {len(models)} models")
    compiled = []
    for model, optimizer, weight, name, shard in zip(models, optimizers, weights, names, shardings):
        backend = backend_for_model(model)
        if backend is None:
            raise ValueError(f"No installed backend recognises the model of type {type(model).__module__}."
                             f"{type(model).__qualname__} returned by model_fn")
        if shard is not None and not getattr(backend, "supports_sharding", False):
            raise ConfigurationError(f"build(sharding={shard!r:.40}) of model {name!r}: sharding is available for "
                                     f"torch models only (FSDP2); {backend.name} models train replicated on every "
                                     f"process (MirroredStrategy / MultiWorkerMirroredStrategy)")
        extra = {} if shard is None else {"sharding": shard}
        built = backend.compile_model(model, optimizer, weight, name, mixed_precision, **extra)
        built.fe_auto_name = automatic  # RestoreWizard matches automatically named models by position
        built.fe_weights_path = weight  # `fe test` loads saved weights only into models given none
        compiled.append(built)
    return compiled[0] if len(compiled) == 1 else compiled
