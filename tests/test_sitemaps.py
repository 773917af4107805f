"""Sitemap parsing over bytes and discovery through an injected fetch."""

from __future__ import annotations

import asyncio
import gzip
import inspect
import zlib

from doc_scraper.errors import HTTPStatusError
from doc_scraper.frontier.sitemaps import (
    SITEMAP_MAX_BYTES,
    SitemapURL,
    discover_sitemaps,
    parse_sitemap,
)
from doc_scraper.models import FetchResult

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
URLSET = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset {NS} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc> https://docs.example/a </loc><lastmod>2024-05-01</lastmod></url>
  <url>
    <loc>https://docs.example/b?x=1&amp;y=2</loc>
    <image:image><image:loc>https://docs.example/img.png</image:loc></image:image>
  </url>
  <url><lastmod>2024-01-01</lastmod></url>
</urlset>
""".encode()

INDEX = f"""<?xml version="1.0"?>
<sitemapindex {NS}>
  <sitemap><loc>https://docs.example/s1.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
  <sitemap><loc>https://docs.example/s2.xml.gz</loc></sitemap>
</sitemapindex>
""".encode()


def _urlset(*locs: str) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f"<urlset {NS}>{entries}</urlset>".encode()


def test_a_urlset_gives_pages_with_lastmod_and_ignores_image_locs() -> None:
    urls, children = parse_sitemap(URLSET)
    assert urls == [
        SitemapURL("https://docs.example/a", "2024-05-01"),
        SitemapURL("https://docs.example/b?x=1&y=2", None),
    ]
    assert children == []
    assert urls[0].url == urls[0].loc


def test_an_index_gives_child_sitemaps() -> None:
    urls, children = parse_sitemap(INDEX)
    assert urls == []
    assert children == ["https://docs.example/s1.xml", "https://docs.example/s2.xml.gz"]


def test_a_sitemap_without_namespace_still_parses() -> None:
    urls, _ = parse_sitemap(b"<urlset><url><loc>https://docs.example/x</loc></url></urlset>")
    assert urls == [SitemapURL("https://docs.example/x")]


def test_gzip_is_recognised_by_its_magic_bytes() -> None:
    urls, _ = parse_sitemap(gzip.compress(URLSET))
    assert [u.loc for u in urls] == ["https://docs.example/a", "https://docs.example/b?x=1&y=2"]


def test_a_truncated_file_keeps_the_entries_before_the_cut() -> None:
    body = _urlset(*(f"https://docs.example/p{i}" for i in range(100)))
    cut = body[: body.index(b"/p50<")]
    urls, _ = parse_sitemap(cut)
    assert [u.loc for u in urls] == [f"https://docs.example/p{i}" for i in range(50)]
    truncated_gzip = gzip.compress(body)[:-40]
    assert len(parse_sitemap(truncated_gzip)[0]) > 50


def test_broken_xml_keeps_what_came_before_the_error() -> None:
    body = f"<urlset {NS}><url><loc>https://docs.example/ok</loc></url><url><loc>x</lo></url>".encode()
    urls, _ = parse_sitemap(body)
    assert urls == [SitemapURL("https://docs.example/ok")]


def test_a_plain_text_sitemap_is_accepted() -> None:
    body = b"\xef\xbb\xbfhttps://docs.example/a\n\n  https://docs.example/b  \nnot a url\nftp://x/y\n"
    urls, children = parse_sitemap(body)
    assert urls == [SitemapURL("https://docs.example/a"), SitemapURL("https://docs.example/b")]
    assert children == []


def test_at_most_50000_urls_are_taken_from_one_file() -> None:
    assert inspect.signature(parse_sitemap).parameters["max_urls"].default == 50_000
    body = _urlset(*(f"https://docs.example/p{i}" for i in range(510)))
    urls, _ = parse_sitemap(body, max_urls=500)
    assert len(urls) == 500
    assert (
        len(
            parse_sitemap(
                body.replace(b"<url>", b"<sitemap>").replace(b"</url>", b"</sitemap>"), max_urls=500
            )[1]
        )
        == 500
    )


def test_a_gzip_bomb_stops_at_the_size_cap() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = compressor.compress(f"<urlset {NS}><url><loc>https://docs.example/a</loc></url>".encode())
    head += compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    bomb = head + again * 100 + compressor.flush()  # ~100 MiB of spaces once inflated
    urls, _ = parse_sitemap(bomb, max_bytes=4 << 20)
    assert urls == [SitemapURL("https://docs.example/a")]  # parsed up to the cap, no more
    assert SITEMAP_MAX_BYTES == 50 << 20


def test_entity_declarations_are_refused() -> None:
    body = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>
<urlset><url><loc>https://docs.example/&lol;</loc></url></urlset>"""
    assert parse_sitemap(body) == ([], [])


def test_empty_bodies_give_nothing() -> None:
    assert parse_sitemap(b"") == ([], [])
    assert parse_sitemap(b"   \n") == ([], [])


class SiteFetch:
    """Serves sitemap bodies from a dict; missing URLs answer 404."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.calls: list[str] = []

    async def __call__(self, url: str, *, user_agent: str, max_bytes: int, truncate: bool) -> FetchResult:
        assert user_agent == "ua/1"
        assert truncate
        self.calls.append(url)
        await asyncio.sleep(0)
        if url not in self.files:
            raise HTTPStatusError(url, 404)
        return FetchResult(url=url, final_url=url, status=200, headers={}, body=self.files[url])


async def test_discovery_follows_indexes_from_robots_and_the_default_location() -> None:
    fetch = SiteFetch(
        {
            "https://docs.example/robots-map.xml": INDEX,
            "https://docs.example/s1.xml": _urlset("https://docs.example/a", "https://docs.example/b"),
            "https://docs.example/s2.xml.gz": gzip.compress(
                _urlset("https://docs.example/b", "https://docs.example/c")
            ),
            "https://docs.example/sitemap.xml": _urlset("https://docs.example/d"),
        }
    )
    urls = await discover_sitemaps(
        fetch, "https://docs.example", ["https://docs.example/robots-map.xml"], user_agent="ua/1"
    )
    assert [u.loc for u in urls] == [
        "https://docs.example/d",
        "https://docs.example/a",
        "https://docs.example/b",
        "https://docs.example/c",
    ]
    assert fetch.calls[:2] == ["https://docs.example/robots-map.xml", "https://docs.example/sitemap.xml"]
    assert len(fetch.calls) == 4


async def test_discovery_survives_missing_files_and_index_cycles() -> None:
    cyclic = f"<sitemapindex {NS}><sitemap><loc>https://docs.example/sitemap.xml</loc></sitemap>"
    cyclic += "<sitemap><loc>https://docs.example/gone.xml</loc></sitemap></sitemapindex>"
    fetch = SiteFetch({"https://docs.example/sitemap.xml": cyclic.encode()})
    assert await discover_sitemaps(fetch, "https://docs.example/", [], user_agent="ua/1") == []
    assert fetch.calls == ["https://docs.example/sitemap.xml", "https://docs.example/gone.xml"]


async def test_discovery_limits_index_depth_and_file_count() -> None:
    files: dict[str, bytes] = {}
    for level in range(6):
        files[f"https://docs.example/i{level}.xml"] = (
            f"<sitemapindex><sitemap><loc>https://docs.example/i{level + 1}.xml</loc></sitemap>"
            f"</sitemapindex>"
        ).encode()
    fetch = SiteFetch(files)
    await discover_sitemaps(fetch, "https://docs.example", ["https://docs.example/i0.xml"], user_agent="ua/1")
    assert "https://docs.example/i3.xml" in fetch.calls
    assert "https://docs.example/i4.xml" not in fetch.calls

    many = {f"https://docs.example/m{i}.xml": _urlset(f"https://docs.example/p{i}") for i in range(80)}
    fetch = SiteFetch(many)
    urls = await discover_sitemaps(fetch, "https://docs.example", list(many), user_agent="ua/1", max_files=50)
    assert len(fetch.calls) == 50
    assert len(urls) == 50
