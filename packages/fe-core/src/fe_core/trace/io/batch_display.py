"""`BatchDisplay` (the trace): draw a batch of images with their masks, boxes, keypoints and text during a run."""
from __future__ import annotations

import os
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.data import Data
from fe_core.distributed.communicator import is_main_process
from fe_core.export import fe_export
from fe_core.trace.freq import Freq, parse_freq
from fe_core.trace.image_layout import channels_first
from fe_core.trace.trace import Trace

__all__ = ["BatchDisplay", "DisplayTrace"]


def _key_and_labels(value: Union[None, str, Tuple[str, Sequence[str]]]) -> Tuple[Optional[str], Any]:
    if value is None or isinstance(value, str):
        return value, None
    key, labels = value
    return key, labels


class DisplayTrace(Trace):
    """The timing shared by the display traces: when to draw, and where the picture goes.

    In training, a step frequency draws the batch of every n-th step (at its on_batch_end) and an epoch frequency
    draws the first batch of every n-th epoch (at on_epoch_end). In the other modes the first batch of each epoch is
    drawn at on_epoch_end. `frequency=None` follows the run's `log_steps`. With `save_dir` the figure is written to
    `<save_dir>/<title>_<mode>_<epoch>_<batch_idx>.html`; otherwise it is shown.
    """

    def __init__(self, inputs: Iterable[str], frequency: Union[None, int, str], save_dir: Optional[str], title: str,
                 batch_limit: Optional[int], mode: Union[None, str, Iterable[str]],
                 ds_id: Union[None, str, Iterable[str]]) -> None:
        super().__init__(inputs=list(inputs), mode=mode, ds_id=ds_id)
        if batch_limit is not None and batch_limit < 1:
            raise ValueError(f"{type(self).__name__} batch_limit must be a positive integer or None, got {batch_limit}")
        self.frequency_arg = frequency
        self.frequency: Freq = parse_freq(frequency) if frequency is not None else Freq(True, 0)
        # following the log steps, the training batch hook matters only on log steps: let the Estimator skip the rest
        self.fe_log_steps_only = frequency is None
        self.save_dir = save_dir
        self.title = title
        self.batch_limit = batch_limit
        self._pending: Optional[Tuple[dict, int]] = None

    def on_begin(self, data: Data) -> None:
        if self.frequency_arg is None:
            log_steps = getattr(self.system, "log_steps", None)
            self.frequency = Freq(True, int(log_steps)) if log_steps else Freq(True, 0)

    def make_image(self, data: Data, batch_limit: Optional[int] = None) -> Any:
        """The figure of the current batch (implemented by each display trace)."""
        raise NotImplementedError

    def on_epoch_begin(self, data: Data) -> None:
        self._pending = None

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        if system.mode == "train" and self.frequency.is_step:
            if self.frequency.freq and system.global_step % self.frequency.freq == 0:
                self._emit(self.make_image(data, self.batch_limit), system.batch_idx)
        elif self._pending is None:
            limit = self.batch_limit
            self._pending = ({key: data[key][:limit] if limit else data[key] for key in self.inputs if key in data},
                             system.batch_idx or 1)

    def on_epoch_end(self, data: Data) -> None:
        system = self.system
        if self._pending is None or (system.mode == "train" and self.frequency.is_step):
            return
        if system.mode == "train" and (not self.frequency.freq or system.epoch_idx % self.frequency.freq):
            return
        values, batch_idx = self._pending
        self._pending = None
        self._emit(self.make_image(Data(values), self.batch_limit), batch_idx)

    def _emit(self, figure: Any, batch_idx: Any) -> None:
        if not is_main_process():  # a data-parallel run: rank 0 shows or saves its part of the batch
            return
        if self.save_dir is None:
            figure.show()
            return
        path = os.path.join(self.save_dir, f"{self.title}_{self.system.mode}_{self.system.epoch_idx}_{batch_idx}.html")
        os.makedirs(self.save_dir, exist_ok=True)
        figure.show(save_path=path, verbose=False)
        print(f"FastEstimator-{type(self).__name__}: saved image to {path}")

    def get_state(self) -> dict:
        """Nothing to keep across a checkpoint: a display is redrawn from the data it sees."""
        return {}

    def set_state(self, state: dict) -> None:
        """Nothing to restore (see `get_state`)."""


@fe_export("fe.trace.io.batch_display.BatchDisplay", "fe.trace.io.BatchDisplay")
class BatchDisplay(DisplayTrace):
    """A Trace to display a batch of images.

    Args:
        image: Key corresponding to a batch of images to be displayed.
        text: Key corresponding to text to be printed in the center of the figure.
        masks: Key corresponding to masks to be displayed over an image. May be accompanied by a sequence of mask labels
            (1 per channel) if desired: (<mask_key>, [<c1_name>, <c2_name>, ...])
        bboxes: Key corresponding to bounding boxes to be displayed over the image.
        keypoints: Key corresponding to keypoints to be displayed over the image. May be accompanied by a sequence of
            keypoint labels (1 per keypoint) if desired: (<kp_key>, [<kp1_name>, <kp2_name>, ...])
        mask_threshold: If provided, any masks will be binarized based on the given threshold value (1 if > t, else 0).
        color_map: How to color 1-channel images. Options from: https://plotly.com/python/builtin-colorscales/. If 2
            strings are provided, the first will be used to color grey-scale images and the second will be used to color
            continuous (non-thresholded) masks. If a single string is provided it will be used for both image and masks.
        title: The title of the generated figure. If None it defaults to any image/text/mask/bbox/keypoint key which was
            provided (in that order).
        batch_limit: A limit on the number of batch elements to display.
        frequency: 'batch', 'epoch', integer, or strings like '10s', '15e'. An integer n, or 'ns', draws every n
            training steps; 'ne' every n epochs (the first batch of the epoch). In eval/test/infer the first batch of
            each epoch is drawn. You can use None to default to matching the log printing frequency.
        save_dir: A directory into which to save images rather than displaying them. The file names will be formatted
            as <title>_<mode>_<epoch>_<batch_idx>.html
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".

    Raises:
        ValueError: If no key is given.
    """

    def __init__(self,
                 image: Optional[str] = None,
                 text: Optional[str] = None,
                 masks: Union[None, str, Tuple[str, Sequence[str]]] = None,
                 bboxes: Optional[str] = None,
                 keypoints: Union[None, str, Tuple[str, Sequence[str]]] = None,
                 mask_threshold: Optional[float] = None,
                 color_map: Union[str, Tuple[str, str]] = ("gray", "turbo"),
                 title: Optional[str] = None,
                 batch_limit: Optional[int] = None,
                 frequency: Union[None, int, str] = None,
                 save_dir: Optional[str] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        self.image_key = image
        self.text_key = text
        self.mask_key, self.mask_labels = _key_and_labels(masks)
        self.bbox_key = bboxes
        self.keypoint_key, self.keypoint_labels = _key_and_labels(keypoints)
        keys: List[str] = [key for key in (self.image_key, self.text_key, self.mask_key, self.bbox_key,
                                           self.keypoint_key) if key is not None]
        if not keys:
            raise ValueError("BatchDisplay needs at least one of image, text, masks, bboxes or keypoints")
        self.mask_threshold = mask_threshold
        self.color_map = color_map
        super().__init__(inputs=keys, frequency=frequency, save_dir=save_dir, title=title or keys[0],
                         batch_limit=batch_limit, mode=mode, ds_id=ds_id)

    def _values(self, data: Data, key: Optional[str], batch_limit: Optional[int], image: bool = False) -> Any:
        if key is None:
            return None
        value = data[key]
        if isinstance(value, (list, tuple)):
            return list(value)[:batch_limit] if batch_limit else list(value)
        value = np.asarray(value)
        if batch_limit:
            value = value[:batch_limit]
        if image and value.ndim == 4 and channels_first(getattr(self, "system", None), value):
            value = np.moveaxis(value, 1, -1)
        return value

    def make_image(self, data: Data, batch_limit: Optional[int] = None) -> Any:
        """The figure of this batch: a `fe.util.BatchDisplay` (a plotly figure when prepared).

        Args:
            data: The batch.
            batch_limit: Draw at most this many elements.

        Returns:
            The display (call `.show()` or `.show(save_path=...)` on it).
        """
        from fe_core.util.display import BatchDisplay as BatchFigure  # pylint: disable=import-outside-toplevel
        masks = self._values(data, self.mask_key, batch_limit, image=True)
        if masks is not None and self.mask_labels is not None:
            masks = (masks, list(self.mask_labels))
        keypoints = self._values(data, self.keypoint_key, batch_limit)
        if keypoints is not None and self.keypoint_labels is not None:
            keypoints = (keypoints, list(self.keypoint_labels))
        text = self._values(data, self.text_key, batch_limit)
        if isinstance(text, np.ndarray):
            text = [str(item.item()) if item.size == 1 else str(item.tolist()) for item in text]
        return BatchFigure(image=self._values(data, self.image_key, batch_limit, image=True), text=text, masks=masks,
                           bboxes=self._values(data, self.bbox_key, batch_limit), keypoints=keypoints,
                           title=self.title, mask_threshold=self.mask_threshold, color_map=self.color_map)
