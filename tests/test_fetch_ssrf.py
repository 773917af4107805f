"""The SSRF guard: literal IPs, resolved names and redirect hops to non-public addresses."""

from __future__ import annotations

import socket
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestServer

from doc_scraper.config.schema import Config, HTTPClientSettings
from doc_scraper.errors import BlockedError
from doc_scraper.fetch.fetcher import Fetcher
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.retry import RetryPolicy
from doc_scraper.fetch.session import (
    GuardedResolver,
    SSRFBlockedOSError,
    ip_blocked_reason,
    make_session,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

UA = "doc-scraper-test/1.0"


class FakeResolver(AbstractResolver):
    """Answers from a fixed table; records every name it was asked for."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"unknown host {host}")
        return [
            ResolveResult(
                hostname=host,
                host=addr,
                port=port,
                family=socket.AF_INET6 if ":" in addr else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for addr in self.table[host]
        ]

    async def close(self) -> None:
        return None


def _config(allow_private: bool) -> Config:
    return Config(
        sites={},
        max_retries=2,
        initial_retry_delay=0.01,
        http_client_settings=HTTPClientSettings(timeout=5.0, allow_private_networks=allow_private),
    )


@asynccontextmanager
async def guarded_fetcher(
    resolver: AbstractResolver | None = None, *, session_guard: bool = True, fetcher_guard: bool = True
) -> AsyncIterator[Fetcher]:
    config = _config(allow_private=not session_guard)
    session = make_session(config, resolver=resolver)
    try:
        yield Fetcher(
            session,
            HostLimits.from_config(config),
            RetryPolicy(max_retries=2, initial_delay=0.01),
            allow_private_networks=not fetcher_guard,
        )
    finally:
        await session.close()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "fd00::1",
        "fe80::1",
        "::",
        "ff02::1",
        "2002:7f00:1::1",  # 6to4 wrapping 127.0.0.1
    ],
)
def test_non_public_addresses_are_blocked(address: str) -> None:
    assert ip_blocked_reason(address) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert ip_blocked_reason(address) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/x",
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://[::1]:9/",
        "http://[::ffff:127.0.0.1]:9/",
        "http://[fd00::1]/",
    ],
)
async def test_literal_private_ips_are_refused_before_connecting(url: str) -> None:
    resolver = FakeResolver({})
    async with guarded_fetcher(resolver) as fetcher:
        with pytest.raises(BlockedError) as info:
            await fetcher.fetch(url, user_agent=UA, delay=0.0, max_bytes=1000)
    assert info.value.reason == "ssrf"
    assert getattr(info.value, "attempts", None) == 1  # blocked, never retried
    assert resolver.asked == []  # aiohttp skips the resolver for IP literals: the fetcher checks them


async def test_a_hostname_resolving_to_loopback_is_refused() -> None:
    hits = 0

    async def page(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        return web.Response(text="secret")

    app = web.Application()
    app.router.add_get("/", page)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        resolver = FakeResolver({"docs.example.test": ["127.0.0.1"]})
        async with guarded_fetcher(resolver) as fetcher:
            with pytest.raises(BlockedError) as info:
                await fetcher.fetch(
                    f"http://docs.example.test:{server.port}/", user_agent=UA, delay=0.0, max_bytes=1000
                )
    assert info.value.reason == "ssrf"
    assert resolver.asked == ["docs.example.test"]
    assert hits == 0


async def test_the_guard_refuses_a_mixed_answer_and_passes_a_public_one() -> None:
    resolver = FakeResolver({"mixed.test": ["93.184.216.34", "10.1.2.3"], "public.test": ["93.184.216.34"]})
    guard = GuardedResolver(resolver)
    with pytest.raises(SSRFBlockedOSError):
        await guard.resolve("mixed.test", 80)
    answer = await guard.resolve("public.test", 80)
    assert [r["host"] for r in answer] == ["93.184.216.34"]
    assert await GuardedResolver(resolver, allow_private=True).resolve("mixed.test", 80)


async def test_a_redirect_hop_to_a_private_address_is_refused() -> None:
    async def moved(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})

    app = web.Application()
    app.router.add_get("/", moved)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        # The session lets the test server's name through; the fetcher still checks every hop.
        resolver = FakeResolver({"docs.example.test": ["127.0.0.1"]})
        async with guarded_fetcher(resolver, session_guard=False, fetcher_guard=True) as fetcher:
            with pytest.raises(BlockedError) as info:
                await fetcher.fetch(
                    f"http://docs.example.test:{server.port}/", user_agent=UA, delay=0.0, max_bytes=1000
                )
    assert info.value.reason == "ssrf"
    assert "169.254.169.254" in str(info.value)


async def test_allow_private_networks_turns_the_guard_off() -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        resolver = FakeResolver({"docs.example.test": ["127.0.0.1"]})
        async with guarded_fetcher(resolver, session_guard=False, fetcher_guard=False) as fetcher:
            result = await fetcher.fetch(
                f"http://docs.example.test:{server.port}/", user_agent=UA, delay=0.0, max_bytes=1000
            )
    assert result.body == b"ok"


async def test_legacy_numeric_ipv4_hosts_do_not_reach_loopback() -> None:
    async with guarded_fetcher(FakeResolver({})) as fetcher:
        for url in ("http://2130706433:9/", "http://127.1:9/", "http://0x7f000001:9/"):
            with pytest.raises(BlockedError):
                await fetcher.fetch(url, user_agent=UA, delay=0.0, max_bytes=1000)


async def test_localhost_through_the_system_resolver_is_refused() -> None:
    # getaddrinfo answers "localhost" from the hosts file: no network involved.
    async with guarded_fetcher(None) as fetcher:
        with pytest.raises(BlockedError) as info:
            await fetcher.fetch("http://localhost:9/", user_agent=UA, delay=0.0, max_bytes=1000)
    assert info.value.reason == "ssrf"
