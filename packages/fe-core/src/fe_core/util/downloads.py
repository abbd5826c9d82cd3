"""`download`: fetch a URL to a file over the standard library, atomically, resumably, with an optional checksum.

This is the one downloader of fe (the dataset loaders and `download_file_from_google_drive` build on it):

- the bytes go to a temporary sibling (`<destination>.part`) which is renamed over the destination only once it is
  complete and verified (`os.replace`), so a crash or a dropped connection never leaves a truncated file under the
  final name;
- an interrupted download resumes from the `.part` file with an HTTP Range request when the server supports it (and
  starts over when it does not);
- `checksum` (hex digest, `algorithm` sha256 by default, or 'md5', 'sha1', ...) is verified before the rename; a
  mismatch deletes the partial file and raises `ChecksumError`;
- no network (or an unreachable host) raises `DownloadError` with one line naming the URL, the reason, and where to
  place a copy of the file obtained another way.

Example:
    >>> path = download("https://example.com/data.zip", "/tmp/data", progress=False)  # doctest: +SKIP
    >>> path  # doctest: +SKIP
    '/tmp/data/data.zip'
"""
from __future__ import annotations

import hashlib
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Callable, Dict, Optional, Union

from fe_core.export import fe_export
from fe_core.util.download_progress import bar_custom

__all__ = ["download", "file_digest", "place_hint", "DownloadError", "ChecksumError", "ProgressCallback"]

ProgressCallback = Callable[[int, int], None]  #: called with (bytes so far, total bytes or -1 when unknown)

_CHUNK = 1 << 20
_USER_AGENT = "fe-downloader/1.0 (+https://github.com/fastestimator/fastestimator)"


class DownloadError(ConnectionError):
    """A download failed: no network, an unreachable host, an HTTP error or a connection dropped for good."""


class ChecksumError(ValueError):
    """A downloaded file's digest is not the expected one (the partial file has been removed)."""


def file_digest(path: str, algorithm: str = "sha256") -> str:
    """The hex digest of a file's contents.

    Args:
        path: The file to hash.
        algorithm: Any `hashlib` algorithm name ('sha256', 'md5', 'sha1', ...).

    Returns:
        The lower-case hex digest.
    """
    digest = hashlib.new(algorithm)
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_name_from_url(url: str) -> str:
    name = os.path.basename(urllib.parse.urlparse(url).path)
    return urllib.parse.unquote(name) or "download"


def _resolve_destination(url: str, destination: str) -> str:
    if os.path.isdir(destination) or destination.endswith(("/", os.sep)):
        return os.path.join(destination, _file_name_from_url(url))
    return destination


def _text_progress(stream=None) -> ProgressCallback:
    """A progress callback that redraws one line of `bar_custom` on `stream` (stdout by default)."""

    def report(done: int, total: int) -> None:
        out = stream or sys.stdout
        out.write("\r" + bar_custom(done, total, width=80))
        if 0 < total <= done:
            out.write("\n")
        out.flush()

    return report


def _tqdm_progress(name: str) -> Optional[ProgressCallback]:
    """A progress callback drawing a tqdm bar (the `data` extra), or None when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    state: Dict[str, object] = {}

    def report(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=total if total > 0 else None, initial=done, unit="B", unit_scale=True,
                                      unit_divisor=1024, desc=name, leave=True)
        bar.update(done - bar.n)
        if 0 < total <= done:
            bar.close()

    return report


def _progress_callback(progress: Union[bool, ProgressCallback, None], name: str) -> Optional[ProgressCallback]:
    if progress is True:
        return _tqdm_progress(name) or _text_progress()
    if progress is False or progress is None:
        return None
    if not callable(progress):
        raise TypeError(f"download: progress must be a bool or a callable(done, total), got {progress!r}")
    return progress


def _open(url: str, start: int, timeout: float, headers: Optional[Dict[str, str]]):
    request_headers = {"User-Agent": _USER_AGENT}
    request_headers.update(headers or {})
    if start:
        request_headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=request_headers)
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (callers choose the URL)


def _total_size(response, start: int, resumed: bool) -> int:
    length = response.headers.get("Content-Length")
    if length is None or not length.isdigit():
        return -1
    return int(length) + (start if resumed else 0)


def _fetch(url: str, part: str, timeout: float, headers: Optional[Dict[str, str]], resume: bool,
           report: Optional[ProgressCallback], chunk_size: int) -> None:
    """Write the body of `url` into `part`, appending to what an earlier attempt left there when possible."""
    start = os.path.getsize(part) if resume and os.path.exists(part) else 0
    try:
        response = _open(url, start, timeout, headers)
    except urllib.error.HTTPError as error:
        if error.code == 416 and start:  # the range starts at or past the end: the part file is stale; start over
            os.remove(part)
            return _fetch(url, part, timeout, headers, False, report, chunk_size)
        raise
    with response:
        resumed = start > 0 and getattr(response, "status", 200) == 206
        total = _total_size(response, start, resumed)
        done = start if resumed else 0
        with open(part, "ab" if resumed else "wb") as stream:
            if report is not None:
                report(done, total)
            while True:
                block = response.read(chunk_size)
                if not block:
                    break
                stream.write(block)
                done += len(block)
                if report is not None:
                    report(done, total)
            stream.flush()
            os.fsync(stream.fileno())
    if total >= 0 and done < total:
        raise DownloadError(f"Download of {url} ended after {done} of {total} bytes (connection dropped); "
                            f"call again to resume from {part}")
    return None


@fe_export("fe.util.wget_util.download")
def download(url: str,
             destination: str,
             progress: Union[bool, ProgressCallback, None] = True,
             checksum: Optional[str] = None,
             algorithm: str = "sha256",
             overwrite: bool = False,
             resume: bool = True,
             retries: int = 2,
             timeout: float = 60.0,
             headers: Optional[Dict[str, str]] = None,
             chunk_size: int = _CHUNK) -> str:
    """Download `url` to `destination` atomically (temporary sibling + `os.replace`), resuming partial downloads.

    Args:
        url: An http(s), ftp or file URL.
        destination: The target file path, or an existing directory (or a path ending in '/') to save into under the
            URL's file name. Missing parent directories are created.
        progress: True draws a progress bar (tqdm's when tqdm is installed, else a one-line text bar on stdout),
            False/None draws nothing, or a callable `(bytes_so_far, total_bytes_or_-1)` receives the progress.
        checksum: The expected hex digest of the file (case-insensitive), or None to skip verification.
        algorithm: The `hashlib` algorithm of `checksum`.
        overwrite: Whether to download again when the destination exists. When False, an existing file is kept (and
            verified against `checksum` when one is given: a mismatching file is downloaded again).
        resume: Whether to continue a previous attempt's `.part` file with an HTTP Range request.
        retries: How many more attempts to make after a connection error or a checksum mismatch.
        timeout: Seconds to wait for the server on each connection attempt or read.
        headers: Extra HTTP request headers.
        chunk_size: Bytes read per block (and per progress report).

    Returns:
        The path of the downloaded file.

    Raises:
        DownloadError: When the URL cannot be fetched (offline, unknown host, HTTP error) after all attempts.
        ChecksumError: When the downloaded bytes do not match `checksum` after all attempts.
    """
    path = _resolve_destination(url, destination)
    expected = checksum.lower() if checksum else None
    if os.path.exists(path) and not overwrite:
        if expected is None or file_digest(path, algorithm) == expected:
            return path
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    part = path + ".part"
    report = _progress_callback(progress, os.path.basename(path))
    attempts = max(0, int(retries)) + 1
    last_error: Optional[BaseException] = None
    for attempt in range(attempts):
        try:
            _fetch(url, part, timeout, headers, resume, report, chunk_size)
        except urllib.error.HTTPError as error:
            # a client error (404, 403) will not go away by retrying
            last_error = error
            if 400 <= error.code < 500 and error.code not in (408, 429):
                break
            continue
        except (urllib.error.URLError, OSError, DownloadError) as error:
            last_error = error
            continue
        if expected is not None:
            actual = file_digest(part, algorithm)
            if actual != expected:
                os.remove(part)
                last_error = ChecksumError(f"Downloaded {url} to {path} but its {algorithm} is {actual}, expected "
                                           f"{expected} (the file was removed)")
                continue
        os.replace(part, path)
        return path
    if isinstance(last_error, ChecksumError):
        raise last_error
    raise DownloadError(f"Could not download {url} to {path} after {attempt + 1} attempt(s): "
                        f"{_describe(last_error)}. {place_hint(path)}") from last_error


def place_hint(path: str) -> str:
    """What a download error says to do without network: put a copy of the file where the download would have."""
    return f"To use a copy obtained another way, place the file at {path} and run again"


def _describe(error: Optional[BaseException]) -> str:
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return f"{error.reason} (is this machine offline, or the host unreachable?)"
    return str(error) or type(error).__name__
