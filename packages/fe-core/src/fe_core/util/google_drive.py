"""`download_file_from_google_drive`: fetch a public Google Drive file, passing the "can't scan for viruses" page.

Google Drive answers large files with an HTML page asking to confirm the download; the confirmation (a form with
hidden fields, a `confirm=` link, or a `download_warning` cookie) is read from that page and followed. The transfer
itself goes through `fe_core.util.downloads.download` (atomic, resumable). The service's address can be overridden
with the `FE_GOOGLE_DRIVE_URL` environment variable (a URL to which `&id=<file_id>` is appended), e.g. for a mirror
or a test server.
"""
from __future__ import annotations

import html
import http.cookiejar
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, Optional, Tuple

from fe_core.export import fe_export
from fe_core.util.downloads import DownloadError, download, place_hint

__all__ = ["download_file_from_google_drive", "GOOGLE_DRIVE_URL"]

GOOGLE_DRIVE_URL = "https://drive.google.com/uc?export=download"
_FORM = re.compile(r"<form[^>]*id=\"download-form\"[^>]*action=\"([^\"]+)\"[^>]*>(.*?)</form>", re.S | re.I)
_HIDDEN = re.compile(r"<input[^>]*type=\"hidden\"[^>]*name=\"([^\"]+)\"[^>]*value=\"([^\"]*)\"", re.I)
_CONFIRM_LINK = re.compile(r"href=\"(/[^\"]*confirm=[^\"]+)\"", re.I)


def _service_url(file_id: str) -> str:
    base = os.environ.get("FE_GOOGLE_DRIVE_URL", GOOGLE_DRIVE_URL)
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}id={urllib.parse.quote(file_id)}"


def _confirmation(page: str, page_url: str, cookies: http.cookiejar.CookieJar) -> Optional[str]:
    """The URL that confirms the download, read from Drive's warning page (None when there is none)."""
    form = _FORM.search(page)
    if form:
        fields = {name: html.unescape(value) for name, value in _HIDDEN.findall(form.group(2))}
        action = urllib.parse.urljoin(page_url, html.unescape(form.group(1)))
        return action + ("&" if "?" in action else "?") + urllib.parse.urlencode(fields)
    link = _CONFIRM_LINK.search(page)
    if link:
        return urllib.parse.urljoin(page_url, html.unescape(link.group(1)))
    for cookie in cookies:
        if cookie.name.startswith("download_warning"):
            return page_url + f"&confirm={urllib.parse.quote(cookie.value)}"
    return None


def _probe(url: str, opener: urllib.request.OpenerDirector) -> Tuple[bool, str, str]:
    """(is the answer the file itself, the final URL, the HTML page when it is not)."""
    with opener.open(url, timeout=60) as response:
        content_type = response.headers.get("Content-Type", "")
        final_url = response.geturl()
        if "text/html" not in content_type.lower():
            return True, final_url, ""
        return False, final_url, response.read(1 << 20).decode("utf-8", errors="replace")


@fe_export("fe.util.google_download_util.download_file_from_google_drive")
def download_file_from_google_drive(file_id: str, destination: str, max_retries: int = 3) -> None:
    """Download a file from its public Google Drive file id, retrying up to `max_retries` times.

    Example:
        >>> download_file_from_google_drive("1AbC...", "/data/archive.zip")  # doctest: +SKIP

    Args:
        file_id: File ID of Google drive URL.
        destination: Destination path where the data needs to be stored.
        max_retries: Max number of attempts.

    Raises:
        DownloadError: If the file cannot be downloaded after `max_retries` attempts (offline, not shared publicly,
            or Drive's download quota exceeded).
    """
    attempts = max(1, int(max_retries))
    last_error: Optional[BaseException] = None
    for _ in range(attempts):
        cookies = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
        url = _service_url(file_id)
        try:
            is_file, final_url, page = _probe(url, opener)
            if not is_file:
                confirm_url = _confirmation(page, final_url, cookies)
                if confirm_url is None:
                    raise DownloadError(f"Google Drive did not serve file {file_id!r}: it answered with a page that "
                                        "has no download link (is the file shared publicly, or is its download "
                                        "quota exceeded?)")
                is_file, final_url, page = _probe(confirm_url, opener)
                if not is_file:
                    raise DownloadError(f"Google Drive did not serve file {file_id!r} after confirming the download "
                                        "(download quota exceeded?)")
            headers: Dict[str, str] = {}
            cookie_header = "; ".join(f"{cookie.name}={cookie.value}" for cookie in cookies)
            if cookie_header:
                headers["Cookie"] = cookie_header
            download(final_url, destination, progress=False, overwrite=True, retries=0, headers=headers)
            return
        except (urllib.error.URLError, OSError) as error:  # DownloadError is an OSError (ConnectionError)
            last_error = error
    reason = str(last_error.reason if isinstance(last_error, urllib.error.URLError) else last_error)
    hint = "" if place_hint(destination) in reason else f". {place_hint(destination)}"
    raise DownloadError(f"Could not download Google Drive file {file_id!r} ({_service_url(file_id)}) to {destination} "
                        f"after {attempts} attempt(s): {reason.rstrip('.')}{hint}") from last_error
