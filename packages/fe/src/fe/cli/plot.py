"""`fe plot`: draw the results of a saved hyperparameter search (the JSON file `Search.save` writes).

    fe plot SEARCH.json [--draw cartesian|heatmap|parallel] [--title T] [--ignore KEY ...] [--color_by KEY]
            [-G KEY KEY ...] [--save [DIR_OR_FILE] | --display]

Without --draw the best-fitting plot is chosen (`visualize_search`). Saving writes an interactive HTML page (a path
ending in .png / .svg / .pdf writes an image, which needs plotly's kaleido package).
"""
from __future__ import annotations

import argparse
import os
from typing import Any, Dict, List, Union

from fe.cli.errors import CLIError

__all__ = ["search", "configure_plot_parser"]


def search(args: Union[argparse.Namespace, Dict[str, Any]], unknown: List[str]) -> int:
    """Run `fe plot`: draw a saved search.

    Raises:
        CLIError: If there are unknown arguments, the file is missing or not a search, or the plot does not fit it.
    """
    if unknown:
        raise CLIError(f"unrecognized arguments: {' '.join(unknown)}")
    options = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    path = options["search_path"]
    if not os.path.isfile(path):
        raise CLIError(f"no such search file: {path!r}")
    from fe_core.search.visualize import (visualize_cartesian, visualize_heatmap,  # pylint: disable=C0415
                                          visualize_parallel_coordinates, visualize_search)
    draw = options.get("draw")
    function = {"cartesian": visualize_cartesian, "heatmap": visualize_heatmap,
                "parallel": visualize_parallel_coordinates}.get(draw, visualize_search)
    save = options.get("save")
    save_path = None if save is False else (save if isinstance(save, str) else os.path.dirname(os.path.abspath(path)))
    kwargs: Dict[str, Any] = {"search": path, "title": options.get("title"), "ignore_keys": options.get("ignore"),
                              "save_path": save_path}
    if options.get("color_by") and draw in (None, "parallel"):
        kwargs["color_by"] = options["color_by"]
    if options.get("group") and draw in (None, "cartesian"):
        kwargs["groups"] = options["group"]
    try:
        function(**kwargs)
    except (ValueError, ImportError) as error:
        raise CLIError(str(error)) from error
    return 0


def configure_plot_parser(subparsers: Any) -> None:
    """Add the `plot` command to `subparsers`."""
    parser = subparsers.add_parser("plot", help="draw a saved hyperparameter search",
                                   description="Draw the results of a search saved as JSON (Search.save / "
                                   "Search.fit(save_dir=...)).", allow_abbrev=False)
    parser.add_argument("search_path", metavar="SEARCH_JSON", help="the JSON file of a saved search")
    parser.add_argument("--ignore", metavar="KEY", nargs="+", help="parameters or results to leave out")
    parser.add_argument("--title", metavar="T", default=None, help="the plot title")
    parser.add_argument("--draw", choices=["cartesian", "heatmap", "parallel"], default=None,
                        help="force a kind of plot (default: the one that fits the search)")
    parser.add_argument("--color_by", metavar="KEY", default=None, help="the key coloring parallel coordinates")
    parser.add_argument("-G", "--group", action="append", nargs="+", metavar="KEY",
                        help="results to draw on the same cartesian axes (repeatable)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--save", nargs="?", const=True, default=True, metavar="DIR_OR_FILE",
                        help="save the figure (default: an HTML file next to the search file)")
    output.add_argument("--display", dest="save", action="store_false", help="show the figure instead of saving it")
    parser.set_defaults(func=search)
