"""When and how long to retry a failed request (tenacity lives only here).

Retried: ``FetchTimeout``, ``ConnectError`` and ``HTTPStatusError`` with 429 or
5xx. Never retried: other 4xx, ``BlockedError`` (SSRF, scope), ``TooLargeError``.
The wait before retry n (1-based) is the larger of the server's Retry-After
and ``initial * 2**(n-1)`` jittered ±``jitter``, both capped at ``max_delay``.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from doc_scraper.errors import ConnectError, FetchError, FetchTimeout, HTTPStatusError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from doc_scraper.config.schema import Config

__all__ = ["RetryPolicy", "is_retryable", "parse_retry_after"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_BACKOFF_JITTER = 0.1


def is_retryable(exc: BaseException) -> bool:
    """True for errors a later attempt may not get: timeouts, broken connections, 429, 5xx."""
    if isinstance(exc, HTTPStatusError):
        return exc.status == 429 or 500 <= exc.status <= 599
    return isinstance(exc, FetchTimeout | ConnectError)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _error_name(exc: BaseException | None) -> str:
    if isinstance(exc, HTTPStatusError):
        return f"HTTP_{exc.status}"
    if isinstance(exc, FetchTimeout):
        return "timeout"
    if isinstance(exc, ConnectError):
        return "connect"
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retry settings plus the tenacity loop that applies them."""

    max_retries: int = 3
    initial_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = DEFAULT_BACKOFF_JITTER
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    @classmethod
    def from_config(cls, config: Config) -> RetryPolicy:
        return cls(
            max_retries=max(0, config.max_retries),
            initial_delay=max(0.0, config.initial_retry_delay),
            max_delay=max(0.0, config.max_retry_delay),
        )

    def backoff(self, retry_number: int) -> float:
        """Jittered exponential delay before retry ``retry_number`` (1-based), capped."""
        base = self.initial_delay * 2.0 ** max(0, retry_number - 1)
        base *= random.uniform(1.0 - self.jitter, 1.0 + self.jitter)
        return min(base, self.max_delay)

    def wait_for(self, exc: BaseException | None, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` after ``exc``."""
        wait = self.backoff(retry_number)
        retry_after = exc.retry_after if isinstance(exc, HTTPStatusError) else None
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_delay))
        return wait

    async def call(self, fn: Callable[[], Awaitable[T]], *, url: str) -> tuple[T, int]:
        """Run ``fn`` with retries; return its value and the number of attempts made.

        The last error propagates unchanged (never ``RetryError``), carrying an
        ``attempts`` attribute.
        """
        attempts = 0

        async def attempt() -> T:
            nonlocal attempts
            attempts += 1
            return await fn()

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            return self.wait_for(exc, state.attempt_number)

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            seconds = state.next_action.sleep if state.next_action else 0.0
            logger.debug(
                "fetch.retry",
                extra={
                    "url": url,
                    "attempt": state.attempt_number,
                    "wait_s": round(seconds, 3),
                    "error": _error_name(exc),
                },
            )

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait,
            retry=retry_if_exception(is_retryable),
            before_sleep=before_sleep,
            reraise=True,
            sleep=self.sleep,
        )
        try:
            value: T = await retrying(attempt)
        except FetchError as exc:
            exc.attempts = attempts  # type: ignore[attr-defined]
            if self.max_retries and attempts > self.max_retries and is_retryable(exc):
                logger.warning(
                    "fetch.give_up",
                    extra={"url": url, "attempts": attempts, "error": _error_name(exc)},
                )
            raise
        return value, attempts
