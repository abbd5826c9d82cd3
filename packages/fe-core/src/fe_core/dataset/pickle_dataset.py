"""`PickleDataset`: one sample per row of a pickled pandas DataFrame."""
from __future__ import annotations

import os

from fe_core.dataset.dataset import InMemoryDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["PickleDataset"]


@fe_export("fe.dataset.pickle_dataset.PickleDataset", "fe.dataset.PickleDataset")
class PickleDataset(InMemoryDataset):
    """A dataset from a pickle file.

    PickleDataset reads entries from pickled pandas data-frames (`pandas.read_pickle`), one sample per row. The root
    directory of the pickle file may be accessed using `dataset.parent_path`. This may be useful if the file contains
    relative path information that you want to feed into, say, an image reading op. Needs pandas
    (the `table` extra of fe-core).

    Warning:
        Loading a pickle runs code stored in the file: only open pickle files you created yourself or that come from
        a source you trust (fe's own loaders, such as `fe.dataset.data.svhn`, write theirs locally). Prefer
        `CSVDataset` for data from elsewhere.

    Args:
        file_path: The (absolute) path to the pickle file.

    Raises:
        TypeError: If the file does not hold a pandas DataFrame.
    """

    def __init__(self, file_path: str) -> None:
        pandas = import_optional("pandas", extra="table", feature="PickleDataset")
        frame = pandas.read_pickle(file_path)
        if not isinstance(frame, pandas.DataFrame):
            raise TypeError(f"PickleDataset({file_path!r}) expects a pickled pandas DataFrame, found "
                            f"{type(frame).__name__}")
        self.parent_path = os.path.dirname(os.path.abspath(file_path))
        super().__init__(frame.reset_index(drop=True).to_dict(orient="index"))
