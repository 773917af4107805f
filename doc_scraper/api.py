"""Operations every front end uses (CLI, MCP, watch, run).

Front ends call these and nothing below them; they take a loaded ``Config``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from doc_scraper.config.schema import Config
    from doc_scraper.models import CrawlProgress, CrawlSummary

CRAWL_MODES = ("full", "incremental", "resume")


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
