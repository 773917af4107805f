from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from doc_scraper.config.schema import Config, SiteConfig
from doc_scraper.errors import DocScraperError, StateError
from doc_scraper.jobs import JOBS_FILENAME, JobError, JobManager, _child_crawl, crawl_in_subprocess
from doc_scraper.models import CrawlProgress, CrawlSummary

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _config(tmp_path: Path, *keys: str) -> Config:
    sites = {
        key: SiteConfig(key=key, start_urls=(f"http://127.0.0.1/{key}/",), allowed_domain="127.0.0.1")
        for key in keys or ("docs",)
    }
    return Config(sites=sites, state_dir=str(tmp_path / "state"), output_base_dir=str(tmp_path / "out"))


class FakeCrawl:
    """A crawl that reports progress and then waits for `release` or the stop event."""

    def __init__(
        self, *, pages: int = 3, error: BaseException | None = None, ignore_stop: bool = False
    ) -> None:
        self.pages = pages
        self.error = error
        self.ignore_stop = ignore_stop
        self.release = asyncio.Event()
        self.calls: list[tuple[list[str], str]] = []
        self.running = asyncio.Event()

    async def __call__(
        self,
        config: Config,
        site_keys: list[str],
        *,
        mode: str = "full",
        stop: asyncio.Event | None = None,
        progress: Callable[[CrawlProgress], None] | None = None,
    ) -> list[CrawlSummary]:
        self.calls.append((site_keys, mode))
        assert progress is not None
        assert stop is not None
        progress(CrawlProgress(site_key=site_keys[0], pages_done=1, pages_queued=self.pages - 1))
        self.running.set()
        if self.error is not None:
            raise self.error
        waiters = [asyncio.ensure_future(self.release.wait())]
        if not self.ignore_stop:
            waiters.append(asyncio.ensure_future(stop.wait()))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()
        interrupted = stop.is_set()
        done = 1 if interrupted else self.pages
        progress(CrawlProgress(site_key=site_keys[0], pages_done=done, pages_queued=0))
        return [
            CrawlSummary(
                site_key=site_keys[0],
                ok=not interrupted,
                mode=mode,
                pages=done,
                added=done,
                interrupted=interrupted,
            )
        ]


async def test_a_job_runs_to_completion_and_records_progress(tmp_path: Path) -> None:
    crawl = FakeCrawl(pages=4)
    jobs = JobManager(_config(tmp_path), crawl=crawl)
    await jobs.open()
    job, started = await jobs.start("docs", mode="incremental")
    assert started
    assert job.status in ("pending", "running")
    await crawl.running.wait()
    assert job.pages_processed == 1
    assert job.pages_queued == 3
    crawl.release.set()
    async with asyncio.timeout(5):
        await jobs.wait(job.job_id)
    assert job.status == "completed"
    assert job.pages_processed == 4
    assert job.summary is not None
    assert job.summary["added"] == 4
    assert crawl.calls == [(["docs"], "incremental")]
    assert job.completed_at is not None
    assert job.duration_seconds() is not None
    await jobs.close()


async def test_only_one_job_runs_per_site(tmp_path: Path) -> None:
    crawl = FakeCrawl()
    jobs = JobManager(_config(tmp_path, "a", "b"), crawl=crawl)
    await jobs.open()
    first, _ = await jobs.start("a")
    again, started = await jobs.start("a")
    other, other_started = await jobs.start("b")
    assert not started
    assert again is first
    assert other_started
    assert other.job_id != first.job_id
    crawl.release.set()
    await jobs.close()


async def test_cancel_stops_the_crawl_through_its_stop_event(tmp_path: Path) -> None:
    crawl = FakeCrawl()
    jobs = JobManager(_config(tmp_path), crawl=crawl)
    await jobs.open()
    job, _ = await jobs.start("docs")
    await crawl.running.wait()
    cancelled, requested = await jobs.cancel(job.job_id, wait=5)
    assert requested
    assert cancelled.status == "cancelled"
    assert "resume: true" in (cancelled.error_message or "")
    again, requested_again = await jobs.cancel(job.job_id)
    assert not requested_again
    assert again.status == "cancelled"
    # the site is free again
    _, started = await jobs.start("docs")
    assert started
    crawl.release.set()
    await jobs.close()


async def test_cancel_kills_a_crawl_that_ignores_the_stop_event_after_the_grace(tmp_path: Path) -> None:
    crawl = FakeCrawl(ignore_stop=True)
    jobs = JobManager(_config(tmp_path), crawl=crawl, cancel_grace=0.05)
    await jobs.open()
    job, _ = await jobs.start("docs")
    await crawl.running.wait()
    await jobs.cancel(job.job_id, wait=0)
    async with asyncio.timeout(5):
        await jobs.wait(job.job_id)
    assert job.status == "cancelled"
    await jobs.close()


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (StateError("/tmp/x", "locked by another process"), "locked by another process"),
        (RuntimeError("boom"), "internal error: RuntimeError: boom"),
    ],
)
async def test_a_failing_crawl_becomes_a_failed_job_with_its_message(
    tmp_path: Path, error: BaseException, expected: str
) -> None:
    jobs = JobManager(_config(tmp_path), crawl=FakeCrawl(error=error))
    await jobs.open()
    job, _ = await jobs.start("docs")
    async with asyncio.timeout(5):
        await jobs.wait(job.job_id)
    assert job.status == "failed"
    assert expected in (job.error_message or "")
    await jobs.close()


async def test_unknown_site_and_job_ids_name_the_valid_choices(tmp_path: Path) -> None:
    jobs = JobManager(_config(tmp_path, "alpha", "beta"), crawl=FakeCrawl())
    await jobs.open()
    with pytest.raises(JobError, match="alpha, beta"):
        await jobs.start("gamma")
    with pytest.raises(DocScraperError, match="unknown job_id 'nope'"):
        jobs.get("nope")
    await jobs.close()


async def test_jobs_survive_a_restart_and_unfinished_ones_become_failed(tmp_path: Path) -> None:
    config = _config(tmp_path, "a", "b")
    crawl = FakeCrawl()
    jobs = JobManager(config, crawl=crawl)
    await jobs.open()
    done_job, _ = await jobs.start("a")
    crawl.release.set()
    async with asyncio.timeout(5):
        await jobs.wait(done_job.job_id)
    crawl.release.clear()
    running_job, _ = await jobs.start("b")
    await asyncio.sleep(0)
    await jobs.save()
    path = tmp_path / "state" / JOBS_FILENAME
    saved = json.loads(path.read_text())
    assert saved["version"] == 1
    assert {j["job_id"]: j["status"] for j in saved["jobs"]}[running_job.job_id] in ("pending", "running")

    # a new process reads the file: the finished job is kept, the running one failed
    restarted = JobManager(config, crawl=FakeCrawl())
    await restarted.open()
    assert restarted.get(done_job.job_id).status == "completed"
    lost = restarted.get(running_job.job_id)
    assert lost.status == "failed"
    assert "resume: true" in (lost.error_message or "")
    assert restarted.active_job("b") is None
    assert [j.job_id for j in restarted.recent()] == [running_job.job_id, done_job.job_id]
    await restarted.close()
    crawl.release.set()
    await jobs.close()


async def test_a_damaged_jobs_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "state" / JOBS_FILENAME
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    jobs = JobManager(_config(tmp_path), crawl=FakeCrawl())
    await jobs.open()
    assert jobs.total_jobs == 0
    await jobs.close()


async def test_close_stops_running_jobs_and_saves_them_as_cancelled(tmp_path: Path) -> None:
    crawl = FakeCrawl()
    jobs = JobManager(_config(tmp_path), crawl=crawl)
    await jobs.open()
    job, _ = await jobs.start("docs")
    await crawl.running.wait()
    await jobs.close(grace=5)
    assert job.status == "cancelled"
    saved = json.loads((tmp_path / "state" / JOBS_FILENAME).read_text())
    assert saved["jobs"][0]["status"] == "cancelled"
    with pytest.raises(JobError, match="shutting down"):
        await jobs.start("docs")


async def child_target(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
) -> list[CrawlSummary]:
    """Runs in the spawned child: behaviour chosen by the site key."""
    import os

    key = site_keys[0]
    if key == "crash":
        os._exit(3)  # like a segfault or the OOM killer: no goodbye
    if key == "error":
        raise StateError("/state/x", "locked by another process")
    assert progress is not None
    assert stop is not None
    progress(CrawlProgress(site_key=key, pages_done=2, pages_queued=5))
    await stop.wait()
    return [CrawlSummary(site_key=key, ok=False, mode=mode, pages=2, interrupted=True)]


async def test_a_crawl_in_a_child_process_reports_progress_stops_and_fails_cleanly(tmp_path: Path) -> None:
    config = _config(tmp_path, "docs", "crash", "error")
    seen: list[CrawlProgress] = []
    stop = asyncio.Event()

    async def stop_after_progress() -> None:
        while not seen:  # noqa: ASYNC110 - progress arrives from another process
            await asyncio.sleep(0.01)
        stop.set()

    async with asyncio.timeout(60):
        results = await asyncio.gather(
            crawl_in_subprocess(
                config, ["docs"], mode="resume", stop=stop, progress=seen.append, target=child_target
            ),
            crawl_in_subprocess(config, ["crash"], target=child_target),
            crawl_in_subprocess(config, ["error"], target=child_target),
            stop_after_progress(),
            return_exceptions=True,
        )
    summaries, crashed, failed, _ = results
    assert seen[0].pages_done == 2
    assert summaries == [CrawlSummary(site_key="docs", ok=False, mode="resume", pages=2, interrupted=True)]
    assert isinstance(crashed, DocScraperError)
    assert "exit code 3" in str(crashed)
    assert isinstance(failed, DocScraperError)
    assert "locked by another process" in str(failed)


class _Sender:
    def __init__(self, broken: bool = False) -> None:
        self.broken = broken
        self.sent: list[tuple[object, ...]] = []

    def send(self, message: tuple[object, ...]) -> None:
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.sent.append(message)


async def test_a_child_crawl_stops_by_itself_when_its_server_is_gone(tmp_path: Path) -> None:
    import threading

    dead_pid = 2**22 + 12345  # above Linux's largest pid_max: no such process
    async with asyncio.timeout(10):
        summaries = await _child_crawl(
            child_target, _config(tmp_path), ["docs"], "full", threading.Event(), _Sender(), dead_pid
        )
    assert summaries[0].interrupted


async def test_a_child_crawl_stops_when_the_server_end_of_the_pipe_is_closed(tmp_path: Path) -> None:
    import os
    import threading

    async with asyncio.timeout(10):
        summaries = await _child_crawl(
            child_target,
            _config(tmp_path),
            ["docs"],
            "full",
            threading.Event(),
            _Sender(broken=True),
            os.getpid(),
        )
    assert summaries[0].interrupted
