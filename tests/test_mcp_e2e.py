"""End to end: `doc-scraper mcp-server` with the real crawl engine, over stdio, on a loopback docs site.

The site is ``tests/fixtures/minisite`` (Sphinx-style pages) served by a
threaded ``http.server`` on 127.0.0.1 with ETags, so a second crawl can be
incremental. ``MiniSite.version = 2`` switches to the changed site (one page
edited, one added, one gone). Paths under ``/slow/`` answer slowly and link
to ever more pages: a crawl that only ends when cancelled.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from doc_scraper import __version__

if TYPE_CHECKING:
    from mcp.types import CallToolResult

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "minisite"
ROOT = Path(__file__).resolve().parent.parent
TOOL_NAMES = {
    "describe_server",
    "list_sites",
    "crawl_site",
    "get_job_status",
    "cancel_crawl",
    "list_pages",
    "read_page",
    "search_docs",
    "get_freshness",
    "diff_crawl",
    "get_page",
}


def write_config(tmp_path: Path, sites: dict[str, str], **extra: Any) -> Path:
    """A config with one loopback site per key (start URL given)."""
    data: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "output_base_dir": str(tmp_path / "out"),
        "shutdown_grace": "5s",
        "http_client_settings": {"allow_private_networks": True},
        "sites": {
            key: {
                "start_urls": [url],
                "allowed_domain": "127.0.0.1",
                "allowed_path_prefix": "/" + url.split("/", 3)[3].split("/")[0] + "/"
                if url.split("/", 3)[3].count("/")
                else "/",
            }
            for key, url in sites.items()
        },
        **extra,
    }
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(data, indent=1))  # JSON is YAML
    return path


def server_client(config: Path, errlog: TextIO) -> Client:
    """An SDK client that starts `python -m doc_scraper mcp-server -config CONFIG` and talks over stdio."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doc_scraper", "mcp-server", "-config", str(config)],
        env=env,
        cwd=str(ROOT),
    )
    # mode="legacy": the classic initialize handshake, as Claude Code, Cursor and Codex do it.
    return Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60)


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


async def wait_for_job(client: Client, job_id: str, *, limit_s: float = 60) -> dict[str, Any]:
    async with asyncio.timeout(limit_s):
        while True:
            status = await ok(client, "get_job_status", job_id=job_id)
            if status["status"] not in ("pending", "running"):
                return status
            await asyncio.sleep(0.1)


class MiniSite:
    """The fixture site on a loopback port; records every request."""

    def __init__(self, root: Path = FIXTURE) -> None:
        self.root = root
        self.version = 1
        self.slow_delay = 0.3
        self.requests: list[tuple[str, int]] = []  # (path, status)
        self._server: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> MiniSite:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.site = self  # type: ignore[attr-defined]
        threading.Thread(target=self._server.serve_forever, name="minisite", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def statuses(self, status: int) -> list[str]:
        return [path for path, code in self.requests if code == status]

    def respond(self, path: str, if_none_match: str | None) -> tuple[int, bytes, dict[str, str]]:
        if path.startswith("/slow/"):
            time.sleep(self.slow_delay)
            n = int(Path(path).stem) if Path(path).stem.isdigit() else 0
            children = range(3 * n + 1, 3 * n + 4)
            links = "".join(f'<li><a href="/slow/{m}.html">page {m}</a></li>' for m in children)
            body = (
                f"<html><head><title>Slow {n}</title></head><body><main><h1>Slow page {n}</h1>"
                f"<p>Generated page number {n} of an endless site.</p><ul>{links}</ul></main></body></html>"
            )
            return 200, body.encode(), {"Content-Type": "text/html; charset=utf-8"}
        if path.startswith("/private/"):
            body = "<html><head><title>Secret</title></head><body><main><p>secret</p></main></body></html>"
            return 200, body.encode(), {"Content-Type": "text/html; charset=utf-8"}
        name = path.lstrip("/") or "index.html"
        if ".." in name:
            return 404, b"not found", {"Content-Type": "text/plain"}
        if self.version == 2 and name == "faq.html":
            return 404, b"not found", {"Content-Type": "text/plain"}
        file = self.root / "v2" / name if self.version == 2 else None
        if file is None or not file.is_file():
            file = self.root / name
        if not file.is_file() or (file.parent.name == "v2" and self.version != 2):
            return 404, b"not found", {"Content-Type": "text/plain"}
        data = file.read_bytes()
        etag = '"' + hashlib.sha1(data).hexdigest() + '"'
        kind = "text/plain" if name.endswith(".txt") else "text/html; charset=utf-8"
        if if_none_match == etag:
            return 304, b"", {"ETag": etag}
        return 200, data, {"Content-Type": kind, "ETag": etag}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY every response stalls ~40 ms (Nagle + delayed ACK).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        site: MiniSite = self.server.site  # type: ignore[attr-defined]
        path = urlsplit(self.path).path
        status, body, headers = site.respond(path, self.headers.get("If-None-Match"))
        site.requests.append((path, status))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)


@pytest.fixture
def minisite() -> Any:
    site = MiniSite().start()
    yield site
    site.stop()


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.e2e
async def test_mcp_server_crawls_searches_reads_diffs_and_cancels_a_real_site(
    tmp_path: Path, minisite: MiniSite
) -> None:
    base = minisite.base
    config = write_config(
        tmp_path,
        {"minidoc": f"{base}/index.html", "slow": f"{base}/slow/0.html"},
        default_delay_per_host="0s",
        max_retries=0,
    )
    stderr_log = tmp_path / "server-stderr.log"
    with stderr_log.open("w") as errlog:
        async with server_client(config, errlog) as client:
            info = client.server_info
            assert info is not None
            assert (info.name, info.version) == ("doc-scraper", __version__)
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOL_NAMES
            limit = tools["search_docs"].input_schema["properties"]["limit"]
            assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == (
                "integer",
                1,
                50,
                10,
            )
            assert tools["read_page"].output_schema is not None

            # 1. first crawl, polled to completion
            job = await ok(client, "crawl_site", site_key="minidoc")
            first = await wait_for_job(client, job["job_id"])
            assert first["status"] == "completed", first
            assert first["summary"]["pages"] == 7, first

            # 2. search, list, read (with paging), freshness
            found = await ok(client, "search_docs", query="exponential backoff jitter", limit=5)
            assert found["results"][0]["url"] == f"{base}/retries.html", found
            scoped = await ok(client, "search_docs", query="connect_timeout", site_key="minidoc")
            assert scoped["results"][0]["url"] == f"{base}/configuration.html"
            pages = await ok(client, "list_pages", site_key="minidoc", max_results=4)
            assert pages["total"] == 7
            assert pages["returned"] == 4
            assert pages["next_offset"] == 4
            urls = [p["url"] for p in pages["pages"]]
            assert urls == sorted(urls)
            whole = await ok(
                client, "read_page", site_key="minidoc", url=f"{base}/api.html", max_bytes=1_048_576
            )
            assert not whole["truncated"]
            assert "日本語" in whole["content"]
            pieces, offset = [], 0
            while True:
                part = await ok(
                    client,
                    "read_page",
                    site_key="minidoc",
                    url=f"{base}/api.html",
                    max_bytes=700,
                    offset=offset,
                )
                pieces.append(part["content"])
                if not part["truncated"]:
                    break
                offset = part["next_offset"]
            assert len(pieces) > 2
            assert "".join(pieces) == whole["content"]
            fresh = await ok(client, "get_freshness", site_key="minidoc")
            assert fresh["last_crawl_status"] == "completed"
            assert fresh["indexed_pages"] == 7
            assert fresh["output_exists"]

            # 3. the site changes; an incremental crawl picks it up with conditional requests
            since = now_rfc3339()
            await asyncio.sleep(0.05)
            minisite.version = 2
            not_modified_before = len(minisite.statuses(304))
            job2 = await ok(client, "crawl_site", site_key="minidoc", incremental=True)
            second = await wait_for_job(client, job2["job_id"])
            assert second["status"] == "completed", second
            assert second["mode"] == "incremental"
            assert len(minisite.statuses(304)) > not_modified_before  # unchanged pages cost a 304
            assert second["summary"]["unchanged"] >= 3, second
            diff = await ok(client, "diff_crawl", site_key="minidoc", since=since)
            assert [e["url"] for e in diff["added"]] == [f"{base}/migration.html"], diff
            assert f"{base}/changelog.html" in [e["url"] for e in diff["changed"]], diff
            assert [e["url"] for e in diff["removed"]] == [f"{base}/faq.html"], diff
            assert diff["baseline_crawl"]["crawl_id"] != diff["current_crawl"]["crawl_id"]
            found = await ok(client, "search_docs", query="circuit breakers")
            assert found["results"][0]["url"] in (f"{base}/changelog.html", f"{base}/migration.html")

            # 4. live fetch through the guarded fetcher; robots.txt is obeyed
            live = await ok(client, "get_page", url=f"{base}/retries.html")
            assert "jitter" in live["content"]
            assert live["title"].startswith("Retries")
            refused = await client.call_tool("get_page", {"url": f"{base}/private/secret.html"})
            assert refused.is_error
            assert "robots.txt" in text_of(refused)

            # 5. a slow crawl is cancelled, and searching stays fast meanwhile
            slow = await ok(client, "crawl_site", site_key="slow")
            async with asyncio.timeout(30):
                while True:  # polling is how an MCP client follows a job
                    if (await ok(client, "get_job_status", job_id=slow["job_id"]))["pages_processed"] >= 2:
                        break
                    await asyncio.sleep(0.1)
            latencies = []
            for _ in range(20):
                t0 = time.perf_counter()
                await ok(client, "search_docs", query="retry policy jitter")
                latencies.append((time.perf_counter() - t0) * 1000)
            print(
                f"search_docs during a crawl: p50 {sorted(latencies)[10]:.1f} ms, max {max(latencies):.1f} ms"
            )  # measured, not asserted (timing lives in benchmarks)
            cancelled = await ok(client, "cancel_crawl", job_id=slow["job_id"])
            assert cancelled["cancelled"], cancelled
            final = await wait_for_job(client, slow["job_id"])
            assert final["status"] == "cancelled", final

            # 6. every tool answers bad arguments with a tool error
            bad_calls: list[tuple[str, dict[str, Any]]] = [
                ("describe_server", {"x": 1}),
                ("list_sites", {"x": 1}),
                ("crawl_site", {"site_key": "nope"}),
                ("get_job_status", {"job_id": "nope"}),
                ("cancel_crawl", {"job_id": "nope"}),
                ("list_pages", {"site_key": "minidoc", "offset": -5}),
                ("read_page", {"site_key": "minidoc", "url": f"{base}/nope.html"}),
                ("search_docs", {"query": "retries", "limit": 0}),
                ("get_freshness", {"site_key": "nope"}),
                ("diff_crawl", {"site_key": "minidoc", "since": "x"}),
                ("get_page", {"url": "not a url"}),
            ]
            for tool, arguments in bad_calls:
                result = await client.call_tool(tool, arguments)
                assert result.is_error, (tool, text_of(result))
            assert (await ok(client, "describe_server"))["total_jobs"] == 3

    # the protocol had stdout to itself: every log line went to stderr
    log = stderr_log.read_text()
    assert "mcp.started" in log
    assert "job.finished" in log
