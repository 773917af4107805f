"""RetryPolicy: what is retried, how long it waits, how it gives up."""

from __future__ import annotations

import email.utils
import logging
import time

import pytest

from doc_scraper.config.schema import Config
from doc_scraper.errors import (
    BlockedError,
    ConnectError,
    FetchTimeout,
    HTTPStatusError,
    TooLargeError,
)
from doc_scraper.fetch.retry import RetryPolicy, is_retryable, parse_retry_after

URL = "https://docs.example/page"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (FetchTimeout(URL, "timed out"), True),
        (ConnectError(URL, "reset"), True),
        (HTTPStatusError(URL, 429), True),
        (HTTPStatusError(URL, 500), True),
        (HTTPStatusError(URL, 503), True),
        (HTTPStatusError(URL, 404), False),
        (HTTPStatusError(URL, 403), False),
        (BlockedError(URL, "ssrf", reason="ssrf"), False),
        (TooLargeError(URL, "big"), False),
        (ValueError("bug"), False),
    ],
)
def test_only_transient_failures_are_retryable(exc: BaseException, expected: bool) -> None:
    assert is_retryable(exc) is expected


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 0 ") == 0.0
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(30, abs=1)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after(past, now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-5") is None
    assert parse_retry_after(None) is None


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=10, initial_delay=1.0, max_delay=5.0, jitter=0.1)
    assert 0.9 <= policy.backoff(1) <= 1.1
    assert 1.8 <= policy.backoff(2) <= 2.2
    assert 3.6 <= policy.backoff(3) <= 4.4
    assert policy.backoff(4) == 5.0
    assert policy.backoff(30) == 5.0


def test_the_wait_is_the_larger_of_retry_after_and_backoff_both_capped() -> None:
    policy = RetryPolicy(initial_delay=0.5, max_delay=10.0, jitter=0.0)
    assert policy.wait_for(HTTPStatusError(URL, 429, retry_after=3.0), 1) == 3.0
    assert policy.wait_for(HTTPStatusError(URL, 429, retry_after=0.1), 1) == 0.5
    assert policy.wait_for(HTTPStatusError(URL, 503, retry_after=3600.0), 1) == 10.0
    assert policy.wait_for(FetchTimeout(URL, "t"), 3) == 2.0


def test_from_config_reads_the_retry_keys() -> None:
    policy = RetryPolicy.from_config(
        Config(sites={}, max_retries=0, initial_retry_delay=0.25, max_retry_delay=4.0)
    )
    assert (policy.max_retries, policy.initial_delay, policy.max_delay) == (0, 0.25, 4.0)


async def test_call_retries_then_returns_the_value_and_attempts() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(max_retries=3, initial_delay=0.5, max_delay=10.0, jitter=0.0, sleep=sleeps)
    outcomes: list[BaseException | str] = [
        HTTPStatusError(URL, 503),
        HTTPStatusError(URL, 429, retry_after=2.0),
        "done",
    ]

    async def fn() -> str:
        item = outcomes.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    value, attempts = await policy.call(fn, url=URL)
    assert value == "done"
    assert attempts == 3
    assert sleeps.calls == [0.5, 2.0]


async def test_call_gives_up_with_our_error_and_logs_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="doc_scraper.fetch.retry")
    policy = RetryPolicy(max_retries=2, initial_delay=0.01, sleep=Sleeps())

    async def fn() -> str:
        raise FetchTimeout(URL, "timed out")

    with pytest.raises(FetchTimeout) as info:
        await policy.call(fn, url=URL)
    assert getattr(info.value, "attempts", None) == 3
    give_ups = [r for r in caplog.records if r.getMessage() == "fetch.give_up"]
    assert len(give_ups) == 1
    assert give_ups[0].levelno == logging.WARNING
    assert give_ups[0].__dict__["url"] == URL
    retries = [r for r in caplog.records if r.getMessage() == "fetch.retry"]
    assert [r.levelno for r in retries] == [logging.DEBUG, logging.DEBUG]


async def test_non_retryable_errors_propagate_at_once_without_give_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="doc_scraper.fetch.retry")
    sleeps = Sleeps()
    policy = RetryPolicy(max_retries=5, sleep=sleeps)
    calls = 0

    async def fn() -> str:
        nonlocal calls
        calls += 1
        raise HTTPStatusError(URL, 404)

    with pytest.raises(HTTPStatusError):
        await policy.call(fn, url=URL)
    assert calls == 1
    assert sleeps.calls == []
    assert not [r for r in caplog.records if r.getMessage() == "fetch.give_up"]
