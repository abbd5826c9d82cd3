"""Helpers for fe-tf's tests: a synthetic image task, small models and networks, weight snapshots."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import keras
import numpy as np

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp


def make_images(count: int, seed: int, noise: float = 1.0) -> Dict[str, np.ndarray]:
    """28x28 noisy images whose class (0-9) is where a faint 6x4 bar sits on a 2x5 grid, jittered by a few pixels.

    LeNet needs a couple of epochs to get it right more than 90% of the time (about 78% after one epoch).
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, count)
    images = rng.normal(0.0, noise, (count, 28, 28, 1)).astype(np.float32)
    for index, label in enumerate(labels):
        grid_row, grid_col = divmod(int(label), 5)
        row = 3 + grid_row * 12 + int(rng.integers(-2, 3))
        col = 1 + grid_col * 5 + int(rng.integers(-1, 2))
        images[index, row:row + 6, col:col + 4, 0] += 1.0
    return {"x": images, "y": labels.astype(np.int64)}


def dense_model(in_dim: int = 4, out_dim: int = 3, activation: Optional[str] = None, **dense_kwargs: Any
                ) -> keras.Model:
    """A one-layer Keras model (deterministic under the test's seed)."""
    return keras.Sequential([keras.Input((in_dim,)), keras.layers.Dense(out_dim, activation=activation,
                                                                        **dense_kwargs)])


def classifier_network(model: Any, merge_grad: int = 1, **network_kwargs: Any) -> Any:
    """ModelOp -> CrossEntropy -> UpdateOp on keys x, y (y_pred, ce)."""
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                             UpdateOp(model=model, loss_name="ce", merge_grad=merge_grad)], **network_kwargs)


def snapshot(variables: List[Any]) -> List[np.ndarray]:
    """Copies of the variables' current values."""
    return [np.array(variable.numpy()) for variable in variables]


def build_dense(optimizer_fn: Any = "sgd", **kwargs: Any) -> keras.Model:
    """`build` a dense model."""
    return build(model_fn=lambda: dense_model(**kwargs), optimizer_fn=optimizer_fn)
