"""`visualize_search`: draw a search with the most fitting plot."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from fe_core.export import fe_export
from fe_core.search.search import Search
from fe_core.search.visualize.cartesian import visualize_cartesian
from fe_core.search.visualize.heatmap import visualize_heatmap
from fe_core.search.visualize.parallel_coordinate_plot import visualize_parallel_coordinates
from fe_core.search.visualize.vis_util import SearchData

__all__ = ["visualize_search", "choose_visualization"]


def choose_visualization(search: Union[Search, str], ignore_keys: Union[None, str, Sequence[str]] = None) -> str:
    """'cartesian' for 1 parameter, 'heatmap' for 2 parameters and 1 result, else 'parallel'."""
    data = SearchData(search, ignore_keys)
    if len(data.params) == 1 and data.results:
        return "cartesian"
    if len(data.params) == 2 and len(data.results) == 1:
        return "heatmap"
    return "parallel"


@fe_export("fe.search.visualize.visualize.visualize_search", "fe.search.visualize.visualize_search")
def visualize_search(search: Union[Search, str],
                     title: Optional[str] = None,
                     ignore_keys: Union[None, str, Sequence[str]] = None,
                     save_path: Optional[str] = None,
                     verbose: bool = True,
                     **kwargs: Any) -> None:
    """Show or save a search with the plot that fits it: a cartesian plot for one parameter, a heatmap for two
    parameters and one result, a parallel-coordinate plot otherwise.

    Args:
        search: A Search, or the path of its saved JSON file.
        title: The figure title.
        ignore_keys: Parameter / result keys to leave out.
        save_path: None to show the figure; a directory (gets `<title>.html`), a file stem (gets '.html'), an '.html'
            file, or an image file.
        verbose: Print where the figure was saved.
        **kwargs: Passed to the chosen plot: `groups` (cartesian) or `color_by` (parallel coordinates); an argument
            the chosen plot does not take is ignored.
    """
    kind = choose_visualization(search, ignore_keys)
    common = {"title": title, "ignore_keys": ignore_keys, "save_path": save_path, "verbose": verbose}
    if kind == "cartesian":
        visualize_cartesian(search, groups=kwargs.get("groups"), **common)
    elif kind == "heatmap":
        visualize_heatmap(search, **common)
    else:
        visualize_parallel_coordinates(search, color_by=kwargs.get("color_by"), **common)
