"""`Dice`: the Dice score of segmentation masks, averaged over samples and channels."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.containers import to_set
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.image_layout import channels_first
from fe_core.trace.metric._stat_metric import StatMetric

__all__ = ["Dice"]

_EPSILON = 1e-6


@fe_export("fe.trace.metric.dice.Dice", "fe.trace.metric.Dice")
class Dice(StatMetric):
    """Dice score for binary classification between y_true and y_predicted.

    Each sample and channel gets a score `(2 |T & P| + eps) / (|T| + |P| + eps)` (eps = 1e-6, so two empty masks
    score 1), and the logged value is the mean over all samples and the channels not excluded. Masks are (N, H, W)
    (one channel), or (N, H, W, C) / (N, C, H, W) with the channel axis where the run's framework puts it (last for
    TensorFlow and numpy, axis 1 for torch); any number of spatial axes works.

    Logged values: `<output_name>` (the mean); with `include_std` also `<output_name>_std`; with `channel_mapping`,
    `<output_name>_<channel name>` for each named channel (and `<output_name>_<channel name>_std`).

    Sufficient statistics (per dataset, reducible across processes by summing): `count` (samples), `sum` and
    `sum_sq` (per-channel sums of the scores and of their squares).

    Args:
        true_key: The key of the ground truth mask.
        pred_key: The key of the prediction values.
        threshold: The threshold for binarizing the prediction. Set this to 0.0 if you are using a background class. To
            skip binarization, set this to None.
        mask_overlap: Whether an individual pixel can belong to only 1 class (False) or more than 1 class
            (True). If False, a threshold of 0.0 can be used to binarize by whatever the maximum predicted class is.
        exclude_channels: A collection of channel indices to be ignored.
        channel_mapping: Optional names to give to each channel. If provided then dice will be reported per-channel
            in addition to reporting the aggregate value.
        include_std: Whether to also report standard deviations when computing dice scores.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: What to call the output from this trace (for example in the logger output).
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Raises:
        ValueError: If the masks' shapes differ, or `channel_mapping` names an excluded channel.
    """

    reductions = {"count": "sum", "sum": "sum", "sum_sq": "sum"}

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 threshold: Optional[float] = 0.5,
                 mask_overlap: bool = True,
                 exclude_channels: Union[None, int, Iterable[int]] = None,
                 channel_mapping: Optional[Dict[int, str]] = None,
                 include_std: bool = False,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "Dice",
                 per_ds: bool = True) -> None:
        self.threshold = threshold
        self.mask_overlap = mask_overlap
        self.exclude_channels = sorted(to_set(exclude_channels))
        self.channel_mapping = dict(channel_mapping or {})
        clash = sorted(set(self.exclude_channels) & set(self.channel_mapping))
        if clash:
            raise ValueError(f"Dice channel_mapping names excluded channel(s) {clash}")
        self.include_std = include_std
        outputs = [output_name]
        if include_std:
            outputs.append(f"{output_name}_std")
        for name in self.channel_mapping.values():
            outputs.append(f"{output_name}_{name}")
            if include_std:
                outputs.append(f"{output_name}_{name}_std")
        super().__init__(inputs=[true_key, pred_key], outputs=outputs, mode=mode, ds_id=ds_id, per_ds=per_ds)

    @property
    def true_key(self) -> str:
        """The key of the ground truth mask."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the predictions."""
        return self.inputs[1]

    def on_epoch_begin(self, data: Data) -> None:
        super().on_epoch_begin(data)

    def batch_stats(self, data: Data) -> Dict[str, np.ndarray]:
        y_true = np.asarray(data[self.true_key])
        y_pred = np.asarray(data[self.pred_key])
        if y_true.shape != y_pred.shape:
            raise ValueError(f"masks of shape {y_true.shape} ({self.true_key!r}) and {y_pred.shape} "
                             f"({self.pred_key!r}) differ")
        if y_true.ndim < 3:
            raise ValueError(f"expected masks of at least 3 dimensions (N, H, W[, C]), got shape {y_true.shape}")
        if y_true.ndim == 3:
            y_true, y_pred = y_true[..., None], y_pred[..., None]
        elif channels_first(getattr(self, "system", None), y_true):
            y_true, y_pred = np.moveaxis(y_true, 1, -1), np.moveaxis(y_pred, 1, -1)
        if not self.mask_overlap and y_pred.shape[-1] > 1:
            winner = np.argmax(y_pred, axis=-1)[..., None] == np.arange(y_pred.shape[-1])
            if self.threshold is not None:
                winner &= y_pred > self.threshold
            y_pred = winner
        elif self.threshold is not None:
            y_pred = y_pred > self.threshold
        spatial = tuple(range(1, y_true.ndim - 1))
        if y_pred.dtype == bool and y_true.dtype == bool:
            intersection = np.count_nonzero(y_true & y_pred, axis=spatial)
        else:  # one multiply-add pass per sample and channel, in the masks' own float precision
            dtype = np.result_type(y_true.dtype, y_pred.dtype, np.float32)
            shape = (y_true.shape[0], -1, y_true.shape[-1])
            intersection = np.einsum("npc,npc->nc", y_true.astype(dtype, copy=False).reshape(shape),
                                     y_pred.astype(dtype, copy=False).reshape(shape)).astype(np.float64)
        area = _total(y_true, spatial) + _total(y_pred, spatial)
        scores = (2.0 * intersection + _EPSILON) / (area + _EPSILON)  # (N, C)
        self._write_per_instance(data, scores)
        return {"count": np.array(scores.shape[0], dtype=np.int64), "sum": scores.sum(axis=0),
                "sum_sq": np.square(scores).sum(axis=0)}

    def _write_per_instance(self, data: Data, scores: np.ndarray) -> None:
        """Each sample's Dice (the mean of its kept channels) as a per-instance value (CSVLogger's instance rows), and
        with several channels each kept channel's as `<output_name>_<channel name or index>`, as FastEstimator."""
        channels = scores.shape[1]
        keep = [c for c in range(channels) if c not in self.exclude_channels and c - channels not in
                self.exclude_channels]
        if channels > 1:
            for channel in keep:
                name = self.channel_mapping.get(channel, self.channel_mapping.get(channel - channels, channel))
                data.write_per_instance_log(f"{self.output_name}_{name}", scores[:, channel])
        data.write_per_instance_log(self.output_name, scores[:, keep].mean(axis=1) if keep else scores.mean(axis=1))

    def compute(self, stats: Dict[str, Any]) -> Dict[str, float]:
        name = self.output_name
        if not stats or int(stats["count"]) == 0:
            values = {output: 0.0 for output in self.outputs}
            return values
        count = float(stats["count"])
        sums, sums_sq = stats["sum"], stats["sum_sq"]
        keep = np.ones(sums.shape[0], dtype=bool)
        for channel in self.exclude_channels:
            if -sums.shape[0] <= channel < sums.shape[0]:
                keep[channel] = False
        total = count * max(int(keep.sum()), 1)
        mean = float(sums[keep].sum() / total)
        values = {name: mean}
        if self.include_std:
            values[f"{name}_std"] = _std(float(sums_sq[keep].sum() / total), mean)
        for channel, label in self.channel_mapping.items():
            if not -sums.shape[0] <= channel < sums.shape[0]:
                raise ValueError(f"Dice channel_mapping names channel {channel}, but the masks have {sums.shape[0]}")
            channel_mean = float(sums[channel] / count)
            values[f"{name}_{label}"] = channel_mean
            if self.include_std:
                values[f"{name}_{label}_std"] = _std(float(sums_sq[channel] / count), channel_mean)
        return values


def _total(mask: np.ndarray, spatial: tuple) -> np.ndarray:
    """Per sample and channel sum of a mask (a count for boolean masks)."""
    if mask.dtype == bool:
        return np.count_nonzero(mask, axis=spatial).astype(np.float64)
    return np.sum(mask, axis=spatial, dtype=np.float64)


def _std(mean_sq: float, mean: float) -> float:
    return float(np.sqrt(max(mean_sq - mean * mean, 0.0)))
