"""`SearchData`: a search's evaluations as columns (parameters and results), ready to plot; and figure output."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from fe_core.containers import to_set
from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.search.search import Search, read_search_state

__all__ = ["SearchData", "show_or_save", "plotly_graph_objects", "as_figure_fe"]


def plotly_graph_objects(feature: str) -> Any:
    """`plotly.graph_objects`, or a one-line error naming the `plot` extra."""
    return import_optional("plotly.graph_objects", extra="plot", feature=feature)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@fe_export("fe.search.visualize.vis_util.SearchData")
class SearchData:
    """The evaluations of a search as columns: `params` and `results` name the keys, `data[key]` holds the values.

    Keys whose values are not all numbers (strings, lists, None) are categorical: `to_category` gives each value's
    label, and `categories[key]` lists the labels in order of appearance.

    Args:
        search: A Search, or the path of a JSON file it saved.
        ignore_keys: Parameter or result keys to leave out ('search_idx' is always left out).

    Raises:
        ValueError: If the search has no evaluations, or nothing is left after `ignore_keys`.
    """

    def __init__(self, search: Union[Search, str], ignore_keys: Union[None, str, Sequence[str]] = None) -> None:
        if isinstance(search, (str, os.PathLike)):
            state = read_search_state(os.fspath(search))
            summary = state["search_summary"]
            self.title = str(state.get("name") or os.path.splitext(os.path.basename(os.fspath(search)))[0])
            self.optimize_field: Optional[str] = state.get("optimize_field")
        else:
            summary = search.get_search_summary()
            self.title = search.name
            self.optimize_field = search.optimize_field
        if not summary:
            raise ValueError(f"Search {self.title!r} has no evaluations to visualize")
        ignored = to_set(ignore_keys) | {"search_idx"}
        self.params: List[str] = []
        self.results: List[str] = []
        for entry in summary:
            for key in entry["param"]:
                if key not in ignored and key not in self.params:
                    self.params.append(key)
            for key in entry["result"]:
                if key not in ignored and key not in self.results:
                    self.results.append(key)
        if not self.params and not self.results:
            raise ValueError(f"Nothing to visualize in search {self.title!r} after ignoring {sorted(ignored)}")
        self.data: Dict[str, List[Any]] = {}
        for key in self.params:
            self.data[key] = [entry["param"].get(key) for entry in summary]
        for key in self.results:
            self.data[key] = [entry["result"].get(key) for entry in summary]
        self.categories: Dict[str, List[str]] = {}
        for key, values in self.data.items():
            if not all(_is_number(value) for value in values):
                labels: List[str] = []
                for value in values:
                    label = str(value)
                    if label not in labels:
                        labels.append(label)
                self.categories[key] = labels

    def to_category(self, key: str, val: Any) -> Optional[str]:
        """The category label of `val` for a categorical `key`, or None when `key` is numeric."""
        if key not in self.categories:
            return None
        return str(val)

    def numeric(self, key: str) -> List[float]:
        """The values of `key` as numbers (a categorical key's values as their category's index)."""
        if key in self.categories:
            labels = self.categories[key]
            return [float(labels.index(str(value))) for value in self.data[key]]
        return [float(value) for value in self.data[key]]


def as_figure_fe(figure: Any) -> Any:
    """`figure` as fe's `FigureFE` (a plotly Figure whose `show(save_path)` saves HTML, JSON or images)."""
    from fe_core.util.figure import FigureFE  # pylint: disable=import-outside-toplevel
    return figure if isinstance(figure, FigureFE) else FigureFE.from_figure(figure)


def show_or_save(figure: Any, save_path: Optional[str], verbose: bool, default_name: str) -> Optional[str]:
    """Show a figure (save_path None) or save it with `FigureFE.show`: an existing directory (or a path ending in '/')
    gets `<default_name>.html` (every plot kind works as interactive HTML); a path without an extension is a file stem
    and gets '.html' (`save_path="out/search"` writes `out/search.html`, as FastEstimator does); otherwise the
    extension picks the format (.html, .json, or a static image such as .png, drawn by kaleido or fe's matplotlib
    renderer, which covers cartesian plots and heatmaps).

    Returns:
        The file written, or None when the figure was shown.
    """
    figure = as_figure_fe(figure)
    if save_path is None:
        figure.show()
        return None
    path = os.path.expanduser(os.fspath(save_path))
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        path = os.path.join(path, f"{default_name}.html")
    elif not os.path.splitext(path)[1]:
        path = f"{path}.html"
    figure.show(save_path=path, verbose=verbose)
    return path
