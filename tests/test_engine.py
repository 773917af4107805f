"""The crawl engine end to end against an aiohttp docs site on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from doc_scraper import api
from doc_scraper.config.load import config_from_dict
from doc_scraper.write.files import parse_frontmatter
from tests.docsite import DocSite, ThreadedServer, page_html, start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from doc_scraper.config.schema import Config

pytestmark = pytest.mark.e2e


@pytest.fixture
async def site() -> AsyncIterator[tuple[DocSite, str]]:
    docs = DocSite.linked(12)
    docs.pages["/docs/p3.html"] = docs.pages["/docs/p3.html"].replace(
        "</section>",
        '<a href="missing.html">gone</a> <a href="private/secret.html">s</a>'
        ' <a href="/docsearch/x.html">x</a> <a href="logo.png">img</a></section>',
    )
    docs.pages["/docs/private/secret.html"] = page_html("Secret", "no", [])
    server = await start(docs)
    try:
        yield docs, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


def make_config(tmp_path: Path, base: str, **site_overrides: Any) -> Config:
    globals_ = site_overrides.pop("globals", {})
    site = {
        "start_urls": [f"{base}/docs/index.html"],
        "allowed_domain": "127.0.0.1",
        "allowed_path_prefix": "/docs",
        "content_selector": "auto",
        **site_overrides,
    }
    data = {
        "output_base_dir": str(tmp_path / "out"),
        "state_dir": str(tmp_path / "state"),
        "num_workers": 4,
        "max_retries": 3,
        "initial_retry_delay": "10ms",
        "max_retry_delay": "50ms",
        "http_client_settings": {"allow_private_networks": True, "timeout": "10s"},
        "sites": {"demo": site},
        **globals_,
    }
    return config_from_dict(data)


def output_files(config: Config) -> set[str]:
    root = Path(config.output_base_dir) / "demo"
    return {str(p.relative_to(root)) for p in root.rglob("*.md")}


def jsonl_records(config: Config) -> list[dict[str, Any]]:
    path = Path(config.output_base_dir) / "demo" / "pages.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_a_crawl_writes_every_in_scope_page_with_frontmatter_jsonl_and_llms_txt(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    expected = {"index.md"} | {f"p{i}.md" for i in range(12)}
    assert output_files(config) == expected
    assert summary.pages == 13 and summary.added == 13
    # The broken link is reported (counted as an error), the disallowed page never requested.
    assert docs.requests["/docs/missing.html"] == 1
    assert summary.failed == 1
    assert docs.requests["/docs/private/secret.html"] == 0
    assert summary.skipped.get("robots") == 1  # reported, not fetched
    assert "/docsearch/x.html" not in docs.requests and "/docs/logo.png" not in docs.requests
    assert all(count == 1 for count in docs.requests.values()), docs.requests
    # Frontmatter, relative links, content.
    text = (Path(config.output_base_dir) / "demo" / "p3.md").read_text(encoding="utf-8")
    fields, body = parse_frontmatter(text)
    assert fields["title"] == "Page 3"
    assert fields["url"] == f"{base}/docs/p3.html"
    assert fields["depth"] == 1 and fields["crawled_at"].endswith("Z")
    assert "```python" in body and 'print("Page 3")' in body
    assert "(p4.md)" in body and "¶" not in body
    records = jsonl_records(config)
    assert [r["record_type"] for r in records].count("crawl_meta") == 1
    assert records[-1]["record_type"] == "crawl_meta" and records[-1]["total_pages"] == 13
    urls = [r["url"] for r in records[:-1]]
    assert urls == sorted(urls)
    llms = (Path(config.output_base_dir) / "demo" / "llms.txt").read_text(encoding="utf-8")
    assert all(u in llms for u in urls)
    assert any("doc-scraper" in ua for ua in docs.user_agents)


async def test_per_host_limits_and_delay_hold(tmp_path: Path) -> None:
    docs = DocSite.linked(12)
    docs.latency = 0.02
    with ThreadedServer(docs) as base:
        config = make_config(
            tmp_path,
            base,
            delay_per_host="40ms",
            globals={"max_requests_per_host": 2, "num_workers": 6, "delay_jitter": 0.25},
        )
        [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert docs.max_active <= 2
    # delay 40 ms with ±25% jitter: starts are >= 30 ms apart. Arrivals also carry the
    # variance of connection set-up (a new connection arrives later than a reused one),
    # so the server may see them closer; without any delay they would be ~0 ms apart.
    assert docs.min_gap() >= 0.030 * 0.5


async def test_transient_errors_are_retried_and_counted_while_404s_are_not(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    docs.fail_first["/docs/p1.html"] = 2
    docs.rate_limited["/docs/p2.html"] = 1
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert "p1.md" in output_files(config) and "p2.md" in output_files(config)
    assert docs.requests["/docs/p1.html"] == 3
    assert docs.requests["/docs/p2.html"] == 2
    assert docs.requests["/docs/missing.html"] == 1
    assert summary.retries == 3


async def test_incremental_recrawl_costs_304s_and_reports_changes(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    config = make_config(tmp_path, base)
    [first] = await api.crawl_sites(config, ["demo"])
    assert first.ok
    docs.reset_counters()
    [again] = await api.crawl_sites(config, ["demo"], mode="incremental")
    assert again.ok and again.unchanged == 13 and again.added == again.changed == again.removed == 0
    assert docs.statuses[304] == 13 and docs.body_bytes == 0
    # Edit one page, delete one, add one linked from the index.
    docs.pages["/docs/p5.html"] = docs.pages["/docs/p5.html"].replace("number 5", "number five")
    del docs.pages["/docs/p7.html"]
    docs.pages["/docs/new.html"] = page_html("New", "fresh", [])
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="new.html">new</a></section>'
    )
    [third] = await api.crawl_sites(config, ["demo"], mode="incremental")
    assert third.ok
    assert (third.added, third.changed, third.removed) == (1, 2, 1)  # index.html changed too
    files = output_files(config)
    assert "new.md" in files and "p7.md" not in files
    urls = {r["url"] for r in jsonl_records(config) if r["record_type"] == "page"}
    assert f"{base}/docs/new.html" in urls and f"{base}/docs/p7.html" not in urls


async def test_pages_are_not_pruned_when_the_recrawl_saw_errors(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    config = make_config(tmp_path, base, globals={"max_retries": 0})
    [first] = await api.crawl_sites(config, ["demo"])
    assert first.ok
    # p4 now fails with 503, so p5 (linked from p4 only) is not reached: not proof it is gone.
    docs.fail_first["/docs/p4.html"] = 5
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        'href="p5.html"', 'href="p4.html"'
    )
    [again] = await api.crawl_sites(config, ["demo"], mode="incremental")
    assert again.removed == 0
    assert {"p4.md", "p5.md"} <= output_files(config)


async def test_max_pages_bounds_the_crawl_and_blocks_pruning(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    config = make_config(tmp_path, base, max_pages=5)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert sum(docs.requests.values()) <= 5 + 4  # the budget, plus pages already in flight
    assert len(output_files(config)) <= 9


async def test_a_failed_fresh_crawl_keeps_the_previous_good_output(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    config = make_config(tmp_path, base)
    [first] = await api.crawl_sites(config, ["demo"])
    assert first.ok
    before = output_files(config)
    docs.pages.clear()  # the whole site answers 404 now
    [second] = await api.crawl_sites(config, ["demo"])
    assert not second.ok and "zero successful pages" in second.error
    assert output_files(config) == before


async def test_redirects_are_followed_and_count_once(tmp_path: Path, site: tuple[DocSite, str]) -> None:
    docs, base = site
    docs.redirects["/docs/old.html"] = "/docs/p1.html"
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="old.html">old</a></section>'
    )
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert "old.md" not in output_files(config)
    assert docs.requests["/docs/p1.html"] == 1  # reached once: directly or through the redirect


async def test_images_are_downloaded_only_when_asked_and_within_their_limits(
    tmp_path: Path, site: tuple[DocSite, str]
) -> None:
    docs, base = site
    docs.files["/docs/logo.png"] = (b"\x89PNG\r\n\x1a\n" + b"0" * 100, "image/png")
    docs.files["/docs/huge.png"] = (b"\x89PNG\r\n\x1a\n" + b"0" * 5000, "image/png")
    docs.pages["/docs/p1.html"] = docs.pages["/docs/p1.html"].replace(
        "</section>",
        '<img src="logo.png" alt="Logo"><img src="huge.png" alt="Big">'
        '<img src="http://blocked.example/x.png" alt="Ext"></section>',
    )
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    assert "/docs/logo.png" not in docs.requests and docs.statuses[200] == 13  # skipped by default
    text = (Path(config.output_base_dir) / "demo" / "p1.md").read_text(encoding="utf-8")
    assert f"({base}/docs/logo.png)" in text

    config = make_config(
        tmp_path / "img",
        base,
        skip_images=False,
        max_image_size_bytes=1000,
        disallowed_image_domains=["*.example"],
    )
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    images = list((Path(config.output_base_dir) / "demo" / "images").iterdir())
    assert [p.name.split("_")[0] for p in images] == ["logo"]
    text = (Path(config.output_base_dir) / "demo" / "p1.md").read_text(encoding="utf-8")
    assert f"(images/{images[0].name})" in text
    assert f"({base}/docs/huge.png)" in text  # over the size limit: left remote
    assert "(http://blocked.example/x.png)" in text


async def test_robots_crawl_delay_is_a_floor_under_the_configured_delay(tmp_path: Path) -> None:
    docs = DocSite.linked(8)
    docs.robots = "User-agent: *\nCrawl-delay: 0.06\nDisallow: /docs/private/\n"
    with ThreadedServer(docs) as base:
        config = make_config(tmp_path, base, globals={"max_requests_per_host": 4})  # no delay configured
        [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok
    # 60 ms apart at the crawler; the server may see arrivals a little closer (connection set-up).
    assert docs.min_gap() >= 0.060 * 0.5
