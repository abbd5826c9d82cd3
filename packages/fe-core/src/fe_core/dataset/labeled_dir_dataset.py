"""`LabeledDirDataset`: files sorted into one folder per class (root/class/file), labelled by their folder."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from natsort import natsorted

from fe_core.dataset.dataset import DatasetSummary, InMemoryDataset
from fe_core.dataset.dir_dataset import list_files
from fe_core.export import fe_export

__all__ = ["LabeledDirDataset", "class_folders"]


def class_folders(root_dir: str, label_mapping: Optional[Dict[str, Any]], where: str
                  ) -> Tuple[List[str], Dict[str, Any]]:
    """The class folder names under `root_dir` (natural order) and the label of each.

    Raises:
        FileNotFoundError: If `root_dir` is not a directory.
        KeyError: If a folder has no entry in `label_mapping`.
    """
    if not os.path.isdir(root_dir):
        raise FileNotFoundError(f"{where}: directory {root_dir!r} does not exist or is not a directory")
    with os.scandir(root_dir) as entries:
        names = natsorted(entry.name for entry in entries if entry.is_dir() and not entry.name.startswith("."))
    if label_mapping is None:
        label_mapping = {name: index for index, name in enumerate(names)}
    else:
        missing = [name for name in names if name not in label_mapping]
        if missing:
            raise KeyError(f"{where}: label_mapping has no label for the class folders {missing}")
        names = [name for name in names if name in label_mapping]
    return names, dict(label_mapping)


@fe_export("fe.dataset.labeled_dir_dataset.LabeledDirDataset", "fe.dataset.LabeledDirDataset")
class LabeledDirDataset(InMemoryDataset):
    """A dataset which reads files from a folder hierarchy like root/class(/es)/data.file.

    Each sample is `{data_key: <absolute file path>, label_key: <label of its class folder>}`.

    Args:
        root_dir: The path to the directory containing data sorted by folders.
        data_key: What key to assign to the data values in the data dictionary.
        label_key: What key to assign to the label values in the data dictionary.
        label_mapping: A dictionary defining the mapping to use. If not provided will map classes to int labels
            (0, 1, ... in natural order of the folder names).
        file_extension: If provided then only files ending with the file_extension will be included.

    Raises:
        FileNotFoundError: If `root_dir` is not a directory.
        KeyError: If `label_mapping` lacks one of the class folders.

    Example:
        >>> ds = LabeledDirDataset("/data/flowers", file_extension=".jpg")  # doctest: +SKIP
        >>> ds[0]  # doctest: +SKIP
        {'x': '/data/flowers/daisy/1.jpg', 'y': 0}
    """

    def __init__(self,
                 root_dir: str,
                 data_key: str = "x",
                 label_key: str = "y",
                 label_mapping: Optional[Dict[str, Any]] = None,
                 file_extension: Optional[str] = None) -> None:
        self.root_path = os.path.abspath(root_dir)
        names, self.mapping = class_folders(root_dir, label_mapping, type(self).__name__)
        self.label_key = label_key
        data: Dict[int, Dict[str, Any]] = {}
        for name in names:
            label = self.mapping[name]
            for path in list_files(os.path.join(root_dir, name), file_extension, recursive_search=True):
                data[len(data)] = {data_key: path, label_key: label}
        super().__init__(data)

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset (with the class key, count and mapping).

        Returns:
            A summary representation of this dataset.
        """
        summary = super().summary()
        summary.class_key = self.label_key
        summary.class_key_mapping = self.mapping
        summary.num_classes = len(self.mapping)
        return summary
