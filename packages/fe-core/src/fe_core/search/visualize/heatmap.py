"""Heatmaps of a search: one result over a grid of two parameters."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from fe_core.export import fe_export
from fe_core.search.search import Search
from fe_core.search.visualize.cartesian import _file_name
from fe_core.search.visualize.vis_util import SearchData, as_figure_fe, plotly_graph_objects, show_or_save

__all__ = ["plot_heatmap", "visualize_heatmap"]


def _axis(data: SearchData, key: str) -> List[Any]:
    """The distinct values of `key`, sorted (numbers by value, categories in order of appearance)."""
    if key in data.categories:
        return list(data.categories[key])
    return sorted(set(data.data[key]))


@fe_export("fe.search.visualize.heatmap.plot_heatmap", "fe.search.visualize.plot_heatmap")
def plot_heatmap(search: Union[Search, str],
                 title: Optional[str] = None,
                 ignore_keys: Union[None, str, Sequence[str]] = None) -> Any:
    """Draw the result as colors over the grid of two parameters (needs exactly 2 parameters and 1 result after
    ignore_keys). Cells never evaluated are left empty.

    Args:
        search: A Search, or the path of its saved JSON file.
        title: The figure title (default: the search's name).
        ignore_keys: Parameter / result keys to leave out.

    Returns:
        A `FigureFE` (a plotly Figure; `figure.show(save_path)` saves it).

    Raises:
        ValueError: If there are not exactly 2 parameters and 1 result.
    """
    go = plotly_graph_objects("plot_heatmap")
    data = SearchData(search, ignore_keys)
    if len(data.params) != 2 or len(data.results) != 1:
        raise ValueError(f"Heatmaps need exactly 2 parameters and 1 result, but the search has parameters "
                         f"{data.params} and results {data.results}")
    x_key, y_key = data.params
    result = data.results[0]
    xs, ys = _axis(data, x_key), _axis(data, y_key)
    cells: Dict[Tuple[Any, Any], Any] = {}
    for x, y, z in zip(data.data[x_key], data.data[y_key], data.data[result]):
        cells[(str(x) if x_key in data.categories else x, str(y) if y_key in data.categories else y)] = z
    grid = [[cells.get((x, y)) for x in xs] for y in ys]
    figure = go.Figure(go.Heatmap(x=[str(x) for x in xs], y=[str(y) for y in ys], z=grid,
                                  colorbar={"title": {"text": result}}, hoverongaps=False,
                                  text=[["" if value is None else f"{value:.4g}" if isinstance(value, float)
                                         else str(value) for value in row] for row in grid],
                                  texttemplate="%{text}"))
    figure.update_layout(title=title or data.title, xaxis_title=x_key, yaxis_title=y_key)
    figure.update_xaxes(type="category")
    figure.update_yaxes(type="category")
    return as_figure_fe(figure)


@fe_export("fe.search.visualize.heatmap.visualize_heatmap", "fe.search.visualize.visualize_heatmap")
def visualize_heatmap(search: Union[Search, str],
                      title: Optional[str] = None,
                      ignore_keys: Union[None, str, Sequence[str]] = None,
                      save_path: Optional[str] = None,
                      verbose: bool = True) -> None:
    """Show or save `plot_heatmap`'s figure.

    Args:
        search: A Search, or the path of its saved JSON file.
        title: The figure title.
        ignore_keys: Parameter / result keys to leave out.
        save_path: None to show the figure; a directory (gets `<title>.html`), a file stem (gets '.html'), an '.html'
            file, or an image file.
        verbose: Print where the figure was saved.
    """
    figure = plot_heatmap(search, title=title, ignore_keys=ignore_keys)
    show_or_save(figure, save_path, verbose, default_name=_file_name(title, search))
