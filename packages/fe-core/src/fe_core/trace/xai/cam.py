"""`CAMTrace`: the shared base of GradCAM and EigenCAM (collect samples, draw heat maps over the images)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.trace.image_layout import channels_first, to_channels_last
from fe_core.trace.trace import Trace
from fe_core.trace.xai.heatmap import SampleCollector, class_names, overlay

__all__ = ["CAMTrace"]


class CAMTrace(Trace):
    """Collects `n_samples` images and maps of an epoch and writes a `fe.util.GridDisplay` of heat maps at its end.

    The figure's columns: the true labels (when `labels` is given), the predictions (when `preds` is given), then one
    column per heat map component, each drawn as a jet-coloured overlay on its image. The display is written to
    `data[outputs]` (not logged): use `ImageSaver(outputs)` to save it or `ImageViewer(outputs)` to show it. The
    overlays themselves (float RGB in [0, 1], (N, H, W, 3)) are kept in `self.last_overlays`.

    Subclasses implement `component_maps(maps)`: the heat maps (components, N, h, w) of the collected map batch.
    """

    def __init__(self, images: str, map_key: str, n_samples: Optional[int], labels: Optional[str],
                 preds: Optional[str], label_mapping: Optional[Dict[str, Any]], outputs: str,
                 mode: Union[None, str, Iterable[str]], ds_id: Union[None, str, Iterable[str]]) -> None:
        if n_samples is not None and n_samples < 1:
            raise ValueError(f"{type(self).__name__} n_samples must be a positive integer or None, got {n_samples}")
        inputs = [key for key in (images, map_key, labels, preds) if key]
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.image_key, self.map_key, self.label_key, self.pred_key = images, map_key, labels, preds
        self.n_samples = n_samples
        self.label_mapping = label_mapping
        self.samples = SampleCollector(inputs, n_samples)
        self.last_overlays: List[np.ndarray] = []

    def component_maps(self, maps: np.ndarray) -> np.ndarray:
        """Heat maps (components, N, h, w) from the collected maps (channels last, (N, h, w, C))."""
        raise NotImplementedError

    def component_titles(self, count: int) -> List[str]:
        """The column titles of the heat map components."""
        return [self.outputs[0]] if count == 1 else [f"{self.outputs[0]} {k + 1}" for k in range(count)]

    def on_epoch_begin(self, data: Data) -> None:
        self.samples.reset()

    def on_batch_end(self, data: Data) -> None:
        self.samples.add(data)

    def on_epoch_end(self, data: Data) -> None:
        self.samples.gather()  # a data-parallel run: the samples one process would have kept
        images = self.samples.get(self.image_key)
        maps = self.samples.get(self.map_key)
        if images is None or maps is None:
            return
        first = channels_first(self.system, images)
        images = to_channels_last(images, self.system)
        if maps.ndim == 4 and first:
            maps = np.moveaxis(maps, 1, -1)
        elif maps.ndim == 3:
            maps = maps[..., None]
        components = self.component_maps(maps)
        self.last_overlays = [overlay(images, component) for component in components]
        data.write_without_log(self.outputs[0], self._figure(images, self.last_overlays))
        self.samples.reset()

    def _figure(self, images: np.ndarray, overlays: List[np.ndarray]) -> Any:
        from fe_core.util.display import BatchDisplay, GridDisplay  # pylint: disable=import-outside-toplevel
        columns = []
        for key in (self.label_key, self.pred_key):
            names = class_names(self.samples.get(key), self.label_mapping) if key else None
            if names is not None:
                columns.append(BatchDisplay(text=names, title=key))
        columns.append(BatchDisplay(image=images, title=self.image_key))
        for title, component in zip(self.component_titles(len(overlays)), overlays):
            columns.append(BatchDisplay(image=component, title=title))
        return GridDisplay(columns)

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: the samples collected so far this epoch (numpy arrays)."""
        return {"parts": {key: list(parts) for key, parts in self.samples.parts.items()}, "count": self.samples.count}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`."""
        self.samples.parts = {key: list(state["parts"].get(key, [])) for key in self.samples.keys}
        self.samples.count = int(state["count"])
