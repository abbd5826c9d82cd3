"""A tiny HTTP server on 127.0.0.1 for the download tests: serves byte strings, honours Range, can misbehave."""
from __future__ import annotations

import http.server
import threading
from typing import Dict, Iterator, Optional, Tuple

import contextlib

__all__ = ["serve", "Routes"]


class Routes:
    """What the server answers: path -> (body, content type), plus switches to simulate failures."""

    def __init__(self) -> None:
        self.files: Dict[str, Tuple[bytes, str]] = {}
        self.headers: Dict[str, Dict[str, str]] = {}
        self.truncate_once: Dict[str, int] = {}  # path -> bytes to send before dropping the connection (once)
        self.no_range = False
        self.requests: list = []  # (path, Range header or None)
        self.redirects: Dict[str, str] = {}
        self.errors: Dict[str, int] = {}  # path -> the HTTP error status it always answers


def _handler(routes: Routes):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output clean
            return

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path
            routes.requests.append((path, self.headers.get("Range")))
            base = path.split("?")[0]
            if base in routes.errors:
                self.send_error(routes.errors[base], "failing on purpose")
                return
            if path in routes.redirects or base in routes.redirects:
                self.send_response(302)
                self.send_header("Location", routes.redirects.get(path, routes.redirects.get(base)))
                self.end_headers()
                return
            entry = routes.files.get(path) or routes.files.get(base)
            if entry is None:
                self.send_error(404, "not here")
                return
            body, content_type = entry
            start = 0
            range_header = self.headers.get("Range")
            if range_header and not routes.no_range:
                start = int(range_header.split("=")[1].split("-")[0])
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body) - start))
            for key, value in routes.headers.get(base, {}).items():
                self.send_header(key, value)
            self.end_headers()
            cut: Optional[int] = routes.truncate_once.pop(base, None)
            if cut is not None:
                self.wfile.write(body[start:start + cut])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body[start:])

    return Handler


@contextlib.contextmanager
def serve(routes: Routes) -> Iterator[str]:
    """Run the server in a thread for the `with` block; yields its base URL (http://127.0.0.1:PORT)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(routes))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
