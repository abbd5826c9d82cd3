"""Render a plotly figure to a static image file with matplotlib, for machines where kaleido cannot run.

It draws what fe's figures are made of, on the figure's own subplot grid: image and heatmap traces (with their
colorscales, ranges and opacity), scatter traces (lines, markers, text), rectangle/line shapes, annotations (paper,
axis-domain and data coordinates) and the title. Axis ranges and reversed y axes (images) are honoured; tick labels
are shown only where the plotly axis shows them.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

import numpy as np

from fe_core.optional import import_optional

__all__ = ["render_with_matplotlib", "parse_color"]

RGBA = Tuple[float, float, float, float]
_DPI = 100
_RGB_PATTERN = re.compile(r"rgba?\(([^)]*)\)")


def parse_color(color: Any, default: RGBA = (0.0, 0.0, 0.0, 1.0)) -> RGBA:
    """A plotly color ('#rrggbb', 'rgb(r,g,b)', 'rgba(r,g,b,a)', a CSS name) as an (r, g, b, a) tuple in 0..1.

    Example:
        >>> parse_color("rgba(255,0,0,0.5)"), parse_color("#00ff00")
        ((1.0, 0.0, 0.0, 0.5), (0.0, 1.0, 0.0, 1.0))
    """
    if color is None:
        return default
    if isinstance(color, (tuple, list)) and len(color) in (3, 4):
        values = [float(v) for v in color]
        scale = 255.0 if max(values[:3]) > 1 else 1.0
        return (values[0] / scale, values[1] / scale, values[2] / scale, values[3] if len(values) == 4 else 1.0)
    text = str(color).strip()
    match = _RGB_PATTERN.fullmatch(text.replace(" ", ""))
    if match:
        parts = [float(part) for part in match.group(1).split(",")]
        alpha = parts[3] if len(parts) > 3 else 1.0
        return (parts[0] / 255.0, parts[1] / 255.0, parts[2] / 255.0, alpha)
    colors = import_optional("matplotlib.colors", extra="plot", feature="static figure export")
    try:
        return tuple(float(v) for v in colors.to_rgba(text))  # type: ignore[return-value]
    except ValueError:
        return default


def _colormap(colorscale: Any, name: str = "fe"):
    colors = import_optional("matplotlib.colors", extra="plot", feature="static figure export")
    plotly_colors = import_optional("plotly.colors", extra="plot", feature="static figure export")
    if colorscale is None:
        colorscale = "gray"
    if isinstance(colorscale, str):
        colorscale = plotly_colors.get_colorscale(colorscale)
    stops = [(float(position), parse_color(color)) for position, color in colorscale]
    return colors.LinearSegmentedColormap.from_list(name, stops)


def _axis_name(reference: str) -> str:
    """'x' -> 'xaxis', 'x3' -> 'xaxis3' (plotly trace/shape references to layout keys)."""
    return reference[0] + "axis" + reference[1:]


class _Canvas:
    """The matplotlib figure and one Axes per plotly (x, y) axis pair, placed at the axes' domains."""

    def __init__(self, fig: Any, scale: float) -> None:
        figure_module = import_optional("matplotlib.figure", extra="plot", feature="static figure export")
        layout = fig.layout
        self.width = float(layout.width or 700)
        self.height = float(layout.height or 500)
        margin = layout.margin
        self.left = float(margin.l if margin.l is not None else 80)
        self.right = float(margin.r if margin.r is not None else 80)
        self.top = float(margin.t if margin.t is not None else 100)
        self.bottom = float(margin.b if margin.b is not None else 80)
        # a standalone Figure (no pyplot): no global backend or figure registry is touched
        self.figure = figure_module.Figure(figsize=(self.width / _DPI, self.height / _DPI), dpi=_DPI * scale)
        self.figure.patch.set_facecolor(parse_color(layout.paper_bgcolor, (1.0, 1.0, 1.0, 1.0)))
        self.layout = layout
        self.axes: Dict[Tuple[str, str], Any] = {}

    def paper_to_figure(self, x: float, y: float) -> Tuple[float, float]:
        """Plotly paper coordinates (0..1 inside the margins) to matplotlib figure fractions."""
        plot_width = self.width - self.left - self.right
        plot_height = self.height - self.top - self.bottom
        return ((self.left + x * plot_width) / self.width, (self.bottom + y * plot_height) / self.height)

    def axes_for(self, xref: str, yref: str) -> Any:
        key = (xref, yref)
        if key in self.axes:
            return self.axes[key]
        x_axis = self.layout[_axis_name(xref)]
        y_axis = self.layout[_axis_name(yref)]
        x_domain = x_axis.domain or (0.0, 1.0)
        y_domain = y_axis.domain or (0.0, 1.0)
        x0, y0 = self.paper_to_figure(x_domain[0], y_domain[0])
        x1, y1 = self.paper_to_figure(x_domain[1], y_domain[1])
        axes = self.figure.add_axes((x0, y0, x1 - x0, y1 - y0))
        axes.set_facecolor(parse_color(self.layout.plot_bgcolor, (1.0, 1.0, 1.0, 0.0)))
        self.axes[key] = axes
        return axes

    def finish_axes(self) -> None:
        for (xref, yref), axes in self.axes.items():
            x_axis = self.layout[_axis_name(xref)]
            y_axis = self.layout[_axis_name(yref)]
            if x_axis.range is not None:
                axes.set_xlim(*x_axis.range)
            if y_axis.range is not None:
                axes.set_ylim(*y_axis.range)
            if y_axis.autorange == "reversed":
                bottom, top = axes.get_ylim()
                if bottom < top:
                    axes.set_ylim(top, bottom)
            if x_axis.scaleanchor or y_axis.scaleanchor:
                axes.set_aspect("equal", adjustable="box")
            hidden_x = x_axis.visible is False or x_axis.showticklabels is False
            hidden_y = y_axis.visible is False or y_axis.showticklabels is False
            if hidden_x:
                axes.set_xticks([])
            if hidden_y:
                axes.set_yticks([])
            if x_axis.visible is False and y_axis.visible is False:
                for spine in axes.spines.values():
                    spine.set_visible(False)


def _extent(trace: Any, height: int, width: int) -> List[float]:
    x0 = float(trace.x0) if trace.x0 is not None else 0.0
    y0 = float(trace.y0) if trace.y0 is not None else 0.0
    dx = float(trace.dx) if trace.dx is not None else 1.0
    dy = float(trace.dy) if trace.dy is not None else 1.0
    # pixel centres at x0 + i*dx: the image spans half a pixel beyond them; matplotlib's origin='upper' puts row 0
    # at the top, so the extent's y goes from the last row down to the first
    return [x0 - dx / 2, x0 + (width - 0.5) * dx, y0 + (height - 0.5) * dy, y0 - dy / 2]


def _draw_image(canvas: _Canvas, trace: Any) -> None:
    axes = canvas.axes_for(trace.xaxis or "x", trace.yaxis or "y")
    z = np.asarray(trace.z)
    if z.dtype.kind == "f" and z.size and z.max() > 1.0:
        z = np.clip(z, 0, 255).astype(np.uint8)
    axes.imshow(z, extent=_extent(trace, z.shape[0], z.shape[1]), interpolation="nearest",
                alpha=trace.opacity if trace.opacity is not None else None, origin="upper")
    axes.autoscale(False)


def _draw_heatmap(canvas: _Canvas, trace: Any) -> None:
    axes = canvas.axes_for(trace.xaxis or "x", trace.yaxis or "y")
    z = np.asarray(trace.z, dtype=np.float64)
    cmap = _colormap(trace.colorscale)
    if trace.reversescale:
        cmap = cmap.reversed()
    finite = z[np.isfinite(z)]
    zmin = trace.zmin if trace.zmin is not None else (finite.min() if finite.size else 0.0)
    zmax = trace.zmax if trace.zmax is not None else (finite.max() if finite.size else 1.0)
    cmap = cmap.with_extremes(bad=(0, 0, 0, 0))  # NaN cells are transparent, as in plotly
    axes.imshow(np.ma.masked_invalid(z), cmap=cmap, vmin=zmin, vmax=zmax, origin="upper",
                extent=_extent(trace, z.shape[0], z.shape[1]), interpolation="nearest",
                alpha=trace.opacity if trace.opacity is not None else None)
    axes.autoscale(False)


def _draw_scatter(canvas: _Canvas, trace: Any) -> None:
    axes = canvas.axes_for(trace.xaxis or "x", trace.yaxis or "y")
    x = np.asarray(trace.x if trace.x is not None else [], dtype=np.float64)
    y = np.asarray(trace.y if trace.y is not None else [], dtype=np.float64)
    mode = trace.mode or "lines+markers"
    color = parse_color(trace.line.color if "lines" in mode else trace.marker.color)
    if "lines" in mode:
        axes.plot(x, y, color=color, linewidth=trace.line.width or 2)
    if "markers" in mode:
        marker_color = trace.marker.color
        colors: Any = [parse_color(c) for c in marker_color] if isinstance(marker_color, (list, tuple)) \
            else parse_color(marker_color, (0.12, 0.47, 0.71, 1.0))
        size = trace.marker.size if isinstance(trace.marker.size, (int, float)) else 6
        axes.scatter(x, y, s=float(size) ** 2, c=[colors] if isinstance(colors, tuple) else colors, zorder=3)
    if "text" in mode and trace.text is not None:
        texts = trace.text if isinstance(trace.text, (list, tuple)) else [trace.text] * len(x)
        text_color = parse_color(trace.textfont.color, (0, 0, 0, 1))
        for x_value, y_value, text in zip(x, y, texts):
            axes.annotate(str(text), (x_value, y_value), color=text_color, fontsize=trace.textfont.size or 10,
                          textcoords="offset points", xytext=(0, 6), ha="center", va="bottom", zorder=4)


def _draw_shape(canvas: _Canvas, shape: Any) -> None:
    patches = import_optional("matplotlib.patches", extra="plot", feature="static figure export")
    xref, yref = shape.xref or "x", shape.yref or "y"
    if xref == "paper" or yref == "paper":
        return  # fe's figures place shapes on axes only
    axes = canvas.axes_for(xref.replace(" domain", ""), yref.replace(" domain", ""))
    edge = parse_color(shape.line.color, (0.2, 0.2, 0.2, 1.0))
    width = shape.line.width if shape.line.width is not None else 2
    face = parse_color(shape.fillcolor, (0, 0, 0, 0)) if shape.fillcolor else (0, 0, 0, 0)
    x0, x1, y0, y1 = (float(v) for v in (shape.x0, shape.x1, shape.y0, shape.y1))
    if shape.type == "line":
        axes.plot([x0, x1], [y0, y1], color=edge, linewidth=width, zorder=3)
        return
    patch_type = patches.Ellipse if shape.type == "circle" else None
    if patch_type is not None:
        patch = patches.Ellipse(((x0 + x1) / 2, (y0 + y1) / 2), abs(x1 - x0), abs(y1 - y0), edgecolor=edge,
                                facecolor=face, linewidth=width, zorder=3)
    else:
        patch = patches.Rectangle((min(x0, x1), min(y0, y1)), abs(x1 - x0), abs(y1 - y0), edgecolor=edge,
                                  facecolor=face, linewidth=width, zorder=3)
    axes.add_patch(patch)


_HORIZONTAL = {"left": "left", "right": "right", "center": "center", None: "center", "auto": "center"}
_VERTICAL = {"top": "top", "bottom": "bottom", "middle": "center", None: "center", "auto": "center"}


def _draw_annotation(canvas: _Canvas, note: Any) -> None:
    text = re.sub(r"<br\s*/?>", "\n", str(note.text or ""))
    text = re.sub(r"<[^>]+>", "", text)  # drop the other html tags plotly allows (<b>, <i>, ...)
    if not text:
        return
    color = parse_color(note.font.color, (0.15, 0.15, 0.15, 1.0))
    size = note.font.size or 12
    options = dict(color=color, fontsize=size, ha=_HORIZONTAL.get(note.xanchor, "center"),
                   va=_VERTICAL.get(note.yanchor, "center"))
    if note.bgcolor:
        options["bbox"] = dict(facecolor=parse_color(note.bgcolor), edgecolor="none", pad=1)
    xref, yref = note.xref or "paper", note.yref or "paper"
    x, y = float(note.x if note.x is not None else 0.5), float(note.y if note.y is not None else 0.5)
    if xref == "paper" and yref == "paper":
        fx, fy = canvas.paper_to_figure(x, y)
        canvas.figure.text(fx, fy, text, **options)
        return
    axes = canvas.axes_for(xref.replace(" domain", ""), yref.replace(" domain", ""))
    if xref.endswith(" domain") and yref.endswith(" domain"):
        axes.text(x, y, text, transform=axes.transAxes, zorder=5, **options)
    else:
        axes.text(x, y, text, zorder=5, **options)


_TRACE_DRAWERS = {"image": _draw_image, "heatmap": _draw_heatmap, "scatter": _draw_scatter, "scattergl": _draw_scatter}


def render_with_matplotlib(fig: Any, path: str, scale: float = 1) -> None:
    """Draw a plotly figure with matplotlib and save it (the format follows `path`'s extension).

    Args:
        fig: A plotly figure made of image, heatmap and scatter traces, shapes and annotations.
        path: The output file.
        scale: Resolution multiplier (1 gives layout.width x layout.height pixels).

    Raises:
        ValueError: If the figure holds a trace type this renderer cannot draw.
    """
    canvas = _Canvas(fig, scale)
    for trace in fig.data:
        drawer = _TRACE_DRAWERS.get(trace.type)
        if drawer is None:
            raise ValueError(f"Cannot export a plotly '{trace.type}' trace without kaleido; install kaleido (and "
                             f"a Chrome it can start) or save as .html")
        drawer(canvas, trace)
    for shape in fig.layout.shapes or ():
        _draw_shape(canvas, shape)
    for note in fig.layout.annotations or ():
        _draw_annotation(canvas, note)
    canvas.finish_axes()
    title = fig.layout.title.text if fig.layout.title else None
    if title:
        canvas.figure.suptitle(re.sub(r"<[^>]+>", "", title), fontsize=(fig.layout.title.font.size or 16))
    canvas.figure.savefig(path, dpi=_DPI * scale, facecolor=canvas.figure.get_facecolor())
