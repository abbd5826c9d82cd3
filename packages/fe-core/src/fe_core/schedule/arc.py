"""`ARC`: FastEstimator's learned learning-rate controller, run in numpy (no framework needed).

Every `frequency` epochs ARC looks at the last three cycles of training losses, evaluation losses and learning rates
and picks a multiplier for the learning rate: 1.618 (raise), 1.0 (keep) or 0.618 (lower). The choice is made by a
small pre-trained network (Conv1D(32, 5) - MaxPool(2) - Conv1D(64, 5) - MaxPool(2) - LSTM(64) - LSTM(64) -
Dense(32) - Dense(3, softmax) over a 300 x 3 input). FastEstimator runs it in TensorFlow; here the same network is a
few numpy functions, so ARC works with either backend (or none). Its weights are FastEstimator's `arc.h5` (Keras
weights), read with h5py (the `data` extra); it is downloaded once to `~/fastestimator_data/arc_model/arc.h5` when
missing, or can be given as `weights_path`.

Feeding ARC (what the LRScheduler trace does when its `lr_fn` is an ARC, through `record_train_step`,
`record_epoch_end` and `lr_for_epoch`): after every training step `accumulate_single_train_loss(loss)`; at the end
of each evaluation epoch `accumulate_single_eval_loss(loss)`, and `gather_multiple_eval_losses()` every `frequency`
epochs; at the end of each training epoch `accumulate_all_lrs(lr)`, and `gather_multiple_train_losses()` every
`frequency` epochs; then at the beginning of training epoch e > 1 with (e - 1) % frequency == 0,
`lr *= predict_next_multiplier()`.
"""
from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any, Deque, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export

__all__ = ["ARC", "ArcNetwork", "ARC_WEIGHTS_URL"]

ARC_WEIGHTS_URL = "https://github.com/fastestimator-util/fastestimator-misc/raw/master/resource/arc.h5"
_WINDOW = 300  # time steps the network reads
_CYCLES = 3  # cycles of history it sees


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)  # overflow-free


class ArcNetwork:
    """ARC's network in numpy: `ArcNetwork()(inputs)` maps a (batch, 300, 3) array to (batch, 3) probabilities.

    Weights are set in Keras' `model.get_weights()` order: conv1 kernel (5, 3, 32) and bias, conv2 kernel (5, 32, 64)
    and bias, for each LSTM its kernel (in, 256), recurrent kernel (64, 256) and bias (256,) with the gates in Keras'
    order (input, forget, cell, output), dense kernel (64, 32) and bias, output kernel (32, 3) and bias.
    """

    SHAPES: Tuple[Tuple[int, ...], ...] = ((5, 3, 32), (32,), (5, 32, 64), (64,), (64, 256), (64, 256), (256,),
                                           (64, 256), (64, 256), (256,), (64, 32), (32,), (32, 3), (3,))

    def __init__(self) -> None:
        self.weights: List[np.ndarray] = []

    def set_weights(self, weights: Sequence[Any]) -> None:
        """Set the 14 weight arrays (Keras `get_weights()` order and shapes, see the class docstring).

        Raises:
            ValueError: If there are not 14 arrays of the expected shapes.
        """
        arrays = [np.asarray(weight, dtype=np.float32) for weight in weights]
        if len(arrays) != len(self.SHAPES) or any(a.shape != s for a, s in zip(arrays, self.SHAPES)):
            raise ValueError(f"ARC network weights must be {len(self.SHAPES)} arrays of shapes {list(self.SHAPES)}, "
                             f"got shapes {[a.shape for a in arrays]}")
        self.weights = arrays

    def load_weights(self, path: str) -> None:
        """Load Keras weights saved as HDF5 (`model.save_weights('arc.h5')`, FastEstimator's file), or an `.npz` of
        the 14 arrays (`arr_0` ... `arr_13`).

        Raises:
            FileNotFoundError: If `path` does not exist.
            ValueError: If the file does not hold ARC's weights.
        """
        if not os.path.exists(path):
            raise FileNotFoundError(f"ARC weights not found: {path}")
        if path.endswith(".npz"):
            with np.load(path) as archive:
                self.set_weights([archive[f"arr_{index}"] for index in range(len(archive.files))])
            return
        from fe_core.optional import import_optional  # pylint: disable=import-outside-toplevel
        h5py = import_optional("h5py", extra="data", feature="ARC (reading arc.h5)")
        weights: List[np.ndarray] = []
        with h5py.File(path, "r") as file:
            root = file["model_weights"] if "model_weights" in file else file
            names = [_text(name) for name in root.attrs.get("layer_names", list(root.keys()))]
            for name in names:
                group = root[name]
                weight_names = [_text(w) for w in group.attrs.get("weight_names", [])]
                if not weight_names:
                    group.visit(lambda key, g=group: weight_names.append(key) if isinstance(
                        g[key], h5py.Dataset) else None)
                weights.extend(np.asarray(group[weight]) for weight in weight_names)
        self.set_weights(weights)

    def __call__(self, inputs: np.ndarray) -> np.ndarray:
        if not self.weights:
            raise RuntimeError("ARC network has no weights: call load_weights() or set_weights() first")
        w = self.weights
        x = np.asarray(inputs, dtype=np.float32)
        x = _max_pool(_relu(_conv1d(x, w[0], w[1])))
        x = _max_pool(_relu(_conv1d(x, w[2], w[3])))
        x = _lstm(x, w[4], w[5], w[6], return_sequences=True)
        x = _lstm(x, w[7], w[8], w[9], return_sequences=False)
        x = _relu(x @ w[10] + w[11])
        logits = x @ w[12] + w[13]
        logits = logits - logits.max(axis=-1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=-1, keepdims=True)


def _text(value: Any) -> str:
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _conv1d(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """'valid' 1-D convolution (Keras Conv1D): x (batch, time, in), kernel (k, in, out)."""
    size = kernel.shape[0]
    steps = x.shape[1] - size + 1
    windows = np.stack([x[:, offset:offset + steps, :] for offset in range(size)], axis=2)  # (b, t, k, in)
    return np.einsum("btki,kio->bto", windows, kernel) + bias


def _max_pool(x: np.ndarray) -> np.ndarray:
    steps = x.shape[1] // 2
    return x[:, :2 * steps].reshape(x.shape[0], steps, 2, x.shape[2]).max(axis=2)


def _lstm(x: np.ndarray, kernel: np.ndarray, recurrent: np.ndarray, bias: np.ndarray,
          return_sequences: bool) -> np.ndarray:
    """Keras LSTM (tanh activation, sigmoid recurrent activation, gates i, f, c, o)."""
    batch, steps, _ = x.shape
    units = recurrent.shape[0]
    projected = x @ kernel + bias  # (b, t, 4u), the input part of every step at once
    h = np.zeros((batch, units), dtype=np.float32)
    c = np.zeros((batch, units), dtype=np.float32)
    outputs = []
    for step in range(steps):
        z = projected[:, step] + h @ recurrent
        i, f = _sigmoid(z[:, :units]), _sigmoid(z[:, units:2 * units])
        g, o = np.tanh(z[:, 2 * units:3 * units]), _sigmoid(z[:, 3 * units:])
        c = f * c + i * g
        h = o * np.tanh(c)
        if return_sequences:
            outputs.append(h)
    return np.stack(outputs, axis=1) if return_sequences else h


def _zscore(values: np.ndarray) -> np.ndarray:
    """(x - mean) / std, with the std kept at least 1/sqrt(n) (so a flat curve does not blow up)."""
    std = max(float(np.std(values)), 1.0 / np.sqrt(values.size))
    return (values - np.mean(values)) / std


def _resize_linear(values: np.ndarray, size: int) -> np.ndarray:
    """Resample a 1-D curve to `size` points with half-pixel-centred linear interpolation (OpenCV's INTER_LINEAR)."""
    n = values.size
    if n == 1:
        return np.repeat(values, size)
    position = np.clip((np.arange(size) + 0.5) * (n / size) - 0.5, 0, n - 1)
    return np.interp(position, np.arange(n), values)


def _resize_nearest(values: np.ndarray, size: int) -> np.ndarray:
    """Resample a 1-D curve to `size` points by nearest neighbour (OpenCV's INTER_NEAREST)."""
    index = np.minimum(np.floor(np.arange(size) * (values.size / size)).astype(int), values.size - 1)
    return values[index]


def _front_pad(values: np.ndarray, fill: float) -> np.ndarray:
    column = values.reshape(-1, 1).astype(np.float32)
    if column.shape[0] < _WINDOW:
        column = np.pad(column, ((_WINDOW - column.shape[0], 0), (0, 0)), constant_values=fill)
    return column


@fe_export("fe.schedule.lr_schedule.ARC", "fe.schedule.lr_shedule.ARC", "fe.schedule.ARC")
class ARC:
    """Adaptive learning-Rate Control: every `frequency` epochs, a pre-trained network looks at the recent losses and
    learning rates and multiplies the learning rate by 1.618, 1.0 or 0.618.

    ```python
    LRScheduler(model=model, lr_fn=ARC(frequency=3))
    ```

    Args:
        frequency: How often (in epochs) to change the learning rate.
        weights_path: The network's weights (FastEstimator's `arc.h5`, or an `.npz`); None uses
            `~/fastestimator_data/arc_model/arc.h5`, downloading it there the first time it is needed.

    Raises:
        AssertionError: If `frequency` is not a positive integer (a ValueError too).
    """

    def __init__(self, frequency: int = 3, weights_path: Optional[str] = None) -> None:
        if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 1:
            raise _ArcArgumentError(f"ARC frequency must be a positive integer, got {frequency!r}")
        self.frequency = frequency
        self.weights_path = weights_path
        self.model: Optional[ArcNetwork] = None
        self.lr_multiplier = {0: 1.618, 1: 1.0, 2: 0.618}
        self.train_loss_one_cycle: List[float] = []
        self.eval_loss_one_cycle: List[float] = []
        self.all_train_loss: Deque[Optional[List[float]]] = deque([None] * _CYCLES, maxlen=_CYCLES)
        self.all_eval_loss: Deque[Optional[List[float]]] = deque([None] * _CYCLES, maxlen=_CYCLES)
        self.all_train_lr: Deque[Optional[float]] = deque([None] * _CYCLES, maxlen=_CYCLES)

    @staticmethod
    def lstm_stacked() -> ArcNetwork:
        """ARC's network (without weights)."""
        return ArcNetwork()

    def _network(self) -> ArcNetwork:
        if self.model is None:
            path = self.weights_path or os.path.join(str(Path.home()), "fastestimator_data", "arc_model", "arc.h5")
            if self.weights_path is None and not os.path.exists(path):
                from fe_core.util.downloads import download  # pylint: disable=import-outside-toplevel
                print(f"FastEstimator - Downloading ARC weights to {path}")
                download(ARC_WEIGHTS_URL, path)
            model = self.lstm_stacked()
            model.load_weights(path)
            self.model = model
        return self.model

    # ------------------------------------------------------------------ feeding
    def accumulate_single_train_loss(self, train_loss: float) -> None:
        """Record one training step's loss."""
        self.train_loss_one_cycle.append(float(np.mean(train_loss)))

    def accumulate_single_eval_loss(self, eval_loss: float) -> None:
        """Record one evaluation epoch's loss."""
        self.eval_loss_one_cycle.append(float(np.mean(eval_loss)))

    def accumulate_all_lrs(self, lr: float) -> None:
        """Record the learning rate of a training epoch."""
        self.all_train_lr.append(float(lr))

    def gather_multiple_eval_losses(self) -> None:
        """Close a cycle of evaluation losses."""
        self.all_eval_loss.append(self.eval_loss_one_cycle)
        self.eval_loss_one_cycle = []

    def gather_multiple_train_losses(self) -> None:
        """Close a cycle of training losses."""
        self.all_train_loss.append(self.train_loss_one_cycle)
        self.train_loss_one_cycle = []

    # ------------------------------------------------------------------ predicting
    def model_inputs(self) -> np.ndarray:
        """The (1, 300, 3) network input built from the recorded history (training loss, evaluation loss, lr)."""
        train_loss, missing = _merge(self.all_train_loss)
        size = (_CYCLES - missing) * 100
        if not train_loss:
            raise RuntimeError("ARC has no training losses yet: feed it before predicting")
        train = _front_pad(_zscore(_resize_linear(np.array(train_loss, dtype=np.float32), size)), 0.0)
        eval_loss, missing = _merge(self.all_eval_loss)
        if eval_loss:
            size = (_CYCLES - missing) * 100
            evaluation = _front_pad(_resize_nearest(_zscore(np.array(eval_loss, dtype=np.float32)), size), 0.0)
        else:
            evaluation = np.zeros((_WINDOW, 1), dtype=np.float32)
        lrs, missing = _merge(self.all_train_lr)
        if not lrs:
            raise RuntimeError("ARC has no learning rates yet: feed it before predicting")
        size = (_CYCLES - missing) * 100
        lr = _front_pad(_resize_nearest(np.array(lrs, dtype=np.float64) / lrs[0], size), 1.0)
        return np.concatenate([train, evaluation, lr], axis=1)[None].astype(np.float32)

    def predict_next_multiplier(self) -> float:
        """The learning-rate multiplier the network picks from the recorded history: 1.618, 1.0 or 0.618."""
        probabilities = self._network()(self.model_inputs())
        return self.lr_multiplier[int(np.argmax(probabilities))]

    # ------------------------------------------------------------------ the LRScheduler trace's calls
    def record_train_step(self, loss: Any) -> None:
        """A training step ended with `loss` (its mean is recorded)."""
        self.accumulate_single_train_loss(loss)

    def record_epoch_end(self, mode: str, epoch: int, loss: Any, lr: float) -> None:
        """An epoch of `mode` ended: record the evaluation loss or the training learning rate, closing a cycle every
        `frequency` epochs. `loss` is the epoch's evaluation loss (None when there is none); `lr` the current rate."""
        cycle_end = epoch % self.frequency == 0
        if mode == "eval":
            if loss is not None:
                self.accumulate_single_eval_loss(loss)
            if cycle_end:
                self.gather_multiple_eval_losses()
        elif mode == "train":
            self.accumulate_all_lrs(lr)
            if cycle_end:
                self.gather_multiple_train_losses()

    def lr_for_epoch(self, epoch: int, lr: float) -> Optional[float]:
        """The learning rate to use from training epoch `epoch` on, or None when ARC does not act at that epoch (it
        acts at epochs 1 + k * frequency, k >= 1)."""
        if epoch <= 1 or (epoch - 1) % self.frequency != 0:
            return None
        return float(np.float32(lr * self.predict_next_multiplier()))


class _ArcArgumentError(ValueError, AssertionError):
    """An invalid ARC argument (FastEstimator raises AssertionError; this is also a ValueError)."""


def _merge(history: Sequence[Union[None, float, List[float]]]) -> Tuple[List[float], int]:
    """The recorded cycles joined into one list, and how many cycles are missing (not recorded yet)."""
    merged: List[float] = []
    missing = 0
    for item in history:
        if isinstance(item, list):
            merged.extend(item)
        elif item:
            merged.append(float(item))
        else:
            missing += 1
    return merged, missing
