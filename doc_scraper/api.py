"""Operations every front end uses (CLI, MCP, watch, run).

Front ends call these and nothing below them; they take a loaded ``Config``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from doc_scraper.config.schema import Config
    from doc_scraper.index.search import SearchResult
    from doc_scraper.models import CrawlProgress, CrawlSummary, ExtractOptions, ParsedPage

async def crawl_sites(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
) -> list[CrawlSummary]:
    """Crawl the given sites in parallel, sharing global and per-host limits.

    ``mode`` is "full" (fresh crawl, staged and swapped in on success),
    "resume" (continue an interrupted crawl) or "incremental" (conditional
    re-crawl of a finished one). Setting ``stop`` asks for a graceful stop:
    in-flight pages finish, state is flushed, and the crawl stays resumable.
    """
    from doc_scraper.engine import run_crawls

    return await run_crawls(config, site_keys, mode=mode, stop=stop, progress=progress)


def search_docs(
    config: Config, query: str, *, site_key: str | None = None, limit: int = 10
) -> list[SearchResult]:
    """Ranked sections for ``query`` from the local index (no network).

    Errors name the fix: an unknown site lists the valid keys, a missing index
    says which crawl to run first.
    """
    from pathlib import Path

    from doc_scraper.errors import ConfigError, DocScraperError
    from doc_scraper.index.reader import IndexReader

    if site_key is not None and site_key not in config.sites:
        valid = ", ".join(sorted(config.sites)) or "(none)"
        raise ConfigError(f"unknown site {site_key!r} in {config.path}; valid keys: {valid}", key="-site")
    db_path = Path(config.state_dir) / "index.db"
    hint = f"run doc-scraper crawl -site {site_key or 'KEY'} first"
    if not db_path.is_file():
        raise DocScraperError(f"no search index yet at {db_path}; {hint}")
    reader = IndexReader.open(db_path)
    try:
        if site_key is not None and site_key not in reader.sites():
            raise DocScraperError(f"site {site_key!r} has no indexed pages yet; {hint}")
        return reader.search(query, site_key=site_key, limit=limit)
    finally:
        reader.close()


def extract_page(body: bytes, url: str, options: ExtractOptions, charset: str | None = None) -> ParsedPage:
    """Convert one HTML page with the crawl's own code path (detection included)."""
    from doc_scraper.worker import parse_page

    return parse_page(body, url, options, charset)
