"""HostLimits: global and per-host slots, jittered spacing, Crawl-delay floor, penalties."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from doc_scraper.fetch.limits import HostLimits


async def _timed_entries(limits: HostLimits, host: str, n: int, delay: float) -> list[float]:
    starts: list[float] = []

    async def one() -> None:
        async with limits.slot(host, delay=delay):
            starts.append(time.monotonic())

    await asyncio.gather(*(one() for _ in range(n)))
    return sorted(starts)


async def test_requests_to_one_host_start_at_least_the_jittered_delay_apart() -> None:
    limits = HostLimits(max_requests=10, max_requests_per_host=10, jitter=0.5)
    starts = await _timed_entries(limits, "a.example", 5, delay=0.04)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.04 * 0.5 - 0.003, gaps


async def test_jitter_stays_within_its_band() -> None:
    draws: list[tuple[float, float]] = []

    def rand(lo: float, hi: float) -> float:
        draws.append((lo, hi))
        return hi

    limits = HostLimits(4, 4, jitter=0.2, rand=rand)
    await _timed_entries(limits, "a.example", 2, delay=0.01)
    assert draws
    assert all(lo == pytest.approx(0.8) and hi == pytest.approx(1.2) for lo, hi in draws)


async def test_the_delay_is_waited_before_taking_the_global_slot() -> None:
    limits = HostLimits(max_requests=1, max_requests_per_host=4, jitter=0.0)
    async with limits.slot("slow.example", delay=0.3):
        pass  # the next request to slow.example must wait 0.3 s
    order: list[str] = []

    async def slow() -> None:
        async with limits.slot("slow.example", delay=0.3):
            order.append("slow")

    async def fast() -> None:
        await asyncio.sleep(0.02)
        started = time.monotonic()
        async with limits.slot("fast.example", delay=0.0):
            order.append("fast")
            assert time.monotonic() - started < 0.15  # the sleeping request holds no global slot

    await asyncio.gather(slow(), fast())
    assert order == ["fast", "slow"]


async def test_per_host_and_global_concurrency_are_bounded() -> None:
    limits = HostLimits(max_requests=3, max_requests_per_host=2)
    active: dict[str, int] = {}
    peak: dict[str, int] = {}
    total_peak = 0

    async def one(host: str) -> None:
        nonlocal total_peak
        async with limits.slot(host):
            active[host] = active.get(host, 0) + 1
            peak[host] = max(peak.get(host, 0), active[host])
            total_peak = max(total_peak, sum(active.values()))
            await asyncio.sleep(0.01)
            active[host] -= 1

    await asyncio.gather(*(one(h) for h in ["a"] * 5 + ["b"] * 5))
    assert max(peak.values()) == 2
    assert total_peak == 3


async def test_a_crawl_delay_floor_applies_under_a_zero_delay() -> None:
    limits = HostLimits(10, 10, jitter=0.5)
    limits.set_floor_delay("A.example", 0.05)
    assert limits.floor_delay("a.example") == 0.05
    starts = await _timed_entries(limits, "a.example", 3, delay=0.0)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.05 - 0.003, gaps


async def test_penalize_pushes_the_next_request_back() -> None:
    limits = HostLimits(10, 10)
    limits.penalize("a.example", 0.1)
    started = time.monotonic()
    async with limits.slot("a.example"):
        waited = time.monotonic() - started
    assert waited >= 0.095
    started = time.monotonic()
    async with limits.slot("b.example"):
        assert time.monotonic() - started < 0.05


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        HostLimits(0, 1)
