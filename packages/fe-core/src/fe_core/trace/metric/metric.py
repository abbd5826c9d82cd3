"""`ConfusionMetric`: the base of the classification metric traces, which all count a confusion matrix per dataset."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.containers import to_list
from fe_core.data import Data, DSData
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.reduce import gather_stats
from fe_core.modes import ds_id_matches
from fe_core.trace.metric._confusion import confusion_counts, merge_confusions, to_class_indices
from fe_core.trace.trace import PerDSTrace, current_ds_id
from fe_core.export import fe_export

__all__ = ["ConfusionMetric"]


@fe_export("fe.trace.metric.metric.ConfusionMetric", "fe.trace.metric.ConfusionMetric")
class ConfusionMetric(PerDSTrace):
    """A classification metric computed from a confusion matrix accumulated over an epoch.

    Each batch's labels (`true_key`) and predictions (`pred_key`) are turned into class indices (see below) and
    counted into one confusion matrix per dataset, so memory is O(C^2) however long the epoch. At the end of each
    named dataset the metric is logged as `<output_name>|<ds_id>` (when `per_ds`), and at the end of the epoch as
    `<output_name>` over every dataset together.

    Accepted shapes (leading axes beyond the first, as in per-pixel labels, are flattened):

    - labels: class indices (N,) or (N, 1), or one-hot / soft labels (N, C) (argmax is taken). Float indices are
      rounded.
    - predictions: class scores (N, C) with C > 1 (argmax), or one binary score per sample (N,) or (N, 1), which is
      a probability thresholded at 0.5 (a logit thresholded at 0 with `from_logits`). Integer predictions of one
      value per sample are taken as class indices.

    Subclasses implement `compute(confusion, binary)`.

    Args:
        true_key: The key of the ground truth.
        pred_key: The key of the predictions.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        output_name: The key to log the metric under.
        per_ds: Also log the metric of each named dataset as `<output_name>|<ds_id>`. Automatically False when
            `output_name` contains '|'.
        num_classes: A fixed number of classes (the matrix size); a class index at or above it is an error. None: the
            number of classes is the prediction's class axis (2 for binary scores), grown to fit any larger index.
        from_logits: Whether single-score predictions are logits (threshold 0) instead of probabilities (0.5).

    In a data-parallel run each process counts its own samples; at the end of each dataset (and of the epoch) the
    matrices of every process are summed, so the metric equals a single process's on the same samples.

    A subclass that hands its keyword arguments to a scikit-learn style function which needs every sample (a
    `sample_weight`) sets `keep_samples`; the class indices of the epoch are then kept as well (`samples`), and
    `labels_for` gives them in order. Otherwise `labels_for` rebuilds (unordered) label arrays from the counts.

    Attributes:
        confusions: The counts of the current epoch, per ds_id ('' for an unnamed dataset).
        binary: Per ds_id, whether every prediction so far was a single binary score.
    """

    keep_samples: bool = False
    #: Whether negative labels (and predictions) are accepted: a metric that only counts matches (Accuracy) takes a
    #: label such as -1 as one no prediction of a probability matches, as FastEstimator does.
    negative_labels: bool = False

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "metric",
                 per_ds: bool = True,
                 num_classes: Optional[int] = None,
                 from_logits: bool = False) -> None:
        if not isinstance(output_name, str):
            raise TypeError(f"{type(self).__name__} output_name must be a string, got {output_name!r}")
        super().__init__(inputs=[true_key, pred_key], outputs=output_name, mode=mode, ds_id=ds_id)
        if num_classes is not None and (isinstance(num_classes, bool) or not isinstance(num_classes, int)
                                        or num_classes < 1):
            raise ValueError(f"{type(self).__name__} num_classes must be a positive integer or None, got "
                             f"{num_classes!r}")
        self.per_ds = bool(per_ds) and "|" not in output_name
        self.num_classes = num_classes
        self.from_logits = from_logits
        self.confusions: Dict[str, np.ndarray] = {}
        self.binary: Dict[str, bool] = {}
        self.reduced: List[str] = []  # ds_ids whose counts already hold every process's samples
        self.samples: Dict[str, List[np.ndarray]] = {}  # with keep_samples: [true, pred, true, pred, ...] per ds_id
        self._result_samples: Optional[Tuple[np.ndarray, np.ndarray]] = None

    @property
    def true_key(self) -> str:
        """The key of the ground truth."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the predictions."""
        return self.inputs[1]

    @property
    def output_name(self) -> str:
        """The key the metric is logged under."""
        return self.outputs[0]

    def get_outputs(self, ds_ids: Union[None, str, List[str]]) -> List[str]:
        """`output_name`, plus `output_name|ds_id` for each named dataset this trace runs on (when `per_ds`).

        Example:
            >>> from fe_core.trace.metric import Accuracy
            >>> Accuracy("y", "y_pred").get_outputs(["ds1", "ds2"])
            ['accuracy', 'accuracy|ds1', 'accuracy|ds2']
        """
        outputs = list(self.outputs)
        if self.per_ds:
            outputs += [f"{name}|{ds_id}" for ds_id in to_list(ds_ids) if ds_id and ds_id_matches(self.ds_id, ds_id)
                        for name in self.outputs]
        return outputs

    def on_epoch_begin(self, data: Data) -> None:
        self.confusions = {}
        self.binary = {}
        self.reduced = []
        self.samples = {}

    def on_batch_end(self, data: Data) -> None:
        ds_id = current_ds_id(self)
        try:
            true_idx, pred_idx, implied, binary = to_class_indices(data[self.true_key], data[self.pred_key],
                                                                   threshold=0.0 if self.from_logits else 0.5,
                                                                   allow_negative=self.negative_labels,
                                                                   logits=bool(self.from_logits))
        except (ValueError, TypeError) as err:
            raise ValueError(f"{self._where(ds_id)}: {err}") from err
        if self.negative_labels and true_idx.size:
            lowest = min(int(true_idx.min()), int(pred_idx.min()))
            if lowest < 0:  # only equality counts here: shifting both keeps every match a match, every miss a miss
                true_idx, pred_idx = true_idx - lowest, pred_idx - lowest
        self.write_per_instance(data, true_idx, pred_idx)
        fixed = self.num_classes
        largest = max(int(true_idx.max()), int(pred_idx.max())) + 1 if true_idx.size else 0
        if fixed is not None:
            if largest > fixed:
                raise ValueError(f"{self._where(ds_id)}: found class index {largest - 1}, but num_classes is {fixed}")
            size = fixed
        else:
            size = max(implied, largest)
        matrix = self.confusions.get(ds_id)
        if matrix is None:
            matrix = np.zeros((size, size), dtype=np.int64)
        elif matrix.shape[0] < size:
            matrix = merge_confusions([matrix, np.zeros((size, size), dtype=np.int64)])
        size = matrix.shape[0]
        matrix += confusion_counts(true_idx, pred_idx, size)
        self.confusions[ds_id] = matrix
        self.binary[ds_id] = binary and size == 2 and self.binary.get(ds_id, True)
        if self.keep_samples:
            self.samples.setdefault(ds_id, []).extend([true_idx, pred_idx])

    def on_ds_end(self, data: Data) -> None:
        ds_id = current_ds_id(self)
        if get_communicator().world_size > 1:
            self.reduce_across_ranks([ds_id])
        if self.per_ds and ds_id:
            value = self._result([ds_id])
            if isinstance(data, DSData):  # the Estimator's per-dataset view adds the '|ds_id' itself
                data.write_with_log(self.output_name, value)
            else:
                data.write_with_log(f"{self.output_name}|{ds_id}", value)

    def on_epoch_end(self, data: Data) -> None:
        if get_communicator().world_size > 1:
            self.reduce_across_ranks(None)
        data.write_with_log(self.output_name, self._result(list(self.confusions)))

    def reduce_across_ranks(self, ds_ids: Optional[List[str]]) -> None:
        """Replace the counts of `ds_ids` (None: every ds_id not reduced yet) by the sum over every process.

        A collective: every process calls it at the same point.
        """
        wanted = list(self.confusions) if ds_ids is None else ds_ids
        local = {ds_id: {"confusion": self.confusions[ds_id], "binary": np.array(self.binary[ds_id])}
                 for ds_id in wanted if ds_id in self.confusions and ds_id not in self.reduced}
        for ds_id, parts in gather_stats(local).items():
            if ds_id not in self.reduced:
                self.confusions[ds_id] = merge_confusions([part["confusion"] for part in parts])
                self.binary[ds_id] = all(bool(part["binary"]) for part in parts)
                self.reduced.append(ds_id)

    def write_per_instance(self, data: Data, true_idx: np.ndarray, pred_idx: np.ndarray) -> None:
        """Write this batch's per-instance values (`data.write_per_instance_log`, read by CSVLogger's instance rows);
        nothing by default."""

    def compute(self, confusion: np.ndarray, binary: bool) -> Any:
        """The metric's value from a confusion matrix.

        Args:
            confusion: Counts, rows are true classes and columns predicted classes.
            binary: Whether every prediction counted was a single binary score (and there are two classes).

        Returns:
            The value to log.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement compute(confusion, binary)")

    def labels_for(self, confusion: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(y_true, y_pred) class indices behind `confusion`: the kept samples in order (with `keep_samples`), else
        rebuilt from the counts (grouped by cell)."""
        if self._result_samples is not None:
            return self._result_samples
        rows, cols = np.nonzero(confusion)
        counts = confusion[rows, cols]
        return np.repeat(rows, counts), np.repeat(cols, counts)

    def _result(self, ds_ids: List[str]) -> Any:
        present = [ds_id for ds_id in ds_ids if ds_id in self.confusions]
        if not present:  # no batch was seen
            size = self.num_classes or 0
            self._result_samples = None
            return self.compute(np.zeros((size, size), dtype=np.int64), False)
        confusion = merge_confusions([self.confusions[ds_id] for ds_id in present])
        kept = [part for ds_id in present for part in self.samples.get(ds_id, [])]
        self._result_samples = (np.concatenate(kept[0::2]), np.concatenate(kept[1::2])) if kept else None
        try:
            return self.compute(confusion, all(self.binary[ds_id] for ds_id in present) and confusion.shape[0] == 2)
        finally:
            self._result_samples = None

    def _where(self, ds_id: str) -> str:
        system = getattr(self, "system", None)
        mode = getattr(system, "mode", None)
        epoch = getattr(system, "epoch_idx", None)
        return (f"{type(self).__name__} (true_key {self.true_key!r}, pred_key {self.pred_key!r}) in mode {mode!r}, "
                f"epoch {epoch}, ds_id {ds_id!r}")
