"""COCO Mean average precision (mAP) implementation."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.containers import to_list
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.metric._stat_metric import StatMetric, joined

__all__ = ["MeanAveragePrecision", "IOU_THRESHOLDS", "RECALL_THRESHOLDS", "MAX_DETECTIONS"]

#: COCO's IoU thresholds 0.50:0.05:0.95.
IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
#: COCO's 101 recall points at which precision is sampled.
RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)
#: Detections kept per image and category (the highest scoring).
MAX_DETECTIONS = 100


@fe_export("fe.trace.metric.mean_average_precision.MeanAveragePrecision", "fe.trace.metric.MeanAveragePrecision")
class MeanAveragePrecision(StatMetric):
    """Calculate COCO mean average precision.

    The value of 'y_pred' has shape [batch, num_box, 7] where 7 is [x1, y1, w, h, label, label_score, select], select
    is either 0 or 1 (rows with select 0 are ignored). The value of 'bbox' has shape (batch_size, num_bbox, 5). The 5 is
    [x1, y1, w, h, label]; rows whose width or height is not positive are padding.

    The evaluation follows COCO's: per image and category the (at most 100) detections, highest score first, are
    greedily matched to the unmatched ground truth box of highest IoU at each IoU threshold 0.50:0.05:0.95; per
    category the matches of all images, ordered by score, give a precision-recall curve whose (right-to-left maximum)
    precision is sampled at 101 recall points and averaged. Categories without ground truth are left out. `mAP`
    averages over thresholds and categories, `AP50` and `AP75` use one threshold.

    Matching happens per batch, so only small per-detection statistics are kept (reducible across processes):
    `n_gt` (ground truth boxes per category, summed) and `det_label`, `det_score`, `det_tp` (each detection's
    category, score and whether it matched at each threshold, concatenated).

    FastEstimator's attributes are kept for code that reads them: `image_ids` (the epoch's images, numbered from 1),
    `ids_in_epoch` (how many images the epoch has had), `ious` ({(image id, category): IoU matrix} of the last
    batch), `evalimgs` ({(category, image id): {'image_id', 'category_id', 'dtScores', 'dtMatches' (thresholds x
    detections), 'num_gt'}} of the epoch) and `eval` (the last computed precision table, see `accumulate`).

    Args:
        num_classes: Maximum `int` value for your class label. In COCO dataset we only used 80 classes, but the maxium
            value of the class label is `90`. In this case `num_classes` should be `90`.
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: What to call the outputs from this trace (for example in the logger output): the names of mAP,
            AP50 and AP75.
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Raises:
        ValueError: If `output_name` does not hold 3 names, or a label exceeds `num_classes`.
    """

    reductions = {"n_gt": "sum", "det_label": "concat", "det_score": "concat", "det_tp": "concat"}
    # FastEstimator's per-image records are views for user code: a checkpoint keeps the statistics (`stats`) only
    fe_configuration = ("image_ids", "ious", "evalimgs", "eval", "_images", "_epoch_ids")

    def __init__(self,
                 num_classes: int,
                 true_key: str = "bbox",
                 pred_key: str = "pred",
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: Union[str, Sequence[str]] = ("mAP", "AP50", "AP75"),
                 per_ds: bool = True) -> None:
        names = to_list(output_name)
        if len(names) != 3:
            raise ValueError(f"MeanAveragePrecision output_name must hold 3 names (mAP, AP50, AP75), got {names}")
        super().__init__(inputs=[true_key, pred_key], outputs=names, mode=mode, ds_id=ds_id, per_ds=per_ds)
        self.num_classes = int(num_classes)
        self._images: list = []
        self._epoch_ids: List[int] = []
        self._reset_epoch_views()
        self.ious: Dict[Tuple[int, int], np.ndarray] = {}

    def _reset_epoch_views(self) -> None:
        """FastEstimator's per-epoch attributes (see the class docstring)."""
        self.image_ids: List[int] = []
        self.evalimgs: Dict[Tuple[int, int], Dict[str, Any]] = {}
        self.eval: Dict[str, Any] = {}
        self.ids_in_epoch = 0

    @property
    def true_key(self) -> str:
        """The key of the ground truth boxes."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the detections."""
        return self.inputs[1]

    def on_epoch_begin(self, data: Data) -> None:
        """Reset instance variables."""
        super().on_epoch_begin(data)
        self._reset_epoch_views()

    def on_batch_begin(self, data: Data) -> None:
        """Reset instance variables."""
        self._images = []
        self.ious = {}

    # ------------------------------------------------------------------ per batch
    @staticmethod
    def compute_iou(det: np.ndarray, gt: np.ndarray) -> np.ndarray:
        """Compute intersection over union.

        Args:
            det: Detection array (D, >=4) of [x1, y1, w, h, ...].
            gt: Ground truth array (G, >=4) of [x1, y1, w, h, ...].

        Returns:
            Intersection of union array (D, G).
        """
        det = np.asarray(det, dtype=np.float64)
        gt = np.asarray(gt, dtype=np.float64)
        d_x1, d_y1, d_w, d_h = (det[:, i:i + 1] for i in range(4))
        g_x1, g_y1, g_w, g_h = (gt[None, :, i] for i in range(4))
        inter_w = np.clip(np.minimum(d_x1 + d_w, g_x1 + g_w) - np.maximum(d_x1, g_x1), 0, None)
        inter_h = np.clip(np.minimum(d_y1 + d_h, g_y1 + g_h) - np.maximum(d_y1, g_y1), 0, None)
        inter = inter_w * inter_h
        union = d_w * d_h + g_w * g_h - inter
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)

    def evaluate_img(self, cat_id: int, img_id: int) -> Dict[str, np.ndarray]:
        """Find gt matches for det given one image and one category.

        Args:
            cat_id: The category.
            img_id: The image's index within the current batch.

        Returns:
            {'scores': the kept detections' scores (highest first), 'tp': whether each matched at each IoU threshold
            (D, 10), 'n_gt': the number of ground truth boxes}.
        """
        dets, gts = self._images[img_id]
        det = dets[dets[:, 4] == cat_id]
        gt = gts[gts[:, 4] == cat_id]
        det = det[np.argsort(-det[:, 5], kind="mergesort")][:MAX_DETECTIONS]
        tp = np.zeros((det.shape[0], IOU_THRESHOLDS.size), dtype=bool)
        if det.shape[0] and gt.shape[0]:
            ious = self.compute_iou(det, gt)
            if img_id < len(self._epoch_ids):
                self.ious[(self._epoch_ids[img_id], cat_id)] = ious
            thresholds = np.minimum(IOU_THRESHOLDS, 1 - 1e-10)[:, None]  # (T, 1)
            matched = np.zeros((IOU_THRESHOLDS.size, gt.shape[0]), dtype=bool)
            rows = np.arange(IOU_THRESHOLDS.size)
            # a detection below the lowest threshold with every box is a false positive everywhere: skip its loop
            for d in np.flatnonzero(ious.max(axis=1) >= thresholds[0, 0]):
                candidates = np.where((ious[d][None, :] >= thresholds) & ~matched, ious[d][None, :], -1.0)
                best = candidates.shape[1] - 1 - np.argmax(candidates[:, ::-1], axis=1)  # last of equal IoUs
                hit = candidates[rows, best] >= 0
                matched[rows[hit], best[hit]] = True
                tp[d] = hit
        return {"scores": det[:, 5], "tp": tp, "n_gt": np.array(gt.shape[0])}

    def batch_stats(self, data: Data) -> Dict[str, np.ndarray]:
        gt_batch = np.asarray(data[self.true_key], dtype=np.float64)
        pred_batch = np.asarray(data[self.pred_key], dtype=np.float64)
        if gt_batch.ndim != 3 or gt_batch.shape[-1] < 5:
            raise ValueError(f"{self.true_key!r} must have shape (batch, num_bbox, 5), got {gt_batch.shape}")
        if pred_batch.ndim != 3 or pred_batch.shape[-1] < 7:
            raise ValueError(f"{self.pred_key!r} must have shape (batch, num_box, 7), got {pred_batch.shape}")
        self._images = []
        self.ious = {}
        for gts, dets in zip(gt_batch, pred_batch):
            gts = gts[(gts[:, 2] > 0) & (gts[:, 3] > 0)]
            dets = dets[dets[:, 6] > 0]
            self._images.append((dets, gts))
        first = self.ids_in_epoch + 1  # images are numbered from 1 within the epoch, as in FastEstimator
        self._epoch_ids = list(range(first, first + len(self._images)))
        self.ids_in_epoch += len(self._images)
        self.image_ids.extend(self._epoch_ids)
        n_gt = np.zeros(self.num_classes + 1, dtype=np.int64)
        labels, scores, tps = [], [], []
        for img_id, (dets, gts) in enumerate(self._images):
            categories = np.unique(np.concatenate([dets[:, 4], gts[:, 4]])).astype(np.int64)
            if categories.size and (categories.min() < 0 or categories.max() > self.num_classes):
                raise ValueError(f"found class label {int(categories.max())}, outside [0, num_classes="
                                 f"{self.num_classes}]")
            for cat_id in categories:
                result = self.evaluate_img(int(cat_id), img_id)
                self.evalimgs[(int(cat_id), self._epoch_ids[img_id])] = {
                    "image_id": self._epoch_ids[img_id], "category_id": int(cat_id), "dtScores": result["scores"],
                    "dtMatches": result["tp"].T, "num_gt": int(result["n_gt"])}
                n_gt[cat_id] += int(result["n_gt"])
                labels.append(np.full(result["scores"].shape[0], cat_id, dtype=np.int64))
                scores.append(result["scores"])
                tps.append(result["tp"])
        width = IOU_THRESHOLDS.size
        self._images = []
        self._epoch_ids = []
        return {"n_gt": n_gt,
                "det_label": np.concatenate(labels) if labels else np.zeros(0, np.int64),
                "det_score": np.concatenate(scores) if scores else np.zeros(0),
                "det_tp": np.concatenate(tps) if tps else np.zeros((0, width), bool)}

    # ------------------------------------------------------------------ per epoch
    def precision_table(self, stats: Dict[str, Any]) -> np.ndarray:
        """Generate the precision-recall curves: precision (IoU thresholds, recall points, categories), -1 where a
        category has no ground truth."""
        n_gt = stats["n_gt"]
        labels, scores, tps = joined(stats["det_label"]), joined(stats["det_score"]), joined(stats["det_tp"])
        table = -np.ones((IOU_THRESHOLDS.size, RECALL_THRESHOLDS.size, n_gt.size))
        for cat_id in np.flatnonzero(n_gt):
            mine = labels == cat_id
            order = np.argsort(-scores[mine], kind="mergesort")
            tp = tps[mine][order].T.astype(np.float64)  # (T, D)
            tp_sum = np.cumsum(tp, axis=1)
            fp_sum = np.cumsum(1.0 - tp, axis=1)
            recall = tp_sum / n_gt[cat_id]
            precision = tp_sum / np.maximum(tp_sum + fp_sum, np.finfo(np.float64).eps)
            precision = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]  # right-to-left maximum
            for t in range(IOU_THRESHOLDS.size):
                idx = np.searchsorted(recall[t], RECALL_THRESHOLDS, side="left")
                sampled = np.zeros(RECALL_THRESHOLDS.size)
                inside = idx < precision.shape[1]
                sampled[inside] = precision[t, idx[inside]]
                table[t, :, cat_id] = sampled
        return table

    def summarize(self, iou: Optional[float] = None, table: Optional[np.ndarray] = None) -> float:
        """Compute average precision given one intersection union threshold.

        Args:
            iou: Intersection over union threshold. If this value is `None`, then average all iou thresholds. The result
                is the mean average precision.
            table: Precision table from `precision_table` (default: of the whole epoch so far).

        Returns:
            Average precision (-1 when no category has ground truth).
        """
        if table is None:
            table = self.precision_table(self.merged(list(self.stats)))
        if iou is not None:
            table = table[np.isclose(IOU_THRESHOLDS, iou)]
        valid = table[table > -1]
        return float(np.mean(valid)) if valid.size else -1.0

    def accumulate(self, *batch: Any) -> None:  # pylint: disable=arguments-differ
        """Generate precision-recall curve: `self.eval` of this epoch so far ({'counts': [IoU thresholds, recall
        points, categories], 'precision': the precision table, 'recall': the final recall per threshold and category,
        -1 where a category has no ground truth}).

        Called with (ds_id, batch statistics), as the metric machinery does, it folds a batch in instead.
        """
        if batch:
            super().accumulate(*batch)
            return
        stats = self.merged(list(self.stats))
        if not stats:
            self.eval = {}
            return
        table = self.precision_table(stats)
        self.eval = {"counts": list(table.shape), "precision": table, "recall": self._recall(stats)}

    @staticmethod
    def _recall(stats: Dict[str, Any]) -> np.ndarray:
        n_gt = stats["n_gt"]
        labels, tps = joined(stats["det_label"]), joined(stats["det_tp"])
        recall = -np.ones((IOU_THRESHOLDS.size, n_gt.size))
        for cat_id in np.flatnonzero(n_gt):
            recall[:, cat_id] = tps[labels == cat_id].sum(axis=0) / n_gt[cat_id]
        return recall

    def compute(self, stats: Dict[str, Any]) -> Dict[str, float]:
        if not stats:
            return dict.fromkeys(self.outputs, -1.0)
        table = self.precision_table(stats)
        self.eval = {"counts": list(table.shape), "precision": table, "recall": self._recall(stats)}
        return {self.outputs[0]: self.summarize(None, table), self.outputs[1]: self.summarize(0.5, table),
                self.outputs[2]: self.summarize(0.75, table)}
