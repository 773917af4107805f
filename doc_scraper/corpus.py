"""Read-side operations over crawled sites, shared by the MCP tools and the CLI.

Everything reads the SQLite index (``<state_dir>/index.db``) through
``IndexReader`` on worker threads, so a running crawl never delays an answer
and no call rescans ``pages.jsonl``. ``fetch_live`` is the one operation that
goes to the network: through the same guarded fetcher the crawler uses
(robots.txt, SSRF guard, retries, per-host delay).

Results are plain dicts typed as ``TypedDict``s; the MCP layer publishes them
as output schemas. Failures raise ``DocScraperError`` subclasses whose
messages tell the caller what to do next (which site keys exist, that a
crawl has to run first, ...).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired
from urllib.parse import urlsplit

# pydantic (which derives the MCP output schemas from these) needs typing_extensions.TypedDict on 3.11.
from typing_extensions import TypedDict

from doc_scraper.errors import DocScraperError, QueryError

if TYPE_CHECKING:
    import aiohttp

    from doc_scraper.config.schema import Config, SiteConfig
    from doc_scraper.fetch.fetcher import Fetcher
    from doc_scraper.frontier.robots import RobotsCache
    from doc_scraper.index.history import CrawlInfo as CrawlRow
    from doc_scraper.index.pages import StoredPage
    from doc_scraper.index.reader import IndexReader

logger = logging.getLogger(__name__)

INDEX_FILENAME = "index.db"
MAX_QUERY_CHARS = 1024
DEFAULT_LIST_LIMIT = 100
MAX_LIST_LIMIT = 1000
DEFAULT_READ_BYTES = 102_400
MAX_READ_BYTES = 1_048_576
DEFAULT_SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 50


class CorpusError(DocScraperError):
    """A corpus request that cannot be answered (unknown site, no crawl yet, bad argument)."""


# -- result shapes -------------------------------------------------------------------------------


class SiteInfo(TypedDict):
    key: str
    domain: str
    path_prefix: str
    start_urls: list[str]
    start_urls_count: int
    max_depth: int
    max_pages: int
    pages: int  # pages in the live index (0 = never crawled)
    last_crawled: NotRequired[str]  # RFC 3339 end of the latest finished crawl
    last_crawl_mode: NotRequired[str]
    status: NotRequired[str]  # "running" while a crawl job runs


class PageSummary(TypedDict):
    url: str
    title: str
    depth: int
    crawled_at: str
    content_length: int  # characters of Markdown (read_page counts UTF-8 bytes)


class PageList(TypedDict):
    site_key: str
    pages: list[PageSummary]
    total: int
    offset: int
    max_results: int
    returned: int
    next_offset: NotRequired[int]
    message: NotRequired[str]


class PageContent(TypedDict):
    site_key: str
    url: str
    title: str
    content: str
    content_length: int  # UTF-8 bytes in ``content``
    total_length: int  # UTF-8 bytes of the whole page
    offset: int
    truncated: bool
    depth: int
    crawled_at: str
    content_hash: str
    headings: list[str]
    source: str
    next_offset: NotRequired[int]


class SearchHit(TypedDict):
    site_key: str
    url: str
    title: str
    heading_path: list[str]
    anchor: str
    snippet: str
    rank: int  # 1 = best
    score: float


class SearchResults(TypedDict):
    query: str
    mode: str  # the mode that answered: lexical, dense or hybrid
    count: int
    results: list[SearchHit]
    site_key: NotRequired[str]
    message: NotRequired[str]


class CrawlInfo(TypedDict):
    crawl_id: int
    crawl_started_at: str
    crawl_ended_at: str
    total_pages: int
    mode: str


class Freshness(TypedDict):
    site_key: str
    output_dir: str
    output_exists: bool
    state_dir_exists: bool
    indexed_pages: int  # pages searchable now (the live copy)
    last_crawl_id: NotRequired[int]  # the latest crawl, whatever its status
    last_crawl_started_at: NotRequired[str]
    last_crawl_ended_at: NotRequired[str]
    last_crawl_total_pages: NotRequired[int]
    last_crawl_mode: NotRequired[str]
    last_crawl_status: NotRequired[str]  # running | completed | interrupted
    last_completed_crawl_id: NotRequired[int]
    last_completed_at: NotRequired[str]
    age_seconds: NotRequired[float]  # since the last completed crawl ended


class DiffEntry(TypedDict):
    url: str
    title: str  # "" for removed pages
    content_hash: str
    depth: int
    prior_hash: NotRequired[str]  # changed pages: the hash in the baseline crawl


class CrawlDiff(TypedDict):
    site_key: str
    since: str
    added: list[DiffEntry]
    removed: list[DiffEntry]
    changed: list[DiffEntry]
    unchanged_count: int
    total: int
    returned: int
    offset: int
    max_results: int
    current_crawl: NotRequired[CrawlInfo]
    baseline_crawl: NotRequired[CrawlInfo]
    next_offset: NotRequired[int]
    note: NotRequired[str]


class LivePage(TypedDict):
    url: str
    final_url: str
    status: int
    title: str
    content: str
    content_length: int
    fetch_time_ms: float
    content_selector: str
    framework: str


# -- helpers -------------------------------------------------------------------------------------


def require_site(config: Config, site_key: str) -> SiteConfig:
    """The site's config, or an error that lists the configured keys."""
    site = config.sites.get(site_key.strip())
    if site is None:
        valid = ", ".join(sorted(config.sites)) or "(none: add a site to the config file)"
        raise CorpusError(
            f"unknown site_key {site_key!r}; configured sites: {valid}. "
            "Call list_sites for their domains and crawl status."
        )
    return site


def slice_utf8(text: str, offset: int, max_bytes: int) -> tuple[str, int, int, int]:
    """Cut ``max_bytes`` of ``text``'s UTF-8 from byte ``offset``, never inside a character.

    Returns (piece, start, end, total) in bytes. An offset inside a character
    moves forward to the next character. When the piece is cut short, the cut
    moves back to the last line break in its second half, so Markdown lines
    stay whole where that is cheap.
    """
    data = text.encode("utf-8")
    total = len(data)
    start = min(max(offset, 0), total)
    while start < total and (data[start] & 0xC0) == 0x80:
        start += 1
    end = min(total, start + max(max_bytes, 1))
    while start < end < total and (data[end] & 0xC0) == 0x80:
        end -= 1
    if end < total:
        newline = data.rfind(b"\n", start + (end - start) // 2, end)
        if newline != -1:
            end = newline + 1
    if end == start and start < total:  # one character wider than max_bytes: return it whole
        end = start + 1
        while end < total and (data[end] & 0xC0) == 0x80:
            end += 1
    return data[start:end].decode("utf-8"), start, end, total


def parse_since(text: str) -> datetime:
    """An RFC 3339 timestamp (or a bare date, meaning midnight UTC) as an aware datetime."""
    raw = text.strip()
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise CorpusError(
            f"since: {text!r} is not an RFC 3339 timestamp; "
            "use e.g. 2026-01-31T12:00:00Z (get_freshness shows the crawl times)"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _age_seconds(ended_at: str) -> float | None:
    try:
        ended = datetime.fromisoformat(ended_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if ended.tzinfo is None:
        ended = ended.replace(tzinfo=UTC)
    return round((datetime.now(UTC) - ended).total_seconds(), 3)


# -- the corpus ----------------------------------------------------------------------------------


class Corpus:
    """Read access to every configured site's crawled pages, history and search index."""

    def __init__(self, config: Config, *, index_path: str | Path | None = None) -> None:
        self.config = config
        self.index_path = Path(index_path) if index_path else Path(config.state_dir) / INDEX_FILENAME
        self._reader: IndexReader | None = None
        self._open_lock = asyncio.Lock()
        self._live: LiveFetcher | None = None

    @classmethod
    def from_config(cls, config: Config) -> Corpus:
        return cls(config)

    def output_dir(self, site_key: str) -> Path:
        return Path(self.config.output_base_dir) / site_key

    async def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            await asyncio.to_thread(reader.close)
        live, self._live = self._live, None
        if live is not None:
            await live.close()

    async def _index(self, *, required: bool = True) -> IndexReader | None:
        """The shared ``IndexReader``, opened on first use (None while no index exists)."""
        if self._reader is not None:
            return self._reader
        async with self._open_lock:
            if self._reader is None:
                if not await asyncio.to_thread(self.index_path.is_file):
                    if required:
                        raise CorpusError(
                            "nothing has been crawled yet (no search index at "
                            f"{self.index_path}); call crawl_site with a site_key first"
                        )
                    return None
                from doc_scraper.index.reader import IndexReader

                self._reader = await asyncio.to_thread(IndexReader.open, self.index_path)
        return self._reader

    async def _crawled_index(self, site_key: str) -> IndexReader:
        """The index, after checking ``site_key`` exists and has a crawl with pages."""
        require_site(self.config, site_key)
        index = await self._index(required=False)
        latest = None if index is None else await asyncio.to_thread(index.latest_crawl, site_key)
        if index is None or latest is None:
            raise CorpusError(
                f"site {site_key!r} has not been crawled yet; call crawl_site with "
                f"site_key {site_key!r}, then poll get_job_status until it completes"
            )
        return index

    async def _site_counts(self, index: IndexReader, site_key: str) -> tuple[int, CrawlRow | None]:
        """(pages in the live index, latest completed crawl) of one site."""

        def query() -> tuple[int, CrawlRow | None]:
            _, total = index.list_pages(site_key, 0, 1)
            completed = next((c for c in index.crawls(site_key, 20) if c.status == "completed"), None)
            return total, completed

        return await asyncio.to_thread(query)

    # -- sites ------------------------------------------------------------------------------------

    async def list_sites(self) -> list[SiteInfo]:
        index = await self._index(required=False)
        out: list[SiteInfo] = []
        for key in sorted(self.config.sites):
            site = self.config.sites[key]
            info: SiteInfo = {
                "key": key,
                "domain": site.allowed_domain,
                "path_prefix": site.allowed_path_prefix,
                "start_urls": list(site.start_urls),
                "start_urls_count": len(site.start_urls),
                "max_depth": site.max_depth,
                "max_pages": site.max_pages,
                "pages": 0,
            }
            if index is not None:
                info["pages"], completed = await self._site_counts(index, key)
                if completed is not None:
                    info["last_crawled"] = completed.ended_at or completed.started_at
                    info["last_crawl_mode"] = completed.mode
            out.append(info)
        return out

    # -- pages ------------------------------------------------------------------------------------

    async def list_pages(
        self, site_key: str, *, max_results: int = DEFAULT_LIST_LIMIT, offset: int = 0
    ) -> PageList:
        index = await self._crawled_index(site_key)
        max_results = max(1, min(max_results, MAX_LIST_LIMIT))
        offset = max(0, offset)
        rows, total = await asyncio.to_thread(index.list_pages, site_key, offset, max_results)
        pages: list[PageSummary] = [
            {
                "url": r.url,
                "title": r.title,
                "depth": r.depth,
                "crawled_at": r.crawled_at,
                "content_length": r.size,
            }
            for r in rows
        ]
        result: PageList = {
            "site_key": site_key,
            "pages": pages,
            "total": total,
            "offset": offset,
            "max_results": max_results,
            "returned": len(pages),
        }
        if offset + len(pages) < total:
            result["next_offset"] = offset + len(pages)
        if not pages:
            result["message"] = (
                f"offset {offset} is past the last page (total {total}); use a smaller offset"
                if total
                else f"site {site_key!r} has no pages yet: its first crawl has not completed "
                "(get_freshness shows the crawl state)"
            )
        return result

    async def read_page(
        self, site_key: str, url: str, *, max_bytes: int = DEFAULT_READ_BYTES, offset: int = 0
    ) -> PageContent:
        index = await self._crawled_index(site_key)
        page = await asyncio.to_thread(index.get_page, site_key, url.strip())
        if page is None:
            raise CorpusError(
                f"no page {url!r} in the latest crawl of {site_key!r}; call list_pages "
                f"(site_key {site_key!r}) or search_docs to find the exact URL"
            )
        piece, start, end, total = slice_utf8(page.content, offset, max(1, min(max_bytes, MAX_READ_BYTES)))
        if offset > total:
            raise CorpusError(
                f"offset {offset} is past the end of the page ({total} bytes); "
                "use offset 0 or a next_offset returned by read_page"
            )
        result: PageContent = {
            "site_key": site_key,
            "url": page.url,
            "title": page.title,
            "content": piece,
            "content_length": end - start,
            "total_length": total,
            "offset": start,
            "truncated": end < total,
            "depth": page.depth,
            "crawled_at": page.crawled_at,
            "content_hash": page.content_hash,
            "headings": list(page.headings),
            "source": "stored_crawl",
        }
        if end < total:
            result["next_offset"] = end
        return result

    # -- search -----------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        site_key: str | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        mode: str | None = None,
    ) -> SearchResults:
        """Ranked sections in ``mode`` (None: hybrid when the index has embeddings, else lexical)."""
        from doc_scraper import api
        from doc_scraper.index.query import parse_query

        text = " ".join(query.split())
        if not text:
            raise QueryError("query is empty; pass words to look for, e.g. 'configure retries'")
        if len(text) > MAX_QUERY_CHARS:
            raise QueryError(f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
        parsed = parse_query(text)
        if not parsed.terms and not parsed.identifiers:
            raise QueryError(f"the query {text!r} has no searchable terms; use words or identifiers")
        if site_key:
            await self._crawled_index(site_key)
        index = await self._index()
        assert index is not None  # required=True raises instead
        limit = max(1, min(limit, MAX_SEARCH_LIMIT))
        answer = await asyncio.to_thread(
            api.search_in_index, index, text, site_key=site_key or None, limit=limit, mode=mode
        )
        results: list[SearchHit] = [
            {
                "site_key": hit.site_key,
                "url": hit.url,
                "title": hit.title,
                "heading_path": list(hit.heading_path),
                "anchor": hit.anchor,
                "snippet": hit.snippet,
                "rank": rank,
                "score": hit.score,
            }
            for rank, hit in enumerate(answer.results, start=1)
        ]
        out: SearchResults = {"query": text, "mode": answer.mode, "count": len(results), "results": results}
        if site_key:
            out["site_key"] = site_key
        if not results:
            out["message"] = "no matches; try fewer or different words, or another site_key"
        return out

    # -- history ----------------------------------------------------------------------------------

    async def freshness(self, site_key: str) -> Freshness:
        require_site(self.config, site_key)
        out_dir = self.output_dir(site_key)
        state_dir = Path(self.config.state_dir) / site_key

        def exists() -> tuple[bool, bool]:
            return out_dir.exists(), state_dir.exists()

        out_exists, state_exists = await asyncio.to_thread(exists)
        result: Freshness = {
            "site_key": site_key,
            "output_dir": str(out_dir),
            "output_exists": out_exists,
            "state_dir_exists": state_exists,
            "indexed_pages": 0,
        }
        index = await self._index(required=False)
        if index is None:
            return result
        result["indexed_pages"], completed = await self._site_counts(index, site_key)
        latest = await asyncio.to_thread(index.latest_crawl, site_key)
        if latest is not None:
            result.update(
                {
                    "last_crawl_id": latest.id,
                    "last_crawl_started_at": latest.started_at,
                    "last_crawl_ended_at": latest.ended_at or "",
                    "last_crawl_total_pages": latest.pages,
                    "last_crawl_mode": latest.mode,
                    "last_crawl_status": latest.status,
                }
            )
        if completed is not None:
            result["last_completed_crawl_id"] = completed.id
            result["last_completed_at"] = completed.ended_at or ""
            age = _age_seconds(completed.ended_at or "")
            if age is not None:
                result["age_seconds"] = age
        return result

    async def diff(
        self, site_key: str, since: str, *, max_results: int = DEFAULT_LIST_LIMIT, offset: int = 0
    ) -> CrawlDiff:
        require_site(self.config, site_key)
        when = parse_since(since)
        index = await self._crawled_index(site_key)
        max_results = max(1, min(max_results, MAX_LIST_LIMIT))
        offset = max(0, offset)
        raw = await asyncio.to_thread(index.diff, site_key, when)
        # One list sorted by kind (added, changed, removed) then URL, paged, then split again.
        ordered: list[tuple[str, str, str]] = (
            [("added", u, "") for u in sorted(raw.added)]
            + [("changed", c.url, c.prior_hash) for c in sorted(raw.changed, key=lambda c: c.url)]
            + [("removed", u, "") for u in sorted(raw.removed)]
        )
        window = ordered[offset : offset + max_results]

        def details() -> dict[str, StoredPage | None]:
            return {url: index.get_page(site_key, url) for kind, url, _ in window if kind != "removed"}

        stored = await asyncio.to_thread(details)
        groups: dict[str, list[DiffEntry]] = {"added": [], "changed": [], "removed": []}
        hashes = {c.url: c.content_hash for c in raw.changed}
        for kind, url, prior in window:
            page = stored.get(url)
            entry: DiffEntry = {
                "url": url,
                "title": page.title if page else "",
                "content_hash": page.content_hash if page else hashes.get(url, ""),
                "depth": page.depth if page else 0,
            }
            if kind == "changed":
                entry["content_hash"] = hashes.get(url, entry["content_hash"])
                entry["prior_hash"] = prior
            groups[kind].append(entry)
        result: CrawlDiff = {
            "site_key": site_key,
            "since": format_time(when),
            "added": groups["added"],
            "removed": groups["removed"],
            "changed": groups["changed"],
            "unchanged_count": raw.unchanged,
            "total": len(ordered),
            "returned": len(window),
            "offset": offset,
            "max_results": max_results,
        }
        if raw.current is not None:
            result["current_crawl"] = _crawl_info(raw.current)
        if raw.baseline is not None:
            result["baseline_crawl"] = _crawl_info(raw.baseline)
        if offset + len(window) < len(ordered):
            result["next_offset"] = offset + len(window)
        if raw.note:
            result["note"] = raw.note + (
                "; pick a since between two crawls (get_freshness shows crawl times)"
                if raw.baseline is None and raw.current is not None
                else ""
            )
        return result

    # -- live fetch -------------------------------------------------------------------------------

    async def fetch_live(self, url: str, *, content_selector: str = "auto") -> LivePage:
        """Fetch one page now, politely, and convert its content region to Markdown."""
        if self._live is None:
            self._live = LiveFetcher(self.config)
        return await self._live.fetch(url, content_selector=content_selector)


def _crawl_info(crawl: CrawlRow) -> CrawlInfo:
    return {
        "crawl_id": crawl.id,
        "crawl_started_at": crawl.started_at,
        "crawl_ended_at": crawl.ended_at or "",
        "total_pages": crawl.pages,
        "mode": crawl.mode,
    }


class LiveFetcher:
    """``get_page``: one polite, guarded GET and the same extraction the crawler uses.

    Robots rules are checked with the user agent of the configured site the URL
    belongs to (else ``default_user_agent``), the host's delay (and robots
    ``Crawl-delay``) is kept between live fetches, the fetcher retries transient
    errors and the SSRF guard refuses private addresses unless
    ``http_client_settings.allow_private_networks`` is set.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None
        self._fetcher: Fetcher | None = None
        self._robots: RobotsCache | None = None

    def _start(self) -> tuple[Fetcher, RobotsCache]:
        if self._fetcher is None or self._robots is None:
            from doc_scraper.fetch.fetcher import Fetcher
            from doc_scraper.fetch.limits import HostLimits
            from doc_scraper.fetch.session import make_session
            from doc_scraper.frontier.robots import RobotsCache

            self._session = make_session(self.config)
            limits = HostLimits.from_config(self.config)
            self._fetcher = Fetcher.from_config(self.config, self._session, limits)
            self._robots = RobotsCache(self._fetcher)
        return self._fetcher, self._robots

    def _site_for(self, url: str) -> SiteConfig | None:
        from doc_scraper.urls import url_matches_domain

        for site in self.config.sites.values():
            if url_matches_domain(url, site.allowed_domain):
                return site
        return None

    async def fetch(self, url: str, *, content_selector: str = "auto") -> LivePage:
        from doc_scraper.errors import BlockedError, FetchError
        from doc_scraper.models import ExtractOptions
        from doc_scraper.worker import parse_page

        if urlsplit(url).scheme not in ("http", "https"):
            raise CorpusError(f"url {url!r} must be an absolute http:// or https:// URL")
        started = time.monotonic()
        fetcher, robots = self._start()
        site = self._site_for(url)
        agent = site.user_agent if site else self.config.default_user_agent
        delay = site.delay_per_host if site else self.config.default_delay_per_host
        rules = await robots.rules_for(url, agent)
        if not rules.can_fetch(url, agent):
            raise BlockedError(
                url,
                "robots.txt of this host disallows fetching it; the page cannot be "
                "fetched live (search_docs / read_page may have a crawled copy)",
                reason="robots",
            )
        delay = max(delay, rules.crawl_delay(agent) or 0.0)
        result = await fetcher.fetch(
            url, user_agent=agent, delay=delay, max_bytes=self.config.max_page_size_bytes
        )
        if result.status != 200:
            raise FetchError(url, f"HTTP {result.status}; only a 200 response can be converted")
        if not result.body:
            raise FetchError(
                url,
                f"not an HTML page (content type {result.content_type or 'unknown'}); "
                "get_page converts HTML only",
            )
        options = ExtractOptions(content_selector=content_selector)
        parsed = await asyncio.to_thread(parse_page, result.body, result.final_url, options, result.charset)
        if parsed.needs_javascript:
            raise CorpusError(
                f"{url} is rendered by JavaScript in the browser (framework "
                f"{parsed.detection.framework}); its HTML has no content to convert"
            )
        return {
            "url": url,
            "final_url": result.final_url,
            "status": result.status,
            "title": parsed.title or "Untitled",
            "content": parsed.markdown,
            "content_length": len(parsed.markdown.encode("utf-8")),
            "fetch_time_ms": round((time.monotonic() - started) * 1000, 1),
            "content_selector": parsed.detection.selector or content_selector,
            "framework": parsed.detection.framework,
        }

    async def close(self) -> None:
        session, self._session = self._session, None
        self._fetcher = self._robots = None
        if session is not None:
            await session.close()
