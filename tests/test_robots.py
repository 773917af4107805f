"""robots.txt rules (RFC 9309 via protego) and the per-origin cache."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from doc_scraper.config.schema import Config, HTTPClientSettings
from doc_scraper.errors import BlockedError, ConnectError, FetchTimeout, HTTPStatusError
from doc_scraper.fetch.fetcher import Fetcher
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.session import make_session
from doc_scraper.frontier.robots import ROBOTS_MAX_BYTES, RobotsCache, RobotsRules
from doc_scraper.models import FetchResult

UA = "doc-scraper/0.1 (+https://example.invalid; docs crawler)"

ROBOTS = b"""\xef\xbb\xbfUser-agent: *
Disallow: /private
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.25

User-agent: doc-scraper
Disallow: /no-docs-bots/
Crawl-delay: 1.5

Sitemap: https://docs.example/sitemap.xml
Sitemap: https://docs.example/other.xml.gz
"""


def test_longest_match_wins_and_allow_breaks_ties() -> None:
    rules = RobotsRules.parse(ROBOTS)
    other = "SomeBot/1.0"
    assert not rules.can_fetch("https://docs.example/private/x", other)
    assert rules.can_fetch("https://docs.example/private/public/x", other)
    assert not rules.can_fetch("https://docs.example/file.pdf", other)
    assert rules.can_fetch("https://docs.example/file.pdf.html", other)
    assert rules.can_fetch("https://docs.example/docs/", other)


def test_the_most_specific_group_applies_to_our_user_agent() -> None:
    rules = RobotsRules.parse(ROBOTS)
    assert not rules.can_fetch("https://docs.example/no-docs-bots/a", UA)
    assert rules.can_fetch("https://docs.example/no-docs-bots/a", "SomeBot/1.0")
    # Our own group replaces "*": /private is not disallowed for us.
    assert rules.can_fetch("https://docs.example/private/x", UA)


def test_crawl_delay_is_per_group_and_may_be_fractional() -> None:
    rules = RobotsRules.parse(ROBOTS)
    assert rules.crawl_delay(UA) == 1.5
    assert rules.crawl_delay("SomeBot/1.0") == 0.25
    assert RobotsRules.parse("User-agent: *\nDisallow:\n").crawl_delay(UA) is None
    assert RobotsRules.allow_all().crawl_delay(UA) is None


def test_sitemaps_are_listed() -> None:
    assert RobotsRules.parse(ROBOTS).sitemaps == [
        "https://docs.example/sitemap.xml",
        "https://docs.example/other.xml.gz",
    ]
    assert RobotsRules.disallow_all().sitemaps == []


def test_robots_txt_itself_is_always_allowed() -> None:
    assert RobotsRules.disallow_all().can_fetch("https://docs.example/robots.txt", UA)
    assert not RobotsRules.disallow_all().can_fetch("https://docs.example/a", UA)
    assert RobotsRules.parse("User-agent: *\nDisallow: /\n").can_fetch("https://docs.example/robots.txt", UA)


def test_an_empty_or_garbage_file_allows_everything() -> None:
    assert RobotsRules.parse(b"").can_fetch("https://docs.example/a", UA)
    assert RobotsRules.parse(b"\x00\xff garbage \n<html>").can_fetch("https://docs.example/a", UA)


class FakeFetch:
    """Answers robots.txt requests from a script of results or errors."""

    def __init__(self, *answers: bytes | BaseException) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int, bool]] = []

    async def __call__(self, url: str, *, user_agent: str, max_bytes: int, truncate: bool) -> FetchResult:
        self.calls.append((url, user_agent, max_bytes, truncate))
        await asyncio.sleep(0)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return FetchResult(url=url, final_url=url, status=200, headers={}, body=answer)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_robots_txt_is_fetched_once_per_origin_with_the_site_user_agent() -> None:
    fetch = FakeFetch(ROBOTS)
    cache = RobotsCache(fetch)
    results = await asyncio.gather(
        *(cache.can_fetch(f"https://Docs.Example:443/p{i}", UA) for i in range(10)),
        cache.can_fetch("https://docs.example/no-docs-bots/x", UA),
    )
    assert results == [True] * 10 + [False]
    assert fetch.calls == [("https://docs.example/robots.txt", UA, ROBOTS_MAX_BYTES, True)]
    await cache.can_fetch("http://docs.example/x", UA)
    await cache.can_fetch("https://docs.example:8443/x", UA)
    assert [c[0] for c in fetch.calls[1:]] == [
        "http://docs.example/robots.txt",
        "https://docs.example:8443/robots.txt",
    ]


@pytest.mark.parametrize("status", [401, 403, 404, 410])
async def test_a_4xx_robots_txt_allows_everything(status: int) -> None:
    cache = RobotsCache(FakeFetch(HTTPStatusError("https://docs.example/robots.txt", status)))
    rules = await cache.rules_for("https://docs.example/a", UA)
    assert rules.mode == "allow_all"
    assert await cache.can_fetch("https://docs.example/anything", UA)


@pytest.mark.parametrize(
    "error",
    [
        HTTPStatusError("https://docs.example/robots.txt", 503),
        HTTPStatusError("https://docs.example/robots.txt", 500),
        HTTPStatusError("https://docs.example/robots.txt", 429),
        FetchTimeout("https://docs.example/robots.txt", "timed out"),
        ConnectError("https://docs.example/robots.txt", "refused"),
    ],
)
async def test_an_unreachable_robots_txt_disallows_all_then_is_retried_after_ten_minutes(
    error: BaseException,
) -> None:
    clock = Clock()
    fetch = FakeFetch(error, b"User-agent: *\nDisallow: /x\n")
    cache = RobotsCache(fetch, clock=clock)
    assert not await cache.can_fetch("https://docs.example/a", UA)
    clock.now += 599
    assert not await cache.can_fetch("https://docs.example/a", UA)
    assert len(fetch.calls) == 1
    clock.now += 2
    assert await cache.can_fetch("https://docs.example/a", UA)
    assert not await cache.can_fetch("https://docs.example/x", UA)
    assert len(fetch.calls) == 2


async def test_a_redirect_loop_counts_as_no_robots_txt() -> None:
    error = BlockedError("https://docs.example/robots.txt", "loop", reason="redirect_loop")
    cache = RobotsCache(FakeFetch(error))
    assert await cache.can_fetch("https://docs.example/a", UA)


async def test_good_rules_are_refetched_after_a_day() -> None:
    clock = Clock()
    fetch = FakeFetch(ROBOTS)
    cache = RobotsCache(fetch, clock=clock)
    await cache.rules_for("https://docs.example/", UA)
    clock.now += 3600
    assert cache.cached("https://docs.example/x") is not None
    clock.now += 24 * 3600
    assert cache.cached("https://docs.example/x") is None
    await cache.rules_for("https://docs.example/", UA)
    assert len(fetch.calls) == 2


async def test_the_cache_works_over_the_real_fetcher() -> None:
    seen: list[str] = []

    async def robots(request: web.Request) -> web.Response:
        seen.append(request.headers["User-Agent"])
        return web.Response(body=b"User-agent: *\nDisallow: /secret\n" + b"#" * (600 * 1024))

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    config = Config(sites={}, http_client_settings=HTTPClientSettings(allow_private_networks=True))
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        session = make_session(config)
        try:
            fetcher = Fetcher.from_config(config, session, HostLimits.from_config(config))
            cache = RobotsCache(fetcher.fetch_bytes)
            assert not await cache.can_fetch(str(server.make_url("/secret/a")), UA)
            assert await cache.can_fetch(str(server.make_url("/open")), UA)
            # A Fetcher itself is accepted too, and get() is rules_for() by origin.
            by_fetcher = RobotsCache(fetcher)
            rules = await by_fetcher.get(str(server.make_url("")).rstrip("/"), UA)
            assert not rules.can_fetch(str(server.make_url("/secret/b")), UA)
        finally:
            await session.close()
    assert seen == [UA, UA]  # one fetch per cache, the site's UA; the oversized file was cut, not refused
