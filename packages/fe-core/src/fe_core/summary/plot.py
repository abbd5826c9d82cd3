"""Drawing the history of one or more runs (`Summary` objects) with matplotlib.

matplotlib is optional: it is imported only inside the drawing functions, and its absence is reported as an
ImportError that says how to install it. fe-core does not depend on it.

One subplot per key; in each, one curve per (summary, mode): train as a solid line, eval dashed, test as markers,
one color per summary. `ValWithError` values are drawn as a line with a shaded band between their bounds. Keys whose
values are not scalars (confusion matrices) are skipped.
"""
from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from fe_core.summary.summary import Summary, ValWithError
from fe_core.export import fe_export

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["plot_logs", "plot_summaries", "visualize_logs", "plottable_keys"]

_MODE_ORDER = ("train", "eval", "test")
_MODE_STYLE = {"train": {"linestyle": "-"}, "eval": {"linestyle": "--"}, "test": {"linestyle": "", "marker": "o"}}
_ALWAYS_IGNORED = {"epoch"}  # the x axis is the step; the epoch is a bookkeeping value
_MISSING_MATPLOTLIB = ("Plotting logs needs matplotlib, which is not installed: pip install matplotlib "
                       "(it comes with the plot extra: pip install \"./packages/fe-core[plot]\" from a clone of fe)")


def _import_figure() -> Any:
    try:
        from matplotlib.figure import Figure  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError(_MISSING_MATPLOTLIB) from error
    return Figure


def _scalar(value: Any) -> Optional[Tuple[float, Optional[Tuple[float, float]]]]:
    """(value, (low, high) or None) for a plottable value, else None."""
    if isinstance(value, ValWithError):
        return float(value.y), (float(value.y_min), float(value.y_max))
    if isinstance(value, (bool, np.bool_)):
        return float(value), None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value), None
    if isinstance(value, np.ndarray) and value.size == 1 and np.issubdtype(value.dtype, np.number):
        return float(value.reshape(())), None
    return None


def _as_summaries(summaries: Union[Summary, Iterable[Summary]]) -> List[Summary]:
    result = [summaries] if isinstance(summaries, Summary) else list(summaries)
    if not result:
        raise ValueError("Nothing to plot: no summaries were given")
    for summary in result:
        if not isinstance(summary, Summary):
            raise TypeError(f"Expected Summary objects to plot, got {type(summary).__name__}")
    return result


@fe_export("fe.summary.logs.log_plot.plottable_keys", "fe.summary.plot.plottable_keys")
def plottable_keys(summaries: Union[Summary, Iterable[Summary]]) -> List[str]:
    """The keys that have at least one scalar value in any mode of any of the summaries, in order of appearance."""
    keys: Dict[str, None] = {}
    for summary in _as_summaries(summaries):
        for mode in _ordered_modes(summary):
            for key, steps in summary.history[mode].items():
                if key not in keys and any(_scalar(value) is not None for value in steps.values()):
                    keys[key] = None
    return list(keys)


def _ordered_modes(summary: Summary) -> List[str]:
    modes = list(summary.history)
    return [mode for mode in _MODE_ORDER if mode in modes] + [mode for mode in modes if mode not in _MODE_ORDER]


def _key_list(keys: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    """`keys` as a list: a string is one key (as FastEstimator takes `include_metrics="LeNet_lr"`), None stays None."""
    if keys is None:
        return None
    return [keys] if isinstance(keys, str) else list(keys)


def _select_keys(summaries: List[Summary], keys: Union[None, str, Iterable[str]],
                 ignore_keys: Union[None, str, Iterable[str]]) -> List[str]:
    available = plottable_keys(summaries)
    keys = _key_list(keys)
    ignored: Set[str] = set(_key_list(ignore_keys) or ()) | (_ALWAYS_IGNORED if keys is None else set())
    if keys is None:
        selected = [key for key in available if key not in ignored]
    else:
        wanted = keys
        missing = [key for key in wanted if key not in available]
        if missing:
            raise ValueError(f"No plottable values for key(s) {missing}; keys with values: {available}")
        selected = [key for key in wanted if key not in ignored]
    if not selected:
        raise ValueError(f"Nothing to plot: no key left to draw (keys with values: {available})")
    return selected


def _smooth(values: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian smoothing with reflected edges (sigma in points; 0 leaves the values as they are)."""
    if sigma <= 0 or len(values) < 3:
        return values
    radius = max(1, int(math.ceil(3 * sigma)))
    offsets = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (offsets / sigma)**2)
    kernel /= kernel.sum()
    padded = np.pad(values, radius, mode="reflect" if len(values) > radius else "edge")
    return np.convolve(padded, kernel, mode="valid")


def _curve_names(summaries: List[Summary]) -> List[str]:
    """Each summary's name for the legend ('run 2' when unnamed), made unique with '#n' where names repeat."""
    names = [str(summary.name) if summary.name is not None and summary.name != "" else f"run {index + 1}"
             for index, summary in enumerate(summaries)]
    return [f"{name} #{index + 1}" if names.count(name) > 1 else name for index, name in enumerate(names)]


def _pretty(key: str) -> str:
    return key.replace("_", " ").replace("|", " | ").strip().capitalize()


@fe_export("fe.summary.logs.log_plot.plot_logs", "fe.summary.logs.plot_logs", "fe.summary.plot.plot_logs")
def plot_logs(experiments: Union[Summary, Sequence[Summary]],
              smooth_factor: float = 0,
              ignore_metrics: Union[None, str, Iterable[str]] = None,
              pretty_names: bool = False,
              include_metrics: Union[None, str, Iterable[str]] = None,
              share_legend: bool = True) -> "Figure":
    """Draw the histories into a new figure (without pyplot, so no window and no global state).

    The result is FastEstimator's `FigureFE` (a plotly figure: `fig.show()` displays it in a notebook,
    `fig.show(save_path="history.html")` saves it) that is also the matplotlib Figure of the same drawing: its `axes`,
    `savefig`, ... are the matplotlib figure's (`fe_core.summary.log_figure`). Without plotly installed, it is the
    matplotlib Figure alone.

    Args:
        experiments: The Summary (or Summaries) to draw; their names label the curves when there are several.
        smooth_factor: Gaussian smoothing of train/eval curves, in steps of the curve (0: none).
        ignore_metrics: Keys not to draw (a string is one key).
        pretty_names: Title subplots 'Model lr' instead of 'model_lr'.
        include_metrics: Draw only these keys (a string is one key; None: every key with scalar values, except 'epoch').
        share_legend: One legend for the whole figure (True) or one per subplot (False).

    Returns:
        The figure (a `FigureFE` that is also a matplotlib figure).

    Raises:
        ImportError: If matplotlib is not installed (the message says how to install it).
        ValueError: If there is nothing to draw, or an included key has no values.
    """
    figure = _draw(experiments, _import_figure(), smooth_factor, share_legend, ignore_metrics, pretty_names,
                   include_metrics)
    try:
        from fe_core.summary.log_figure import to_log_figure  # pylint: disable=import-outside-toplevel
    except ImportError:  # no plotly: the matplotlib figure
        return figure
    return to_log_figure(figure)


def _draw(experiments: Union[Summary, Sequence[Summary]], figure_factory: Any, smooth_factor: float,
          share_legend: bool, ignore_metrics: Union[None, str, Iterable[str]], pretty_names: bool,
          include_metrics: Union[None, str, Iterable[str]]) -> "Figure":
    """Create a figure with `figure_factory(figsize=..., layout=...)` and draw the histories into it."""
    summaries = _as_summaries(experiments)
    keys = _select_keys(summaries, include_metrics, ignore_metrics)
    columns = min(len(keys), 3)
    rows = int(math.ceil(len(keys) / columns))
    figure = figure_factory(figsize=(5 * columns, 3.6 * rows + (0.5 if share_legend else 0)), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    colors = [f"C{index % 10}" for index in range(len(summaries))]
    names = _curve_names(summaries)
    legend: Dict[str, Any] = {}
    for index, key in enumerate(keys):
        axis = axes[index // columns][index % columns]
        axis.set_title(_pretty(key) if pretty_names else key)
        axis.set_xlabel("step")
        axis.grid(True, alpha=0.3)
        for summary, color, name in zip(summaries, colors, names):
            for mode in _ordered_modes(summary):
                points = sorted((step, _scalar(value)) for step, value in summary.history[mode].get(key, {}).items()
                                if _scalar(value) is not None)
                if not points:
                    continue
                steps = np.array([step for step, _ in points], dtype=float)
                values = np.array([point[0] for _, point in points])  # type: ignore[index]
                style = dict(_MODE_STYLE.get(mode, {"linestyle": ":"}))
                if len(points) == 1 and not style.get("marker"):
                    style["marker"] = "o"
                if mode != "test":
                    values = _smooth(values, smooth_factor)
                label = f"{name} ({mode})" if len(summaries) > 1 else mode
                (line,) = axis.plot(steps, values, color=color, label=label, **style)
                bounds = [point[1] for _, point in points]  # type: ignore[index]
                if all(bound is not None for bound in bounds):
                    low = np.array([bound[0] for bound in bounds])  # type: ignore[index]
                    high = np.array([bound[1] for bound in bounds])  # type: ignore[index]
                    if len(points) == 1:
                        axis.errorbar(steps, values, yerr=[values - low, high - values], color=color, capsize=4)
                    else:
                        axis.fill_between(steps, low, high, color=color, alpha=0.2)
                legend.setdefault(label, line)
        if not share_legend:
            axis.legend(fontsize="small")
    for index in range(len(keys), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    if share_legend and legend:
        figure.legend(list(legend.values()), list(legend.keys()), loc="outside lower center",
                      ncols=min(len(legend), 4), fontsize="small")
    return figure


@fe_export("fe.summary.logs.log_plot.plot_summaries",
           "fe.summary.logs.plot_summaries",
           "fe.summary.plot.plot_summaries")
def plot_summaries(summaries: Union[Summary, Sequence[Summary]],
                   save_path: str,
                   keys: Union[None, str, Iterable[str]] = None,
                   ignore_keys: Union[None, str, Iterable[str]] = None,
                   smooth_factor: float = 0,
                   share_legend: bool = True,
                   pretty_names: bool = False,
                   dpi: int = 100) -> str:
    """Draw the histories of runs into an image file (PNG, or any format matplotlib knows from the extension).

    Args:
        summaries: The Summary (or Summaries) to draw.
        save_path: The image file to write (its directory is created if needed).
        keys: Draw only these keys (a string is one key; None: every key with scalar values, except 'epoch').
        ignore_keys: Keys not to draw (a string is one key).
        smooth_factor: Gaussian smoothing of train/eval curves, in steps of the curve (0: none).
        share_legend: One legend for the whole figure (True) or one per subplot (False).
        pretty_names: Title subplots 'Model lr' instead of 'model_lr'.
        dpi: Resolution.

    Returns:
        `save_path`.

    Raises:
        ImportError: If matplotlib is not installed (the message says how to install it).
        ValueError: If there is nothing to draw, or a requested key has no values.

    Example:
        >>> # summary = estimator.fit("run"); plot_summaries(summary, "history.png")  # doctest: +SKIP
    """
    figure = plot_logs(summaries, smooth_factor=smooth_factor, share_legend=share_legend, ignore_metrics=ignore_keys,
                       pretty_names=pretty_names, include_metrics=keys)
    directory = os.path.dirname(os.path.abspath(save_path))
    os.makedirs(directory, exist_ok=True)
    figure.savefig(save_path, dpi=dpi)
    return save_path


@fe_export("fe.summary.logs.log_plot.visualize_logs",
           "fe.summary.logs.visualize_logs",
           "fe.summary.plot.visualize_logs")
def visualize_logs(experiments: Union[Summary, Sequence[Summary]],
                   save_path: Optional[str] = None,
                   smooth_factor: float = 0,
                   pretty_names: bool = False,
                   ignore_metrics: Union[None, str, Iterable[str]] = None,
                   include_metrics: Union[None, str, Iterable[str]] = None,
                   verbose: bool = True,
                   share_legend: bool = True) -> Optional[str]:
    """FastEstimator's `visualize_logs`: show the histories on screen, or save them.

    Args:
        experiments: The Summary (or Summaries) to draw.
        save_path: None to show the figure in a window (through pyplot); a directory to write `parse_logs.png` into
            it (as FastEstimator does); any other path is the image file to write.
        smooth_factor: Gaussian smoothing of train/eval curves (0: none).
        share_legend: One legend for the whole figure (True) or one per subplot (False).
        pretty_names: Clean up key names in subplot titles.
        ignore_metrics: Keys not to draw (a string is one key).
        include_metrics: Draw only these keys (a string is one key, as `include_metrics="LeNet_lr"`).
        verbose: Print where the image was saved.

    Returns:
        The image file written, or None when the figure was shown.
    """
    if save_path is None:
        try:
            from matplotlib import pyplot  # pylint: disable=import-outside-toplevel
        except ImportError as error:
            raise ImportError(_MISSING_MATPLOTLIB) from error
        _draw(experiments, pyplot.figure, smooth_factor, share_legend, ignore_metrics, pretty_names, include_metrics)
        pyplot.show()
        return None
    if os.path.isdir(save_path) or save_path.endswith(os.sep) or not os.path.splitext(save_path)[1]:
        save_path = os.path.join(save_path, "parse_logs.png")
    plot_summaries(experiments, save_path, keys=include_metrics, ignore_keys=ignore_metrics,
                   smooth_factor=smooth_factor, share_legend=share_legend, pretty_names=pretty_names)
    if verbose:
        print(f"Saving to {save_path}")
    return save_path
