"""Parallel-coordinate plots of a search: one vertical axis per parameter and result, one line per evaluation."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

from fe_core.export import fe_export
from fe_core.search.search import Search
from fe_core.search.visualize.cartesian import _file_name
from fe_core.search.visualize.vis_util import SearchData, as_figure_fe, plotly_graph_objects, show_or_save

__all__ = ["plot_parallel_coordinates", "visualize_parallel_coordinates"]


def _dimension(data: SearchData, key: str) -> Dict[str, Any]:
    values = data.numeric(key)
    dimension: Dict[str, Any] = {"label": key, "values": values}
    if key in data.categories:
        labels = data.categories[key]
        dimension["tickvals"] = list(range(len(labels)))
        dimension["ticktext"] = labels
    return dimension


@fe_export("fe.search.visualize.parallel_coordinate_plot.plot_parallel_coordinates",
           "fe.search.visualize.plot_parallel_coordinates")
def plot_parallel_coordinates(search: Union[Search, str],
                              color_by: Optional[str] = None,
                              title: Optional[str] = None,
                              ignore_keys: Union[None, str, Sequence[str]] = None) -> Any:
    """Draw every evaluation as a line across one axis per parameter and result.

    Args:
        search: A Search, or the path of its saved JSON file.
        color_by: The key whose values color the lines (default: the search's optimize_field, else its last result).
        title: The figure title (default: the search's name).
        ignore_keys: Parameter / result keys to leave out.

    Returns:
        A `FigureFE` (a plotly Figure; `figure.show(save_path)` saves it).

    Raises:
        ValueError: If `color_by` is not a parameter or result key.
    """
    go = plotly_graph_objects("plot_parallel_coordinates")
    data = SearchData(search, ignore_keys)
    keys = data.params + data.results
    if color_by is None:
        color_by = data.optimize_field if data.optimize_field in keys else (data.results or keys)[-1]
    if color_by not in keys:
        raise ValueError(f"color_by {color_by!r} is not a parameter or result of the search; keys: {keys}")
    line = {"color": data.numeric(color_by), "colorscale": "Viridis", "showscale": True,
            "colorbar": {"title": {"text": color_by}}}
    figure = go.Figure(go.Parcoords(line=line, dimensions=[_dimension(data, key) for key in keys]))
    figure.update_layout(title=title or data.title)
    return as_figure_fe(figure)


@fe_export("fe.search.visualize.parallel_coordinate_plot.visualize_parallel_coordinates",
           "fe.search.visualize.visualize_parallel_coordinates")
def visualize_parallel_coordinates(search: Union[Search, str],
                                   color_by: Optional[str] = None,
                                   title: Optional[str] = None,
                                   ignore_keys: Union[None, str, Sequence[str]] = None,
                                   save_path: Optional[str] = None,
                                   verbose: bool = True) -> None:
    """Show or save `plot_parallel_coordinates`' figure.

    Args:
        search: A Search, or the path of its saved JSON file.
        color_by: The key whose values color the lines.
        title: The figure title.
        ignore_keys: Parameter / result keys to leave out.
        save_path: None to show the figure; a directory (gets `<title>.html`), a file stem (gets '.html'), an '.html'
            file, or an image file.
        verbose: Print where the figure was saved.
    """
    figure = plot_parallel_coordinates(search, color_by=color_by, title=title, ignore_keys=ignore_keys)
    show_or_save(figure, save_path, verbose, default_name=_file_name(title, search))
