"""Pictures of data: `ImageDisplay` (one image with its masks, boxes, keypoints and text), `BatchDisplay` (a column of
them) and `GridDisplay` (columns side by side), drawn as plotly figures (`FigureFE`) that a notebook shows and
`show(save_path=...)` saves as PNG (or HTML, JSON, JPG, SVG, PDF).

Images may be numpy arrays, torch tensors (channel first) or TensorFlow tensors (channel last), with 1 or 3 channels:
uint8 values are shown as they are, floats within [0, 1] are scaled to [0, 255], other floats are min-max scaled.
Nothing here imports plotly until a figure is prepared.

Example:
    >>> image = np.zeros((32, 32, 3), dtype=np.uint8); image[:, :16, 0] = 255
    >>> display = ImageDisplay(image=image, bboxes=[(4, 4, 10, 10, "cat")], title="red half")
    >>> display.show(save_path="/tmp/red.png", verbose=False)  # doctest: +SKIP
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.util.colors import get_colors
from fe_core.util.inspection import to_number

__all__ = ["Display", "ImageDisplay", "BatchDisplay", "GridDisplay"]

_MASK_OPACITY = 0.45
_PANEL_GAP = 0.02


def _plotly():
    from fe_core.util.figure import FigureFE, go  # pylint: disable=import-outside-toplevel
    from plotly.subplots import make_subplots  # pylint: disable=import-outside-toplevel
    return FigureFE, go, make_subplots


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch")


def _channels_last(array: np.ndarray, was_torch: bool, image_rank: int) -> np.ndarray:
    """Move a torch tensor's channel axis (just before H, W) to the end."""
    if was_torch and array.ndim == image_rank + 1 and array.shape[-image_rank - 1] in (1, 3):
        return np.moveaxis(array, -image_rank - 1, -1)
    return array


def _image_array(image: Any) -> np.ndarray:
    """An image as HxW (one channel) or HxWx3, checked."""
    array = np.asarray(to_number(image))
    array = _channels_last(array, _is_torch(image), 2)
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[-1] == 3)):
        raise AssertionError(f"ImageDisplay: an image must be HxW or HxWxC with 1 or 3 channels (CxHxW for torch), "
                             f"got shape {array.shape}")
    return array


def _rgb_uint8(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.uint8:
        return array
    values = array.astype(np.float64)
    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    if low >= 0.0 and high <= 1.0:
        values = values * 255.0
    elif low >= 0.0 and high <= 255.0 and array.dtype.kind in "iu":
        pass
    elif high > low:
        values = (values - low) / (high - low) * 255.0
    return np.clip(np.round(values), 0, 255).astype(np.uint8)


def _labels(labels: Union[None, str, Sequence[str]], count: int, what: str) -> List[Optional[str]]:
    if labels is None:
        return [None] * count
    labels = [labels] if isinstance(labels, str) else [str(label) for label in labels]
    if len(labels) != count:
        raise AssertionError(f"ImageDisplay: {count} {what} but {len(labels)} label(s) {labels}")
    return list(labels)


def _is_labels(value: Any) -> bool:
    """Whether `value` is a label or a sequence of labels (strings)."""
    if isinstance(value, str):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "US" and value.ndim <= 1
    return isinstance(value, (list, tuple)) and all(isinstance(v, (str, np.str_)) for v in value)


def _split_labelled(value: Any) -> Tuple[Any, Any]:
    """(tensor, labels) or [tensor, labels] -> (tensor, labels); a bare tensor -> (tensor, None)."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and _is_labels(value[1]) and not _is_labels(value[0]):
        labels = value[1]
        return value[0], labels if isinstance(labels, str) else [str(label) for label in labels]
    return value, None


def _text(value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    array = np.asarray(to_number(value))
    if array.dtype.kind in "SO" and array.size == 1:
        item = array.reshape(()).item()
        return item.decode("utf-8") if isinstance(item, bytes) else str(item)
    if array.size == 1:
        return str(array.reshape(()).item())
    return str(array.tolist())


@fe_export("fe.util.img_data.Display")
class Display(ABC):
    """Something that can be drawn as a plotly figure (`prepare`) and shown or saved (`show`)."""

    @abstractmethod
    def prepare(self, **kwargs) -> Any:
        """Build the figure (a `FigureFE`)."""

    def show(self, save_path: Optional[str] = None, verbose: bool = True, scale: int = 1,
             interactive: bool = False) -> None:
        """Save or display the image as a plotly figure.

        Args:
            save_path: The path where the figure should be saved (.png, .jpg, .svg, .pdf, .html, .json; a directory
                gets a PNG named after the title), or None to display the figure to the screen.
            verbose: Whether to print out the save location.
            scale: A scaling factor to apply when exporting to static images (to increase resolution).
            interactive: Whether the figure should be interactive or static. This is only applicable when
                save_path is None and when running inside a jupyter notebook. The advantage is that the file size of
                the resulting jupyter notebook can be dramatically reduced.
        """
        self.prepare().show(save_path=save_path, verbose=verbose, scale=scale, interactive=interactive)


@fe_export("fe.util.img_data.ImageDisplay", "fe.util.ImageDisplay")
class ImageDisplay(Display):
    """An object to combine various image components for visualization.

    Args:
        image: An image to be displayed. 3-dimensional torch tensors are generally assumed to be channel first,
            while tf and np are assumed to be channel last. Either way, only 1 or 3 channel images are supported.
        text: Text which will be printed in the center of this figure.
        masks: A 2D tensor representing a mask, or a 3D tensor indicating multiple 2D masks (HxWxC; a torch tensor
            may be CxHxW, recognised by the image's height and width). They may be combined with label(s) if desired
            (<mask>, <label>), e.g. `masks=(mask, ["left", "right"])` for a two-channel mask. Masks with values above
            1 (0-255) are scaled to [0, 1].
        bboxes: One or more bounding boxes of the form (x0, y0, width, height [, label]), where (x0, y0) is the top
            left corner of the box. These may also be encoded in a tensor of shape (4,) or (N,4) for multiple boxes.
        keypoints: A 1D tensor representing a keypoint of shape (2,), or a 2D tensor of shape (N,2) indicating multiple
            1D keypoints. They may be combined with label(s) if desired: (<keypoint>, <label>). (x,y) coordinates
            indicate distance from the top left of an image, with negative or None values indicating that a keypoint
            was not detected.
        title: What should the title of this figure be.
        mask_threshold: If provided, any masks will be binarized based on the given threshold value (1 if > t, else 0).
        color_map: How to color 1-channel images. Options from: https://plotly.com/python/builtin-colorscales/. If 2
            strings are provided, the first will be used to color grey-scale images and the second will be used to
            color continuous (non-thresholded) masks. If a single string is provided it will be used for both.

    Raises:
        AssertionError: If the provided arguments violate expected type/shape constraints.
    """

    def __init__(self, image: Any = None, text: Any = None, masks: Any = None, bboxes: Any = None,
                 keypoints: Any = None, title: Optional[str] = None, mask_threshold: Optional[float] = None,
                 color_map: Union[str, Tuple[str, str]] = ("gray", "turbo")) -> None:
        self.image = None if image is None else _image_array(image)
        self.text = _text(text)
        self.title = title
        self.mask_threshold = mask_threshold
        if isinstance(color_map, str):
            color_map = (color_map, color_map)
        if len(color_map) != 2:
            raise AssertionError(f"ImageDisplay: color_map must be a string or 2 strings, got {color_map!r}")
        self.image_color_map, self.mask_color_map = color_map
        self.masks, self.mask_labels = self._parse_masks(masks)
        self.bboxes = self._parse_bboxes(bboxes)
        self.keypoints, self.keypoint_labels = self._parse_keypoints(keypoints)

    # ------------------------------------------------------------------------------------------------------ inputs
    def _parse_masks(self, masks: Any) -> Tuple[Optional[np.ndarray], List[Optional[str]]]:
        if masks is None:
            return None, []
        tensor, labels = _split_labelled(masks)
        array = np.asarray(to_number(tensor)).astype(np.float64)
        if _is_torch(tensor) and array.ndim == 3 and self._channels_first(array.shape):
            array = np.moveaxis(array, 0, -1)
        if array.ndim == 2:
            array = array[..., None]
        if array.ndim != 3:
            raise AssertionError(f"ImageDisplay: masks must be HxW or HxWxC, got shape {array.shape}")
        if self.image is not None and array.shape[:2] != self.image.shape[:2]:
            raise AssertionError(f"ImageDisplay: masks of shape {array.shape[:2]} do not match the image's "
                                 f"{self.image.shape[:2]}")
        if self.mask_threshold is not None:
            array = (array > self.mask_threshold).astype(np.float64)
        elif array.size and array.max() > 1:  # 0-255 masks (as read from image files), as FastEstimator
            array = array / 255.0
        return array, _labels(labels, array.shape[-1], "mask channel(s)")

    def _channels_first(self, shape: Tuple[int, ...]) -> bool:
        """Whether a 3D torch mask is CxHxW: its last two axes are the image's height and width (a torch tensor may
        also hold HxWxC masks, e.g. from `Pipeline.get_results`); without an image, the shorter end axis is C."""
        if self.image is not None:
            height, width = self.image.shape[:2]
            if tuple(shape[1:]) == (height, width):
                return True
            if tuple(shape[:2]) == (height, width):
                return False
        return shape[0] < shape[-1]

    @staticmethod
    def _parse_bboxes(bboxes: Any) -> List[Tuple[float, float, float, float, Optional[str]]]:
        if bboxes is None:
            return []
        if not isinstance(bboxes, (list, tuple)):
            bboxes = np.asarray(to_number(bboxes))
            bboxes = bboxes[None] if bboxes.ndim == 1 else bboxes
        elif len(bboxes) > 0 and not isinstance(bboxes[0], (list, tuple)) and np.ndim(to_number(bboxes[0])) == 0:
            bboxes = [bboxes]  # a single (x0, y0, w, h[, label])
        parsed = []
        for box in bboxes:
            values = list(box) if isinstance(box, (list, tuple)) else list(np.asarray(to_number(box)).reshape(-1))
            if len(values) not in (4, 5):
                raise AssertionError(f"ImageDisplay: a bounding box is (x0, y0, width, height[, label]), got {box!r}")
            label = None if len(values) == 4 else _text(values[4])
            x0, y0, width, height = (float(np.asarray(to_number(v))) for v in values[:4])
            parsed.append((x0, y0, width, height, label))
        return parsed

    @staticmethod
    def _parse_keypoints(keypoints: Any) -> Tuple[Optional[np.ndarray], List[Optional[str]]]:
        if keypoints is None:
            return None, []
        tensor, labels = _split_labelled(keypoints)
        if isinstance(tensor, (list, tuple)):
            single = len(tensor) > 0 and not isinstance(tensor[0], (list, tuple)) and np.ndim(to_number(tensor[0])) == 0
            points = [tensor] if single else tensor
            array = np.asarray([[np.nan if v is None else float(np.asarray(to_number(v))) for v in point]
                                for point in points], dtype=np.float64).reshape(-1, 2)
        else:
            array = np.asarray(to_number(tensor), dtype=np.float64)
        if array.ndim == 1:
            array = array[None]
        if array.ndim != 2 or array.shape[-1] != 2:
            raise AssertionError(f"ImageDisplay: keypoints must have shape (2,) or (N, 2), got {array.shape}")
        return array, _labels(labels, array.shape[0], "keypoint(s)")

    def _height_width(self) -> Tuple[int, int]:
        if self.image is not None:
            return int(self.image.shape[0]), int(self.image.shape[1])
        if self.masks is not None:
            return int(self.masks.shape[0]), int(self.masks.shape[1])
        return 1, 1

    # ----------------------------------------------------------------------------------------------------- drawing
    def prepare(self, fig: Optional[Any] = None, axis: Optional[Tuple[int, int]] = None,
                col_width: int = 280) -> Any:
        """Draw this image into `fig` at subplot `axis`, or into a new figure.

        Args:
            fig: A figure made with plotly's `make_subplots` (or a FigureFE), or None for a new one.
            axis: The 1-based (row, col) of the subplot to draw into (needed with `fig`).
            col_width: The width in pixels of a new figure.

        Returns:
            The figure (a `FigureFE`).
        """
        figure_class, _, make_subplots = _plotly()
        if fig is None:
            height, width = self._height_width()
            fig = figure_class.from_figure(make_subplots(rows=1, cols=1))
            top = 50 if self.title else 10
            fig.update_layout(width=col_width, height=int(round(col_width * height / width)) + top,
                              margin=dict(l=10, r=10, t=top, b=10), showlegend=False, plot_bgcolor="white",
                              paper_bgcolor="white")
            if self.title:
                fig.update_layout(title=dict(text=self.title, x=0.5, xanchor="center"))
            axis = (1, 1)
        elif axis is None:
            raise AssertionError("ImageDisplay.prepare: give the (row, col) axis to draw into the given figure")
        elif not isinstance(fig, figure_class):
            fig = figure_class.from_figure(fig)
        self.draw(fig, axis[0], axis[1])
        return fig

    def draw(self, fig: Any, row: int, col: int) -> None:
        """Add this image's traces, shapes and annotations to subplot (`row`, `col`) of `fig` (1-based)."""
        _, go, _ = _plotly()
        subplot = fig.get_subplot(row, col)
        xref = subplot.xaxis.plotly_name.replace("axis", "")
        yref = subplot.yaxis.plotly_name.replace("axis", "")
        height, width = self._height_width()
        if self.image is not None:
            if self.image.ndim == 3:
                fig.add_trace(go.Image(z=_rgb_uint8(self.image), hoverinfo="x+y+z"), row=row, col=col)
            else:
                gray = self.image.astype(np.float64)
                if self.image.dtype == np.uint8:
                    zmin, zmax = 0.0, 255.0
                else:
                    zmin, zmax = float(np.nanmin(gray)), float(np.nanmax(gray))
                    if zmin >= 0.0 and zmax <= 1.0:
                        zmin, zmax = 0.0, 1.0
                fig.add_trace(go.Heatmap(z=gray, colorscale=self.image_color_map, zmin=zmin, zmax=zmax,
                                         showscale=False), row=row, col=col)
        self._draw_masks(fig, go, row, col)
        colors = get_colors(max(len(self.bboxes), len(self.keypoint_labels), 1))
        for index, (x0, y0, box_width, box_height, label) in enumerate(self.bboxes):
            color = colors[index % len(colors)]
            fig.add_shape(type="rect", x0=x0, y0=y0, x1=x0 + box_width, y1=y0 + box_height, xref=xref, yref=yref,
                          line=dict(color=color, width=2), fillcolor=None)
            if label:
                fig.add_annotation(x=x0, y=y0, xref=xref, yref=yref, text=label, showarrow=False, xanchor="left",
                                   yanchor="bottom", font=dict(color="white", size=11), bgcolor=color)
        if self.keypoints is not None:
            detected = np.all(np.isfinite(self.keypoints), axis=1) & np.all(self.keypoints >= 0, axis=1)
            points = self.keypoints[detected]
            labels = [label for label, keep in zip(self.keypoint_labels, detected) if keep]
            point_colors = [colors[i % len(colors)] for i in np.flatnonzero(detected)]
            has_labels = any(label is not None for label in labels)
            fig.add_trace(go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers+text" if has_labels else "markers",
                                     text=[label or "" for label in labels] if has_labels else None,
                                     textposition="top center", marker=dict(color=point_colors, size=8),
                                     textfont=dict(color="white"), showlegend=False), row=row, col=col)
        if self.text is not None:
            fig.add_annotation(x=0.5, y=0.5, xref=f"{xref} domain", yref=f"{yref} domain", text=self.text,
                               showarrow=False, font=dict(size=16, color="black"),
                               bgcolor="rgba(255,255,255,0.7)")
        fig.update_xaxes(range=[-0.5, width - 0.5], showticklabels=False, showgrid=False, zeroline=False,
                         row=row, col=col)
        fig.update_yaxes(range=[height - 0.5, -0.5], showticklabels=False, showgrid=False, zeroline=False,
                         scaleanchor=xref, row=row, col=col)

    def _draw_masks(self, fig: Any, go: Any, row: int, col: int) -> None:
        if self.masks is None:
            return
        channels = self.masks.shape[-1]
        binary = self.mask_threshold is not None or np.isin(self.masks, (0.0, 1.0)).all()
        colors = get_colors(channels)
        subplot = fig.get_subplot(row, col)
        xref = subplot.xaxis.plotly_name.replace("axis", "")
        yref = subplot.yaxis.plotly_name.replace("axis", "")
        for channel in range(channels):
            mask = self.masks[..., channel]
            if binary:
                z = np.where(mask > 0, 1.0, np.nan)
                scale = [[0.0, colors[channel]], [1.0, colors[channel]]]
                fig.add_trace(go.Heatmap(z=z, colorscale=scale, zmin=0, zmax=1, showscale=False,
                                         opacity=_MASK_OPACITY, hoverinfo="skip"), row=row, col=col)
            else:
                fig.add_trace(go.Heatmap(z=mask, colorscale=self.mask_color_map, showscale=False,
                                         opacity=_MASK_OPACITY, hoverinfo="skip"), row=row, col=col)
            label = self.mask_labels[channel]
            if label and np.any(mask > 0):
                rows, cols = np.nonzero(mask > 0)
                fig.add_annotation(x=float(cols.mean()), y=float(rows.mean()), xref=xref, yref=yref, text=label,
                                   showarrow=False, font=dict(color="white", size=11), bgcolor=colors[channel])


def _batch_items(value: Any, batch_size: Optional[int], what: str) -> Optional[List[Any]]:
    """Split a batch (a tensor with a leading batch axis, or a sequence) into one entry per element."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        items = list(value)
    else:
        if _is_torch(value):  # torch elements stay torch tensors: ImageDisplay reads their channel-first layout
            items = [value[index] for index in range(len(value))]
        else:
            items = list(np.asarray(to_number(value)))
    if batch_size is not None and len(items) != batch_size:
        raise AssertionError(f"BatchDisplay: {what} has {len(items)} elements but the batch has {batch_size}")
    return items


@fe_export("fe.util.img_data.BatchDisplay", "fe.util.BatchDisplay")
class BatchDisplay(Display):
    """An object to combine various batched image components for visualization: one column, one row per element.

    Args:
        image: A batch of images to be displayed. 4-dimensional torch tensors are generally assumed to be channel
            first, while tf and np are assumed to be channel last. Either way, only 1 or 3 channel images are supported.
        text: Text which will be printed in the center of each figure (one entry per element).
        masks: A 3D tensor representing a batch of 2D masks, or a 4D tensor indicating a batch of 2D masks having
            multiple channels. They may be combined with label(s) if desired (<mask>, <label>). For masks with C
            channels, C labels should be provided (which will then be used for every element in the batch).
        bboxes: Batches of one or more bounding boxes of the form (x0, y0, width, height [, label]), where (x0, y0) is
            the top left corner of the box. These may also be encoded in a tensor of shape (4,) or (N,4) for multiple
            boxes.
        keypoints: A 2D tensor representing a batch of 1D keypoints, or a 3D tensor indicating a batch of sets of
            1D keypoints. They may be combined with label(s) if desired: (<keypoint>, <label>). The keypoint shape
            should be (N, C, 2) or (N, 2).
        title: What should the title of this figure be.
        mask_threshold: If provided, any masks will be binarized based on the given threshold value (1 if > t, else 0).
        color_map: How to color 1-channel images (and continuous masks); see `ImageDisplay`.

    Raises:
        AssertionError: If the provided arguments violate expected type/shape constraints.
    """

    def __init__(self, image: Any = None, text: Any = None, masks: Any = None, bboxes: Any = None,
                 keypoints: Any = None, title: Optional[str] = None, mask_threshold: Optional[float] = None,
                 color_map: Union[str, Tuple[str, str]] = ("gray", "turbo")) -> None:
        self.title = title
        images = _batch_items(image, None, "image")
        batch_size = len(images) if images is not None else None
        texts = _batch_items(text, batch_size, "text")
        batch_size = batch_size if batch_size is not None else (len(texts) if texts is not None else None)
        mask_tensor, mask_labels = _split_labelled(masks) if masks is not None else (None, None)
        mask_items = _batch_items(mask_tensor, batch_size, "masks")
        batch_size = batch_size if batch_size is not None else (len(mask_items) if mask_items is not None else None)
        box_items = _batch_items(bboxes, batch_size, "bboxes")
        batch_size = batch_size if batch_size is not None else (len(box_items) if box_items is not None else None)
        point_tensor, point_labels = _split_labelled(keypoints) if keypoints is not None else (None, None)
        point_items = _batch_items(point_tensor, batch_size, "keypoints")
        batch_size = batch_size if batch_size is not None else (len(point_items) if point_items is not None else 0)
        if batch_size == 0:
            raise AssertionError("BatchDisplay needs at least one of image, text, masks, bboxes or keypoints")
        self.batch_size = batch_size
        self.items = [ImageDisplay(
            image=None if images is None else images[i],
            text=None if texts is None else texts[i],
            masks=None if mask_items is None else (mask_items[i] if mask_labels is None else
                                                   (mask_items[i], mask_labels)),
            bboxes=None if box_items is None else box_items[i],
            keypoints=None if point_items is None else (point_items[i] if point_labels is None else
                                                        (point_items[i], point_labels)),
            mask_threshold=mask_threshold, color_map=color_map) for i in range(batch_size)]

    def prepare(self, fig: Optional[Any] = None, col: Optional[int] = None, col_width: int = 400) -> Any:
        """Draw the batch as a column into `fig` (column `col`), or into a new one-column figure.

        Args:
            fig: A figure made with plotly's `make_subplots` with at least `batch_size` rows, or None.
            col: The 1-based column to draw into (needed with `fig`).
            col_width: The width in pixels of a new figure.

        Returns:
            The figure (a `FigureFE`).
        """
        figure_class, _, make_subplots = _plotly()
        if fig is None:
            height, width = self.items[0]._height_width()  # pylint: disable=protected-access
            row_height = col_width * height / width
            top = 50 if self.title else 10
            spacing = min(_PANEL_GAP, 1.0 / max(self.batch_size, 2))
            fig = figure_class.from_figure(make_subplots(rows=self.batch_size, cols=1, vertical_spacing=spacing))
            fig.update_layout(width=col_width, height=int(round(row_height * self.batch_size * (1 + spacing))) + top,
                              margin=dict(l=10, r=10, t=top, b=10), showlegend=False, plot_bgcolor="white",
                              paper_bgcolor="white")
            if self.title:
                fig.update_layout(title=dict(text=self.title, x=0.5, xanchor="center"))
            col = 1
        elif col is None:
            raise AssertionError("BatchDisplay.prepare: give the column to draw into the given figure")
        elif not isinstance(fig, figure_class):
            fig = figure_class.from_figure(fig)
        for row, item in enumerate(self.items, start=1):
            item.draw(fig, row, col)
        return fig


@fe_export("fe.util.img_data.GridDisplay", "fe.util.GridDisplay")
class GridDisplay(Display):
    """Columns of `BatchDisplay`s (and single `ImageDisplay`s) side by side, each column titled with its title.

    Example:
        >>> images = np.zeros((2, 8, 8, 3), dtype=np.uint8)
        >>> grid = GridDisplay([BatchDisplay(image=images, title="x"), BatchDisplay(text=["cat", "dog"], title="y")])
        >>> grid.batch_size
        2
        >>> grid.show(save_path="/tmp/grid.png")  # doctest: +SKIP

    Args:
        columns: The columns; every BatchDisplay must have the same batch size.

    Raises:
        AssertionError: If a column is not a BatchDisplay/ImageDisplay, or batch sizes differ.
    """

    def __init__(self, columns: Sequence[Union[BatchDisplay, ImageDisplay]]) -> None:
        columns = list(columns)
        if not columns:
            raise AssertionError("GridDisplay needs at least one column")
        for column in columns:
            if not isinstance(column, (BatchDisplay, ImageDisplay)):
                raise AssertionError(f"GridDisplay columns must be BatchDisplay or ImageDisplay, got "
                                     f"{type(column).__name__}")
        sizes = {column.batch_size for column in columns if isinstance(column, BatchDisplay)}
        if len(sizes) > 1:
            raise AssertionError(f"GridDisplay: every BatchDisplay column needs the same batch size, got "
                                 f"{sorted(sizes)}")
        self.columns = columns
        self.batch_size = sizes.pop() if sizes else 1

    def prepare(self) -> Any:
        """Draw the grid into a new figure.

        Returns:
            The figure (a `FigureFE`).
        """
        figure_class, _, make_subplots = _plotly()
        rows, cols = self.batch_size, len(self.columns)
        titles = [column.title or "" for column in self.columns] + [""] * (cols * (rows - 1))
        vertical = min(_PANEL_GAP, 1.0 / max(rows, 2))
        horizontal = min(_PANEL_GAP, 1.0 / max(cols, 2))
        fig = figure_class.from_figure(make_subplots(rows=rows, cols=cols, subplot_titles=titles,
                                                     vertical_spacing=vertical, horizontal_spacing=horizontal))
        col_width = 250
        first = self.columns[0].items[0] if isinstance(self.columns[0], BatchDisplay) else self.columns[0]
        height, width = first._height_width()  # pylint: disable=protected-access
        top = 40 if any(column.title for column in self.columns) else 10
        fig.update_layout(width=col_width * cols, height=int(round(col_width * height / width * rows)) + top,
                          margin=dict(l=10, r=10, t=top, b=10), showlegend=False, plot_bgcolor="white",
                          paper_bgcolor="white")
        for col, column in enumerate(self.columns, start=1):
            if isinstance(column, BatchDisplay):
                column.prepare(fig=fig, col=col)
            else:
                column.draw(fig, 1, col)
        return fig
