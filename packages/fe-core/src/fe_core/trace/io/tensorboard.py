"""`TensorBoard`: writes the run's scalars into TensorBoard event files, without TensorFlow."""
from __future__ import annotations

import numbers
import os
from datetime import datetime
from typing import Any, Dict, List, Optional, Union

import numpy as np

from fe_core.distributed.communicator import is_main_process
from fe_core.data import Data
from fe_core.trace.freq import parse_freq
from fe_core.trace.io._event_file import EventFileWriter
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["TensorBoard"]


def _scalar(value: Any, single_element_arrays: bool = True) -> Optional[float]:
    """`value` as a float if it is one number (a python or numpy scalar, a 0-d array, or with `single_element_arrays`
    an array of one element), else None."""
    if isinstance(value, (numbers.Real, np.number, np.bool_)):
        return float(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and (
            value.ndim == 0 or (single_element_arrays and value.size == 1)):
        return float(value.reshape(-1)[0])
    return None


@fe_export("fe.trace.io.tensorboard.TensorBoard", "fe.trace.io.TensorBoard")
class TensorBoard(Trace):
    """Output data for use in TensorBoard.

    Every scalar the run logs is written as a TensorBoard scalar named by its key, into one event file per mode under
    `log_dir/<experiment time>/<mode>` (for example `logs/20240101-120000/train` and `.../eval`), the layout
    FastEstimator and Keras use. The files are real TensorBoard event files written by fe-core itself (no TensorFlow
    or tensorboard package is needed to write them): point `tensorboard --logdir logs` at them.

    What is written, and when (step = the global training step):

    - train: every `update_freq` steps, the scalar values of the batch (losses and other scalar predictions) and of
      the logs; and at the end of every epoch (every n epochs with `update_freq='<n>e'`), the epoch's logged scalars.
    - eval / test: at the end of every epoch (every n epochs with '<n>e'), the logged scalars (metrics, mean losses,
      `metric|ds_id` keys).

    A value is a scalar when it is a number or an array of one element; arrays of more elements (a per-class
    precision, a confusion matrix) and strings are skipped. Files are flushed at every epoch end and closed at the end
    of training or testing.

    Only scalar logging is implemented. `write_graph` (True by default) is accepted and does nothing: there is no
    framework graph to export from fe-core. Asking for images, weight histograms, painted weights or embeddings
    raises NotImplementedError.

    Args:
        log_dir: Path of the directory where the log files to be parsed by TensorBoard should be saved.
        update_freq: 'batch' / 'step', 'epoch', an integer, or strings like '10s', '15e'. An integer n (or '<n>s')
            writes the training scalars every n steps, and every mode's scalars at every epoch end; 'epoch' (or
            '<n>e') writes only at (every n-th) epoch ends. None disables writing.
        write_graph: Accepted for compatibility; no graph is written.
        write_images: Not supported (must be None).
        weight_histogram_freq: Not supported (must be None).
        paint_weights: Not supported (must be False).
        embedding_freq: Accepted for compatibility; only used with embeddings, which are not supported.
        write_embeddings: Not supported (must be None).
        embedding_labels: Not supported (must be None).
        embedding_images: Not supported (must be None).

    Raises:
        NotImplementedError: If images, weight histograms, painted weights or embeddings are requested.
        ValueError: If `update_freq` or `embedding_freq` is not a valid frequency.

    Example:
        >>> # Estimator(..., traces=[Accuracy("y", "y_pred"), TensorBoard(log_dir="logs", update_freq=50)])
        >>> # then: tensorboard --logdir logs
    """

    def __init__(self,
                 log_dir: str = "logs",
                 update_freq: Union[None, int, str] = 100,
                 write_graph: bool = True,
                 write_images: Union[None, str, List[str]] = None,
                 weight_histogram_freq: Union[None, int, str] = None,
                 paint_weights: bool = False,
                 embedding_freq: Union[None, int, str] = "epoch",
                 write_embeddings: Union[None, str, List[str]] = None,
                 embedding_labels: Union[None, str, List[str]] = None,
                 embedding_images: Union[None, str, List[str]] = None) -> None:
        unsupported = [name for name, given in (("write_images", write_images is not None),
                                                ("weight_histogram_freq", weight_histogram_freq is not None),
                                                ("paint_weights", bool(paint_weights)),
                                                ("write_embeddings", write_embeddings is not None),
                                                ("embedding_labels", embedding_labels is not None),
                                                ("embedding_images", embedding_images is not None)) if given]
        if unsupported:
            raise NotImplementedError(f"TensorBoard in fe writes scalars only; {', '.join(unsupported)} (images, "
                                      f"weight histograms and embeddings) are not supported yet. Remove the "
                                      f"argument(s), or log those values another way.")
        super().__init__(inputs="*")
        self.root_log_dir = log_dir
        self.update_freq = parse_freq(update_freq)
        self.write_graph = write_graph
        self.embedding_freq = parse_freq(embedding_freq)
        self.writers: Dict[str, EventFileWriter] = {}
        self.log_dir = ""  # log_dir/<experiment time>, set at on_begin
        self._main = True

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: none. The event files are opened anew by each run (under `log_dir/<experiment time>`)
        and hold what was already written; the open writers are not training state."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output (nothing)."""

    def on_begin(self, data: Data) -> None:
        self.close()
        experiment = self.system.experiment_time or datetime.now().strftime("%Y%m%d-%H%M%S")
        self.log_dir = os.path.join(self.root_log_dir, experiment)
        self._main = is_main_process()  # a data-parallel run: rank 0 writes the event files
        if self._main:
            print(f"FastEstimator-Tensorboard: writing logs to {os.path.abspath(self.log_dir)}")

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        freq = self.update_freq
        if not self._main or system.mode != "train" or not freq.is_step or not freq.freq or system.global_step % freq.freq:
            return
        batch = data.batch
        values: Dict[str, float] = {}
        for key in list(batch):  # list first: reading a lazily converted prediction changes the batch mapping
            if key not in values:
                value = _scalar(batch[key], single_element_arrays=False)  # not a batch of one sample
                if value is not None:
                    values[key] = value
        values.update(self._logged_scalars(data))
        self._writer("train").add_scalars(values, step=system.global_step)

    def on_epoch_end(self, data: Data) -> None:
        system = self.system
        freq = self.update_freq
        if self._main and freq.freq and (freq.is_step or system.epoch_idx % freq.freq == 0):
            scalars = self._logged_scalars(data)
            if scalars:
                self._writer(system.mode).add_scalars(scalars, step=system.global_step or 0)
        for writer in self.writers.values():
            writer.flush()

    def on_end(self, data: Data) -> None:
        self.close()

    def close(self) -> None:
        """Flush and close every open event file."""
        for writer in self.writers.values():
            writer.close()
        self.writers = {}

    @staticmethod
    def _logged_scalars(data: Data) -> Dict[str, float]:
        scalars: Dict[str, float] = {}
        for key, value in data.read_logs().items():
            number = _scalar(value)
            if number is not None:
                scalars[key] = number
        return scalars

    def _writer(self, mode: Optional[str]) -> EventFileWriter:
        mode = mode or "train"
        writer = self.writers.get(mode)
        if writer is None:
            writer = EventFileWriter(os.path.join(self.log_dir, mode))
            self.writers[mode] = writer
        return writer
