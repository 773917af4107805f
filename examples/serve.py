"""Serve a static folder on loopback: ETag/Last-Modified with 304s, robots.txt, sitemap.

Standard library only, so `make run` and the tests need nothing else:

    python examples/serve.py examples/mkdocs-site          # prints {"url": ...}

Also importable: ``with serve_folder(path) as base_url: ...``.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import http.server
import json
import socket
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    import os
    from collections.abc import Iterator


class _Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    robots = "User-agent: *\nDisallow:\n"
    counts: ClassVar[Counter[str]] = Counter()
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY every keep-alive response stalls ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        with self.lock:
            self.counts[path] += 1
        if path == "/robots.txt":
            self._send_bytes(self.robots.encode(), "text/plain")
            return
        fs_path = Path(self.translate_path(path))
        if fs_path.is_file():
            stat = fs_path.stat()
            etag = '"' + hashlib.sha1(f"{stat.st_mtime_ns}-{stat.st_size}".encode()).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.etag = etag
            self.last_modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        super().do_GET()

    def end_headers(self) -> None:
        etag = getattr(self, "etag", None)
        if etag:
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", self.last_modified)
            self.etag = None
        super().end_headers()

    def _send_bytes(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ServedSite(str):
    """The base URL of a served folder; ``.requests`` counts GETs per path."""

    requests: Counter[str]


@contextlib.contextmanager
def serve_folder(
    folder: str | os.PathLike[str], robots: str | None = None, port: int = 0
) -> Iterator[ServedSite]:
    """Serve ``folder`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    root = str(Path(folder).resolve())

    class Handler(_Handler):
        counts: ClassVar[Counter[str]] = Counter()

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=root, **kwargs)  # type: ignore[arg-type]

    if robots is not None:
        Handler.robots = robots
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        site = ServedSite(f"http://127.0.0.1:{server.server_address[1]}/")
        site.requests = Handler.counts
        yield site
    finally:
        server.shutdown()
        server.server_close()


def main() -> int:
    folder = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent / "mkdocs-site")
    with serve_folder(folder) as url:
        print(json.dumps({"url": url}), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
