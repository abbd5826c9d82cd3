"""fe.util downloads: `download` (atomic, resumable, verified), the wget-style progress bars, and Google Drive."""
from __future__ import annotations

import hashlib
import io
import os
from contextlib import redirect_stdout

import pytest

from fe_core.util.download_progress import bar_custom, callback_progress
from fe_core.util import downloads, google_drive
from fe_core.util.downloads import ChecksumError, DownloadError, download, file_digest
from fe_core.util.google_drive import download_file_from_google_drive
from util_http_server import Routes, serve

BODY = bytes(range(256)) * 40  # 10 KiB


@pytest.fixture()
def routes():
    routes = Routes()
    routes.files["/data/file.bin"] = (BODY, "application/octet-stream")
    return routes


def test_download_writes_the_bytes_and_reports_progress(tmp_path, routes):
    seen = []
    with serve(routes) as base:
        path = download(base + "/data/file.bin", str(tmp_path / "out.bin"), progress=lambda d, t: seen.append((d, t)),
                        chunk_size=4096)
    assert open(path, "rb").read() == BODY
    assert seen[0] == (0, len(BODY)) and seen[-1] == (len(BODY), len(BODY))
    assert not os.path.exists(path + ".part")


def test_download_into_a_directory_uses_the_url_file_name(tmp_path, routes):
    with serve(routes) as base:
        path = download(base + "/data/file.bin", str(tmp_path) + "/", progress=False)
    assert path == str(tmp_path / "file.bin") and os.path.getsize(path) == len(BODY)


def test_download_text_bar_goes_to_stdout_without_tqdm(tmp_path, routes, monkeypatch):
    monkeypatch.setattr(downloads, "_tqdm_progress", lambda name: None)
    out = io.StringIO()
    with serve(routes) as base, redirect_stdout(out):
        download(base + "/data/file.bin", str(tmp_path / "f"), progress=True)
    assert "0.01 / 0.01 MB" in out.getvalue() and out.getvalue().startswith("\r")


def test_download_uses_tqdm_when_installed(tmp_path, routes, capsys):
    pytest.importorskip("tqdm")  # part of the data extra, installed in every suite
    with serve(routes) as base:
        download(base + "/data/file.bin", str(tmp_path / "named.bin"), progress=True)
    err = capsys.readouterr().err
    assert "named.bin" in err and "100%" in err and "10.0k" in err


def test_download_verifies_checksum(tmp_path, routes):
    good = hashlib.sha256(BODY).hexdigest()
    with serve(routes) as base:
        path = download(base + "/data/file.bin", str(tmp_path / "a"), progress=False, checksum=good.upper())
        assert file_digest(path) == good
        with pytest.raises(ChecksumError, match="expected 00"):
            download(base + "/data/file.bin", str(tmp_path / "b"), progress=False, checksum="00" * 32, retries=1)
    assert not os.path.exists(tmp_path / "b") and not os.path.exists(str(tmp_path / "b") + ".part")
    assert len(routes.requests) == 3  # 1 good, then 2 attempts at the bad one


def test_existing_file_is_kept_unless_it_fails_the_checksum(tmp_path, routes):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with serve(routes) as base:
        download(base + "/data/file.bin", str(target), progress=False)
        assert target.read_bytes() == b"old" and routes.requests == []
        download(base + "/data/file.bin", str(target), progress=False, checksum=hashlib.md5(BODY).hexdigest(),
                 algorithm="md5")
        assert target.read_bytes() == BODY
        target.write_bytes(b"old")
        download(base + "/data/file.bin", str(target), progress=False, overwrite=True)
        assert target.read_bytes() == BODY


def test_dropped_connection_resumes_with_a_range_request(tmp_path, routes):
    routes.truncate_once["/data/file.bin"] = 3000
    with serve(routes) as base:
        path = download(base + "/data/file.bin", str(tmp_path / "f.bin"), progress=False)
    assert open(path, "rb").read() == BODY
    assert routes.requests[0][1] is None and routes.requests[1][1] == "bytes=3000-"


def test_partial_file_from_an_earlier_run_is_resumed_or_restarted(tmp_path, routes):
    part = tmp_path / "f.bin.part"
    part.write_bytes(BODY[:1000])
    with serve(routes) as base:
        download(base + "/data/file.bin", str(tmp_path / "f.bin"), progress=False)
        assert (tmp_path / "f.bin").read_bytes() == BODY and routes.requests[-1][1] == "bytes=1000-"
        routes.no_range = True  # a server without Range support: the download starts over, no duplicated bytes
        part = tmp_path / "g.bin.part"
        part.write_bytes(b"garbage")
        download(base + "/data/file.bin", str(tmp_path / "g.bin"), progress=False)
        assert (tmp_path / "g.bin").read_bytes() == BODY
        routes.no_range = False
        (tmp_path / "h.bin.part").write_bytes(BODY + b"extra")  # a stale part longer than the file: 416, restart
        download(base + "/data/file.bin", str(tmp_path / "h.bin"), progress=False)
        assert (tmp_path / "h.bin").read_bytes() == BODY
        assert routes.requests[-2][1] == f"bytes={len(BODY) + 5}-" and routes.requests[-1][1] is None


def test_http_errors_and_offline_raise_download_error(tmp_path, routes):
    with serve(routes) as base:
        with pytest.raises(DownloadError, match=r"HTTP 404.*") as info:
            download(base + "/missing.bin", str(tmp_path / "m"), progress=False, retries=3)
        assert len(routes.requests) == 1  # a 404 is not retried
        assert "/missing.bin" in str(info.value)
    # a port nobody listens on: connection refused
    with pytest.raises(DownloadError, match="offline"):
        download(base + "/data/file.bin", str(tmp_path / "n"), progress=False, retries=0, timeout=2)
    assert not os.path.exists(tmp_path / "n")


def test_bad_progress_argument():
    with pytest.raises(TypeError, match="progress"):
        download("http://127.0.0.1:1/x", "/tmp/never", progress="yes")


@pytest.mark.parametrize("current,total,width,expected", [
    (1_200_000, 2_400_000, 40, "[=========          ] 1.20 / 2.40 MB"),
    (1_200_000, 2_400_000, 16, "1.20 / 2.40 MB"),
    (1_200_000, 2_400_000, 8, "[==   ]"),
    (1_200_000, 2_400_000, 3, ""),
    (1_200_000, 0, 80, "1.20 MB / unknown"),
    (1_200_000, -1, 10, "1.20 MB"),
    (1_200_000, -1, 5, ""),
])
def test_bar_custom_layouts(current, total, width, expected):
    text = bar_custom(current, total, width)
    if width == 40:  # the bar's length depends on the room: check its shape and fill instead
        assert text.endswith("] 1.20 / 2.40 MB") and text.startswith("[")
        inner = text[1:text.index("]")]
        assert inner.count("=") == len(inner) // 2
    else:
        assert text == expected
    assert len(text) < width or text == ""
    assert "\r" not in text and "\n" not in text


def test_callback_progress_draws_on_stdout(monkeypatch):
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=None: os.terminal_size((30, 10)))
    calls = []

    def bar(current, total, width):
        calls.append((current, total, width))
        return f"{current}/{total}"

    out = io.StringIO()
    with redirect_stdout(out):
        callback_progress(0, 100, 250, bar)
        callback_progress(3, 100, 250, bar)  # 300 > total: clipped
        callback_progress(3, 100, -1, bar)
    assert calls == [(0, 250, 30), (250, 250, 30), (300, -1, 30)]
    assert out.getvalue() == "\r0/250\r250/250\r300/-1"


# ------------------------------------------------------------------------------------------------ Google Drive

WARNING_PAGE = b"""<html><body>Google Drive can't scan this file for viruses.
<form id="download-form" action="/download" method="get">
<input type="hidden" name="id" value="big"><input type="hidden" name="export" value="download">
<input type="hidden" name="confirm" value="t"><input type="hidden" name="uuid" value="u-1">
</form></body></html>"""


def test_google_drive_small_file_and_confirmed_large_file(tmp_path, routes, monkeypatch):
    routes.files["/uc?export=download&id=small"] = (b"small file", "application/octet-stream")
    routes.files["/uc?export=download&id=big"] = (WARNING_PAGE, "text/html; charset=utf-8")
    routes.files["/download?id=big&export=download&confirm=t&uuid=u-1"] = (BODY, "application/zip")
    with serve(routes) as base:
        monkeypatch.setenv("FE_GOOGLE_DRIVE_URL", base + "/uc?export=download")
        download_file_from_google_drive("small", str(tmp_path / "small.bin"))
        download_file_from_google_drive("big", str(tmp_path / "sub" / "big.zip"))
    assert (tmp_path / "small.bin").read_bytes() == b"small file"
    assert (tmp_path / "sub" / "big.zip").read_bytes() == BODY
    assert "/download?id=big&export=download&confirm=t&uuid=u-1" in [path for path, _ in routes.requests]


def test_google_drive_page_without_link_and_offline_raise(tmp_path, routes, monkeypatch):
    routes.files["/uc?export=download&id=private"] = (b"<html>Sign in</html>", "text/html")
    with serve(routes) as base:
        monkeypatch.setenv("FE_GOOGLE_DRIVE_URL", base + "/uc?export=download")
        with pytest.raises(DownloadError, match="shared publicly"):
            download_file_from_google_drive("private", str(tmp_path / "p"), max_retries=2)
    assert [path for path, _ in routes.requests].count("/uc?export=download&id=private") == 2
    monkeypatch.setenv("FE_GOOGLE_DRIVE_URL", base + "/uc?export=download")  # the server is gone now
    with pytest.raises(DownloadError, match="after 1 attempt"):
        download_file_from_google_drive("small", str(tmp_path / "q"), max_retries=1)
    assert not os.path.exists(tmp_path / "p") and not os.path.exists(tmp_path / "q")
    assert google_drive.GOOGLE_DRIVE_URL.startswith("https://drive.google.com/")
