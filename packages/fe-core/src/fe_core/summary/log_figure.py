"""`LogFigure`: what `plot_logs` returns, FastEstimator's plotly figure (`FigureFE`) that is also fe's matplotlib one.

FastEstimator's `plot_logs` returns a `FigureFE` (a plotly figure: `fig.show()` displays it in a notebook,
`fig.show(save_path="history.html")` saves it). fe draws the histories with matplotlib (`fe_core.summary.plot`), and
scripts written for fe read that figure's `axes` and call its `savefig`. A `LogFigure` is both: a `FigureFE` holding
the same subplots, curves and bands as plotly traces, and every attribute plotly's figure does not have (`axes`,
`savefig`, `legends`, ...) is the matplotlib figure's. `show(save_path=<image file>)` writes the matplotlib drawing.

This module imports plotly when imported (the `plot` extra): `plot_logs` imports it only when it draws, and returns
the matplotlib figure alone where plotly is not installed.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from plotly.subplots import make_subplots

from fe_core.util.figure import STATIC_FORMATS, FigureFE, go

__all__ = ["LogFigure", "to_log_figure"]

_DASHES = {"--": "dash", "-.": "dashdot", ":": "dot"}


def _hex(color: Any) -> str:
    from matplotlib.colors import to_hex  # pylint: disable=import-outside-toplevel
    return to_hex(color, keep_alpha=False)


def _line_trace(line: Any, shown: Dict[str, bool]) -> Any:
    """A plotly scatter of one matplotlib line (its points, label, color, dash and markers)."""
    label = str(line.get_label())
    linestyle, marker = line.get_linestyle(), line.get_marker()
    has_line = linestyle not in ("None", "", " ", "none")
    has_marker = marker not in (None, "None", "", " ", "none")
    mode = "+".join(part for part, present in (("lines", has_line), ("markers", has_marker)) if present) or "lines"
    color = _hex(line.get_color())
    legend = not label.startswith("_") and not shown.get(label, False)
    if legend:
        shown[label] = True
    return go.Scatter(x=list(map(float, line.get_xdata())), y=list(map(float, line.get_ydata())), mode=mode,
                      name=None if label.startswith("_") else label, legendgroup=label, showlegend=legend,
                      line={"color": color, "dash": _DASHES.get(linestyle, "solid")}, marker={"color": color})


def _band_traces(collection: Any) -> List[Any]:
    """Plotly shapes of a matplotlib collection: filled polygons (error bands) or segments (error bars)."""
    from matplotlib.collections import LineCollection  # pylint: disable=import-outside-toplevel
    traces = []
    segments = isinstance(collection, LineCollection)
    colors = collection.get_edgecolor() if segments else collection.get_facecolor()
    for index, path in enumerate(collection.get_paths()):
        vertices = path.vertices
        if not len(vertices):
            continue
        color = _hex(colors[index % len(colors)]) if len(colors) else "#7f7f7f"
        alpha = collection.get_alpha()
        traces.append(go.Scatter(x=list(map(float, vertices[:, 0])), y=list(map(float, vertices[:, 1])),
                                 mode="lines", showlegend=False, hoverinfo="skip",
                                 fill=None if segments else "toself",
                                 opacity=1.0 if segments else (0.2 if alpha is None else float(alpha)),
                                 line={"color": color, "width": 1 if segments else 0}))
    return traces


class LogFigure(FigureFE):
    """FastEstimator's `FigureFE` of the histories, that is also fe's matplotlib figure of them.

    Attributes plotly's figure does not have (`axes`, `savefig`, `legends`, ...) are the matplotlib figure's, which
    `matplotlib_figure` returns.

    Args:
        plotly_figure: The plotly figure of the drawing.
        matplotlib_figure: The matplotlib Figure of the same drawing.
    """

    def __init__(self, plotly_figure: Any = None, matplotlib_figure: Any = None) -> None:
        super().__init__(plotly_figure)
        self._matplotlib_figure = matplotlib_figure

    def __reduce__(self) -> Any:
        """Copies and pickles keep both drawings."""
        cls, (props, ) = super().__reduce__()
        return cls, (props, self._matplotlib_figure)

    @property
    def matplotlib_figure(self) -> Any:
        """The matplotlib Figure of the same drawing."""
        return self._matplotlib_figure

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # plotly's own private lookups never reach the matplotlib figure
            raise AttributeError(name)
        return getattr(self._matplotlib_figure, name)

    def show(self, save_path: Optional[str] = None, verbose: bool = True, scale: int = 1,
             interactive: bool = True, **kwargs: Any) -> None:
        """FastEstimator's `FigureFE.show`: display the figure, or save it (.html, .json, or an image file, which is
        the matplotlib drawing at `scale` times its resolution)."""
        extension = os.path.splitext(save_path)[1].lower().lstrip(".") if save_path else ""
        if save_path and extension in STATIC_FORMATS:
            path = os.path.expanduser(save_path)
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if verbose:
                print(f"Saving to {path}")
            self._matplotlib_figure.savefig(path, dpi=100 * scale)
            return
        super().show(save_path=save_path, verbose=verbose, scale=scale, interactive=interactive, **kwargs)


def to_log_figure(figure: Any) -> LogFigure:
    """The `LogFigure` of a matplotlib figure drawn by `plot_logs`.

    Args:
        figure: A matplotlib Figure of a grid of subplots (hidden ones are left out).

    Returns:
        A `FigureFE` holding the same drawing, that also answers as `figure`.
    """
    axes = [axis for axis in figure.axes if axis.get_subplotspec() is not None]
    rows, columns = axes[0].get_subplotspec().get_geometry()[:2] if axes else (1, 1)
    titles = [""] * (rows * columns)
    for axis in axes:
        if axis.get_visible():
            titles[axis.get_subplotspec().num1] = axis.get_title()
    plotly_figure = make_subplots(rows=rows, cols=columns, subplot_titles=titles)
    shown: Dict[str, bool] = {}
    for axis in axes:
        if not axis.get_visible():
            continue
        row, column = divmod(axis.get_subplotspec().num1, columns)
        for collection in axis.collections:
            for trace in _band_traces(collection):
                plotly_figure.add_trace(trace, row=row + 1, col=column + 1)
        for line in axis.get_lines():
            plotly_figure.add_trace(_line_trace(line, shown), row=row + 1, col=column + 1)
        plotly_figure.update_xaxes(title_text=axis.get_xlabel(), row=row + 1, col=column + 1)
    plotly_figure.update_layout(height=int(figure.get_figheight() * 100), width=int(figure.get_figwidth() * 100),
                                legend={"orientation": "h"})
    return LogFigure(plotly_figure, figure)
