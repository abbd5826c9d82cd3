"""What every data set loader shares: the cache directory, downloading (with a progress bar), and safe extraction.

- Cache: `root_dir/<folder>` when a loader gets `root_dir`, else `$FE_DATA_DIR/<folder>` when that environment
  variable is set, else FastEstimator's default `~/fastestimator_data/<folder>`.
- Downloads go through `fe_core.util.downloads.download`: a temporary `.part` sibling renamed into place only once
  complete and verified (checksum when known), resumed with HTTP Range after an interruption, retried, and a one-line
  `DownloadError` naming the URL when offline. A tqdm bar shows progress when tqdm is installed (else a text bar).
  A verified file gets a `<file>.verified` stamp (digest, size, mtime) so later loads skip re-hashing it.
- `FE_DATA_MIRROR=http://host:port/prefix` fetches every file from that server instead (same path as on the original
  host), for air-gapped machines with a local copy and for tests.
- Archives are extracted into a temporary folder inside the cache and moved into place with `os.replace`, so a
  crash mid-extraction never leaves a half-filled data folder behind; members that would land outside the folder
  (absolute paths, '..') are refused.
"""
from __future__ import annotations

import os
import shutil
import sys
import tarfile
import urllib.parse
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Optional

from fe_core.util.downloads import ChecksumError, DownloadError, download

__all__ = ["data_dir", "fetch", "fetch_google_drive", "extract", "fetch_and_extract", "mirror_url", "DATA_DIR_ENV",
           "MIRROR_ENV", "DownloadError", "ChecksumError"]

DATA_DIR_ENV = "FE_DATA_DIR"
MIRROR_ENV = "FE_DATA_MIRROR"


def data_dir(root_dir: Optional[str], folder: str) -> str:
    """The (created) directory a loader keeps its files in.

    Args:
        root_dir: The user's `root_dir` argument (None: `$FE_DATA_DIR`, else `~/fastestimator_data`).
        folder: The data set's own sub-folder ('MNIST', 'CIFAR10', ...).

    Returns:
        The absolute directory path.
    """
    if root_dir is None:
        root_dir = os.environ.get(DATA_DIR_ENV) or os.path.join(str(Path.home()), "fastestimator_data")
    path = os.path.join(os.path.abspath(os.path.expanduser(root_dir)), folder)
    os.makedirs(path, exist_ok=True)
    return path


def mirror_url(url: str) -> str:
    """`url`, redirected to `$FE_DATA_MIRROR` (keeping its path and query) when that variable is set.

    Example:
        >>> os.environ[MIRROR_ENV] = "http://127.0.0.1:8000/cache"
        >>> mirror_url("https://example.org/data/a.zip?dl=1")
        'http://127.0.0.1:8000/cache/data/a.zip?dl=1'
        >>> del os.environ[MIRROR_ENV]
    """
    mirror = os.environ.get(MIRROR_ENV)
    if not mirror:
        return url
    parts = urllib.parse.urlsplit(url)
    suffix = parts.path + (f"?{parts.query}" if parts.query else "")
    return mirror.rstrip("/") + suffix


def _progress(label: str) -> Callable[[int, int], None]:
    """A tqdm progress callback when tqdm is installed, else fe's one-line text bar."""
    try:
        from tqdm import tqdm
    except ImportError:
        from fe_core.util.downloads import _text_progress
        return _text_progress()
    state = {"bar": None}

    def report(done: int, total: int) -> None:
        bar = state["bar"]
        if bar is None:
            bar = state["bar"] = tqdm(total=total if total > 0 else None, initial=done, unit="B", unit_scale=True,
                                      desc=label, file=sys.stdout, leave=True)
        bar.update(done - bar.n)
        if 0 < total <= done:
            bar.close()

    return report


def fetch(url: str, directory: str, file_name: Optional[str] = None, checksum: Optional[str] = None,
          algorithm: str = "md5", progress: bool = True) -> str:
    """Download `url` into `directory` unless it is already there (and matches `checksum`).

    Args:
        url: The original source URL (redirected by `$FE_DATA_MIRROR` when set).
        directory: Where to save it.
        file_name: The file name (default: the URL's).
        checksum: The expected hex digest, if known.
        algorithm: The digest algorithm of `checksum`.
        progress: Whether to show a progress bar.

    Returns:
        The file's path.

    Raises:
        DownloadError: When the file cannot be downloaded (offline, host unreachable, HTTP error).
        ChecksumError: When the downloaded bytes do not match `checksum`.
    """
    name = file_name or urllib.parse.unquote(os.path.basename(urllib.parse.urlsplit(url).path))
    destination = os.path.join(directory, name)
    if os.path.exists(destination) and (checksum is None or _verified(destination, checksum, algorithm)):
        return destination
    source = mirror_url(url)
    if not os.path.exists(destination):
        print(f"Downloading {name} to {directory}")
    try:
        path = download(source, destination, progress=_progress(name) if progress else False, checksum=checksum,
                        algorithm=algorithm)
    except DownloadError as error:
        if source == url:
            raise
        # name the file's own URL too: the mirror's copy is what could not be fetched
        raise DownloadError(f"{error} (the {MIRROR_ENV} copy of {url})") from error
    if checksum is not None:
        _record_verified(path, checksum, algorithm)
    return path


def _stamp(path: str, checksum: str, algorithm: str) -> str:
    info = os.stat(path)
    return f"{algorithm}:{checksum.lower()}:{info.st_size}:{info.st_mtime_ns}"


def _verified(path: str, checksum: str, algorithm: str) -> bool:
    """Whether `path` was verified against `checksum` and has not changed since (saves re-hashing big files)."""
    try:
        with open(path + ".verified", encoding="utf-8") as stream:
            return stream.read().strip() == _stamp(path, checksum, algorithm)
    except OSError:
        return False


def _record_verified(path: str, checksum: str, algorithm: str) -> None:
    stamp = path + ".verified"
    with open(stamp + ".tmp", "w", encoding="utf-8") as stream:
        stream.write(_stamp(path, checksum, algorithm))
    os.replace(stamp + ".tmp", stamp)


def fetch_google_drive(file_id: str, destination: str) -> str:
    """Download a publicly shared Google Drive file (through `fe_core.util.google_drive`, which passes Drive's
    virus-scan page), unless `destination` exists. With `$FE_DATA_MIRROR` set, the file is fetched from the mirror as
    `<mirror>/uc?export=download&id=<file_id>` instead.

    Args:
        file_id: The Drive file id.
        destination: The file path to write.

    Returns:
        `destination`.
    """
    if os.path.exists(destination):
        return destination
    if os.environ.get(MIRROR_ENV):
        return fetch(f"https://drive.google.com/uc?export=download&id={file_id}", os.path.dirname(destination),
                     file_name=os.path.basename(destination))
    from fe_core.util.google_drive import download_file_from_google_drive
    print(f"Downloading {os.path.basename(destination)} to {os.path.dirname(destination)}")
    download_file_from_google_drive(file_id, destination)
    return destination


def _safe_target(root: str, name: str) -> str:
    target = os.path.realpath(os.path.join(root, name))
    if not (target == root or target.startswith(root + os.sep)):
        raise ValueError(f"Refusing to extract {name!r}: it would be written outside {root}")
    return target


def extract(archive: str, directory: str, members: Optional[Callable[[str], bool]] = None,
            expected: Iterable[str] = ()) -> None:
    """Extract a .zip, .tar, .tar.gz/.tgz archive into `directory`, atomically per top-level entry.

    The archive is unpacked into a temporary folder inside `directory`; then each top-level entry is moved into
    `directory` with `os.replace` (an existing entry of the same name is replaced).

    Args:
        archive: The archive path.
        directory: Where its contents go.
        members: Extract only member names for which this returns True (default: all).
        expected: Top-level names that must exist after extraction.

    Raises:
        ValueError: If a member would be written outside `directory`, or an expected entry is missing (the archive
            is then probably truncated or not the right file: delete it to download it again).
    """
    staging = os.path.join(directory, f".extract-{os.path.basename(archive)}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    root = os.path.realpath(staging)
    print(f"Extracting {os.path.basename(archive)}")
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as bundle:
                names = [name for name in bundle.namelist() if members is None or members(name)]
                for name in names:
                    _safe_target(root, name)
                bundle.extractall(staging, names)
        else:
            with tarfile.open(archive) as bundle:
                chosen = [member for member in bundle.getmembers() if members is None or members(member.name)]
                for member in chosen:
                    _safe_target(root, member.name)
                bundle.extractall(staging, chosen, filter="data")
        for entry in os.listdir(staging):
            target = os.path.join(directory, entry)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            os.replace(os.path.join(staging, entry), target)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as error:
        raise ValueError(f"Could not extract {archive}: {error} (the file may be truncated or corrupt: delete it to "
                         f"download it again)") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    missing = [name for name in expected if not os.path.exists(os.path.join(directory, name))]
    if missing:
        raise ValueError(f"{archive} did not contain {missing} (delete it to download it again)")


def fetch_and_extract(url: str, directory: str, expected: Iterable[str], file_name: Optional[str] = None,
                      checksum: Optional[str] = None, algorithm: str = "md5",
                      members: Optional[Callable[[str], bool]] = None) -> str:
    """Download an archive (unless present) and extract it (unless every `expected` entry already exists).

    An archive that cannot be extracted (truncated or corrupt, e.g. left by an older tool) is deleted and downloaded
    once more before giving up.

    Args:
        url: The archive's source URL.
        directory: The data set's directory.
        expected: Top-level entries the archive creates (their presence means "already extracted").
        file_name: The archive's file name (default: the URL's).
        checksum: The archive's expected hex digest, if known.
        algorithm: The digest algorithm.
        members: Extract only member names for which this returns True.

    Returns:
        The archive's path.
    """
    expected = list(expected)
    name = file_name or urllib.parse.unquote(os.path.basename(urllib.parse.urlsplit(url).path))
    archive = os.path.join(directory, name)
    if expected and all(os.path.exists(os.path.join(directory, entry)) for entry in expected):
        return archive
    for attempt in range(2):
        archive = fetch(url, directory, file_name=name, checksum=checksum, algorithm=algorithm)
        try:
            extract(archive, directory, members=members, expected=expected)
            return archive
        except ValueError:
            if attempt:
                raise
            print(f"{name} could not be extracted; downloading it again")
            os.remove(archive)
    return archive
