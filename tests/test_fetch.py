"""Fetcher behaviour against an in-test aiohttp server on 127.0.0.1 (port 0)."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import logging
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import BaseTestServer, TestServer

from doc_scraper.config.schema import Config, HTTPClientSettings
from doc_scraper.errors import (
    BlockedError,
    ConnectError,
    FetchTimeout,
    HTTPStatusError,
    TooLargeError,
)
from doc_scraper.fetch.fetcher import Fetcher
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.session import make_session

UA = "doc-scraper-test/1.0 (+https://example.invalid)"
MiB = 1024 * 1024
BOMB_CAP = 2 * MiB

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Served:
    server: BaseTestServer
    fetcher: Fetcher
    hits: dict[str, int] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))


def _config(**kw: object) -> Config:
    defaults: dict[str, object] = {
        "sites": {},
        "max_retries": 2,
        "initial_retry_delay": 0.01,
        "max_retry_delay": 0.5,
        "delay_jitter": 0.0,
        "http_client_settings": HTTPClientSettings(timeout=5.0, allow_private_networks=True),
    }
    defaults.update(kw)
    return Config(**defaults)  # type: ignore[arg-type]


@asynccontextmanager
async def serve(routes: dict[str, Handler], **config_kw: object) -> AsyncIterator[Served]:
    hits: dict[str, int] = {}
    app = web.Application()

    def counted(path: str, handler: Handler) -> Handler:
        async def wrapper(request: web.Request) -> web.StreamResponse:
            hits[path] = hits.get(path, 0) + 1
            return await handler(request)

        return wrapper

    for path, handler in routes.items():
        app.router.add_get(path, counted(path, handler))
    config = _config(**config_kw)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        session = make_session(config)
        try:
            fetcher = Fetcher.from_config(config, session, HostLimits.from_config(config))
            yield Served(server, fetcher, hits)
        finally:
            await session.close()


async def _fetch(s: Served, path: str, **kw: object) -> object:
    args: dict[str, object] = {"user_agent": UA, "delay": 0.0, "max_bytes": MiB}
    args.update(kw)
    return await s.fetcher.fetch(s.url(path), **args)  # type: ignore[arg-type]


async def _html(request: web.Request) -> web.Response:
    return web.Response(text="<html><body>hi</body></html>", content_type="text/html", charset="iso-8859-1")


async def test_a_page_comes_back_with_status_type_charset_and_our_user_agent() -> None:
    seen_ua: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen_ua.append(request.headers["User-Agent"])
        return web.Response(text="<p>ok</p>", content_type="text/html", headers={"X-Thing": "1"})

    async with serve({"/p": page}) as s:
        result = await s.fetcher.fetch(s.url("/p#frag"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert result.status == 200
    assert result.body == b"<p>ok</p>"
    assert result.content_type == "text/html"
    assert result.charset == "utf-8"
    assert result.headers["x-thing"] == "1"
    assert result.attempts == 1
    assert result.final_url == result.url.split("#")[0]
    assert seen_ua == [UA]


async def test_charset_comes_from_the_content_type_header() -> None:
    async with serve({"/p": _html}) as s:
        result = await s.fetcher.fetch(s.url("/p"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert result.charset == "iso-8859-1"


async def test_503_is_retried_until_it_succeeds_and_attempts_are_counted() -> None:
    calls = 0

    async def flaky(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            return web.Response(status=503)
        return web.Response(text="ok", content_type="text/html")

    async with serve({"/f": flaky}, max_retries=3) as s:
        result = await s.fetcher.fetch(s.url("/f"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.fetcher.retries == 2
    assert result.status == 200
    assert result.attempts == 3
    assert calls == 3


async def test_retries_give_up_with_the_http_error_and_log_once(caplog: pytest.LogCaptureFixture) -> None:
    async def down(request: web.Request) -> web.Response:
        return web.Response(status=500)

    caplog.set_level(logging.DEBUG, logger="doc_scraper")
    async with serve({"/d": down}, max_retries=2) as s:
        with pytest.raises(HTTPStatusError) as info:
            await s.fetcher.fetch(s.url("/d"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.hits["/d"] == 3
    assert info.value.status == 500
    assert getattr(info.value, "attempts", None) == 3
    events = [r.getMessage() for r in caplog.records]
    assert events.count("fetch.give_up") == 1
    assert events.count("fetch.retry") == 2


async def test_max_retries_zero_means_a_single_attempt() -> None:
    async def down(request: web.Request) -> web.Response:
        return web.Response(status=503)

    async with serve({"/d": down}, max_retries=0) as s:
        with pytest.raises(HTTPStatusError):
            await s.fetcher.fetch(s.url("/d"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.hits["/d"] == 1


async def test_404_is_not_retried() -> None:
    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404)

    async with serve({"/m": missing}, max_retries=3) as s:
        with pytest.raises(HTTPStatusError) as info:
            await s.fetcher.fetch(s.url("/m"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.hits["/m"] == 1
    assert info.value.status == 404


async def test_429_retry_after_is_honoured_up_to_max_retry_delay() -> None:
    times: list[float] = []

    async def limited(request: web.Request) -> web.Response:
        times.append(time.monotonic())
        if len(times) == 1:
            return web.Response(status=429, headers={"Retry-After": "5"})
        return web.Response(text="ok", content_type="text/html")

    async with serve({"/l": limited}, max_retries=1, initial_retry_delay=0.01, max_retry_delay=0.3) as s:
        result = await s.fetcher.fetch(s.url("/l"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert result.attempts == 2
    # Retry-After 5 s, capped at max_retry_delay 0.3 s; the 0.01 s backoff alone would be far shorter.
    assert times[1] - times[0] >= 0.28


async def test_429_penalizes_the_host_for_other_requests_too() -> None:
    times: dict[str, float] = {}

    async def limited(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "1"})

    async def other(request: web.Request) -> web.Response:
        times["other"] = time.monotonic()
        return web.Response(text="ok", content_type="text/html")

    async with serve({"/l": limited, "/o": other}, max_retries=0, max_retry_delay=0.3) as s:
        with pytest.raises(HTTPStatusError):
            await s.fetcher.fetch(s.url("/l"), user_agent=UA, delay=0.0, max_bytes=MiB)
        after_429 = time.monotonic()
        await s.fetcher.fetch(s.url("/o"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert times["other"] - after_429 >= 0.25


async def test_repeated_503s_slow_the_host_down_more_each_time() -> None:
    starts: list[float] = []

    async def busy(request: web.Request) -> web.Response:
        starts.append(time.monotonic())
        if len(starts) <= 2:
            return web.Response(status=503)
        return web.Response(text="ok", content_type="text/html")

    async with serve({"/b": busy}, max_retries=0, initial_retry_delay=0.1, max_retry_delay=1.0) as s:
        for _ in range(2):
            with pytest.raises(HTTPStatusError):
                await s.fetcher.fetch(s.url("/b"), user_agent=UA, delay=0.0, max_bytes=MiB)
        await s.fetcher.fetch(s.url("/b"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert starts[1] - starts[0] >= 0.095  # first pause: initial_retry_delay
    assert starts[2] - starts[1] >= 0.195  # second in a row: doubled


def _redirect(to: str, status: int = 302) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, headers={"Location": to})

    return handler


async def test_redirects_are_followed_and_recorded() -> None:
    routes = {"/r3": _redirect("/r2"), "/r2": _redirect("r1", 301), "/r1": _redirect("/final#x", 308)}
    routes["/final"] = _html
    async with serve(routes, max_redirects=3) as s:
        result = await s.fetcher.fetch(s.url("/r3"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert result.final_url == s.url("/final")
        assert result.redirects == (s.url("/r2"), s.url("/r1"), s.url("/final"))
    assert result.status == 200
    assert result.attempts == 4


async def test_a_redirect_chain_over_the_limit_is_blocked() -> None:
    routes = {"/r3": _redirect("/r2"), "/r2": _redirect("/r1"), "/r1": _redirect("/final"), "/final": _html}
    async with serve(routes, max_redirects=2) as s:
        with pytest.raises(BlockedError) as info:
            await s.fetcher.fetch(s.url("/r3"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert "/final" not in s.hits
    assert info.value.reason == "too_many_redirects"


async def test_a_redirect_loop_is_detected() -> None:
    routes = {"/a": _redirect("/b"), "/b": _redirect("/a")}
    async with serve(routes, max_redirects=10) as s:
        with pytest.raises(BlockedError) as info:
            await s.fetcher.fetch(s.url("/a"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.hits == {"/a": 1, "/b": 1}
    assert info.value.reason == "redirect_loop"


async def test_check_redirect_refuses_an_out_of_scope_hop() -> None:
    routes = {"/docs/moved": _redirect("/blog/elsewhere"), "/blog/elsewhere": _html}
    checked: list[str] = []

    def check(url: str) -> str | None:
        checked.append(url)
        return None if "/docs/" in url else "prefix"

    async with serve(routes) as s:
        with pytest.raises(BlockedError) as info:
            await s.fetcher.fetch(
                s.url("/docs/moved"), user_agent=UA, delay=0.0, max_bytes=MiB, check_redirect=check
            )
        assert "/blog/elsewhere" not in s.hits
        assert checked == [s.url("/blog/elsewhere")]
    assert info.value.reason == "prefix"


@pytest.mark.parametrize("target", ["ftp://example.com/file", "mailto:someone@example.com", "javascript:x"])
async def test_a_redirect_to_another_scheme_is_blocked(target: str) -> None:
    async with serve({"/x": _redirect(target)}) as s:
        with pytest.raises(BlockedError) as info:
            await s.fetcher.fetch(s.url("/x"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert info.value.reason == "scheme"


async def test_a_redirect_to_an_unparsable_url_is_blocked_as_invalid() -> None:
    async with serve({"/x": _redirect("http://[::1/oops")}) as s:
        with pytest.raises(BlockedError) as info:
            await s.fetcher.fetch(s.url("/x"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert info.value.reason == "invalid"


async def test_a_body_over_max_bytes_raises_too_large_with_or_without_content_length() -> None:
    async def declared(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * 5000, content_type="text/html")

    async def chunked(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for _ in range(10):
            await resp.write(b"y" * 1000)
        await resp.write_eof()
        return resp

    async with serve({"/d": declared, "/c": chunked}) as s:
        with pytest.raises(TooLargeError):
            await s.fetcher.fetch(s.url("/d"), user_agent=UA, delay=0.0, max_bytes=4096)
        with pytest.raises(TooLargeError):
            await s.fetcher.fetch(s.url("/c"), user_agent=UA, delay=0.0, max_bytes=4096)
        exact = await s.fetcher.fetch(s.url("/d"), user_agent=UA, delay=0.0, max_bytes=5000)
        cut = await s.fetcher.fetch_bytes(s.url("/c"), user_agent=UA, max_bytes=4096, truncate=True)
    assert len(exact.body) == 5000
    assert cut.body == b"y" * 4096


async def test_a_gzip_bomb_is_cut_without_inflating_it_in_memory() -> None:
    # After a full flush the deflate history is empty, so every further MiB of zeros
    # compresses to the same bytes: repeat them instead of compressing 200 MiB.
    # (The gzip trailer is wrong, but the reader must stop long before it.)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * MiB
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    bomb = first + again * 199 + compressor.flush()
    assert len(bomb) < MiB  # 200 MiB of zeros inflated
    assert (
        len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(bomb[: len(first) + 3 * len(again)]))
        == 4 * MiB
    )

    async def bombed(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    async with serve({"/b": bombed}) as s:
        tracemalloc.start()
        try:
            with pytest.raises(TooLargeError):
                await s.fetcher.fetch(s.url("/b"), user_agent=UA, delay=0.0, max_bytes=BOMB_CAP)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 24 * MiB, peak


async def test_gzip_bodies_are_decompressed() -> None:
    async def zipped(request: web.Request) -> web.Response:
        body = gzip.compress(b"<p>zipped</p>")
        return web.Response(body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    async with serve({"/z": zipped}) as s:
        result = await s.fetcher.fetch(s.url("/z"), user_agent=UA, delay=0.0, max_bytes=MiB)
    assert result.body == b"<p>zipped</p>"


async def test_conditional_get_returns_304_as_a_result() -> None:
    seen: list[tuple[str | None, str | None]] = []

    async def cond(request: web.Request) -> web.Response:
        seen.append((request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")))
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(text="new", content_type="text/html", headers={"ETag": '"v2"'})

    lm = "Wed, 21 Oct 2015 07:28:00 GMT"
    async with serve({"/c": cond}) as s:
        same = await s.fetcher.fetch(
            s.url("/c"), user_agent=UA, delay=0.0, max_bytes=MiB, etag='"v1"', last_modified=lm
        )
        fresh = await s.fetcher.fetch(s.url("/c"), user_agent=UA, delay=0.0, max_bytes=MiB, etag='"v0"')
    assert same.status == 304
    assert same.not_modified
    assert same.body == b""
    assert fresh.status == 200
    assert fresh.headers["etag"] == '"v2"'
    assert seen == [('"v1"', lm), ('"v0"', None)]


async def test_non_html_is_returned_unread_when_only_html_is_accepted() -> None:
    async def pdf(request: web.Request) -> web.Response:
        return web.Response(body=b"%PDF" + b"0" * 100_000, content_type="application/pdf")

    async with serve({"/f.pdf": pdf}) as s:
        skipped = await s.fetcher.fetch(s.url("/f.pdf"), user_agent=UA, delay=0.0, max_bytes=MiB)
        raw = await s.fetcher.fetch_bytes(s.url("/f.pdf"), user_agent=UA)
    assert skipped.content_type == "application/pdf"
    assert skipped.body == b""
    assert raw.body.startswith(b"%PDF")


async def test_a_slow_response_times_out() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(text="late")

    config = {
        "max_retries": 0,
        "http_client_settings": HTTPClientSettings(timeout=0.3, allow_private_networks=True),
    }
    async with serve({"/s": slow}, **config) as s:
        with pytest.raises(FetchTimeout):
            await s.fetcher.fetch(s.url("/s"), user_agent=UA, delay=0.0, max_bytes=MiB)


async def test_a_slow_drip_body_times_out() -> None:
    async def drip(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        for _ in range(40):
            await resp.write(b"x")
            await asyncio.sleep(0.05)
        return resp

    config = {
        "max_retries": 0,
        "http_client_settings": HTTPClientSettings(timeout=0.4, allow_private_networks=True),
    }
    async with serve({"/d": drip}, **config) as s:
        with pytest.raises(FetchTimeout):
            await s.fetcher.fetch(s.url("/d"), user_agent=UA, delay=0.0, max_bytes=MiB)


async def test_a_connection_dropped_mid_body_is_a_connect_error() -> None:
    async def broken(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "1000"})
        await resp.prepare(request)
        await resp.write(b"partial")
        assert request.transport is not None
        request.transport.close()
        return resp

    async with serve({"/b": broken}, max_retries=1) as s:
        with pytest.raises(ConnectError):
            await s.fetcher.fetch(s.url("/b"), user_agent=UA, delay=0.0, max_bytes=MiB)
        assert s.hits["/b"] == 2  # retried once


async def test_a_refused_connection_is_a_connect_error() -> None:
    async with serve({"/": _html}, max_retries=0) as s:
        url = s.url("/")
    async with serve({"/": _html}, max_retries=0) as s2:
        with pytest.raises(ConnectError):
            await s2.fetcher.fetch(url, user_agent=UA, delay=0.0, max_bytes=MiB)


async def test_per_host_concurrency_never_exceeds_the_limit() -> None:
    active = 0
    peak = 0

    async def busy(request: web.Request) -> web.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.03)
        active -= 1
        return web.Response(text="ok", content_type="text/html")

    async with serve({"/b": busy}, max_requests=8, max_requests_per_host=2) as s:
        await asyncio.gather(
            *(s.fetcher.fetch(s.url("/b"), user_agent=UA, delay=0.0, max_bytes=MiB) for _ in range(8))
        )
        assert s.hits["/b"] == 8
    assert peak == 2


async def test_requests_to_one_host_are_spaced_by_the_jittered_delay() -> None:
    starts: list[float] = []

    async def mark(request: web.Request) -> web.Response:
        starts.append(time.monotonic())
        return web.Response(text="ok", content_type="text/html")

    delay, jitter = 0.06, 0.5
    async with serve({"/m": mark}, delay_jitter=jitter, max_requests_per_host=4) as s:
        await asyncio.gather(
            *(s.fetcher.fetch(s.url("/m"), user_agent=UA, delay=delay, max_bytes=MiB) for _ in range(5))
        )
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(gaps) == 4
    assert min(gaps) >= delay * (1 - jitter) - 0.005, gaps


async def test_an_unparsable_url_is_a_fetch_error_not_a_crash() -> None:
    async with serve({"/": _html}) as s:
        with pytest.raises(Exception) as info:
            await s.fetcher.fetch("http://[bad/", user_agent=UA, delay=0.0, max_bytes=MiB)
    from doc_scraper.errors import FetchError

    assert isinstance(info.value, FetchError)


def test_session_has_explicit_timeouts() -> None:
    from doc_scraper.fetch.session import make_timeout

    t = make_timeout(45.0)
    assert t.total == 45.0
    assert t.sock_read is not None
    assert t.sock_read <= 30.0
    assert isinstance(t, aiohttp.ClientTimeout)
