"""The MCP tools in-process, through the SDK's client, over a real index and a fake crawl."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from doc_scraper import __version__
from doc_scraper.mcp_tools import TOOL_NAMES, DocScraperMCPServer, build_server
from tests.test_corpus import BASE, BETWEEN, _config, copy_index
from tests.test_jobs import FakeCrawl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from mcp.types import CallToolResult

READ_ONLY = {
    "describe_server",
    "list_sites",
    "get_job_status",
    "list_pages",
    "read_page",
    "search_docs",
    "get_freshness",
    "diff_crawl",
    "get_page",
}
OPEN_WORLD = {"crawl_site", "get_page"}


@pytest.fixture
def crawl() -> FakeCrawl:
    return FakeCrawl(pages=3)


@pytest.fixture
def server(tmp_path: Path, crawl: FakeCrawl) -> Iterator[DocScraperMCPServer]:
    # The client is opened inside each test: anyio scopes must open and close in one task.
    copy_index(tmp_path / "state")
    yield build_server(_config(tmp_path), crawl=crawl)
    crawl.release.set()


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    assert json.loads(_text(result)) == content  # the text twin carries the same JSON
    return content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {_text(result)}"
    return _text(result)


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_the_server_lists_eleven_typed_annotated_tools(server: DocScraperMCPServer) -> None:
    async with Client(server) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("doc-scraper", __version__)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == sorted(TOOL_NAMES)
        for name, tool in tools.items():
            assert tool.description, name
            assert len(tool.description) > 80, name
            assert tool.output_schema is not None, name
            assert tool.output_schema["type"] == "object", name
            hints = tool.annotations
            assert hints is not None, name
            assert hints.title, name
            assert hints.read_only_hint is (name in READ_ONLY), name
            assert hints.open_world_hint is (name in OPEN_WORLD), name
            assert hints.destructive_hint is False, name
        pages = tools["list_pages"].input_schema["properties"]
        assert pages["max_results"] == {
            **pages["max_results"],
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "default": 100,
        }
        assert pages["offset"]["minimum"] == 0
        assert pages["offset"]["default"] == 0
        assert pages["site_key"]["enum"] == ["docs", "other"]
        assert tools["list_pages"].input_schema["required"] == ["site_key"]
        read = tools["read_page"].input_schema["properties"]
        assert (read["max_bytes"]["default"], read["max_bytes"]["maximum"]) == (102400, 1048576)
        search = tools["search_docs"].input_schema["properties"]
        assert (search["limit"]["default"], search["limit"]["maximum"]) == (10, 50)
        assert search["query"]["maxLength"] == 1024
        assert tools["crawl_site"].input_schema["properties"]["incremental"] == {
            **tools["crawl_site"].input_schema["properties"]["incremental"],
            "type": "boolean",
            "default": False,
        }


async def test_describe_server_shows_sites_jobs_and_next_steps(
    tmp_path: Path, server: DocScraperMCPServer
) -> None:
    async with Client(server) as client:
        desc = await call(client, "describe_server")
        assert desc["server"]["name"] == "doc-scraper"
        assert desc["server"]["state_dir"] == str(tmp_path / "state")
        assert desc["total_sites"] == 2
        docs = next(s for s in desc["sites"] if s["key"] == "docs")
        assert docs["pages"] == 4
        assert docs["last_crawled"]
        assert any("crawl_site(site_key='other')" in a for a in desc["next_actions"])
        listing = await call(client, "list_sites")
        assert [s["key"] for s in listing["sites"]] == ["docs", "other"]


async def test_reading_tools_answer_from_the_index(server: DocScraperMCPServer) -> None:
    async with Client(server) as client:
        found = await call(client, "search_docs", query="exponential backoff", limit=3)
        assert found["results"][0]["url"] == f"{BASE}/retries.html"
        assert found["next_actions"]
        pages = await call(client, "list_pages", site_key="docs", max_results=2)
        assert pages["returned"] == 2
        assert pages["next_offset"] == 2
        page = await call(client, "read_page", site_key="docs", url=f"{BASE}/reference.html", max_bytes=500)
        assert page["truncated"]
        assert page["next_offset"] <= 500
        rest = await call(
            client,
            "read_page",
            site_key="docs",
            url=f"{BASE}/reference.html",
            offset=page["next_offset"],
            max_bytes=1_048_576,
        )
        assert not rest["truncated"]
        assert rest["offset"] == page["next_offset"]
        fresh = await call(client, "get_freshness", site_key="docs")
        assert fresh["last_crawl_status"] == "completed"
        assert "running_job" not in fresh
        diff = await call(client, "diff_crawl", site_key="docs", since=BETWEEN)
        assert len(diff["added"]) == len(diff["removed"]) == len(diff["changed"]) == 1


async def test_a_crawl_job_runs_in_the_background_and_reports_progress(
    server: DocScraperMCPServer, crawl: FakeCrawl
) -> None:
    async with Client(server) as client:
        started = await call(client, "crawl_site", site_key="docs", incremental=True)
        assert started["status"] == "started"
        assert started["mode"] == "incremental"
        assert started["incremental"]
        await crawl.running.wait()
        again = await call(client, "crawl_site", site_key="docs")
        assert again["status"] == "already_running"
        assert again["job_id"] == started["job_id"]
        status = await call(client, "get_job_status", job_id=started["job_id"])
        assert status["status"] == "running"
        assert status["pages_processed"] == 1
        assert status["pages_queued"] == 2
        fresh = await call(client, "get_freshness", site_key="docs")
        assert fresh["running_job"]["job_id"] == started["job_id"]
        # tool calls are answered while the job runs
        assert (await call(client, "search_docs", query="jitter"))["count"] >= 1
        crawl.release.set()
        for _ in range(200):
            status = await call(client, "get_job_status", job_id=started["job_id"])
            if status["status"] != "running":
                break
            await asyncio.sleep(0.01)
        assert status["status"] == "completed"
        assert status["pages_processed"] == 3
        assert status["summary"]["added"] == 3
        assert status["duration_seconds"] >= 0
        assert crawl.calls == [(["docs"], "incremental")]
        desc = await call(client, "describe_server")
        assert desc["recent_jobs"][0]["job_id"] == started["job_id"]


async def test_cancel_crawl_stops_the_job_and_points_to_resume(
    server: DocScraperMCPServer, crawl: FakeCrawl
) -> None:
    async with Client(server) as client:
        job = await call(client, "crawl_site", site_key="other")
        await crawl.running.wait()
        cancelled = await call(client, "cancel_crawl", job_id=job["job_id"])
        assert cancelled["cancelled"]
        assert cancelled["status"] == "cancelled"
        assert "resume" in cancelled["message"]
        again = await call(client, "cancel_crawl", job_id=job["job_id"])
        assert not again["cancelled"] or again["status"] == "cancelled"
        status = await call(client, "get_job_status", job_id=job["job_id"])
        assert status["status"] == "cancelled"
        assert any("resume=true" in a for a in status["next_actions"])
        resumed = await call(client, "crawl_site", site_key="other", resume=True)
        assert resumed["mode"] == "resume"


# every tool, called wrongly: each answer is a tool error a model can act on
BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("describe_server", {"verbose": True}, "unknown argument(s) verbose"),
    ("list_sites", {"site_key": "docs"}, "unknown argument(s) site_key"),
    ("crawl_site", {}, "site_key: Field required"),
    ("crawl_site", {"site_key": "nope"}, "configured sites: docs, other"),
    ("crawl_site", {"site_key": "docs", "incremental": True, "resume": True}, "not both"),
    ("crawl_site", {"site_key": "docs", "incremental": "maybe"}, "incremental"),
    ("get_job_status", {"job_id": "not-a-job"}, "unknown job_id 'not-a-job'"),
    ("get_job_status", {}, "job_id: Field required"),
    ("cancel_crawl", {"job_id": "not-a-job"}, "describe_server"),
    ("list_pages", {"site_key": "docs", "max_results": 5000}, "less than or equal to 1000 (got 5000)"),
    ("list_pages", {"site_key": "docs", "offset": -1}, "greater than or equal to 0"),
    ("list_pages", {"site_key": "other"}, "call crawl_site"),
    ("read_page", {"site_key": "docs"}, "url: Field required"),
    ("read_page", {"site_key": "docs", "url": f"{BASE}/missing.html"}, "list_pages"),
    ("read_page", {"site_key": "docs", "url": f"{BASE}/index.html", "max_bytes": 2.5}, "max_bytes"),
    ("search_docs", {"query": ""}, "query"),
    ("search_docs", {"query": "x" * 1025}, "at most 1024"),
    ("search_docs", {"query": "retries", "site_key": "nope"}, "configured sites"),
    ("search_docs", {"query": "retries", "limit": 51}, "less than or equal to 50"),
    ("get_freshness", {"site_key": "nope"}, "configured sites: docs, other"),
    ("diff_crawl", {"site_key": "docs", "since": "yesterday"}, "RFC 3339"),
    ("diff_crawl", {"site_key": "docs"}, "since: Field required"),
    ("get_page", {"url": "ftp://example.com/x"}, "http:// or https://"),
    ("get_page", {"url": "http://127.0.0.1:1/x.html"}, "loopback; set allow_private_networks"),
    ("get_page", {}, "url: Field required"),
]


async def test_bad_arguments_get_tool_errors_that_say_what_to_fix(server: DocScraperMCPServer) -> None:
    # One client for all cases (a server per case would triple this file's run time).
    problems = []
    async with Client(server) as client:
        for tool, arguments, expected in BAD_CALLS:
            result = await client.call_tool(tool, arguments)
            message = _text(result)
            if not result.is_error or expected not in message or "errors.pydantic.dev" in message:
                problems.append(f"{tool}({arguments}): error={result.is_error} {message!r}")
        # the server is still answering
        assert (await call(client, "list_sites"))["total_sites"] == 2
    assert not problems, "\n".join(problems)


async def test_every_tool_has_a_bad_call_test() -> None:
    assert {tool for tool, _, _ in BAD_CALLS} == set(TOOL_NAMES)


async def test_an_unknown_tool_lists_the_real_ones(server: DocScraperMCPServer) -> None:
    async with Client(server) as client:
        message = await error(client, "search")
        assert "search_docs" in message
        assert "describe_server" in message


async def test_a_crash_inside_a_tool_is_a_tool_error_and_the_server_survives(
    server: DocScraperMCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Client(server) as client:
        from doc_scraper.corpus import Corpus

        async def broken(self: Corpus, *args: Any, **kwargs: Any) -> Any:
            raise ZeroDivisionError("division by zero")

        monkeypatch.setattr(Corpus, "search", broken)
        message = await error(client, "search_docs", query="retries")
        assert "internal error in search_docs: ZeroDivisionError" in message
        assert (await call(client, "list_sites"))["total_sites"] == 2


async def test_jobs_survive_a_server_restart_and_unfinished_ones_are_failed(
    tmp_path: Path, server: DocScraperMCPServer, crawl: FakeCrawl
) -> None:
    crawl.release.set()
    async with Client(server) as client:
        done = await call(client, "crawl_site", site_key="docs")
        for _ in range(500):
            if (await call(client, "get_job_status", job_id=done["job_id"]))["status"] != "running":
                break
            await asyncio.sleep(0.01)
    # a job another server process left running when it died
    jobs_file = tmp_path / "state" / "mcp_jobs.json"
    saved = json.loads(jobs_file.read_text())
    saved["jobs"].append(
        {
            "job_id": "lost-job",
            "site_key": "other",
            "mode": "full",
            "status": "running",
            "started_at": "2026-01-01T00:00:00.000Z",
            "pages_processed": 7,
        }
    )
    jobs_file.write_text(json.dumps(saved))

    async with Client(build_server(_config(tmp_path), crawl=FakeCrawl())) as client:
        desc = await call(client, "describe_server")
        assert {j["job_id"]: j["status"] for j in desc["recent_jobs"]} == {
            done["job_id"]: "completed",
            "lost-job": "failed",
        }
        lost = await call(client, "get_job_status", job_id="lost-job")
        assert lost["pages_processed"] == 7
        assert "resume: true" in lost["error_message"]
