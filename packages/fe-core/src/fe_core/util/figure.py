"""`FigureFE`: a plotly figure that shows itself in a notebook or saves itself as HTML, JSON or a static image.

Static images (png, jpg, webp, svg, pdf) are written by plotly's own exporter, kaleido, when it is installed and
works, and otherwise by fe's matplotlib renderer of plotly figures (`fe_core.util.figure_static`), which needs
nothing beyond the `plot` extra. `FE_FIGURE_EXPORT=kaleido|matplotlib` forces one; the default `auto` tries kaleido
first and, once it has failed in a process, uses matplotlib from then on.

What works offline (measured on Debian 12, plotly 7.1): kaleido 1.x is not enough on its own, it drives a
Chrome/Chromium browser, and its `plotly_get_chrome` downloads one from the internet (fails offline). With the
distribution's browser (`apt-get install chromium`), kaleido 1.5 exports offline, about 10 s per image on a small
shared VM (a browser start each time); the matplotlib renderer needs no browser and takes well under a second.

This module imports plotly when imported (it defines a plotly Figure subclass): import it only when a figure is made.
"""
from __future__ import annotations

import os
import re
from typing import Optional

from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.util.console import in_notebook

go = import_optional("plotly.graph_objects", extra="plot", feature="FigureFE")

__all__ = ["FigureFE", "STATIC_FORMATS", "save_static"]

STATIC_FORMATS = ("png", "jpg", "jpeg", "webp", "svg", "pdf")


_kaleido_state = {"usable": None}  # None: not tried yet; False once it failed here (not retried in this process)


def _kaleido_export(fig: "go.Figure", path: str, scale: int) -> bool:
    """Write `fig` with kaleido; False when kaleido is missing or cannot run here (no Chrome/Chromium)."""
    if _kaleido_state["usable"] is False:
        return False
    try:
        import kaleido  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        _kaleido_state["usable"] = False
        return False
    try:
        fig.write_image(path, scale=scale)
    except Exception:  # pylint: disable=broad-except  (kaleido raises many kinds when Chrome is unavailable)
        _kaleido_state["usable"] = False
        return False
    _kaleido_state["usable"] = os.path.exists(path)
    return bool(_kaleido_state["usable"])


def save_static(fig: "go.Figure", path: str, scale: int = 1) -> str:
    """Write `fig` to a static image file, with kaleido when it works here, else with matplotlib.

    Args:
        fig: Any plotly figure.
        path: The file to write; its extension picks the format (png, jpg, jpeg, webp, svg, pdf).
        scale: Resolution multiplier.

    Returns:
        The engine used: 'kaleido' or 'matplotlib'.

    Raises:
        ValueError: If `FE_FIGURE_EXPORT` names an unknown engine, or kaleido is forced but cannot export.
    """
    engine = os.environ.get("FE_FIGURE_EXPORT", "auto").lower()
    if engine not in ("auto", "kaleido", "matplotlib"):
        raise ValueError(f"FE_FIGURE_EXPORT must be 'auto', 'kaleido' or 'matplotlib', got {engine!r}")
    if engine in ("auto", "kaleido") and _kaleido_export(fig, path, scale):
        return "kaleido"
    if engine == "kaleido":
        raise ValueError(f"FE_FIGURE_EXPORT=kaleido but kaleido could not write {path} (is kaleido installed, with "
                         "a Chrome/Chromium it can start?)")
    from fe_core.util.figure_static import render_with_matplotlib  # pylint: disable=import-outside-toplevel
    render_with_matplotlib(fig, path, scale=scale)
    return "matplotlib"


def _default_file_name(fig: "go.Figure") -> str:
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else "figure"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", title).strip("_") + ".png"


@fe_export("fe.util.base_util.FigureFE")
class FigureFE(go.Figure):
    """A plotly Figure with a `show` that displays it, or saves it as HTML, JSON or a static image (PNG, ...).

    Example:
        >>> fig = FigureFE.from_figure(go.Figure(go.Heatmap(z=[[0, 1], [1, 0]])))
        >>> fig.show(save_path="/tmp/heat.png", verbose=False)  # doctest: +SKIP
    """

    @classmethod
    def from_figure(cls, fig: "go.Figure") -> "FigureFE":
        """Wrap an existing plotly figure (its data, layout and subplot grid).

        Args:
            fig: The plotly figure.

        Returns:
            A FigureFE with the same content.
        """
        return cls(fig)

    def show(self, save_path: Optional[str] = None, verbose: bool = True, scale: int = 1,
             interactive: bool = True, **kwargs) -> None:
        """Save or display the figure.

        Args:
            save_path: The path where the figure should be saved, or None to display the figure to the screen. The
                extension picks the format: .html (interactive, plotly.js embedded so it opens offline), .json, or a
                static image (.png, .jpg, .jpeg, .webp, .svg, .pdf). A directory (existing, or ending in '/') gets a
                PNG named after the figure's title. A path without an extension is a file stem: it gets '.html', as in
                FastEstimator.
            verbose: Whether to print out the save location.
            scale: A scaling factor to apply when exporting to static images (to increase resolution).
            interactive: Whether the figure should be interactive or static. This is only applicable when
                save_path is None and when running inside a jupyter notebook. The advantage is that the file size of
                the resulting jupyter notebook can be dramatically reduced.
            **kwargs: Passed to plotly's `Figure.show` when displaying.
        """
        if save_path is None:
            self._display(interactive, scale, **kwargs)
            return
        path = os.path.expanduser(save_path)
        if os.path.isdir(path) or path.endswith(("/", os.sep)):
            path = os.path.join(path, _default_file_name(self))
        root, extension = os.path.splitext(path)
        extension = extension.lower().lstrip(".")
        if not extension:  # a file stem: interactive HTML, as FastEstimator saves it
            extension, path = "html", root + ".html"
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        if verbose:
            print(f"Saving to {path}")
        if extension == "html":
            self.write_html(path, include_plotlyjs=True)
        elif extension == "json":
            self.write_json(path)
        elif extension in STATIC_FORMATS:
            save_static(self, path, scale=scale)
        else:
            raise ValueError(f"FigureFE.show: cannot save a figure as {extension!r} ({path}); use .html, .json or "
                             f"one of {list(STATIC_FORMATS)}")

    def _display(self, interactive: bool, scale: int, **kwargs) -> None:
        if in_notebook() and not interactive:
            import io  # pylint: disable=import-outside-toplevel
            import tempfile  # pylint: disable=import-outside-toplevel

            from IPython.display import Image, display  # pylint: disable=import-outside-toplevel,import-error
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "figure.png")
                save_static(self, path, scale=scale)
                with open(path, "rb") as stream:
                    display(Image(data=io.BytesIO(stream.read()).getvalue()))
            return
        go.Figure.show(self, **kwargs)
