"""What ImageSaver and ImageViewer do with a value: draw a Display, plot Summaries, or write/show image arrays.

- a `Display` (`ImageDisplay`, `BatchDisplay`, `GridDisplay`, as the xai traces write) is saved or shown as a figure;
- a `Summary` or a list of them (what InstanceTracker and LabelTracker write) is plotted as curves (a list of such
  lists gives one graph each);
- anything else is taken as a batch of images (N, H, W[, C]) (or one image (H, W[, C])); saved images are written
  pixel for pixel with Pillow (floats in [0, 1] are scaled to [0, 255], other floats min-max scaled).
"""
from __future__ import annotations

import os
from typing import Any, List

import numpy as np

from fe_core.optional import import_optional
from fe_core.summary.summary import Summary

__all__ = ["is_display", "is_summaries", "to_uint8_image", "save_image_array", "save_value", "show_value"]


def is_display(value: Any) -> bool:
    """Whether `value` is one of fe.util's Display figures (without importing plotly)."""
    return any(klass.__name__ == "Display" and klass.__module__.startswith("fe_core.util")
               for klass in type(value).__mro__)


def is_summaries(value: Any) -> bool:
    """Whether `value` is a Summary or a non-empty list/tuple of them."""
    if isinstance(value, Summary):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(item, Summary) for item in value)


def to_uint8_image(image: Any) -> np.ndarray:
    """An image as uint8 (H, W) or (H, W, 3/4), ready for Pillow.

    Example:
        >>> to_uint8_image(np.array([[0.0, 1.0]])).tolist()
        [[0, 255]]
    """
    array = np.asarray(image)
    if array.ndim == 3 and array.shape[0] in (1, 3) and array.shape[-1] not in (1, 3, 4):
        array = np.moveaxis(array, 0, -1)  # channels first
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if array.dtype == np.uint8:
        return array
    array = array.astype(np.float64)
    low, high = float(np.min(array)), float(np.max(array))
    if not (low >= 0.0 and high <= 1.0):
        array = (array - low) / (high - low) if high > low else np.zeros_like(array)
    return np.clip(np.rint(array * 255.0), 0, 255).astype(np.uint8)


def save_image_array(image: Any, path: str) -> str:
    """Write one image to `path` with Pillow (format from the extension); returns `path`."""
    pil = import_optional("PIL.Image", extra="image", feature="ImageSaver")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    pil.fromarray(to_uint8_image(image)).save(path)
    return path


def _plot_summaries(value: Any, path: str) -> str:
    from fe_core.summary.plot import plot_summaries  # pylint: disable=import-outside-toplevel
    return plot_summaries(value, path)


def save_value(value: Any, stem: str) -> List[str]:
    """Save `value` as image file(s) named from `stem` (a path without extension); returns the files written."""
    if is_display(value):
        path = f"{stem}.png"
        value.show(save_path=path, verbose=False)
        return [path]
    if is_summaries(value):
        return [_plot_summaries(value, f"{stem}.png")]
    if isinstance(value, (list, tuple)) and value and all(is_summaries(item) for item in value):
        return [_plot_summaries(item, f"{stem}_{idx}.png") for idx, item in enumerate(value)]
    array = np.asarray(value)
    if _is_single_image(array):
        return [save_image_array(array, f"{stem}.png")]
    return [save_image_array(image, f"{stem}_elem_{idx}.png") for idx, image in enumerate(array)]


def _is_single_image(array: np.ndarray) -> bool:
    """(H, W) and (H, W, 1/3/4) are one image; (N, H, W) and (N, H, W, C) / (N, C, H, W) are batches."""
    return array.ndim <= 2 or (array.ndim == 3 and array.shape[-1] in (1, 3, 4))


def show_value(value: Any, title: str, interactive: bool = False) -> None:
    """Show `value` on screen (a notebook or a window)."""
    if is_display(value):
        value.show(interactive=interactive)
        return
    if is_summaries(value) or isinstance(value, (list, tuple)) and value and all(is_summaries(v) for v in value):
        from fe_core.summary.plot import visualize_logs  # pylint: disable=import-outside-toplevel
        for graphs in ([value] if is_summaries(value) else value):
            visualize_logs(graphs)
        return
    from fe_core.util.display import ImageDisplay  # pylint: disable=import-outside-toplevel
    array = np.asarray(value)
    images = [array] if _is_single_image(array) else list(array)
    for image in images:
        ImageDisplay(image=to_uint8_image(image), title=title).show(interactive=interactive)
