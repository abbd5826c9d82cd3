"""`GridDisplay` (the trace): several BatchDisplay columns side by side in one figure."""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Union

from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.io.batch_display import BatchDisplay, DisplayTrace

__all__ = ["GridDisplay"]


@fe_export("fe.trace.io.grid_display.GridDisplay", "fe.trace.io.GridDisplay")
class GridDisplay(DisplayTrace):
    """A Trace to display of grid of images.

    Args:
        columns: A list of BatchDisplay traces to be combined into a grid. Their batch_limit, frequency, save_dir,
            mode, and ds_id arguments will be ignored in favor of the ones provided to the GridDisplay.
        batch_limit: A limit on the number of batch elements to display.
        frequency: 'batch', 'epoch', integer, or strings like '10s', '15e'. An integer n, or 'ns', draws every n
            training steps; 'ne' every n epochs (the first batch of the epoch). In eval/test/infer the first batch of
            each epoch is drawn. You can use None to default to matching the log printing frequency.
        save_dir: A directory into which to save images rather than displaying them. The file names will be formatted
            as <title>_<mode>_<epoch>_<batch_idx>.html
        title: The title prefix to use if save_dir is specified.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".

    Raises:
        ValueError: If `columns` is empty or holds something other than BatchDisplay traces.
    """

    def __init__(self,
                 columns: Sequence[BatchDisplay],
                 batch_limit: Optional[int] = None,
                 frequency: Union[None, int, str] = None,
                 save_dir: Optional[str] = None,
                 title: str = "grid",
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        columns = list(columns)
        if not columns or not all(isinstance(column, BatchDisplay) for column in columns):
            raise ValueError(f"GridDisplay columns must be BatchDisplay traces, got {columns!r}")
        self.columns: List[BatchDisplay] = columns
        keys = list(dict.fromkeys(key for column in columns for key in column.inputs))
        super().__init__(inputs=keys, frequency=frequency, save_dir=save_dir, title=title, batch_limit=batch_limit,
                         mode=mode, ds_id=ds_id)

    def on_begin(self, data: Data) -> None:
        super().on_begin(data)
        for column in self.columns:
            column.system = self.system

    def make_image(self, data: Data, batch_limit: Optional[int] = None) -> Any:
        """The grid of this batch: a `fe.util.GridDisplay` of each column's `make_image`.

        Args:
            data: The batch.
            batch_limit: Draw at most this many elements.

        Returns:
            The display (call `.show()` or `.show(save_path=...)` on it).
        """
        from fe_core.util.display import GridDisplay as GridFigure  # pylint: disable=import-outside-toplevel
        for column in self.columns:
            if getattr(column, "system", None) is None and getattr(self, "system", None) is not None:
                column.system = self.system
        return GridFigure([column.make_image(data, batch_limit) for column in self.columns])
