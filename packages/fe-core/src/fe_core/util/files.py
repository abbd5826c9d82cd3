"""Finding data files: `list_files` in a directory tree, `is_valid_file` to skip hidden files."""
from __future__ import annotations

import os
from typing import List, Optional

from fe_core.export import fe_export

__all__ = ["list_files", "is_valid_file"]


@fe_export("fe.util.util.is_valid_file", "fe.util.is_valid_file")
def is_valid_file(file_path: str) -> bool:
    """Validate whether a path is a regular, non-hidden file (hidden files such as '.DS_Store' are not data).

    Example:
        >>> is_valid_file(__file__), is_valid_file("/no/such/file.png")
        (True, False)

    Args:
        file_path: Location of the input file.

    Returns:
        Whether the file is valid.
    """
    return not os.path.basename(file_path).startswith(".") and os.path.isfile(file_path)


@fe_export("fe.util.base_util.list_files", "fe.util.list_files")
def list_files(root_dir: str, file_extension: Optional[str] = None, recursive_search: bool = True) -> List[str]:
    """Get the paths of all files in a particular root directory subject to a particular file extension.

    Hidden files (names starting with '.') are skipped, and so are hidden directories. The result is sorted (by
    directory, then file name) so it is the same on every machine.

    Example:
        >>> list_files("/data/mnist", file_extension=".png")  # doctest: +SKIP
        ['/data/mnist/0/img1.png', '/data/mnist/1/img7.png']

    Args:
        root_dir: The path to the directory containing data.
        file_extension: If provided then only files ending with the file_extension will be included.
        recursive_search: Whether to search within subdirectories for files.

    Returns:
        A list of file paths found within the directory.

    Raises:
        AssertionError: If the provided path isn't a directory.
        ValueError: If the directory has an invalid structure (it cannot be read).
    """
    if not os.path.isdir(root_dir):
        raise AssertionError(f"list_files: {root_dir!r} is not a directory")
    paths: List[str] = []

    def fail(error: OSError) -> None:
        raise ValueError(f"list_files: invalid directory structure at {root_dir!r}: {error}") from error

    for root, dirs, files in os.walk(root_dir, onerror=fail):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            if file_extension is not None and not name.endswith(file_extension):
                continue
            paths.append(os.path.join(root, name))
        if not recursive_search:
            break
    return paths
