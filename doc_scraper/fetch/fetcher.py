"""GET one URL politely and safely: limits, retries, redirects, size cap, error mapping.

Layers, outermost first: ``fetch`` / ``fetch_bytes`` follow redirects by hand
(each hop re-checked by the caller's scope test and the SSRF guard);
``_fetch_with_retry`` retries one hop under ``RetryPolicy``; ``_fetch_once``
takes a ``HostLimits`` slot, sends one request and maps aiohttp's errors to
ours exactly once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

import aiohttp

from doc_scraper.errors import (
    BlockedError,
    ConnectError,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    TooLargeError,
)
from doc_scraper.fetch.retry import RetryPolicy, parse_retry_after
from doc_scraper.fetch.session import SSRFBlockedOSError, host_blocked_reason
from doc_scraper.models import FetchResult
from doc_scraper.urls import host_key, try_normalize_url

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from doc_scraper.config.schema import Config
    from doc_scraper.fetch.limits import HostLimits

__all__ = ["BYTES_MAX_DEFAULT", "HTML_CONTENT_TYPES", "Fetcher", "is_html"]

logger = logging.getLogger(__name__)

HTML_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml"})
BYTES_MAX_DEFAULT = 10 * 1024 * 1024
_CHUNK = 64 * 1024
_HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


def is_html(content_type: str) -> bool:
    """True for HTML media types; an empty (missing) type counts as HTML."""
    return not content_type or content_type in HTML_CONTENT_TYPES


@dataclass(frozen=True, slots=True)
class _Hop:
    """One response, before redirects are followed."""

    status: int
    headers: dict[str, str]
    body: bytes
    content_type: str
    charset: str | None
    location: str | None = None


def _media_type(header: str) -> str:
    return header.split(";", 1)[0].strip().lower()


def _lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out and key != "set-cookie" else value
    return out


def _check_url(url: str) -> None:
    """Raise ``FetchError`` for a URL aiohttp cannot request."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parses the port
    except ValueError as exc:
        raise FetchError(url, f"invalid URL: {exc}") from exc
    if not parts.hostname:
        raise FetchError(url, "invalid URL: no host")


def _drop_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


class Fetcher:
    """Fetches pages and small files through one session, one ``HostLimits`` and one retry policy."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        limits: HostLimits,
        retry: RetryPolicy,
        *,
        max_redirects: int = 10,
        allow_private_networks: bool = False,
        max_retry_delay: float = 30.0,
        initial_retry_delay: float = 1.0,
    ) -> None:
        self._session = session
        self._limits = limits
        self._retry = retry
        self._max_redirects = max(0, max_redirects)
        self._allow_private = allow_private_networks
        self._max_retry_delay = max_retry_delay
        self._initial_retry_delay = initial_retry_delay
        self._overloads: dict[str, int] = {}  # host -> consecutive 429/503 answers
        self.retries = 0  # retries made by this fetcher so far, all URLs

    @classmethod
    def from_config(cls, config: Config, session: aiohttp.ClientSession, limits: HostLimits) -> Fetcher:
        return cls(
            session,
            limits,
            RetryPolicy.from_config(config),
            max_redirects=config.max_redirects,
            allow_private_networks=config.http_client_settings.allow_private_networks,
            max_retry_delay=config.max_retry_delay,
            initial_retry_delay=config.initial_retry_delay,
        )

    async def fetch(
        self,
        url: str,
        *,
        user_agent: str,
        delay: float,
        etag: str | None = None,
        last_modified: str | None = None,
        max_bytes: int,
        accept_html_only: bool = True,
        check_redirect: Callable[[str], str | None] | None = None,
    ) -> FetchResult:
        """GET a page. 304 is a result (``not_modified``), not an error.

        With ``accept_html_only`` a non-HTML response comes back with its
        ``content_type`` set and an empty body (not read). Raises
        ``HTTPStatusError`` (4xx/5xx after retries), ``FetchTimeout``,
        ``ConnectError``, ``TooLargeError`` (body over ``max_bytes``) and
        ``BlockedError`` (reason ``ssrf``, ``too_many_redirects``,
        ``redirect_loop``, ``scheme`` or whatever ``check_redirect`` returned).
        """
        headers = {"User-Agent": user_agent, "Accept": _HTML_ACCEPT}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        return await self._follow(
            url,
            headers=headers,
            delay=delay,
            max_bytes=max_bytes,
            html_only=accept_html_only,
            truncate=False,
            check_redirect=check_redirect,
        )

    async def fetch_bytes(
        self,
        url: str,
        *,
        user_agent: str,
        max_bytes: int = BYTES_MAX_DEFAULT,
        delay: float = 0.0,
        truncate: bool = False,
        check_redirect: Callable[[str], str | None] | None = None,
    ) -> FetchResult:
        """GET any content type (robots.txt, sitemaps); no conditional headers.

        With ``truncate`` a body over ``max_bytes`` is cut to ``max_bytes``
        instead of raising ``TooLargeError`` (robots.txt: parse the first 512 KiB).
        """
        return await self._follow(
            url,
            headers={"User-Agent": user_agent, "Accept": "*/*"},
            delay=delay,
            max_bytes=max_bytes,
            html_only=False,
            truncate=truncate,
            check_redirect=check_redirect,
        )

    async def _follow(
        self,
        url: str,
        *,
        headers: dict[str, str],
        delay: float,
        max_bytes: int,
        html_only: bool,
        truncate: bool,
        check_redirect: Callable[[str], str | None] | None,
    ) -> FetchResult:
        started = time.monotonic()
        _check_url(url)
        current = _drop_fragment(url)
        seen = {try_normalize_url(current) or current}
        hops: list[str] = []
        attempts = 0
        while True:
            hop, n = await self._fetch_with_retry(
                current,
                headers=headers,
                delay=delay,
                max_bytes=max_bytes,
                html_only=html_only,
                truncate=truncate,
            )
            attempts += n
            if hop.location is None:
                break
            try:
                target = _drop_fragment(urljoin(current, hop.location.strip()))
                if urlsplit(target).scheme.lower() not in ("http", "https"):
                    raise BlockedError(url, f"redirect to non-HTTP URL {target}", reason="scheme")
                _check_url(target)
            except ValueError as exc:
                raise BlockedError(url, f"redirect to an invalid URL: {exc}", reason="invalid") from exc
            except BlockedError:
                raise
            except FetchError as exc:
                raise BlockedError(url, f"redirect to an invalid URL: {exc}", reason="invalid") from exc
            if len(hops) >= self._max_redirects:
                raise BlockedError(
                    url,
                    f"more than {self._max_redirects} redirects (last to {target}); raise max_redirects",
                    reason="too_many_redirects",
                )
            key = try_normalize_url(target) or target
            if key in seen:
                raise BlockedError(url, f"redirect loop at {target}", reason="redirect_loop")
            seen.add(key)
            if check_redirect is not None:
                reason = check_redirect(target)
                if reason:
                    raise BlockedError(url, f"redirect to {target} refused: {reason}", reason=reason)
            logger.debug("fetch.redirect", extra={"url": current, "target": target, "status": hop.status})
            hops.append(target)
            current = target
        return FetchResult(
            url=url,
            final_url=current,
            status=hop.status,
            headers=hop.headers,
            body=hop.body,
            content_type=hop.content_type,
            charset=hop.charset,
            elapsed_ms=(time.monotonic() - started) * 1000.0,
            attempts=attempts,
            redirects=tuple(hops),
        )

    async def _fetch_with_retry(
        self,
        url: str,
        *,
        headers: dict[str, str],
        delay: float,
        max_bytes: int,
        html_only: bool,
        truncate: bool,
    ) -> tuple[_Hop, int]:
        async def once() -> _Hop:
            return await self._fetch_once(
                url, headers=headers, delay=delay, max_bytes=max_bytes, html_only=html_only, truncate=truncate
            )

        try:
            hop, attempts = await self._retry.call(once, url=url)
        except FetchError as exc:
            self.retries += getattr(exc, "attempts", 1) - 1
            raise
        self.retries += attempts - 1
        return hop, attempts

    async def _fetch_once(
        self,
        url: str,
        *,
        headers: dict[str, str],
        delay: float,
        max_bytes: int,
        html_only: bool,
        truncate: bool,
    ) -> _Hop:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if not self._allow_private:
            reason = host_blocked_reason(host)
            if reason:
                raise BlockedError(
                    url,
                    f"address {host} is {reason}; set allow_private_networks to allow it",
                    reason="ssrf",
                )
        key = host_key(url)
        async with self._limits.slot(key, delay=delay):
            started = time.monotonic()
            try:
                hop = await self._request(url, key, headers, max_bytes, html_only, truncate)
            except SSRFBlockedOSError as exc:
                raise BlockedError(url, str(exc), reason="ssrf") from exc
            except aiohttp.ClientConnectorError as exc:
                if isinstance(exc.os_error, SSRFBlockedOSError):
                    raise BlockedError(url, str(exc.os_error), reason="ssrf") from exc
                raise ConnectError(url, f"cannot connect: {exc.os_error or exc}") from exc
            except aiohttp.InvalidURL as exc:
                raise FetchError(url, f"invalid URL: {exc}") from exc
            except TimeoutError as exc:  # also aiohttp.ServerTimeoutError and its subclasses
                raise FetchTimeout(url, "timed out") from exc
            except aiohttp.ClientError as exc:  # disconnects, resets, broken payloads
                raise ConnectError(url, f"connection failed: {type(exc).__name__}: {exc}") from exc
            logger.debug(
                "fetch.response",
                extra={
                    "url": url,
                    "status": hop.status,
                    "bytes": len(hop.body),
                    "ms": round((time.monotonic() - started) * 1000.0, 1),
                },
            )
            return hop

    def _overloaded(self, key: str, retry_after: float | None) -> None:
        """Slow the whole host down after 429/503: Retry-After, else a pause doubling per repeat."""
        count = self._overloads.get(key, 0) + 1
        self._overloads[key] = count
        pause = self._initial_retry_delay * 2.0 ** (count - 1)
        if retry_after is not None:
            pause = max(pause, retry_after)
        self._limits.penalize(key, min(pause, self._max_retry_delay))
        if count > 1:
            logger.info("fetch.host_overloaded", extra={"host": key, "in_a_row": count})

    async def _request(
        self,
        url: str,
        key: str,
        headers: dict[str, str],
        max_bytes: int,
        html_only: bool,
        truncate: bool,
    ) -> _Hop:
        async with self._session.get(url, headers=headers, allow_redirects=False) as resp:
            status = resp.status
            resp_headers = _lower_headers(resp.headers)
            content_type = _media_type(resp_headers.get("content-type", ""))
            charset = resp.charset
            if status in (429, 503):
                self._overloaded(key, parse_retry_after(resp_headers.get("retry-after")))
            elif status < 500:
                self._overloads.pop(key, None)
                self._limits.relax(key)
            if status == 304 or (100 <= status < 200) or status == 204:
                return _Hop(status, resp_headers, b"", content_type, charset)
            if 300 <= status < 400:
                location = resp_headers.get("location")
                if not location:
                    raise HTTPStatusError(url, status)
                return _Hop(status, resp_headers, b"", content_type, charset, location=location)
            if status >= 400:
                raise HTTPStatusError(url, status, parse_retry_after(resp_headers.get("retry-after")))
            if html_only and not is_html(content_type):
                return _Hop(status, resp_headers, b"", content_type, charset)
            body = await _read_capped(resp, url, max_bytes, truncate)
            return _Hop(status, resp_headers, body, content_type, charset)


async def _read_capped(resp: aiohttp.ClientResponse, url: str, max_bytes: int, truncate: bool) -> bytes:
    """Stream the (decompressed) body, never holding more than ``max_bytes`` + one chunk."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes and not truncate:
        raise TooLargeError(url, f"Content-Length {declared} is over the {max_bytes}-byte limit")
    chunks: list[bytes] = []
    total = 0
    async for chunk in resp.content.iter_chunked(_CHUNK):
        total += len(chunk)
        if total > max_bytes:
            if truncate:
                chunks.append(chunk[: len(chunk) - (total - max_bytes)])
                break
            raise TooLargeError(url, f"body is over the {max_bytes}-byte limit; raise max_page_size_bytes")
        chunks.append(chunk)
    return b"".join(chunks)
