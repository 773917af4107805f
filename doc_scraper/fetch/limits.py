"""Politeness limits shared by every site crawled in one process.

Three bounds apply to each request, taken in this order:

1. the host's semaphore (``max_requests_per_host``),
2. the host's delay: each request reserves the host's next free time, so
   requests to one host start at least ``delay * U(1-j, 1+j)`` apart,
3. the global semaphore (``max_requests``).

The delay is waited out before the global slot is taken, so a sleeping request
never holds a slot another host could use. Robots ``Crawl-delay`` sets a floor
under the configured delay; a 429/503 pushes the host's next free time back.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from doc_scraper.config.schema import Config

__all__ = ["HostLimits"]

logger = logging.getLogger(__name__)


class HostLimits:
    """Global and per-host concurrency plus per-host spacing; one per process."""

    def __init__(
        self,
        max_requests: int,
        max_requests_per_host: int,
        jitter: float = 0.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[float, float], float] = random.uniform,
    ) -> None:
        if max_requests < 1 or max_requests_per_host < 1:
            raise ValueError("max_requests and max_requests_per_host must be >= 1")
        self._global = asyncio.Semaphore(max_requests)
        self._per_host_limit = max_requests_per_host
        self._host_sems: dict[str, asyncio.Semaphore] = {}
        self._next_free: dict[str, float] = {}
        self._floor: dict[str, float] = {}
        self._backoff: dict[str, float] = {}  # host -> spacing added by penalize, halved by relax
        self._jitter = min(max(jitter, 0.0), 1.0)
        self._clock = clock
        self._rand = rand

    @classmethod
    def from_config(cls, config: Config) -> HostLimits:
        return cls(config.max_requests, config.max_requests_per_host, config.delay_jitter)

    def set_floor_delay(self, host: str, seconds: float) -> None:
        """Never space requests to ``host`` closer than ``seconds`` (robots Crawl-delay)."""
        self._floor[host.lower()] = max(0.0, seconds)

    def floor_delay(self, host: str) -> float:
        return self._floor.get(host.lower(), 0.0)

    def penalize(self, host: str, seconds: float) -> None:
        """Start no request to ``host`` for ``seconds`` (after a 429/503, Retry-After)."""
        host = host.lower()
        until = self._clock() + max(0.0, seconds)
        if until > self._next_free.get(host, 0.0):
            self._next_free[host] = until
            logger.debug("limits.penalized", extra={"host": host, "seconds": seconds})
        # Waiters released together after the pause would overload the host again at
        # once: space them by the pause too, until answers come back fine (``relax``).
        self._backoff[host] = max(self._backoff.get(host, 0.0), max(0.0, seconds))

    def relax(self, host: str) -> None:
        """``host`` answered normally: halve the spacing ``penalize`` added (dropped under 1 ms)."""
        host = host.lower()
        backoff = self._backoff.get(host)
        if backoff is None:
            return
        if backoff / 2 < 0.001:
            del self._backoff[host]
        else:
            self._backoff[host] = backoff / 2

    @asynccontextmanager
    async def slot(self, host: str, delay: float = 0.0) -> AsyncIterator[None]:
        """Hold a request slot for ``host``, spaced ``delay`` seconds (jittered) from the last."""
        host = host.lower()
        sem = self._host_sems.get(host)
        if sem is None:
            sem = self._host_sems[host] = asyncio.Semaphore(self._per_host_limit)
        async with sem:
            await self._wait_turn(host, delay)
            async with self._global:
                yield

    async def _wait_turn(self, host: str, delay: float) -> None:
        """Sleep until ``host`` is free, then book the next slot from the real start time.

        Booking from the actual wake-up (not the planned one) keeps the gap
        between two starts at least the spacing even when the loop wakes late.
        """
        spacing = delay * self._rand(1.0 - self._jitter, 1.0 + self._jitter) if delay > 0 else 0.0
        spacing = max(spacing, self._floor.get(host, 0.0))
        while True:
            now = self._clock()
            free_at = self._next_free.get(host, 0.0)
            if now >= free_at:
                self._next_free[host] = now + max(spacing, self._backoff.get(host, 0.0))
                return
            await asyncio.sleep(free_at - now)
