"""The aiohttp client session: timeouts, connection limits and the SSRF guard.

The guard has two halves. Host names go through ``GuardedResolver``, which
refuses the whole answer when any address is loopback, private, link-local,
CGNAT, multicast, unspecified or reserved (IPv4-mapped IPv6 unwrapped). The
connector then connects to exactly the addresses the resolver vetted, so a DNS
answer cannot change between check and connect (rebinding). aiohttp never calls
the resolver for IP literals, so the fetcher checks those with
``ip_blocked_reason`` before each request, redirect hops included.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

if TYPE_CHECKING:
    from doc_scraper.config.schema import Config

__all__ = [
    "DNS_CACHE_TTL",
    "GuardedResolver",
    "SSRFBlockedOSError",
    "host_blocked_reason",
    "ip_blocked_reason",
    "make_session",
    "make_timeout",
]

logger = logging.getLogger(__name__)

DNS_CACHE_TTL = 60  # seconds; answers are cached after vetting
_MAX_CONNECT_TIMEOUT = 15.0
_MAX_READ_TIMEOUT = 30.0

# (attribute of ipaddress objects, reason shown in errors), checked in order.
_BLOCKED_KINDS = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


def ip_blocked_reason(address: str) -> str | None:
    """Why an IP address must not be contacted, or None if it is a public address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "unparsable address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None:
            reason = ip_blocked_reason(str(embedded))
            if reason:
                return reason
    for attr, reason in _BLOCKED_KINDS:
        if getattr(ip, attr):
            return reason
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "carrier-grade NAT"
    if not ip.is_global:
        return "not globally routable"
    return None


def host_blocked_reason(host: str) -> str | None:
    """For an IP-literal host (brackets allowed), why it is blocked; None for names.

    Pure parsing, no DNS: names are vetted by ``GuardedResolver`` at connect time.
    """
    host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        # Legacy numeric IPv4 spellings (2130706433, 127.1, 0x7f000001) that
        # some resolvers map onto an address: check the address they mean.
        try:
            packed = socket.inet_aton(host)
        except OSError:
            return None
        return ip_blocked_reason(str(ipaddress.IPv4Address(packed)))
    return ip_blocked_reason(host)


class SSRFBlockedOSError(OSError):
    """Raised by the resolver; aiohttp wraps it, the fetcher maps it to BlockedError."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        self.host = host
        self.address = address
        self.reason = reason
        super().__init__(f"{host} resolves to {address} ({reason}); set allow_private_networks to allow it")


class GuardedResolver(AbstractResolver):
    """A resolver that refuses answers containing non-public addresses."""

    def __init__(self, inner: AbstractResolver | None = None, *, allow_private: bool = False) -> None:
        self._inner = inner if inner is not None else ThreadedResolver()
        self._allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        if not self._allow_private:
            for result in results:
                reason = ip_blocked_reason(result["host"])
                if reason:
                    logger.warning(
                        "fetch.ssrf_blocked",
                        extra={"host": host, "address": result["host"], "reason": reason},
                    )
                    raise SSRFBlockedOSError(host, result["host"], reason)
        return results

    async def close(self) -> None:
        await self._inner.close()


def make_timeout(total: float) -> aiohttp.ClientTimeout:
    """Whole-request limit plus connect and per-read limits (a stalled read fails early)."""
    total = total if total > 0 else 0.0
    cap = total or None
    return aiohttp.ClientTimeout(
        total=cap,
        sock_connect=min(total, _MAX_CONNECT_TIMEOUT) if total else _MAX_CONNECT_TIMEOUT,
        sock_read=min(total, _MAX_READ_TIMEOUT) if total else _MAX_READ_TIMEOUT,
    )


def make_session(config: Config, *, resolver: AbstractResolver | None = None) -> aiohttp.ClientSession:
    """The one ClientSession of a process. Call inside the running event loop.

    ``resolver`` replaces the system resolver under the guard (tests use a fake).
    Decompression stays on: aiohttp >= 3.12 inflates in bounded steps, so the
    fetcher's cap on streamed bytes also bounds a compression bomb.
    """
    settings = config.http_client_settings
    connector = aiohttp.TCPConnector(
        limit=max(1, config.max_requests),
        limit_per_host=max(1, config.max_requests_per_host),
        ttl_dns_cache=DNS_CACHE_TTL,
        resolver=GuardedResolver(resolver, allow_private=settings.allow_private_networks),
        keepalive_timeout=30,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=make_timeout(settings.timeout),
        headers={"User-Agent": config.default_user_agent},
        cookie_jar=aiohttp.DummyCookieJar(),  # stateless crawling: no cookie crosses pages or sites
        trust_env=False,  # a proxy from the environment would bypass the resolver guard
        auto_decompress=True,
        raise_for_status=False,
    )
