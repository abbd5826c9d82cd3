"""Cartesian plots of a search: each result against the one searched parameter."""
from __future__ import annotations

import math
import os
from typing import Any, List, Optional, Sequence, Union

from fe_core.export import fe_export
from fe_core.search.search import Search
from fe_core.search.visualize.vis_util import SearchData, as_figure_fe, plotly_graph_objects, show_or_save

__all__ = ["plot_cartesian", "visualize_cartesian"]


@fe_export("fe.search.visualize.cartesian.plot_cartesian", "fe.search.visualize.plot_cartesian")
def plot_cartesian(search: Union[Search, str],
                   title: Optional[str] = None,
                   ignore_keys: Union[None, str, Sequence[str]] = None,
                   groups: Optional[List[List[str]]] = None) -> Any:
    """Draw each result against the searched parameter (needs exactly 1 parameter and 1+ results after ignore_keys).

    Args:
        search: A Search, or the path of its saved JSON file.
        title: The figure title (default: the search's name).
        ignore_keys: Parameter / result keys to leave out.
        groups: Result keys to draw on the same axes, e.g. [["train_loss", "eval_loss"]]; other results get their
            own subplot.

    Returns:
        A `FigureFE` (a plotly Figure; `figure.show(save_path)` saves it).

    Raises:
        ValueError: If there is not exactly one parameter or no result, or a group names an unknown result.
    """
    go = plotly_graph_objects("plot_cartesian")
    from plotly.subplots import make_subplots  # pylint: disable=import-outside-toplevel
    data = SearchData(search, ignore_keys)
    if len(data.params) != 1 or not data.results:
        raise ValueError(f"Cartesian plots need exactly 1 parameter and at least 1 result, but the search has "
                         f"parameters {data.params} and results {data.results}")
    panels: List[List[str]] = []
    grouped = set()
    for group in groups or []:
        unknown = [key for key in group if key not in data.results]
        if unknown:
            raise ValueError(f"groups name unknown result(s) {unknown}; results: {data.results}")
        panels.append(list(group))
        grouped.update(group)
    panels += [[key] for key in data.results if key not in grouped]
    columns = min(len(panels), 2)
    rows = math.ceil(len(panels) / columns)
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=[", ".join(panel) for panel in panels])
    param = data.params[0]
    order = sorted(range(len(data.data[param])), key=lambda index: data.numeric(param)[index])
    xs = [data.data[param][index] if param not in data.categories else str(data.data[param][index])
          for index in order]
    for number, panel in enumerate(panels):
        for key in panel:
            ys = [data.data[key][index] for index in order]
            figure.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=key),
                             row=number // columns + 1, col=number % columns + 1)
        figure.update_xaxes(title_text=param, row=number // columns + 1, col=number % columns + 1)
    figure.update_layout(title=title or data.title, showlegend=any(len(panel) > 1 for panel in panels))
    return as_figure_fe(figure)


@fe_export("fe.search.visualize.cartesian.visualize_cartesian", "fe.search.visualize.visualize_cartesian")
def visualize_cartesian(search: Union[Search, str],
                        title: Optional[str] = None,
                        ignore_keys: Union[None, str, Sequence[str]] = None,
                        groups: Optional[List[List[str]]] = None,
                        save_path: Optional[str] = None,
                        verbose: bool = True) -> None:
    """Show or save `plot_cartesian`'s figure.

    Args:
        search: A Search, or the path of its saved JSON file.
        title: The figure title.
        ignore_keys: Parameter / result keys to leave out.
        groups: Result keys to draw on the same axes.
        save_path: None to show the figure; a directory (gets `<title>.html`), a file stem (gets '.html'), an '.html'
            file, or an image file.
        verbose: Print where the figure was saved.
    """
    figure = plot_cartesian(search, title=title, ignore_keys=ignore_keys, groups=groups)
    show_or_save(figure, save_path, verbose, default_name=_file_name(title, search))


def _file_name(title: Optional[str], search: Union[Search, str]) -> str:
    if title:
        return "".join(char if char.isalnum() or char in "-_" else "_" for char in title)
    if isinstance(search, Search):
        return search.name
    return os.path.splitext(os.path.basename(os.fspath(search)))[0] or "search"
