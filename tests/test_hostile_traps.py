"""Crawler traps: infinite URL spaces stay bounded, duplicates collapse, and each limit is reported."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from doc_scraper import api
from doc_scraper.config.load import config_from_dict
from tests.docsite import DocSite, page_html, start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from doc_scraper.config.schema import Config
    from doc_scraper.models import CrawlProgress

pytestmark = pytest.mark.e2e


def make_config(tmp_path: Path, base: str, start: str = "/docs/index.html", **site: Any) -> Config:
    globals_ = site.pop("globals", {})
    data = {
        "output_base_dir": str(tmp_path / "out"),
        "state_dir": str(tmp_path / "state"),
        "num_workers": 4,
        "max_retries": 3,
        "initial_retry_delay": "5ms",
        "max_retry_delay": "20ms",
        "http_client_settings": {"allow_private_networks": True, "timeout": "5s"},
        "sites": {
            "demo": {
                "start_urls": [base + start],
                "allowed_domain": "127.0.0.1",
                "allowed_path_prefix": "/docs",
                "use_sitemaps": False,
                **site,
            }
        },
        **globals_,
    }
    return config_from_dict(data)


def output_files(config: Config) -> set[str]:
    root = Path(config.output_base_dir) / "demo"
    return {str(p.relative_to(root)) for p in root.rglob("*.md")}


# A site made only of traps, generated from the path and query.
TRAP_LINKS = [
    "cal/2026/01",  # calendar: next month forever
    "list?page=1",  # ?page=N+1 forever
    "a/",  # /a/a/a/...
    "deep/d1/",  # /deep/d1/d2/d3/... (all different segments)
    "long/x",  # ever longer segment
    "guide.html?sessionid=1",  # session id in the query, new one on every page
    "alias.html",  # same page as guide.html, says so with rel=canonical
]


async def trap_handler(request: web.Request) -> web.Response:
    path, query = request.path, request.query
    if path == "/robots.txt":
        return web.Response(status=404)
    hits[path + ("?" + request.query_string if request.query_string else "")] += 1
    links: list[str]
    head = ""
    if path == "/docs/index.html":
        title, links = "Index", TRAP_LINKS
    elif m := re.fullmatch(r"/docs/cal/(\d{4})/(\d{2})", path):
        y, mo = int(m[1]), int(m[2])
        ny, nm = (y + 1, 1) if mo == 12 else (y, mo + 1)
        title, links = f"Month {y}-{mo:02d}", [f"/docs/cal/{ny:04d}/{nm:02d}"]
    elif path == "/docs/list":
        n = int(query.get("page", "1"))
        title, links = f"List page {n}", [f"/docs/list?page={n + 1}"]
    elif re.fullmatch(r"/docs(/a)+/", path):
        title, links = f"A {path.count('/a')}", ["a/"]
    elif m := re.fullmatch(r"/docs/deep((?:/d\d+)+)/", path):
        n = m[1].count("/d")
        title, links = f"Deep {n}", [f"d{n + 1}/"]
    elif m := re.fullmatch(r"/docs/long/(x+)", path):
        title, links = f"Long {len(m[1])}", [f"/docs/long/{m[1] * 2}"]
    elif path == "/docs/guide.html":
        sid = int(query.get("sessionid", "0"))
        title, links = "Guide", [f"guide.html?sessionid={sid + 1}", f"alias.html?sessionid={sid + 7}"]
    elif path == "/docs/alias.html":
        title, links = "Guide", ["guide.html"]
        head = '<link rel="canonical" href="/docs/guide.html">'
    else:
        return web.Response(status=404, text="no")
    html = page_html(title, f"Body of {title}.", links).replace("</head>", head + "</head>")
    return web.Response(text=html, content_type="text/html")


hits: Counter[str] = Counter()


@pytest.fixture
async def trap_site() -> AsyncIterator[str]:
    hits.clear()
    app = web.Application()
    app.router.add_get("/{tail:.*}", trap_handler)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        yield f"http://127.0.0.1:{server.port}"


async def test_every_trap_is_bounded_by_its_own_limit_and_reported_in_the_summary(
    tmp_path: Path, trap_site: str
) -> None:
    config = make_config(
        tmp_path,
        trap_site,
        max_pages=80,
        globals={"max_url_length": 120, "max_path_depth": 8, "max_segment_repeats": 3},
    )
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    files = output_files(config)
    # /a/a/a/: three repeats are fine, the fourth is a trap.
    assert {"a/index.md", "a/a/index.md", "a/a/a/index.md"} <= files
    assert "a/a/a/a/index.md" not in files
    assert summary.skipped.get("trap_repetition", 0) >= 1
    # /docs/deep/d1/.../d6/ has 8 segments; d7 would be 9.
    assert "deep/d1/d2/d3/d4/d5/d6/index.md" in files
    assert "/docs/deep/d1/d2/d3/d4/d5/d6/d7/" not in hits
    assert not any(f.count("/") > 8 for f in files)
    assert summary.skipped.get("trap_path_depth", 0) >= 1
    assert summary.skipped.get("trap_url_length", 0) >= 1
    assert max(len(k) for k in hits) < 120
    # The session-id query is dropped, so the guide is fetched once; ?page= is dropped too.
    assert hits["/docs/guide.html"] == 1  # requested without the session id
    assert sum(v for k, v in hits.items() if k.startswith("/docs/guide.html")) == 1
    assert sum(v for k, v in hits.items() if k.startswith("/docs/list")) == 1
    # The calendar never ends: only the page budget stops it, and the summary says so.
    assert summary.skipped.get("max_pages", 0) >= 1
    assert sum(hits.values()) <= 80 + 4


async def test_a_calendar_trap_is_cut_by_max_pages_and_the_budget_is_reported(
    tmp_path: Path, trap_site: str
) -> None:
    config = make_config(tmp_path, trap_site, start="/docs/cal/2026/01", max_pages=30)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    assert sum(hits.values()) <= 30 + 4  # the budget plus the pages already in flight
    assert summary.skipped.get("max_pages", 0) >= 1
    assert len(output_files(config)) >= 25


async def test_kept_query_params_give_pages_of_their_own_and_max_pages_bounds_them(
    tmp_path: Path, trap_site: str
) -> None:
    config = make_config(
        tmp_path, trap_site, start="/docs/list?page=1", keep_query_params=["page"], max_pages=12
    )
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    pages = [k for k in hits if k.startswith("/docs/list?page=")]
    assert 10 <= len(pages) <= 12 + 4
    files = output_files(config)
    assert len(files) == len(pages)  # each kept query is its own page and file (list-q<hash>.md)
    assert all(re.fullmatch(r"list/index-q[0-9a-f]{8}\.md", f) for f in files)


async def test_a_page_naming_another_as_canonical_is_not_written_twice(
    tmp_path: Path, trap_site: str
) -> None:
    config = make_config(tmp_path, trap_site, start="/docs/alias.html")
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    assert output_files(config) == {"guide.md"}
    assert summary.skipped.get("canonical_elsewhere") == 1


async def test_the_frontier_stays_small_when_every_page_links_fresh_session_urls(
    tmp_path: Path, trap_site: str
) -> None:
    # Each guide page links a new ?sessionid=N: without query stripping this is infinite.
    config = make_config(tmp_path, trap_site, start="/docs/guide.html?sessionid=1")
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert sum(hits.values()) == 2  # guide.html and alias.html, once each
    assert output_files(config) == {"guide.md"}


async def test_a_docsite_calendar_section_is_bounded_by_max_depth_while_real_pages_are_all_written(
    tmp_path: Path,
) -> None:
    docs = DocSite.linked(8)
    docs.trap_prefix = "/docs/cal/"
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="cal/2024/01">events</a></section>'
    )
    server = await start(docs)
    try:
        config = make_config(tmp_path, f"http://127.0.0.1:{server.port}", max_depth=6)
        [summary] = await api.crawl_sites(config, ["demo"])
    finally:
        await server.close()
    assert summary.ok
    files = output_files(config)
    assert {f"p{i}.md" for i in range(8)} | {"index.md"} <= files
    cal = {f for f in files if f.startswith("cal/")}
    assert 1 <= len(cal) <= 2 * 6  # both directions (next and previous month) from depth 1 to 5
    assert summary.skipped.get("depth", 0) >= 1


def read_outputs(config: Config) -> dict[str, str]:
    root = Path(config.output_base_dir) / "demo"
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*.md")}


async def test_a_faulty_rate_limited_site_with_a_calendar_trap_is_crawled_whole_and_an_abort_keeps_old_output(
    tmp_path: Path,
) -> None:
    n = 30
    docs = DocSite.linked(n)
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="cal/2024/01">events</a></section>'
    )
    docs.trap_prefix = "/docs/cal/"
    server = await start(docs)
    real = {"index.md"} | {f"p{i}.md" for i in range(n)}
    try:
        base = f"http://127.0.0.1:{server.port}"
        config = make_config(
            tmp_path,
            base,
            max_pages=n + 1 + 40,
            globals={"max_retries": 6, "num_workers": 6, "max_requests_per_host": 3},
        )
        # 1. A good crawl, then the site turns hostile.
        [good] = await api.crawl_sites(config, ["demo"])
        assert good.ok, good.error
        before = read_outputs(config)
        assert real <= set(before)
        docs.fail_rate, docs.reset_rate, docs.rate_limit_rps, docs.seed = 0.1, 0.1, 300.0, 7
        docs.__post_init__()
        for i in range(n):  # new content, so a finished crawl would change every page
            docs.pages[f"/docs/p{i}.html"] = docs.pages[f"/docs/p{i}.html"].replace(
                "Content of", "New content of"
            )
        # 2. Aborted after a few pages: the previous output stays exactly as it was.
        stop = asyncio.Event()

        def progress(p: CrawlProgress) -> None:
            if p.pages_done >= 5:
                stop.set()

        docs.latency = 0.02
        [aborted] = await api.crawl_sites(config, ["demo"], stop=stop, progress=lambda p: progress(p))
        stop.set()
        assert aborted.interrupted and not aborted.ok
        assert read_outputs(config) == before
        # 3. A whole fresh crawl through the faults: every real page written, the trap bounded.
        docs.latency = 0.0
        [summary] = await api.crawl_sites(config, ["demo"])
    finally:
        await server.close()
    assert summary.ok, summary.error
    after = read_outputs(config)
    assert real <= set(after)
    assert all("New content of" in after[f"p{i}.md"] for i in range(n))
    cal = [f for f in after if f.startswith("cal/")]
    assert 1 <= len(cal) <= 40 + 6
    assert summary.skipped.get("max_pages", 0) >= 1
    assert docs.faults["503"] > 0 and docs.faults["reset"] > 0 and docs.faults["429"] > 0
    assert summary.failed == 0
