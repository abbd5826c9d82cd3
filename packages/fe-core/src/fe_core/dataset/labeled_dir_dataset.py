"""`LabeledDirDataset`: files sorted into one folder per class (root/class/file), labelled by their folder."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, InMemoryDataset
from fe_core.dataset.dir_dataset import list_files
from fe_core.export import fe_export

__all__ = ["LabeledDirDataset", "class_files"]


def class_files(root_dir: str, file_extension: Optional[str], label_mapping: Optional[Dict[str, Any]], where: str
                ) -> Tuple[Dict[str, List[str]], Dict[str, Any]]:
    """The files of each class and the label of each class, as FastEstimator determines them.

    A class is every folder (its path relative to `root_dir`, e.g. 'cat' or 'animals/cat') that directly holds
    matching files; files directly in `root_dir` form the class ''. Without `label_mapping`, classes are numbered
    0, 1, ... in sorted order of their names.

    Returns:
        ({class name: sorted file paths}, {class name: label}).

    Raises:
        DatasetDirectoryError: If `root_dir` is not a directory.
        DatasetArgumentError: If `label_mapping` has no label for a class (a KeyError would hide that it is an
            argument problem; this is a ValueError and an AssertionError, as in FastEstimator).
    """
    root_dir = os.path.normpath(root_dir)
    classes: Dict[str, List[str]] = {}
    for path in list_files(root_dir, file_extension, recursive_search=True):
        name = os.path.relpath(os.path.dirname(path), root_dir)
        classes.setdefault("" if name == "." else name, []).append(path)
    mapping = dict(label_mapping) if label_mapping else {name: index for index, name in enumerate(sorted(classes))}
    missing = sorted(set(classes) - set(mapping))
    if missing:
        raise DatasetArgumentError(f"{where}: the label_mapping has no label for the class folders {missing}")
    return {name: classes[name] for name in sorted(classes)}, mapping


@fe_export("fe.dataset.labeled_dir_dataset.LabeledDirDataset", "fe.dataset.LabeledDirDataset")
class LabeledDirDataset(InMemoryDataset):
    """A dataset which reads files from a folder hierarchy like root/class(/es)/data.file.

    Each sample is `{data_key: <file path>, label_key: <label of its class folder>}`. A class is every folder that
    directly holds files (named by its path relative to `root_dir`, so root/animals/cat/x.png is class
    'animals/cat'); classes are numbered in sorted order of their names unless `label_mapping` is given.

    Args:
        root_dir: The path to the directory containing data sorted by folders.
        data_key: What key to assign to the data values in the data dictionary.
        label_key: What key to assign to the label values in the data dictionary.
        label_mapping: A dictionary defining the mapping to use. If not provided will map classes to int labels
            (0, 1, ... in sorted order of the class names).
        file_extension: If provided then only files ending with the file_extension will be included.

    Raises:
        DatasetDirectoryError: (a FileNotFoundError and AssertionError) If `root_dir` is not a directory.
        DatasetArgumentError: (a ValueError and AssertionError) If `label_mapping` lacks one of the classes.

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
        self.root_path = os.path.normpath(root_dir)
        classes, self.mapping = class_files(root_dir, file_extension, label_mapping, type(self).__name__)
        self.label_key = label_key
        data: Dict[int, Dict[str, Any]] = {}
        for name, paths in classes.items():
            label = self.mapping[name]
            for path in paths:
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
