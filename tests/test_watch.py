"""The watch scheduler with a fake clock and a fake crawl function: no sleeping, no network."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING

import pytest

from doc_scraper.errors import ConfigError, StateError
from doc_scraper.models import CrawlSummary
from doc_scraper.watch import (
    CrawlFn,
    SiteRunState,
    WatchScheduler,
    WatchState,
    format_time,
    load_watch_state,
    save_watch_state,
)

if TYPE_CHECKING:
    from pathlib import Path

HOUR = 3600.0
DAY = 24 * HOUR
T0 = 1_800_000_000.0  # a fixed "now" in 2027


class FakeClock:
    """now() returns a settable time; sleep() advances it instead of waiting."""

    def __init__(self, start: float = T0) -> None:
        self.t = start
        self.sleeps: list[float] = []
        self.stop_after_sleeps: int | None = None

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float, stop: asyncio.Event) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        if self.stop_after_sleeps is not None and len(self.sleeps) >= self.stop_after_sleeps:
            stop.set()
        await asyncio.sleep(0)


class FakeCrawl:
    """Records every call; per-site outcomes are set by the test."""

    def __init__(self, clock: FakeClock, fail: set[str] | None = None, duration: float = 10.0) -> None:
        self.clock = clock
        self.calls: list[list[str]] = []
        self.fail = fail or set()
        self.duration = duration

    async def __call__(self, keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        self.calls.append(list(keys))
        self.clock.t += self.duration
        out = []
        for key in keys:
            if key in self.fail:
                out.append(
                    CrawlSummary(site_key=key, ok=False, mode="incremental", error="HTTP 503 on start URL")
                )
            else:
                out.append(
                    CrawlSummary(site_key=key, ok=True, mode="incremental", pages=12, added=2, changed=1)
                )
        return out


def _scheduler(
    tmp_path: Path, keys: list[str], clock: FakeClock, crawl: CrawlFn, interval: float = DAY
) -> WatchScheduler:
    return WatchScheduler(
        keys, interval, tmp_path / "watch_state.json", crawl, now=clock.now, sleep=clock.sleep
    )


async def test_sites_that_never_ran_are_due_and_run_together_at_start(tmp_path: Path) -> None:
    clock = FakeClock()
    crawl = FakeCrawl(clock)
    scheduler = _scheduler(tmp_path, ["a", "b"], clock, crawl)
    assert scheduler.due_sites() == ["a", "b"]
    await scheduler.run_batch(scheduler.due_sites(), asyncio.Event())
    assert crawl.calls == [["a", "b"]]
    saved = json.loads((tmp_path / "watch_state.json").read_text())
    assert saved["sites"]["a"]["last_run_time"] == format_time(T0)
    assert saved["sites"]["a"]["last_run_success"] is True
    assert saved["sites"]["a"]["pages_processed"] == 12
    assert saved["sites"]["a"]["added"] == 2
    assert saved["sites"]["a"]["changed"] == 1
    assert saved["updated_at"] == format_time(T0 + 10)


async def test_a_site_is_not_due_before_its_interval_and_due_once_it_has_passed(tmp_path: Path) -> None:
    clock = FakeClock()
    scheduler = _scheduler(tmp_path, ["a"], clock, FakeCrawl(clock))
    await scheduler.run_batch(["a"], asyncio.Event())
    assert scheduler.due_sites(T0 + DAY - 1) == []
    assert scheduler.due_sites(T0 + DAY) == ["a"]
    assert scheduler.next_run_at("a") == T0 + DAY


async def test_a_restarted_watcher_runs_only_the_sites_that_are_due(tmp_path: Path) -> None:
    state = WatchState(
        sites={
            "fresh": SiteRunState(
                last_run_time=format_time(T0 - HOUR), last_run_success=True, pages_processed=5
            ),
            "stale": SiteRunState(last_run_time=format_time(T0 - 2 * DAY), last_run_success=True),
        }
    )
    save_watch_state(tmp_path / "watch_state.json", state)
    clock = FakeClock()
    clock.stop_after_sleeps = 1
    crawl = FakeCrawl(clock)
    scheduler = _scheduler(tmp_path, ["fresh", "stale", "new"], clock, crawl)
    await scheduler.run(asyncio.Event())
    assert crawl.calls == [["stale", "new"]]
    reloaded = load_watch_state(tmp_path / "watch_state.json")
    assert reloaded.sites["fresh"].pages_processed == 5  # untouched
    assert reloaded.sites["stale"].last_run_time == format_time(T0)


async def test_the_loop_sleeps_until_the_next_site_is_due_and_runs_it_again(tmp_path: Path) -> None:
    clock = FakeClock()
    crawl = FakeCrawl(clock, duration=0)
    scheduler = _scheduler(tmp_path, ["a"], clock, crawl, interval=30 * 60)
    clock.stop_after_sleeps = 1000

    async def stop_after_three_batches(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        result = await crawl(keys, stop)
        if len(crawl.calls) == 3:
            stop.set()
        return result

    scheduler._crawl = stop_after_three_batches
    await scheduler.run(asyncio.Event())
    assert crawl.calls == [["a"], ["a"], ["a"]]
    # 30 min interval -> ticks of at most 3 minutes; each batch starts exactly when due
    assert max(clock.sleeps) <= 3 * 60
    assert clock.t == T0 + 2 * 30 * 60


async def test_one_failing_site_is_recorded_while_the_other_succeeds_and_both_run_next_interval(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    crawl = FakeCrawl(clock, fail={"broken"}, duration=0)
    scheduler = _scheduler(tmp_path, ["ok", "broken"], clock, crawl, interval=HOUR)
    await scheduler.run_batch(scheduler.due_sites(), asyncio.Event())
    state = load_watch_state(tmp_path / "watch_state.json")
    assert state.sites["ok"].last_run_success is True
    assert state.sites["ok"].error_message == ""
    assert state.sites["broken"].last_run_success is False
    assert state.sites["broken"].error_message == "HTTP 503 on start URL"
    assert state.sites["broken"].consecutive_failures == 1
    # the failure is retried an interval later, not at once
    assert scheduler.due_sites(T0 + 60) == []
    assert scheduler.due_sites(T0 + HOUR) == ["ok", "broken"]
    crawl.fail.clear()
    clock.t = T0 + HOUR
    await scheduler.run_batch(scheduler.due_sites(), asyncio.Event())
    assert scheduler.state.sites["broken"].last_run_success is True
    assert scheduler.state.sites["broken"].consecutive_failures == 0


async def test_a_batch_that_raises_is_retried_site_by_site_so_the_good_site_still_runs(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    calls: list[list[str]] = []

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        calls.append(list(keys))
        if "bad" in keys:
            raise ConfigError("start_urls[0]: not an http(s) URL", key="sites.bad")
        return [CrawlSummary(site_key=k, ok=True, mode="incremental", pages=3) for k in keys]

    scheduler = _scheduler(tmp_path, ["good", "bad"], clock, crawl)
    await scheduler.run_batch(["good", "bad"], asyncio.Event())
    assert calls == [["good", "bad"], ["good"], ["bad"]]
    assert scheduler.state.sites["good"].last_run_success is True
    assert scheduler.state.sites["bad"].last_run_success is False
    assert "sites.bad" in scheduler.state.sites["bad"].error_message


async def test_an_unexpected_crash_of_one_site_does_not_end_the_watcher(tmp_path: Path) -> None:
    clock = FakeClock()

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        if "bad" in keys:
            raise RuntimeError("boom")
        return [CrawlSummary(site_key=k, ok=True, mode="incremental") for k in keys]

    scheduler = _scheduler(tmp_path, ["good", "bad"], clock, crawl)
    await scheduler.run_batch(["good", "bad"], asyncio.Event())
    assert scheduler.state.sites["good"].last_run_success is True
    assert scheduler.state.sites["bad"].error_message == "boom"


async def test_a_signal_during_a_crawl_stops_the_watcher_and_leaves_the_site_due_for_resume(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    started = asyncio.Event()
    saw_stop: list[bool] = []

    async def slow_crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        started.set()
        await stop.wait()  # the engine finishes in-flight pages, then returns interrupted summaries
        saw_stop.append(True)
        return [
            CrawlSummary(site_key=k, ok=False, mode="incremental", interrupted=True, pages=4) for k in keys
        ]

    # an earlier complete run, an interval ago: the site is due now
    save_watch_state(
        tmp_path / "watch_state.json",
        WatchState(sites={"a": SiteRunState(last_run_time=format_time(T0 - DAY), last_run_success=True)}),
    )
    scheduler = _scheduler(tmp_path, ["a"], clock, slow_crawl)
    stop = asyncio.Event()
    task = asyncio.create_task(scheduler.run(stop))
    await asyncio.wait_for(started.wait(), 1)
    stop.set()  # what the SIGINT/SIGTERM handler does
    await asyncio.wait_for(task, 1)
    assert saw_stop == [True]
    state = load_watch_state(tmp_path / "watch_state.json")
    assert state.sites["a"].interrupted is True
    assert state.sites["a"].last_run_time == format_time(T0 - DAY)  # the last complete run is kept
    # a restart a minute later runs it again at once (incremental mode resumes it)
    clock.t = T0 + 60
    restarted = _scheduler(tmp_path, ["a"], clock, FakeCrawl(clock))
    assert restarted.due_sites() == ["a"]
    await restarted.run_batch(["a"], asyncio.Event())
    assert restarted.state.sites["a"].interrupted is False
    assert restarted.state.sites["a"].last_run_success is True


async def test_the_schedule_is_logged_with_last_and_next_run_per_site(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    scheduler = _scheduler(tmp_path, ["a"], clock, FakeCrawl(clock, duration=0))
    await scheduler.run_batch(["a"], asyncio.Event())
    with caplog.at_level(logging.INFO, logger="doc_scraper.watch"):
        scheduler.log_schedule()
    records = [r for r in caplog.records if r.getMessage() == "watch.schedule"]
    assert len(records) == 1
    assert records[0].last_run == format_time(T0)  # type: ignore[attr-defined]
    assert records[0].next_run == format_time(T0 + DAY)  # type: ignore[attr-defined]
    assert records[0].due is False  # type: ignore[attr-defined]


def test_a_damaged_state_file_is_reported_with_its_path_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "watch_state.json"
    path.write_text("{not json")
    with pytest.raises(StateError, match=r"watch_state\.json.*delete it"):
        load_watch_state(path)


def test_saving_replaces_the_file_atomically_and_keeps_the_old_one_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "watch_state.json"
    save_watch_state(path, WatchState(sites={"a": SiteRunState(pages_processed=1)}, updated_at="x"))
    before = path.read_text()

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("doc_scraper.watch.os.fsync", broken_fsync)
    with pytest.raises(StateError, match="No space left"):
        save_watch_state(path, WatchState(sites={"a": SiteRunState(pages_processed=2)}))
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["watch_state.json"]


def test_unknown_fields_in_the_state_file_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "watch_state.json"
    path.write_text(json.dumps({"sites": {"a": {"last_run_time": "2026-01-01T00:00:00Z", "future": 1}}}))
    assert load_watch_state(path).sites["a"].last_run_time == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("interval", [0, -5.0, float("nan")])
def test_the_scheduler_refuses_a_non_positive_interval(tmp_path: Path, interval: float) -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="interval"):
        _scheduler(tmp_path, ["a"], clock, FakeCrawl(clock), interval=interval)
