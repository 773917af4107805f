"""`doc-scraper mcp-server` as a subprocess, driven over stdio by the SDK's client.

The crawl engine is replaced through the documented test hook
(``DOC_SCRAPER_MCP_TEST_CRAWL``) by ``fake_crawl`` below, so this checks the
protocol, the job machinery and error handling without any network. The
end-to-end test with the real engine is ``test_mcp_e2e.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from doc_scraper import __version__
from doc_scraper.models import CrawlProgress, CrawlSummary

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.types import CallToolResult

    from doc_scraper.config.schema import Config

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


async def fake_crawl(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
) -> list[CrawlSummary]:
    """Loaded inside the server process: "slow" crawls until stopped, other sites finish at once."""
    key = site_keys[0]
    assert stop is not None
    assert progress is not None
    if key == "slow":
        done = 0
        while not stop.is_set():
            done += 1
            progress(CrawlProgress(site_key=key, pages_done=done, pages_queued=100))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=0.05)
        return [CrawlSummary(site_key=key, ok=False, mode=mode, pages=done, interrupted=True)]
    progress(CrawlProgress(site_key=key, pages_done=5, pages_queued=0))
    return [CrawlSummary(site_key=key, ok=True, mode=mode, pages=5, added=5)]


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


def server_client(config: Path, errlog: TextIO, *, fake: bool) -> Client:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("DOC_SCRAPER_MCP_TEST_CRAWL", None)
    if fake:
        env["DOC_SCRAPER_MCP_TEST_CRAWL"] = f"{Path(__file__).resolve()}:fake_crawl"
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
    assert result.structured_content is not None
    return result.structured_content


async def wait_for_job(client: Client, job_id: str, *, limit_s: float = 60) -> dict[str, Any]:
    async with asyncio.timeout(limit_s):
        while True:
            status = await ok(client, "get_job_status", job_id=job_id)
            if status["status"] not in ("pending", "running"):
                return status
            await asyncio.sleep(0.1)


@pytest.mark.e2e
async def test_the_stdio_server_speaks_mcp_runs_jobs_and_survives_a_restart(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"docs": "http://127.0.0.1:9/docs/index.html", "slow": "http://127.0.0.1:9/slow/0.html"}
    )
    stderr_path = tmp_path / "server-stderr.log"
    with stderr_path.open("w") as errlog:
        async with server_client(config, errlog, fake=True) as client:
            info = client.server_info
            assert info is not None
            assert (info.name, info.version) == ("doc-scraper", __version__)
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOL_NAMES
            assert tools["search_docs"].input_schema["properties"]["limit"]["maximum"] == 50
            assert tools["read_page"].output_schema is not None

            # a quick job runs to completion in the background
            started = await ok(client, "crawl_site", site_key="docs", incremental=True)
            assert started["status"] == "started"
            assert started["mode"] == "incremental"
            done = await wait_for_job(client, started["job_id"])
            assert done["status"] == "completed"
            assert done["pages_processed"] == 5

            # a slow one keeps running while other calls are answered, then is cancelled
            slow = await ok(client, "crawl_site", site_key="slow")
            running = await ok(client, "get_job_status", job_id=slow["job_id"])
            assert running["status"] in ("pending", "running")
            sites = await ok(client, "list_sites")
            assert {s["key"]: s.get("status") for s in sites["sites"]}["slow"] == "running"
            cancelled = await ok(client, "cancel_crawl", job_id=slow["job_id"])
            assert cancelled["cancelled"]
            assert cancelled["status"] == "cancelled"

            # nothing indexed (the fake crawl writes nothing): the error says what to do
            result = await client.call_tool("search_docs", {"query": "retries"})
            assert result.is_error
            assert "crawl_site" in text_of(result)
            result = await client.call_tool("list_pages", {"site_key": "docs", "max_results": 0})
            assert result.is_error
            assert "max_results" in text_of(result)

        # a new server process remembers the jobs
        async with server_client(config, errlog, fake=True) as client:
            desc = await ok(client, "describe_server")
            statuses = {j["job_id"]: j["status"] for j in desc["recent_jobs"]}
            assert statuses == {started["job_id"]: "completed", slow["job_id"]: "cancelled"}

    saved = json.loads((tmp_path / "state" / "mcp_jobs.json").read_text())
    assert {j["status"] for j in saved["jobs"]} == {"completed", "cancelled"}
    log = stderr_path.read_text()
    assert "mcp.started" in log
    assert "job.finished" in log
