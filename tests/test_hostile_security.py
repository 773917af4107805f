"""Security: SSRF through names, mapped addresses and DNS rebinding; output paths; images; no execution."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestServer

from doc_scraper import api
from doc_scraper.config.load import config_from_dict
from doc_scraper.errors import BlockedError
from doc_scraper.fetch import session as session_module
from doc_scraper.models import PageRecord
from doc_scraper.urls import normalize_url, url_to_relpath
from doc_scraper.write.files import write_page
from doc_scraper.write.images import image_allowed, image_filename
from tests.docsite import DocSite, page_html, start
from tests.test_fetch_ssrf import FakeResolver, guarded_fetcher

UA = "doc-scraper-test/1.0"


# -- SSRF ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "100.64.1.2",
        "100.127.255.254",
        "fd12:3456::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.1",
        "::1",
        "0.0.0.0",
        "192.168.0.10",
        "172.31.255.1",
    ],
)
async def test_a_name_resolving_to_a_non_public_address_is_refused_before_any_request(address: str) -> None:
    resolver = FakeResolver({"docs.attacker.test": [address]})
    async with guarded_fetcher(resolver) as fetcher:
        with pytest.raises(BlockedError) as info:
            await fetcher.fetch("http://docs.attacker.test/", user_agent=UA, delay=0.0, max_bytes=1000)
    assert info.value.reason == "ssrf"
    assert resolver.asked == ["docs.attacker.test"]  # refused at resolution, never retried


@pytest.mark.parametrize(
    "url",
    [
        "http://[fe80::1%25eth0]/",
        "http://[::ffff:169.254.169.254]/latest/",
        "http://[::]/",
        "http://0/",
        "http://2852039166/latest/meta-data/",
        "http://0xa9fea9fe/",
        "http://100.100.100.200/",
        "http://[fc00::5]:8080/",
        "http://[::ffff:a9fe:a9fe]/",
    ],
)
async def test_literal_addresses_in_odd_spellings_are_refused(url: str) -> None:
    async with guarded_fetcher(FakeResolver({})) as fetcher:
        with pytest.raises(BlockedError) as info:
            await fetcher.fetch(url, user_agent=UA, delay=0.0, max_bytes=1000)
    assert info.value.reason == "ssrf"


class RebindingResolver(AbstractResolver):
    """Answers a vetted address first, then the address the attacker really wants."""

    def __init__(self, first: str, then: str) -> None:
        self.answers = [first, then]
        self.calls = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addr = self.answers[min(self.calls, 1)]
        self.calls += 1
        return [
            ResolveResult(
                hostname=host,
                host=addr,
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


async def test_dns_rebinding_cannot_swap_the_address_between_check_and_connect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pretend 127.0.0.2 is a public address; 127.0.0.1 stays blocked. The server listens on .2 only.
    real = session_module.ip_blocked_reason
    monkeypatch.setattr(session_module, "ip_blocked_reason", lambda a: None if a == "127.0.0.2" else real(a))
    peers: list[str] = []

    async def page(request: web.Request) -> web.Response:
        peers.append(request.transport.get_extra_info("sockname")[0] if request.transport else "")
        return web.Response(text="<p>public page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    async with TestServer(app, host="127.0.0.2", port=0) as server:
        resolver = RebindingResolver("127.0.0.2", "127.0.0.1")
        async with guarded_fetcher(resolver) as fetcher:
            url = f"http://rebind.attacker.test:{server.port}/"
            first = await fetcher.fetch(url, user_agent=UA, delay=0.0, max_bytes=1000)
            # The connection went to the address that was checked, with a single lookup.
            assert first.body == b"<p>public page</p>"
            assert resolver.calls == 1
            assert peers == ["127.0.0.2"]
            # Force a fresh lookup: the rebound answer is checked again and refused.
            await fetcher._session.connector.close()  # type: ignore[union-attr]
    resolver2 = RebindingResolver("127.0.0.1", "127.0.0.1")
    async with guarded_fetcher(resolver2) as fetcher:
        with pytest.raises(BlockedError) as info:
            await fetcher.fetch("http://rebind.attacker.test:9/", user_agent=UA, delay=0.0, max_bytes=1000)
    assert info.value.reason == "ssrf"


async def test_an_in_site_redirect_to_the_metadata_address_is_refused_by_the_crawl(tmp_path: Path) -> None:
    docs = DocSite.linked(3)
    docs.redirects["/docs/p1.html"] = "http://169.254.169.254/latest/meta-data/"
    server = await start(docs)
    try:
        config = config_from_dict(
            {
                "output_base_dir": str(tmp_path / "out"),
                "state_dir": str(tmp_path / "state"),
                "max_retries": 0,
                "http_client_settings": {"allow_private_networks": True},
                "sites": {
                    "demo": {
                        "start_urls": [f"http://127.0.0.1:{server.port}/docs/index.html"],
                        "allowed_path_prefix": "/docs",
                        "use_sitemaps": False,
                    }
                },
            }
        )
        [summary] = await api.crawl_sites(config, ["demo"])
    finally:
        await server.close()
    assert summary.ok
    assert summary.skipped.get("domain") == 1  # the hop leaves the site: refused before any request


# -- URL -> output path ------------------------------------------------------------------------

HOSTILE_PATHS = [
    "/docs/../../../etc/passwd",
    "/docs/%2e%2e/%2e%2e/%2E%2E/etc/passwd.html",
    "/docs/..%2f..%2f..%2fetc%2fpasswd",
    "/docs/..%5c..%5c..%5cwindows%5csystem32.html",
    "/docs/a\\..\\..\\b.html",
    "/docs//etc/passwd",
    "/docs/%2fetc%2fpasswd.html",
    "/docs/C:%5cWindows%5cwin.ini",
    "/docs/nul%00byte.html",
    "/docs/%00",
    "/docs/" + "x" * 5000 + ".html",
    "/docs/" + "é" * 3000,
    "/docs/CON.html",
    "/docs/aux/prn/lpt1.txt",
    "/docs/.git/config",
    "/docs/...",
    "/docs/%20/%20.html",
    "/docs/~/.ssh/id_rsa",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_hostile_url_path_maps_inside_the_site_folder_and_writes_there(tmp_path: Path, path: str) -> None:
    url = normalize_url("https://docs.example.test" + path)
    rel = url_to_relpath(url, "docs.example.test", "/")
    assert rel is not None
    assert not rel.startswith("/") and "\\" not in rel and "\x00" not in rel
    assert ".." not in rel.split("/")
    assert all(len(seg.encode()) <= 255 for seg in rel.split("/"))
    site = tmp_path / "site"
    site.mkdir()
    record = PageRecord(
        url=url, title="t", content="body", content_hash="0" * 64, crawled_at="now", depth=0, path=rel
    )
    written = write_page(site, record, "body")
    assert site.resolve() in written.resolve().parents
    assert [p for p in tmp_path.rglob("*") if p.is_file() and site not in p.parents] == []


def test_write_page_refuses_a_path_that_escapes_even_if_given_one(tmp_path: Path) -> None:
    for bad in ("../outside.md", "/etc/passwd.md", "a/../../outside.md"):
        record = PageRecord(url="u", title="t", content="", content_hash="", crawled_at="", depth=0, path=bad)
        with pytest.raises(ValueError, match="outside the site folder"):
            write_page(tmp_path / "site", record, "x")
    assert not (tmp_path / "outside.md").exists()


async def test_pages_whose_paths_differ_only_in_case_never_overwrite_each_other(tmp_path: Path) -> None:
    # API.md and api.md are one file on macOS and Windows: the second is reported, not written.
    from doc_scraper import api
    from doc_scraper.config.load import config_from_dict
    from tests.docsite import DocSite, page_html, start

    docs = DocSite.linked(2)
    docs.pages["/docs/API.html"] = page_html("Upper", "upper case page", [])
    docs.pages["/docs/api.html"] = page_html("Lower", "lower case page", [])
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="API.html">A</a><a href="api.html">a</a></section>'
    )
    server = await start(docs)
    try:
        config = config_from_dict(
            {
                "output_base_dir": str(tmp_path / "out"),
                "state_dir": str(tmp_path / "state"),
                "http_client_settings": {"allow_private_networks": True},
                "sites": {
                    "demo": {
                        "start_urls": [f"http://127.0.0.1:{server.port}/docs/index.html"],
                        "allowed_domain": "127.0.0.1",
                        "allowed_path_prefix": "/docs",
                    }
                },
            }
        )
        [summary] = await api.crawl_sites(config, ["demo"])
    finally:
        await server.close()
    assert summary.ok
    assert summary.skipped.get("duplicate_path") == 1
    written = {p.name.casefold() for p in (tmp_path / "out" / "demo").glob("*.md")}
    assert "api.md" in written


# -- images ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://example.com.attacker.test/x.png", ("example.com",)),
        ("https://example.com@attacker.test/x.png", ("example.com",)),
        ("https://attacker.test/x.png#example.com", ("example.com",)),
        ("https://notexample.com/x.png", ("*.example.com",)),
        ("file:///etc/passwd", ()),
        ("data:image/png;base64,AAAA", ()),
        ("javascript:alert(1)", ()),
    ],
)
def test_images_from_other_domains_or_schemes_are_refused(url: str, allowed: tuple[str, ...]) -> None:
    assert not image_allowed(url, allowed, ())


def test_disallowed_image_domains_win_over_allowed_ones() -> None:
    assert not image_allowed("https://cdn.example.com/a.png", ("*.example.com",), ("cdn.example.com",))
    assert image_allowed("https://img.example.com/a.png", ("*.example.com",), ("cdn.example.com",))


@pytest.mark.parametrize(
    "url",
    [
        "https://x.test/../../etc/passwd",
        "https://x.test/a%00b.png",
        "https://x.test/%2e%2e%2f%2e%2e%2fx.svg",
        "https://x.test/" + "a" * 400 + ".png",
        "https://x.test/.htaccess",
    ],
)
def test_image_file_names_are_flat_and_safe(url: str) -> None:
    name = image_filename(url, "image/png")
    assert "/" not in name and "\\" not in name and "\x00" not in name and not name.startswith(".")
    assert len(name) <= 80


# -- nothing from a page is executed -------------------------------------------------------------------


async def test_scripts_in_pages_are_neither_run_nor_written_and_files_are_not_executable(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "pwned"
    docs = DocSite.linked(2)
    evil = (
        f'<script>require("fs").writeFileSync("{marker}")</script>'
        f'<img src="x" onerror="fetch(\'{marker}\')"><a href="javascript:alert(1)">x</a>'
        '<a href="data:text/html,<script>alert(2)</script>">d</a>'
    )
    docs.pages["/docs/p0.html"] = page_html("Evil", "text " + evil, ["p1.html"])
    server = await start(docs)
    try:
        config = config_from_dict(
            {
                "output_base_dir": str(tmp_path / "out"),
                "state_dir": str(tmp_path / "state"),
                "http_client_settings": {"allow_private_networks": True},
                "sites": {
                    "demo": {
                        "start_urls": [f"http://127.0.0.1:{server.port}/docs/index.html"],
                        "allowed_path_prefix": "/docs",
                        "use_sitemaps": False,
                    }
                },
            }
        )
        [summary] = await api.crawl_sites(config, ["demo"])
    finally:
        await server.close()
    assert summary.ok
    assert not marker.exists()
    root = Path(config.output_base_dir) / "demo"
    text = (root / "p0.md").read_text(encoding="utf-8")
    assert "writeFileSync" not in text and "onerror" not in text and "fetch(" not in text
    # An image that was not downloaded keeps its URL; it never becomes a page path (x/index.md).
    assert "![](http://127.0.0.1:" in text and "/docs/x)" in text  # an image, not a page: keeps its URL
    for path in root.rglob("*"):
        if path.is_file():
            assert path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) == 0, path


def test_script_urls_in_links_are_dropped_keeping_the_link_text() -> None:
    from doc_scraper.models import ExtractOptions
    from doc_scraper.worker import parse_page

    body = (
        'see <a href="javascript:alert(1)">this</a> and <a href="data:text/html,<script>x</script>">that</a>'
    )
    page = parse_page(
        page_html("Evil", body, []).encode(),
        "http://h.test/docs/p.html",
        ExtractOptions(content_selector="auto"),
    )
    assert "this" in page.markdown and "that" in page.markdown
    assert "javascript:" not in page.markdown and "data:text/html" not in page.markdown
