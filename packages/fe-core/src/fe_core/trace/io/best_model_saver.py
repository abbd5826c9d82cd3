"""`BestModelSaver`: keep the weights of a model at its best eval metric so far."""
from __future__ import annotations

import math
import numbers
import os
import re
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from fe_core.data import Data
from fe_core.distributed.communicator import get_communicator
from fe_core.framework.registry import backend_for_model, model_backend
from fe_core.trace.adapt.model_metric import ModelMetricTrace, model_name_of
from fe_core.trace.io.model_saver import check_architecture_saving, own_file_name, save_model_files
from fe_core.export import fe_export

__all__ = ["BestModelSaver"]


@fe_export("fe.trace.io.best_model_saver.BestModelSaver", "fe.trace.io.BestModelSaver")
class BestModelSaver(ModelMetricTrace):
    """Save the weights of the best model according to an evaluation metric.

    At the end of every eval epoch the metric is compared with the best so far (strictly lower for 'min', strictly
    higher for 'max'). On an improvement the weights are written atomically to
    `<save_dir>/<model_name>_best_<metric>.<ext>` (`<ext>` is FastEstimator's: 'pt' for torch, 'h5' for TensorFlow,
    holding Keras 3's weights format, which `fe.backend.load_model` reads; the model is saved through its own
    framework, whatever the Network's is) and `FastEstimator-BestModelSaver: Saved model to <path>` is printed. Every eval
    epoch it logs `since_best_<metric>` (eval epochs since the best one) and `<save_best_mode>_<metric>` (the best
    value). With `load_best_final`, the best weights are loaded back into the model when training ends.

    The metric is added to the monitored keys, so the eval Essential averages it over each epoch. `best`,
    `since_best` and `model_path` are plain attributes, saved with a checkpoint. As in FastEstimator, `monitor_op`
    (`np.less` for 'min', `np.greater` for 'max') decides whether a value beats `best`, and `metric`, `save_dir`,
    `model_name` and `model_path` are attributes subclasses use.

    Args:
        model: A model built with `build`.
        save_dir: The folder to save into (created if needed); None tracks the best value without saving.
        metric: The eval key to watch; None for the model's loss (the loss_name of the UpdateOp that updates it).
        save_best_mode: 'min' (lower is better) or 'max' (higher is better).
        weights_name: The exact name (without extension) used to save model weights. If None
            `<model_name>_best_<metric>` is used.
        load_best_final: Load the best weights (if any were saved) into the model at the end of training.
        save_architecture: Also save the whole model, architecture included (TensorFlow: `<file stem>.keras`, which
            `keras.models.load_model` reads without the model's code). Only TensorFlow models can.

    Raises:
        ValueError: If `save_best_mode` is not 'min' or 'max', or `save_architecture` is used with a model whose
            framework cannot save architectures (torch); when the Estimator attaches its System, if `metric` is None
            and the model's loss cannot be inferred.

    Example:
        >>> # BestModelSaver(model, save_dir="/tmp/run", metric="accuracy", save_best_mode="max")
        >>> # -> /tmp/run/model_best_accuracy.pt; logs since_best_accuracy and max_accuracy
    """

    def __init__(self,
                 model: Any,
                 save_dir: Optional[str],
                 metric: Optional[str] = None,
                 save_best_mode: str = "min",
                 weights_name: Optional[str] = None,
                 load_best_final: bool = False,
                 save_architecture: bool = False) -> None:
        if save_best_mode not in ("min", "max"):
            raise ValueError(f"BestModelSaver save_best_mode must be 'min' or 'max', got {save_best_mode!r}")
        if weights_name is not None and (not isinstance(weights_name, str) or not weights_name or
                                         os.path.basename(weights_name) != weights_name):
            raise ValueError(f"BestModelSaver weights_name must be a plain file name, got {weights_name!r}")
        self.weights_name = weights_name
        self.save_best_mode = save_best_mode
        super().__init__(model=model, metric=metric, mode="eval")
        self.save_dir = save_dir
        self.load_best_final = load_best_final
        self.save_architecture = save_architecture
        check_architecture_saving(self, backend_for_model(model) if save_architecture else None)
        self.model_path: Optional[str] = None
        self.since_best = 0
        self.best: Any = math.inf if save_best_mode == "min" else -math.inf
        # FastEstimator's comparison, which subclasses call (and may replace): is the first value better?
        self.monitor_op: Callable[[Any, Any], Any] = np.less if save_best_mode == "min" else np.greater
        self._model_name: Optional[str] = None

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: the best value, epochs since it, and the saved file's name (not its path)."""
        return {"best": self.best, "since_best": self.since_best,
                "model_file": os.path.basename(self.model_path) if self.model_path else None}

    def check_state(self, state: Dict[str, Any]) -> None:
        """Raise ValueError unless `state` is one this saver could have written (called before anything is restored)."""
        best, since_best, model_file = state.get("best"), state.get("since_best"), state.get("model_file")
        if isinstance(best, np.ndarray) and best.ndim == 0 and best.dtype.kind in "iuf":
            best = best[()]  # a 0-d array (what a data-parallel mean used to be) is the number it holds
        if isinstance(best, bool) or not isinstance(best, numbers.Number) or isinstance(since_best, bool) or \
                not isinstance(since_best, numbers.Integral) or since_best < 0:
            raise ValueError(f"BestModelSaver: the checkpoint's best/since_best {best!r}/{since_best!r} are not a "
                             f"number and a non-negative count")
        fixed = self._model_name or self.weights_name
        pattern = re.compile(re.escape(fixed) + r"(\.[A-Za-z0-9_.]+)?" if fixed else
                             re.escape(model_name_of(self.model)) + r"_best_[^/\\]+")
        if model_file is not None and not own_file_name(model_file, pattern):
            raise ValueError(f"BestModelSaver: the checkpoint names {model_file!r}, which is not a file this saver "
                             f"writes ({model_name_of(self.model)}_best_*)")

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output; the file lives in the script's `save_dir`."""
        self.check_state(state)
        best = state["best"]
        self.best = best[()] if isinstance(best, np.ndarray) else best
        self.since_best = int(state["since_best"])
        model_file = state.get("model_file")
        self.model_path = os.path.join(self.save_dir, model_file) if model_file and self.save_dir else None

    def outputs_for(self, metric: str) -> List[str]:
        return [f"since_best_{metric}", f"{self.save_best_mode}_{metric}"]

    @property
    def model_name(self) -> str:
        """The saved file's name without extension: `weights_name`, or `<model_name>_best_<metric>` (a subclass may
        assign another name, as FastEstimator's subclasses do)."""
        if self._model_name is not None:
            return self._model_name
        return self.weights_name or f"{model_name_of(self.model)}_best_{self.metric}"

    @model_name.setter
    def model_name(self, name: str) -> None:
        if not isinstance(name, str) or not name or os.path.basename(name) != name:
            raise ValueError(f"BestModelSaver model_name must be a plain file name, got {name!r}")
        self._model_name = name

    def on_begin(self, data: Data) -> None:
        check_architecture_saving(self, model_backend(self.model) if self.save_architecture else None)

    def on_epoch_end(self, data: Data) -> None:
        current = self.read_metric(data)
        if self.monitor_op(current, self.best):
            self.best = current
            self.since_best = 0
            if self.save_dir:
                paths = save_model_files(model_backend(self.model), self.model, self.save_dir, self.model_name,
                                         save_architecture=self.save_architecture)
                if paths:  # none on the other ranks of a data-parallel run: rank 0 writes
                    self.model_path = paths[0]
                    print(f"FastEstimator-BestModelSaver: Saved model to {self.model_path}")
        else:
            self.since_best += 1
        data.write_with_log(self.outputs[0], self.since_best)
        data.write_with_log(self.outputs[1], self.best)

    def on_end(self, data: Data) -> None:
        communicator = get_communicator()
        if self.load_best_final and communicator.world_size > 1:  # every rank loads the file rank 0 wrote
            communicator.barrier()
            self.model_path = communicator.all_gather_bytes((self.model_path or "").encode())[0].decode() or None
        if self.load_best_final and self.model_path:
            if communicator.is_main:
                print(f"FastEstimator-BestModelSaver: Restoring model from {self.model_path}")
            model_backend(self.model).load_weights(self.model, self.model_path)
