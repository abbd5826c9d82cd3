"""`DirDataset`: one sample per file found under a directory (the sample holds the file's path)."""
from __future__ import annotations

import os
from typing import List, Optional

from fe_core.dataset.dataset import InMemoryDataset
from fe_core.export import fe_export

__all__ = ["DirDataset", "DatasetDirectoryError", "list_files"]


class DatasetDirectoryError(FileNotFoundError, AssertionError):
    """A dataset directory is missing. A FileNotFoundError, and an AssertionError as FastEstimator raises."""


def list_files(root_dir: str, file_extension: Optional[str] = None, recursive_search: bool = True) -> List[str]:
    """The files under `root_dir`, sorted by path, skipping hidden files (names starting with '.').

    Paths are `os.path.join(os.path.normpath(root_dir), ...)`, as FastEstimator builds them, so sorting (and hence
    seeded splits) matches FastEstimator's.

    Args:
        root_dir: The directory to search.
        file_extension: Keep only files whose names end with this, e.g. '.png'.
        recursive_search: Whether to descend into subdirectories.

    Returns:
        The sorted file paths.

    Raises:
        DatasetDirectoryError: If `root_dir` is not a directory.
    """
    root_dir = os.path.normpath(root_dir)
    if not os.path.isdir(root_dir):
        raise DatasetDirectoryError(f"Dataset directory {root_dir!r} does not exist or is not a directory")
    found = []
    for folder, _, files in os.walk(root_dir):
        found.extend(os.path.join(folder, name) for name in files
                     if not name.startswith(".") and (file_extension is None or name.endswith(file_extension)))
        if not recursive_search:
            break
    return sorted(found)


@fe_export("fe.dataset.dir_dataset.DirDataset", "fe.dataset.DirDataset")
class DirDataset(InMemoryDataset):
    """A dataset which reads files from a folder hierarchy like root/data.file.

    Each sample is `{data_key: <file path>}` (files in sorted order); read the file with an op (ReadImage, ...).

    Args:
        root_dir: The path to the directory containing data.
        data_key: What key to assign to the data values in the data dictionary.
        file_extension: If provided then only files ending with the file_extension will be included.
        recursive_search: Whether to search within subdirectories for files.

    Raises:
        DatasetDirectoryError: (a FileNotFoundError and AssertionError) If `root_dir` is not a directory.
    """

    def __init__(self,
                 root_dir: str,
                 data_key: str = "x",
                 file_extension: Optional[str] = None,
                 recursive_search: bool = True) -> None:
        self.root_path = os.path.abspath(root_dir)
        files = list_files(root_dir, file_extension, recursive_search)
        super().__init__({index: {data_key: path} for index, path in enumerate(files)})
