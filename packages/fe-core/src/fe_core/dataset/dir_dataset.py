"""`DirDataset`: one sample per file found under a directory (the sample holds the file's path)."""
from __future__ import annotations

import os
from typing import List, Optional

from natsort import natsorted

from fe_core.dataset.dataset import InMemoryDataset
from fe_core.export import fe_export

__all__ = ["DirDataset", "list_files"]


def list_files(root_dir: str, file_extension: Optional[str] = None, recursive_search: bool = True) -> List[str]:
    """The files under `root_dir` in natural sort order, skipping hidden files and folders (names starting '.').

    Args:
        root_dir: The directory to search.
        file_extension: Keep only files whose names end with this (case-insensitive), e.g. '.png'.
        recursive_search: Whether to descend into subdirectories.

    Returns:
        The absolute file paths.

    Raises:
        FileNotFoundError: If `root_dir` is not a directory.
    """
    if not os.path.isdir(root_dir):
        raise FileNotFoundError(f"Dataset directory {root_dir!r} does not exist or is not a directory")
    ending = file_extension.lower() if file_extension else None
    found = []
    if recursive_search:
        for folder, subfolders, files in os.walk(root_dir):
            subfolders[:] = [name for name in subfolders if not name.startswith(".")]
            found.extend(os.path.join(folder, name) for name in files if not name.startswith(".")
                         and (ending is None or name.lower().endswith(ending)))
    else:
        with os.scandir(root_dir) as entries:
            found = [entry.path for entry in entries if entry.is_file() and not entry.name.startswith(".")
                     and (ending is None or entry.name.lower().endswith(ending))]
    return natsorted(os.path.abspath(path) for path in found)


@fe_export("fe.dataset.dir_dataset.DirDataset", "fe.dataset.DirDataset")
class DirDataset(InMemoryDataset):
    """A dataset which reads files from a folder hierarchy like root/data.file.

    Each sample is `{data_key: <absolute file path>}`; read the file with an op (an image reading op, for example).

    Args:
        root_dir: The path to the directory containing data.
        data_key: What key to assign to the data values in the data dictionary.
        file_extension: If provided then only files ending with the file_extension will be included.
        recursive_search: Whether to search within subdirectories for files.

    Raises:
        FileNotFoundError: If `root_dir` is not a directory.
    """

    def __init__(self,
                 root_dir: str,
                 data_key: str = "x",
                 file_extension: Optional[str] = None,
                 recursive_search: bool = True) -> None:
        self.root_path = os.path.abspath(root_dir)
        files = list_files(root_dir, file_extension, recursive_search)
        super().__init__({index: {data_key: path} for index, path in enumerate(files)})
