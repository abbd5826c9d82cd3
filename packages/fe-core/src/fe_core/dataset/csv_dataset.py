"""`CSVDataset`: one sample per row of a CSV file (read with pandas, the `table` extra)."""
from __future__ import annotations

import inspect
import os
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from fe_core.dataset.dataset import InMemoryDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["CSVDataset", "filter_rows", "IncludeIfError"]

IncludeIf = Union[None, Dict[str, Union[Any, Iterable[Any]]], str, Callable[..., bool]]


class IncludeIfError(ValueError, TypeError):
    """An `include_if` of the wrong type: a ValueError, as FastEstimator raises, and a TypeError."""


class _MissingColumnError(KeyError, ValueError):
    """An `include_if` function asks for a column the CSV lacks: a KeyError, and the ValueError FastEstimator raises."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _accepted_values(accepted: Any) -> List[Any]:
    """A dict `include_if` value as the list of accepted cell values (None accepts cells that are None, as
    FastEstimator's `[None]`)."""
    if accepted is None:
        return [None]
    if isinstance(accepted, (list, tuple, set, frozenset)):
        return list(accepted)
    return [accepted]


def filter_rows(frame: Any, include_if: IncludeIf, where: str) -> Any:
    """Keep the rows of a pandas DataFrame that `include_if` accepts.

    Args:
        frame: The DataFrame.
        include_if: None (keep all); a dict {column: value or list of accepted values} (all must hold); a pandas
            query string ('type >= 1'); or a function whose parameter names are column names, returning a bool.
        where: Who asks, for error messages.

    Returns:
        The filtered DataFrame, re-indexed from 0.

    Raises:
        KeyError: If a dict key or function parameter is not a column (for a function also a ValueError, as
            FastEstimator raises).
        IncludeIfError: (a ValueError and a TypeError) If `include_if` has another type.
    """
    if include_if is None:
        return frame.reset_index(drop=True)
    if isinstance(include_if, dict):
        mask = None
        for column, accepted in include_if.items():
            if column not in frame.columns:
                raise KeyError(f"{where}: include_if column {column!r} is not in the CSV (columns: "
                               f"{list(frame.columns)})")
            condition = frame[column].isin(_accepted_values(accepted))
            mask = condition if mask is None else mask & condition
        return frame[mask].reset_index(drop=True) if mask is not None else frame.reset_index(drop=True)
    if isinstance(include_if, str):
        return frame.query(include_if).reset_index(drop=True)
    if callable(include_if):
        names = list(inspect.signature(include_if).parameters)
        missing = [name for name in names if name not in frame.columns]
        if missing:
            raise _MissingColumnError(f"{where}: include_if parameters {missing} are not CSV columns (columns: "
                                      f"{list(frame.columns)})")
        keep = [bool(include_if(*values)) for values in zip(*(frame[name] for name in names))]
        return frame[keep].reset_index(drop=True)
    raise IncludeIfError(f"{where}: include_if must be None, a dict, a query string or a function, got "
                         f"{type(include_if).__name__}")


def _fill_missing(frame: Any, fill_na: Any) -> Any:
    """`frame.fillna(fill_na)`; columns whose dtype cannot hold `fill_na` (a string in a float column) become object
    columns first, where newer pandas would warn or refuse."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return frame.fillna(fill_na)
        except (Warning, TypeError, ValueError):
            pass
    return frame.astype(object).where(frame.notna(), fill_na)


@fe_export("fe.dataset.csv_dataset.CSVDataset", "fe.dataset.CSVDataset")
class CSVDataset(InMemoryDataset):
    """A dataset from a CSV file.

    CSVDataset reads entries from a CSV file, where the first row is the header. The root directory of the csv file
    may be accessed using `dataset.parent_path`. This may be useful if the csv contains relative path information
    that you want to feed into, say, an image reading op. Needs pandas (the `table` extra of fe-core).

    Args:
        file_path: The (absolute) path to the CSV file.
        delimiter: What delimiter is used by the file.
        include_if: An optional filter specifying which rows should be included: a dict like
            {'mode': 'train', 'type': [0, 1, 2]} (rows whose 'mode' is 'train' AND whose 'type' is 0, 1 or 2), a pandas
            query string like 'type >= 1', or a function whose parameters are column names, returning whether to
            include the row (`include_if=lambda mode: mode in ['eval', 'test']`; flexible but slower).
        fill_na: A fill value if data is missing. By default ('pandas_default') pandas' NaNs are kept; None makes
            empty cells None (so that `include_if={"column": None}` keeps the rows whose cell is empty).
        kwargs: Other arguments to be passed through to `pandas.read_csv`.

    Example:
        >>> ds = CSVDataset("/data/labels.csv", include_if={"mode": "train"})  # doctest: +SKIP
        >>> ds[0]  # doctest: +SKIP
        {'image': 'img/0.png', 'label': 3, 'mode': 'train'}
    """

    def __init__(self,
                 file_path: str,
                 delimiter: str = ",",
                 include_if: IncludeIf = None,
                 fill_na: Optional[Any] = "pandas_default",
                 **kwargs: Any) -> None:
        pandas = import_optional("pandas", extra="table", feature="CSVDataset")
        frame = pandas.read_csv(file_path, delimiter=delimiter, **kwargs)
        if fill_na is None:  # empty cells become None, as in FastEstimator
            frame = frame.astype(object).where(frame.notna(), None)
        elif not (isinstance(fill_na, str) and fill_na == "pandas_default"):
            frame = _fill_missing(frame, fill_na)
        frame = filter_rows(frame, include_if, f"CSVDataset({file_path!r})")
        self.parent_path = os.path.dirname(os.path.abspath(file_path))
        super().__init__(frame.to_dict(orient="index"))
