"""robots.txt per origin (RFC 9309): parse with protego, fetch once, cache.

What a robots.txt fetch means for the origin (``RobotsCache``):

* 2xx: the rules in the body (first 512 KiB);
* 4xx except 429, a redirect loop or a blocked redirect: no usable file, allow all;
* 429, 5xx, timeout, connection failure: unreachable, disallow all, and try
  again after ``failure_ttl`` (10 minutes);
* good answers are kept ``success_ttl`` (24 hours), then fetched again.

The fetch function is injected (the engine passes ``Fetcher.fetch_bytes``), so
robots.txt goes through the same guarded session, limits and retries as pages.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from protego import Protego

from doc_scraper.errors import BlockedError, FetchError, HTTPStatusError
from doc_scraper.urls import origin

if TYPE_CHECKING:
    from collections.abc import Callable

    from doc_scraper.models import FetchResult

__all__ = ["ROBOTS_MAX_BYTES", "RobotsCache", "RobotsFetch", "RobotsRules"]

logger = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309 asks parsers to read at least 500 KiB
DEFAULT_FAILURE_TTL = 600.0
DEFAULT_SUCCESS_TTL = 24 * 3600.0


class RobotsFetch(Protocol):
    """The shape of ``Fetcher.fetch_bytes`` that robots.txt needs."""

    async def __call__(self, url: str, *, user_agent: str, max_bytes: int, truncate: bool) -> FetchResult: ...


class _HasFetchBytes(Protocol):
    @property
    def fetch_bytes(self) -> RobotsFetch: ...


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules of one origin; ``mode`` is "rules", "allow_all" or "disallow_all"."""

    mode: str
    parser: Protego | None = None
    reason: str = ""  # why allow_all / disallow_all ("404", "unreachable: HTTP_503", ...)

    @classmethod
    def parse(cls, body: bytes | str) -> RobotsRules:
        text = body.decode("utf-8-sig", errors="replace") if isinstance(body, bytes) else body
        return cls("rules", Protego.parse(text))

    @classmethod
    def allow_all(cls, reason: str = "") -> RobotsRules:
        return cls("allow_all", reason=reason)

    @classmethod
    def disallow_all(cls, reason: str = "") -> RobotsRules:
        return cls("disallow_all", reason=reason)

    def can_fetch(self, url: str, user_agent: str) -> bool:
        """True if ``user_agent`` may fetch ``url`` (longest match wins, Allow on ties)."""
        if urlsplit(url).path == "/robots.txt":
            return True
        if self.mode == "allow_all":
            return True
        if self.mode == "disallow_all" or self.parser is None:
            return False
        return bool(self.parser.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str) -> float | None:
        """The group's Crawl-delay in seconds (fractions allowed), or None."""
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return None if delay is None else max(0.0, float(delay))

    @property
    def sitemaps(self) -> list[str]:
        """Sitemap URLs declared in the file (any group)."""
        return [] if self.parser is None else list(self.parser.sitemaps)


@dataclass(slots=True)
class _Entry:
    rules: RobotsRules
    expires: float


class RobotsCache:
    """Rules per origin (scheme, host, port), fetched once and shared by all callers."""

    def __init__(
        self,
        fetch: RobotsFetch | _HasFetchBytes,
        *,
        failure_ttl: float = DEFAULT_FAILURE_TTL,
        success_ttl: float = DEFAULT_SUCCESS_TTL,
        max_bytes: int = ROBOTS_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # A Fetcher may be passed as is: its fetch_bytes has the RobotsFetch shape.
        self._fetch: RobotsFetch = fetch.fetch_bytes if hasattr(fetch, "fetch_bytes") else fetch
        self._failure_ttl = failure_ttl
        self._success_ttl = success_ttl
        self._max_bytes = max_bytes
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def cached(self, url: str) -> RobotsRules | None:
        """The rules for ``url``'s origin if fetched and still fresh, without fetching."""
        entry = self._entries.get(origin(url))
        if entry is None or entry.expires <= self._clock():
            return None
        return entry.rules

    async def rules_for(self, url: str, user_agent: str) -> RobotsRules:
        """The rules for ``url``'s origin, fetching robots.txt (with ``user_agent``) if needed."""
        key = origin(url)
        rules = self.cached(url)
        if rules is not None:
            return rules
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            rules = self.cached(url)  # another caller may have fetched it meanwhile
            if rules is None:
                rules, ttl = await self._load(key, user_agent)
                self._entries[key] = _Entry(rules, self._clock() + ttl)
        return rules

    get = rules_for  # alias: ``await cache.get(origin_or_url, user_agent)``

    async def can_fetch(self, url: str, user_agent: str) -> bool:
        return (await self.rules_for(url, user_agent)).can_fetch(url, user_agent)

    async def _load(self, key: str, user_agent: str) -> tuple[RobotsRules, float]:
        robots_url = key + "/robots.txt"
        try:
            result = await self._fetch(
                robots_url, user_agent=user_agent, max_bytes=self._max_bytes, truncate=True
            )
        except HTTPStatusError as exc:
            if 400 <= exc.status < 500 and exc.status != 429:
                logger.debug("robots.missing", extra={"origin": key, "status": exc.status})
                return RobotsRules.allow_all(f"HTTP {exc.status}"), self._success_ttl
            return self._unreachable(key, f"HTTP {exc.status}")
        except BlockedError as exc:
            # Redirect loop, too many redirects, or a redirect the guard refused:
            # RFC 9309 treats an unfollowable robots.txt as unavailable.
            logger.info("robots.unavailable", extra={"origin": key, "reason": exc.reason})
            return RobotsRules.allow_all(f"unavailable: {exc.reason}"), self._success_ttl
        except FetchError as exc:
            return self._unreachable(key, type(exc).__name__)
        if not 200 <= result.status < 300:
            return RobotsRules.allow_all(f"HTTP {result.status}"), self._success_ttl
        rules = RobotsRules.parse(result.body)
        logger.debug(
            "robots.fetched",
            extra={"origin": key, "bytes": len(result.body), "sitemaps": len(rules.sitemaps)},
        )
        return rules, self._success_ttl

    def _unreachable(self, key: str, why: str) -> tuple[RobotsRules, float]:
        logger.warning(
            "robots.unreachable",
            extra={"origin": key, "error": why, "retry_after_s": self._failure_ttl},
        )
        return RobotsRules.disallow_all(f"unreachable: {why}"), self._failure_ttl
