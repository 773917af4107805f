"""Hostile web content: wrong charsets, broken HTML, binary bodies, bombs, resets and redirect games."""

from __future__ import annotations

import contextlib
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from doc_scraper import api
from doc_scraper.config.load import config_from_dict
from doc_scraper.config.schema import Config, HTTPClientSettings
from doc_scraper.errors import ExtractError, TooLargeError
from doc_scraper.fetch.fetcher import Fetcher
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.session import make_session
from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page
from tests.docsite import DocSite, page_html, start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

URL = "https://docs.example.test/guide/page.html"
OPTIONS = ExtractOptions(content_selector="auto")
MiB = 1024 * 1024


def doc(title: str, text: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head>{head}<title>{title}</title></head><body><nav>menu</nav>"
        f"<main><h1>{title}</h1><p>{text}</p><p>More words so the region is real content.</p>"
        "</main></body></html>"
    )


# -- charsets (parse_page over bytes) ------------------------------------------------------------


def test_latin1_named_only_in_the_header_decodes_accents() -> None:
    body = doc("Café", "Crème brûlée à la française").encode("latin-1")
    page = parse_page(body, URL, OPTIONS, "iso-8859-1")
    assert page.title == "Café"
    assert "Crème brûlée à la française" in page.markdown


def test_windows_1252_smart_quotes_decode_under_a_latin1_label() -> None:
    # Servers say ISO-8859-1 but send cp1252 bytes (0x93/0x94 quotes, 0x80 euro): browsers read cp1252.
    body = doc("Quotes", "\u201cquoted\u201d costs \u20ac5").encode("cp1252")
    page = parse_page(body, URL, OPTIONS, "ISO-8859-1")
    assert "\u201cquoted\u201d costs \u20ac5" in page.markdown


def test_shift_jis_declared_only_in_meta_decodes_japanese() -> None:
    body = doc("日本語の説明", "こんにちは、世界。", '<meta charset="Shift_JIS">').encode("shift_jis")
    page = parse_page(body, URL, OPTIONS, None)
    assert page.title == "日本語の説明"
    assert "こんにちは、世界。" in page.markdown


def test_a_utf8_bom_without_a_header_is_dropped_not_shown() -> None:
    body = "\ufeff".encode() + doc("Überblick", "Größe").encode()
    page = parse_page(body, URL, OPTIONS, None)
    assert page.title == "Überblick"
    assert "\ufeff" not in page.markdown and "ï»¿" not in page.markdown
    assert "Größe" in page.markdown


def test_a_utf8_bom_wins_over_a_wrong_header_charset() -> None:
    body = "\ufeff".encode() + doc("Überblick", "Größe").encode()
    page = parse_page(body, URL, OPTIONS, "iso-8859-1")
    assert page.title == "Überblick"
    assert "Ã" not in page.markdown


def test_the_header_charset_wins_over_a_disagreeing_meta() -> None:
    body = doc("Résumé", "naïve", '<meta charset="utf-8">').encode("cp1252")
    page = parse_page(body, URL, OPTIONS, "windows-1252")
    assert page.title == "Résumé"
    assert "naïve" in page.markdown


def test_undeclared_non_utf8_bytes_are_replaced_not_fatal() -> None:
    body = doc("Plain", "caf\udce9 ok", "").encode("utf-8", "surrogateescape")  # a lone 0xE9
    page = parse_page(body, URL, OPTIONS, None)
    assert "caf\ufffd ok" in page.markdown


def test_an_unknown_charset_label_falls_back_without_crashing() -> None:
    page = parse_page(doc("Label", "text").encode(), URL, OPTIONS, "x-no-such-charset")
    assert page.title == "Label"


# -- broken markup and non-HTML bodies ------------------------------------------------------------


def test_invalid_html_still_yields_its_text() -> None:
    broken = (
        b"<html><head><title>Broken</title></head><body><main><h1>Broken page<h2>Still here"
        b"<p>first <b>bold <i>both</b> after</i><table><tr><td>cell<div>div in cell</table>"
        b"<p>last paragraph</p></main></body></htm"
    )
    page = parse_page(broken, URL, OPTIONS, "utf-8")
    for text in ("Broken page", "Still here", "first", "bold", "after", "last paragraph"):
        assert text in page.markdown


def test_an_unclosed_title_is_parsed_or_refused_but_never_crashes() -> None:
    # Browsers read everything after an unclosed <title> as its text (RCDATA).
    body = b"<html><head><title>Broken</head><body><main><h1>Page</h1><p>text</p></main></body></html>"
    with contextlib.suppress(ExtractError):
        parse_page(body, URL, OPTIONS, "utf-8")


def test_binary_sent_as_html_is_an_extract_error_not_garbage() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20
    with pytest.raises(ExtractError, match="binary"):
        parse_page(png, URL, OPTIONS, None)


def test_an_empty_body_is_an_extract_error() -> None:
    with pytest.raises(ExtractError):
        parse_page(b"", URL, OPTIONS, "utf-8")


def test_scripts_and_event_handlers_never_reach_the_markdown() -> None:
    html = doc(
        "Safe",
        'text<script>alert("x")</script><img src=x onerror="alert(2)">'
        '<a href="javascript:alert(3)">click</a><iframe src="https://evil.test/"></iframe>',
    )
    page = parse_page(html.encode(), URL, OPTIONS, "utf-8")
    assert "alert" not in page.markdown
    assert "javascript:" not in page.markdown
    assert not any(link.startswith("javascript:") for link in page.links)


# -- fetch layer: deflate bomb --------------------------------------------------------------------


def _fetcher_config() -> Config:
    return Config(
        sites={},
        max_retries=0,
        delay_jitter=0.0,
        http_client_settings=HTTPClientSettings(timeout=5.0, allow_private_networks=True),
    )


async def test_a_deflate_bomb_is_cut_at_the_size_cap() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS)  # zlib-wrapped "deflate"
    block = b"<p>" + b"A" * MiB
    chunk = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    bomb = chunk + again * 99 + compressor.flush()  # ~100 MiB inflated
    assert len(bomb) < 200 * 1024

    async def bombed(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Type": "text/html", "Content-Encoding": "deflate"})

    app = web.Application()
    app.router.add_get("/b", bombed)
    config = _fetcher_config()
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        session = make_session(config)
        try:
            fetcher = Fetcher.from_config(config, session, HostLimits.from_config(config))
            with pytest.raises(TooLargeError):
                await fetcher.fetch(str(server.make_url("/b")), user_agent="t", delay=0.0, max_bytes=2 * MiB)
            cut = await fetcher.fetch_bytes(
                str(server.make_url("/b")), user_agent="t", max_bytes=MiB, truncate=True
            )
        finally:
            await session.close()
    assert len(cut.body) == MiB


# -- the engine against a site full of hostile pages ----------------------------------------------

HOSTILE = [
    "bin.html",
    "empty.html",
    "big.html",
    "loop1.html",
    "c1.html",
    "cross.html",
    "latin.html",
    "p1.html",
    "gone.html",
]


@pytest.fixture
async def hostile_site() -> AsyncIterator[tuple[DocSite, str]]:
    docs = DocSite.linked(6)
    docs.pages["/docs/index.html"] = page_html(
        "Index", "Start here.", [f"p{i}.html" for i in range(6)] + HOSTILE
    )
    docs.files["/docs/bin.html"] = (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64, "text/html")
    docs.files["/docs/empty.html"] = (b"", "text/html")
    docs.files["/docs/big.html"] = (doc("Big", "x " * MiB).encode(), "text/html")
    docs.files["/docs/latin.html"] = (
        doc("Déjà vu", "Ça marche très bien", '<meta charset="iso-8859-1">').encode("latin-1"),
        "text/html",
    )
    docs.redirects.update({"/docs/loop1.html": "/docs/loop2.html", "/docs/loop2.html": "/docs/loop1.html"})
    docs.redirects.update({f"/docs/c{i}.html": f"/docs/c{i + 1}.html" for i in range(1, 8)})
    docs.pages["/docs/c8.html"] = page_html("Chain end", "reached", [])
    docs.resets["/docs/p1.html"] = 2  # cut twice mid-body, then served
    server = await start(docs)
    base = f"http://127.0.0.1:{server.port}"
    docs.redirects["/docs/cross.html"] = f"http://localhost:{server.port}/docs/p2.html"
    try:
        yield docs, base
    finally:
        await server.close()


def make_config(tmp_path: Path, base: str, **globals_: Any) -> Config:
    data = {
        "output_base_dir": str(tmp_path / "out"),
        "state_dir": str(tmp_path / "state"),
        "num_workers": 4,
        "max_retries": 3,
        "initial_retry_delay": "5ms",
        "max_retry_delay": "20ms",
        "max_redirects": 3,
        "max_page_size_bytes": 256 * 1024,
        "http_client_settings": {"allow_private_networks": True, "timeout": "5s"},
        "sites": {
            "demo": {
                "start_urls": [base + "/docs/index.html"],
                "allowed_domain": "127.0.0.1",
                "allowed_path_prefix": "/docs",
                "use_sitemaps": False,
            }
        },
        **globals_,
    }
    return config_from_dict(data)


async def test_a_crawl_through_hostile_pages_writes_every_real_page_and_names_each_skip(
    tmp_path: Path, hostile_site: tuple[DocSite, str]
) -> None:
    docs, base = hostile_site
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    root = Path(config.output_base_dir) / "demo"
    files = {str(p.relative_to(root)) for p in root.rglob("*.md")}
    assert {"index.md", "latin.md"} | {f"p{i}.md" for i in range(6)} <= files
    assert not {"bin.md", "empty.md", "big.md", "loop1.md", "c1.md", "cross.md"} & files
    # Resets mid-body were retried: p1 was asked for three times and written once.
    assert docs.requests["/docs/p1.html"] == 3
    assert summary.retries >= 2
    assert "Ça marche très bien" in (root / "latin.md").read_text(encoding="utf-8")
    assert summary.skipped.get("too_large") == 1
    assert summary.skipped.get("redirect_loop") == 1
    assert summary.skipped.get("too_many_redirects") == 1
    assert summary.skipped.get("domain") == 1  # the cross-host hop was refused, not followed
    assert summary.failed >= 2  # binary and empty bodies (and the 404) are failures, not pages
    assert docs.requests["/docs/c5.html"] == 0  # the chain was cut at max_redirects
    assert "/docs/p2.html" in docs.requests  # reached through its own link, not the foreign host
