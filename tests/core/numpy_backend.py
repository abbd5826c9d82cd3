"""A tiny numpy backend for fe-core's own tests: linear models, hand-written gradients, plain SGD.

It implements the same Backend interface as fe-torch and fe-tf, so the Estimator, Network, ops and traces are
exercised exactly as with a real framework, without installing one.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.checkpoint.hashed_file import write_hashed_file
from fe_core.framework import Backend, register_backend, unregister_backend
from fe_core.network import BaseNetwork
from fe_core.schedule import Scheduler

Grads = List[Tuple["LinearModel", np.ndarray, np.ndarray]]


class Tensor:
    """A numpy value that remembers how to push a gradient back to the linear models that produced it."""

    __slots__ = ("value", "backward")

    def __init__(self, value: np.ndarray, backward: Optional[Callable[[np.ndarray], Grads]] = None) -> None:
        self.value = value
        self.backward = backward

    @property
    def shape(self) -> tuple:
        return self.value.shape


def value_of(x: Any) -> np.ndarray:
    return x.value if isinstance(x, Tensor) else np.asarray(x)


class LinearModel:
    """y = x @ W + b."""

    def __init__(self, in_dim: int, out_dim: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.W = rng.normal(0, 0.1, size=(in_dim, out_dim))
        self.b = np.zeros(out_dim)
        self.calls: List[Tuple[str, bool]] = []  # (mode, training) per call, for tests

    def __call__(self, x: Any) -> Tensor:
        x_value = value_of(x).astype(np.float64)
        out = x_value @ self.W + self.b
        upstream = x.backward if isinstance(x, Tensor) else None
        W = self.W

        def backward(grad: np.ndarray) -> Grads:
            grads: Grads = [(self, x_value.T @ grad, grad.sum(axis=0))]
            if upstream is not None:
                grads += upstream(grad @ W.T)
            return grads

        return Tensor(out, backward)


class NumpyNetwork(BaseNetwork):
    """The Network of the numpy backend."""

    def __init__(self, ops: Any, pops: Any = None, slicers: Any = None) -> None:
        super().__init__(target_type="numpy", device=None, ops=ops, postprocessing=pops, slicers=slicers)
        self.steps_run = 0

    def _run_step(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        self.steps_run += 1
        store = dict(batch)
        self.run_ops(store, self.ctx.state)
        return {key: store[key] for key in self.ctx.outputs if key in store}


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class NumpyBackend(Backend):
    """Backend 'numpy' for tests."""

    name = "numpy"
    model_extension = "npz"

    def __init__(self) -> None:
        self.seeds: List[int] = []

    def owns_model(self, obj: Any) -> bool:
        return isinstance(obj, LinearModel) and getattr(obj, "framework", "numpy") == "numpy"

    def make_network(self, ops: Any, pops: Any, slicers: Any) -> NumpyNetwork:
        return NumpyNetwork(ops, pops, slicers)

    def compile_model(self, model: LinearModel, optimizer_fn: Any, weights_path: Optional[str], model_name: str,
                      mixed_precision: bool) -> LinearModel:
        model.model_name = model_name
        model.optimizer = optimizer_fn  # a learning rate (float), or a Scheduler of them
        model.current_optimizer = optimizer_fn
        model.mixed_precision = mixed_precision
        model.fe_compiled = True
        if weights_path:
            self._load_weights(model, weights_path)
        return model

    def to_numpy(self, data: Any) -> Any:
        return value_of(data) if isinstance(data, Tensor) else data

    def seed(self, seed: int) -> None:
        self.seeds.append(seed)

    # kernels -------------------------------------------------------------
    def kernel_model(self, op: Any, data: Any, state: Dict[str, Any]) -> Any:
        op.model.calls.append((state["mode"], state["mode"] == "train" and op.trainable))
        return op.model(data)

    def kernel_mean_squared_error(self, op: Any, data: Sequence[Any], state: Dict[str, Any]) -> Tensor:
        pred, true = data
        p, t = value_of(pred), value_of(true).astype(np.float64).reshape(value_of(pred).shape)
        per_sample = ((p - t)**2).reshape(len(p), -1).mean(axis=1)
        count = p.size
        backward = None
        if isinstance(pred, Tensor) and pred.backward is not None:
            backward = lambda g: pred.backward(g * 2 * (p - t) / count)  # noqa: E731
        return Tensor(per_sample.mean() if op.average_loss else per_sample, backward)

    def kernel_cross_entropy(self, op: Any, data: Sequence[Any], state: Dict[str, Any]) -> Tensor:
        pred, true = data
        p, t = value_of(pred), value_of(true)
        form = op.infer_form(p.shape, t.shape)
        if form != "sparse" and form != "categorical":
            raise NotImplementedError("the numpy test backend only does sparse/categorical cross entropy")
        probs = _softmax(p) if op.from_logits else p
        onehot = np.eye(p.shape[-1])[t.reshape(-1).astype(int)] if form == "sparse" else t
        per_sample = -(onehot * np.log(np.clip(probs, 1e-12, 1.0))).sum(axis=-1)
        backward = None
        if isinstance(pred, Tensor) and pred.backward is not None and op.from_logits:
            backward = lambda g: pred.backward(g * (probs - onehot) / len(p))  # noqa: E731
        return Tensor(per_sample.mean() if op.average_loss else per_sample, backward)

    def kernel_argmax(self, op: Any, data: List[Any], state: Dict[str, Any]) -> List[np.ndarray]:
        return [np.argmax(value_of(x), axis=op.axis) for x in data]

    def kernel_update(self, op: Any, data: Any, state: Dict[str, Any]) -> None:
        if state["warmup"]:
            return
        model = op.model
        if op.gradients is None:
            grads = [(dw, db) for m, dw, db in data.backward(np.ones(())) if m is model]
            d_w, d_b = sum(g[0] for g in grads), sum(g[1] for g in grads)
        else:
            d_w, d_b = data
        acc = op.fe_backend_state
        acc["count"] = acc.get("count", 0) + 1
        acc["w"] = acc.get("w", 0) + d_w
        acc["b"] = acc.get("b", 0) + d_b
        if acc["count"] % op.merge_grad:
            return
        lr = model.current_optimizer
        step_w, step_b = acc.pop("w") / op.merge_grad, acc.pop("b") / op.merge_grad

        def apply() -> None:
            model.W = model.W - lr * step_w
            model.b = model.b - lr * step_b

        if op.defer:
            state["deferred"].setdefault(model.model_name, []).append(apply)
        else:
            apply()

    # state ---------------------------------------------------------------
    def save_model(self, model: LinearModel, save_dir: str, save_optimizer: bool) -> List[str]:
        # reports the digest of the bytes it meant to write (a WrittenFile), as the real backends do
        name = f"{model.model_name}.npz"
        written = write_hashed_file(os.path.join(save_dir, name), lambda file: np.savez(file, W=model.W, b=model.b))
        return [written.renamed(name)]

    def load_model(self, model: LinearModel, load_dir: str, load_optimizer: bool) -> None:
        self._load_weights(model, os.path.join(load_dir, f"{model.model_name}.npz"))

    @staticmethod
    def _load_weights(model: LinearModel, path: str) -> None:
        with np.load(path, allow_pickle=False) as saved:
            model.W, model.b = saved["W"].copy(), saved["b"].copy()

    def save_weights(self, model: LinearModel, path: str) -> str:
        with open(path, "wb") as file:
            np.savez(file, W=model.W, b=model.b)
        return path

    def load_weights(self, model: LinearModel, path: str) -> None:
        self._load_weights(model, path)

    def get_update_state(self, op: Any) -> Dict[str, Any]:
        return {key: value for key, value in op.fe_backend_state.items() if key in ("count", "w", "b")}

    def set_update_state(self, op: Any, state: Dict[str, Any]) -> None:
        op.fe_backend_state.clear()
        op.fe_backend_state.update(state)

    def get_lr(self, model: LinearModel) -> float:
        return float(model.current_optimizer)

    def set_lr(self, model: LinearModel, lr: float) -> None:
        model.current_optimizer = lr
        if not isinstance(model.optimizer, Scheduler):  # the float IS the optimizer: keep it when the network re-reads it
            model.optimizer = lr


_build_count = [0]


def build(in_dim: int = 2, out_dim: int = 1, lr: Any = 0.1, name: Optional[str] = None, seed: int = 0) -> LinearModel:
    """Build a compiled linear model for the numpy backend."""
    if name is None:
        name = "model" if _build_count[0] == 0 else f"model{_build_count[0]}"
        _build_count[0] += 1
    return NumpyBackend().compile_model(LinearModel(in_dim, out_dim, seed), lr, None, name, False)


def install() -> NumpyBackend:
    backend = NumpyBackend()
    register_backend("numpy", backend)
    return backend


def uninstall() -> None:
    unregister_backend("numpy")
