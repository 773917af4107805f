"""Sitemaps: parse urlsets and indexes (pure, over bytes) and discover them for an origin.

``parse_sitemap`` takes the raw body: gzip is recognised by its magic bytes and
inflated in bounded steps (at most 50 MiB, the protocol's limit, so a
compression bomb cannot grow past it); XML is read incrementally and whatever
came before a truncation or syntax error is kept; a plain-text sitemap (one
URL per line) is accepted too. At most 50,000 URLs are taken from one file.
"""

from __future__ import annotations

import asyncio
import logging
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from doc_scraper.errors import FetchError

if TYPE_CHECKING:
    from doc_scraper.models import FetchResult

__all__ = [
    "MAX_INDEX_DEPTH",
    "MAX_SITEMAP_FILES",
    "SITEMAP_MAX_BYTES",
    "SITEMAP_MAX_URLS",
    "SitemapFetch",
    "SitemapURL",
    "discover_sitemaps",
    "parse_sitemap",
]

logger = logging.getLogger(__name__)

SITEMAP_MAX_BYTES = 50 * 1024 * 1024  # uncompressed, per file (sitemaps.org)
SITEMAP_MAX_URLS = 50_000  # per file (sitemaps.org)
MAX_SITEMAP_FILES = 50  # per discovery
MAX_INDEX_DEPTH = 3  # index -> index -> index -> urlset
DEFAULT_MAX_TOTAL_URLS = 500_000

_GZIP_MAGIC = b"\x1f\x8b"
_STEP = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SitemapURL:
    """One ``<url>`` entry: the page and its ``<lastmod>`` text (W3C datetime) if any."""

    loc: str
    lastmod: str | None = None

    @property
    def url(self) -> str:
        """The same as ``loc``."""
        return self.loc


class SitemapFetch(Protocol):
    """The shape of ``Fetcher.fetch_bytes`` that discovery needs."""

    async def __call__(self, url: str, *, user_agent: str, max_bytes: int, truncate: bool) -> FetchResult: ...


def _gunzip_capped(body: bytes, limit: int) -> bytes:
    """Inflate gzip data, stopping at ``limit`` bytes or at the first corrupt byte."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out: list[bytes] = []
    total = 0
    data = body
    try:
        while data and total < limit:
            chunk = inflater.decompress(data, min(_STEP, limit - total))
            out.append(chunk)
            total += len(chunk)
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
    except zlib.error:
        logger.debug("sitemap.gzip_corrupt", extra={"bytes_ok": total})
    return b"".join(out)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


def _parse_text(data: bytes, max_urls: int) -> list[SitemapURL]:
    urls: list[SitemapURL] = []
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if line.startswith(("http://", "https://")):
            urls.append(SitemapURL(line))
            if len(urls) >= max_urls:
                break
    return urls


def _parse_xml(data: bytes, max_urls: int) -> tuple[list[SitemapURL], list[str]]:
    urls: list[SitemapURL] = []
    children: list[str] = []
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    stack: list[str] = []
    loc: str | None = None
    lastmod: str | None = None
    for start in range(0, len(data), _STEP):
        try:
            parser.feed(data[start : start + _STEP])
            for item in parser.read_events():
                if len(item) != 2 or not isinstance(item[1], ET.Element):
                    continue  # start-ns / end-ns events carry no element
                event, elem = item[0], item[1]
                name = _local(elem.tag)
                if event == "start":
                    stack.append(name)
                    continue
                stack.pop()
                parent = stack[-1] if stack else ""
                if name == "loc" and parent in ("url", "sitemap"):
                    loc = (elem.text or "").strip() or None
                elif name == "lastmod" and parent in ("url", "sitemap"):
                    lastmod = (elem.text or "").strip() or None
                elif name in ("url", "sitemap"):
                    if loc and name == "url":
                        urls.append(SitemapURL(loc, lastmod))
                    elif loc:
                        children.append(loc)
                    loc = lastmod = None
                    elem.clear()
                    if len(urls) >= max_urls or len(children) >= max_urls:
                        return urls, children
        except ET.ParseError as exc:
            # Truncated or broken XML: keep every entry that closed before the error.
            logger.debug("sitemap.xml_error", extra={"error": str(exc), "urls": len(urls)})
            return urls, children
    return urls, children


def parse_sitemap(
    body: bytes, *, max_urls: int = SITEMAP_MAX_URLS, max_bytes: int = SITEMAP_MAX_BYTES
) -> tuple[list[SitemapURL], list[str]]:
    """Page entries and child sitemap URLs (from an index) found in one sitemap file."""
    data = _gunzip_capped(body, max_bytes) if body[:2] == _GZIP_MAGIC else body[:max_bytes]
    data = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not data:
        return [], []
    if not data.startswith(b"<"):
        return _parse_text(data, max_urls), []
    head = data[:4096]
    if b"<!ENTITY" in head or b"<!entity" in head:
        # Sitemaps never need entity declarations; refusing them avoids expansion attacks.
        logger.warning("sitemap.entities_refused", extra={"bytes": len(data)})
        return [], []
    return _parse_xml(data, max_urls)


async def discover_sitemaps(
    fetch: SitemapFetch,
    origin: str,
    robots_sitemaps: list[str] | tuple[str, ...],
    *,
    user_agent: str,
    max_files: int = MAX_SITEMAP_FILES,
    max_depth: int = MAX_INDEX_DEPTH,
    max_urls: int = DEFAULT_MAX_TOTAL_URLS,
) -> list[SitemapURL]:
    """Every page entry reachable from the origin's sitemaps, deduplicated by ``loc``.

    Starts from the robots.txt ``Sitemap:`` URLs, then ``<origin>/sitemap.xml``;
    follows indexes up to ``max_depth`` levels and ``max_files`` fetches. A file
    that cannot be fetched is skipped (logged). The caller filters the URLs by
    scope: robots.txt may name sitemaps, and sitemaps pages, on other hosts.
    """
    pending: list[tuple[str, int]] = [(u, 0) for u in robots_sitemaps]
    pending.append((origin.rstrip("/") + "/sitemap.xml", 0))
    queued = {u for u, _ in pending}
    found: dict[str, SitemapURL] = {}
    fetched = 0
    while pending and fetched < max_files and len(found) < max_urls:
        url, depth = pending.pop(0)
        fetched += 1
        try:
            result = await fetch(url, user_agent=user_agent, max_bytes=SITEMAP_MAX_BYTES, truncate=True)
        except FetchError as exc:
            logger.debug("sitemap.unavailable", extra={"url": url, "error": type(exc).__name__})
            continue
        if not 200 <= result.status < 300 or not result.body:
            continue
        entries, children = await asyncio.to_thread(parse_sitemap, result.body)
        for entry in entries:
            if entry.loc not in found:
                found[entry.loc] = entry
                if len(found) >= max_urls:
                    break
        for child in children:
            if child not in queued and depth + 1 <= max_depth:
                queued.add(child)
                pending.append((child, depth + 1))
        logger.debug(
            "sitemap.parsed",
            extra={"url": url, "urls": len(entries), "children": len(children), "depth": depth},
        )
    if pending:
        logger.info("sitemap.limit_reached", extra={"origin": origin, "skipped_files": len(pending)})
    return list(found.values())
