"""Background crawl jobs for the MCP server: start, watch, cancel, persist.

A job is an asyncio task in the server process that runs one site's crawl, so
tool calls keep being answered while it runs. At most one job is active per
site. By default the crawl itself (``api.crawl_sites``) runs in a child
process at lower CPU priority (``crawl_in_subprocess``): searches do not
compete with it for the server's event loop and GIL, and a crash in the crawl
fails the job, never the server. Cancelling sets the crawl's stop event
(in-flight pages finish, state stays resumable) and, if the crawl has not
ended after the grace period, cancels the task, which stops the child.

Job records are kept in ``<state_dir>/mcp_jobs.json`` (``{"version", "jobs"}``),
written atomically on every state change and every few seconds of progress.
When the server starts, jobs a previous process left unfinished are marked
failed: their task died with that process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing
import multiprocessing.process
import os
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from doc_scraper.errors import DocScraperError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from doc_scraper.config.schema import Config
    from doc_scraper.models import CrawlProgress, CrawlSummary

logger = logging.getLogger(__name__)

JOBS_FILENAME = "mcp_jobs.json"
JOBS_FILE_VERSION = 1
MAX_FINISHED_JOBS = 100  # finished jobs kept in the file and in memory
PROGRESS_SAVE_INTERVAL = 5.0  # seconds between progress saves of a running job
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
JOB_MODES = ("full", "incremental", "resume")


class CrawlFunction(Protocol):
    """The shape of ``doc_scraper.api.crawl_sites``; tests pass a fake."""

    def __call__(
        self,
        config: Config,
        site_keys: list[str],
        *,
        mode: str = ...,
        stop: asyncio.Event | None = ...,
        progress: Callable[[CrawlProgress], None] | None = ...,
    ) -> Awaitable[list[CrawlSummary]]: ...


class JobError(DocScraperError):
    """A job id that does not exist, or a job request that cannot be served."""


def utc_now() -> str:
    """Now as RFC 3339 UTC with milliseconds (``2026-01-02T03:04:05.678Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(slots=True)
class Job:
    """One crawl job as reported by ``get_job_status`` and saved to disk."""

    job_id: str
    site_key: str
    mode: str  # full | incremental | resume
    status: str = "pending"  # pending | running | completed | failed | cancelled
    started_at: str = field(default_factory=utc_now)
    completed_at: str | None = None
    pages_processed: int = 0
    pages_queued: int = 0
    pages_failed: int = 0
    cancel_requested: bool = False
    error_message: str | None = None
    summary: dict[str, Any] | None = None  # CrawlSummary counts once the crawl ended

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def incremental(self) -> bool:
        return self.mode == "incremental"

    def duration_seconds(self) -> float | None:
        start = _parse_time(self.started_at)
        end = _parse_time(self.completed_at) if self.completed_at else datetime.now(UTC)
        if start is None or end is None:
            return None
        return round((end - start).total_seconds(), 3)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job | None:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if not isinstance(values.get("job_id"), str) or not isinstance(values.get("site_key"), str):
            return None
        values.setdefault("mode", "incremental" if data.get("incremental") else "full")
        try:
            return cls(**values)
        except TypeError:
            return None


@dataclass(slots=True)
class _Running:
    task: asyncio.Task[None]
    stop: asyncio.Event
    done: asyncio.Event
    killer: asyncio.Task[None] | None = None


class JobManager:
    """Runs crawl jobs as tasks on the current event loop and keeps their records.

    ``open()`` loads the saved records (call it inside the running loop),
    ``close()`` stops every running job; both are idempotent.
    """

    def __init__(
        self,
        config: Config,
        *,
        crawl: CrawlFunction | None = None,
        jobs_path: str | Path | None = None,
        cancel_grace: float | None = None,
        progress_save_interval: float = PROGRESS_SAVE_INTERVAL,
    ) -> None:
        self.config = config
        self._crawl = crawl
        self.jobs_path = Path(jobs_path) if jobs_path else Path(config.state_dir) / JOBS_FILENAME
        self.cancel_grace = config.shutdown_grace if cancel_grace is None else cancel_grace
        self._progress_save_interval = progress_save_interval
        self._jobs: dict[str, Job] = {}  # insertion order = start order
        self._running: dict[str, _Running] = {}  # job_id -> task handles
        self._active_by_site: dict[str, str] = {}
        self._save_lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._last_save = 0.0
        self._opened = False
        self._closed = False

    @classmethod
    def from_config(cls, config: Config, *, crawl: CrawlFunction | None = None) -> JobManager:
        return cls(config, crawl=crawl)

    # -- lifecycle --------------------------------------------------------------------------------

    async def open(self) -> None:
        """Load saved jobs; those a previous process left running become failed."""
        self._closed = False
        if self._opened:
            return
        self._opened = True
        loaded = await asyncio.to_thread(_read_jobs_file, self.jobs_path)
        changed = False
        for job in loaded:
            if not job.finished:
                job.status = "failed"
                job.completed_at = job.completed_at or utc_now()
                job.error_message = (
                    "the MCP server stopped while this job was running; pages already crawled are kept. "
                    "Call crawl_site with resume: true to continue it."
                )
                changed = True
            self._jobs[job.job_id] = job
        if changed:
            logger.warning("jobs.recovered_unfinished", extra={"path": str(self.jobs_path)})
            await self.save()

    async def close(self, grace: float | None = None) -> None:
        """Stop every running job (gracefully, then by cancelling) and save the records."""
        if self._closed:
            return
        self._closed = True
        grace = self.cancel_grace if grace is None else grace
        running = list(self._running.items())
        for job_id, handles in running:
            self._jobs[job_id].cancel_requested = True
            if self._jobs[job_id].error_message is None:
                self._jobs[job_id].error_message = "stopped because the MCP server shut down"
            handles.stop.set()
        tasks = [h.task for _, h in running]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=5.0)
        for task in list(self._background):
            task.cancel()
        await self.save()

    # -- queries ----------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id.strip())
        if job is None:
            recent = ", ".join(j.job_id for j in self.recent(5)) or "none yet"
            raise JobError(
                f"unknown job_id {job_id!r}; recent job ids: {recent}. "
                "Call describe_server to list recent jobs, or crawl_site to start one."
            )
        return job

    def active_job(self, site_key: str) -> Job | None:
        job_id = self._active_by_site.get(site_key)
        return self._jobs.get(job_id) if job_id else None

    def recent(self, limit: int = 20) -> list[Job]:
        """Newest first."""
        return list(reversed(self._jobs.values()))[:limit]

    @property
    def total_jobs(self) -> int:
        return len(self._jobs)

    # -- commands ---------------------------------------------------------------------------------

    async def start(self, site_key: str, *, mode: str = "full") -> tuple[Job, bool]:
        """Start a crawl of one site; returns (job, started). An active job is returned as is."""
        if self._closed:
            raise JobError("the server is shutting down; no new crawl can start")
        if mode not in JOB_MODES:
            raise JobError(f"unknown crawl mode {mode!r}; use one of {', '.join(JOB_MODES)}")
        if site_key not in self.config.sites:
            valid = ", ".join(sorted(self.config.sites)) or "(none configured)"
            raise JobError(f"unknown site_key {site_key!r}; configured sites: {valid}")
        active = self.active_job(site_key)
        if active is not None:
            return active, False
        job = Job(job_id=str(uuid.uuid4()), site_key=site_key, mode=mode)
        self._jobs[job.job_id] = job
        self._active_by_site[site_key] = job.job_id
        stop = asyncio.Event()
        done = asyncio.Event()
        task = asyncio.create_task(self._run(job, stop, done), name=f"crawl-job-{site_key}")
        self._running[job.job_id] = _Running(task=task, stop=stop, done=done)
        self._trim()
        logger.info("job.started", extra={"job_id": job.job_id, "site_key": site_key, "mode": mode})
        await self.save()
        return job, True

    async def cancel(self, job_id: str, *, wait: float = 5.0) -> tuple[Job, bool]:
        """Ask a job to stop; returns (job, cancel_was_requested_now).

        Waits up to ``wait`` seconds for the crawl to wind down, so the caller
        usually sees the final status. After ``cancel_grace`` seconds the task is
        cancelled outright.
        """
        job = self.get(job_id)
        handles = self._running.get(job.job_id)
        if job.finished or handles is None:
            return job, False
        first = not job.cancel_requested
        job.cancel_requested = True
        handles.stop.set()
        if handles.killer is None:
            handles.killer = asyncio.create_task(self._kill_after_grace(handles))
        logger.info("job.cancel_requested", extra={"job_id": job.job_id, "site_key": job.site_key})
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(handles.done.wait(), timeout=wait)
        if not job.finished:
            await self.save()
        return job, first

    async def wait(self, job_id: str) -> Job:
        """Wait until a job has ended (wrap in ``asyncio.timeout`` to bound it)."""
        job = self.get(job_id)
        handles = self._running.get(job.job_id)
        if handles is not None:
            await handles.done.wait()
        return job

    # -- the job task -----------------------------------------------------------------------------

    async def _kill_after_grace(self, handles: _Running) -> None:
        try:
            await asyncio.wait_for(handles.done.wait(), timeout=self.cancel_grace)
        except TimeoutError:
            logger.warning("job.cancel_forced", extra={"grace_s": self.cancel_grace})
            handles.task.cancel()

    def _crawl_function(self) -> CrawlFunction:
        return self._crawl if self._crawl is not None else crawl_in_subprocess

    async def _run(self, job: Job, stop: asyncio.Event, done: asyncio.Event) -> None:
        started = time.monotonic()

        def on_progress(progress: CrawlProgress) -> None:
            job.pages_processed = progress.pages_done
            job.pages_queued = progress.pages_queued
            job.pages_failed = progress.pages_failed
            if time.monotonic() - self._last_save >= self._progress_save_interval:
                with contextlib.suppress(RuntimeError):  # called off the loop: the next save catches up
                    self._save_soon()

        try:
            job.status = "running"
            await self.save()
            crawl = self._crawl_function()
            summaries = await crawl(
                self.config, [job.site_key], mode=job.mode, stop=stop, progress=on_progress
            )
        except asyncio.CancelledError:
            job.status = "cancelled" if job.cancel_requested else "failed"
            job.error_message = job.error_message or (
                "the crawl did not stop within the grace period and was cancelled; "
                "call crawl_site with resume: true to continue it"
            )
            raise
        except DocScraperError as exc:
            job.status = "failed"
            job.error_message = str(exc)
            logger.warning(
                "job.failed", extra={"job_id": job.job_id, "site_key": job.site_key, "error": str(exc)}
            )
        except Exception as exc:  # a bug in the crawl must not take the server down
            job.status = "failed"
            job.error_message = f"internal error: {type(exc).__name__}: {exc}"
            logger.exception("job.crashed", extra={"job_id": job.job_id, "site_key": job.site_key})
        else:
            self._finish_from_summaries(job, summaries)
        finally:
            job.completed_at = utc_now()
            self._active_by_site.pop(job.site_key, None)
            handles = self._running.pop(job.job_id, None)
            killer = handles.killer if handles is not None else None
            if killer is not None and killer is not asyncio.current_task():
                killer.cancel()
            done.set()
            logger.info(
                "job.finished",
                extra={
                    "job_id": job.job_id,
                    "site_key": job.site_key,
                    "status": job.status,
                    "pages": job.pages_processed,
                    "duration_s": round(time.monotonic() - started, 3),
                },
            )
            self._save_soon()

    def _finish_from_summaries(self, job: Job, summaries: list[CrawlSummary]) -> None:
        mine = [s for s in summaries if s.site_key == job.site_key] or summaries
        summary = mine[0] if mine else None
        if summary is not None:
            job.summary = {
                "ok": summary.ok,
                "mode": summary.mode,
                "pages": summary.pages,
                "added": summary.added,
                "changed": summary.changed,
                "unchanged": summary.unchanged,
                "removed": summary.removed,
                "failed": summary.failed,
                "skipped": dict(summary.skipped),
                "interrupted": summary.interrupted,
                "duration_s": summary.duration_s,
                "output_dir": summary.output_dir,
            }
            touched = summary.added + summary.changed + summary.unchanged + summary.failed
            job.pages_processed = max(job.pages_processed, touched)
            job.pages_failed = max(job.pages_failed, summary.failed)
        if job.cancel_requested or (summary is not None and summary.interrupted):
            job.status = "cancelled"
            if not job.error_message:
                job.error_message = "stopped on request; call crawl_site with resume: true to continue it"
        elif summary is not None and not summary.ok:
            job.status = "failed"
            job.error_message = summary.error or "the crawl failed; see the server log for details"
        else:
            job.status = "completed"
        job.pages_queued = 0 if job.status == "completed" else job.pages_queued

    # -- persistence ------------------------------------------------------------------------------

    def _trim(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished]
        for job in finished[: max(0, len(finished) - MAX_FINISHED_JOBS)]:
            del self._jobs[job.job_id]

    def _save_soon(self) -> None:
        task = asyncio.create_task(self.save())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def save(self) -> None:
        """Write every job record to the jobs file atomically (off the event loop)."""
        async with self._save_lock:
            self._last_save = time.monotonic()
            data = {"version": JOBS_FILE_VERSION, "jobs": [j.to_dict() for j in self._jobs.values()]}
            try:
                await asyncio.to_thread(_write_json_atomic, self.jobs_path, data)
            except OSError as exc:  # a full disk must not stop the crawl or the server
                logger.warning("jobs.save_failed", extra={"path": str(self.jobs_path), "error": str(exc)})


def _read_jobs_file(path: Path) -> list[Job]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        logger.warning("jobs.load_failed", extra={"path": str(path), "error": str(exc)})
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        logger.warning("jobs.file_damaged", extra={"path": str(path), "error": str(exc)})
        return []
    items = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    jobs = [Job.from_dict(item) for item in items if isinstance(item, dict)]
    return [j for j in jobs if j is not None]


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


# -- crawls in a child process --------------------------------------------------------------------

CHILD_NICE = 10  # crawl CPU yields to the server's searches
_CHILD_EXIT_WAIT = 30.0  # seconds to wait for a finished or stopped child before killing it
_REAPERS: set[asyncio.Future[None]] = set()  # background waits for finished children


async def crawl_in_subprocess(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
    target: CrawlFunction | None = None,
) -> list[CrawlSummary]:
    """``api.crawl_sites`` in a child process (forkserver, else spawn) at lower CPU priority.

    The server keeps its event loop and GIL to itself (searches stay fast while
    a crawl parses pages), and a crash in the crawl (even a segfault or the OOM
    killer) fails the job instead of the server. Progress and the result come
    back over a pipe; ``stop`` is forwarded; cancelling this coroutine stops
    the child gracefully, then terminates it. ``target`` replaces
    ``api.crawl_sites`` (a picklable module-level function, for tests).
    """
    ctx = _child_context()
    receiver, sender = ctx.Pipe(duplex=False)
    stop_flag = ctx.Event()
    root = logging.getLogger()
    json_logs = any(type(h.formatter).__name__ == "JSONFormatter" for h in root.handlers)
    level = logging.getLevelName(root.getEffectiveLevel()).lower()
    process = ctx.Process(
        target=_child_main,
        args=(target, config, site_keys, mode, stop_flag, sender, level, json_logs, os.getpid()),
        name=f"doc-scraper-crawl-{'-'.join(site_keys)}",
    )
    await asyncio.to_thread(process.start)
    sender.close()  # the child holds the only write end: EOF on our side means it exited
    loop = asyncio.get_running_loop()
    messages: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()

    def read_messages() -> None:
        # A thread rather than loop.add_reader: it works with every event loop (Windows too), and
        # it owns the pipe until the child closes its end (EOF), so nothing is closed under it.
        with receiver:
            while True:
                try:
                    item: tuple[Any, ...] | None = receiver.recv()
                except (EOFError, OSError):
                    item = None
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
                    loop.call_soon_threadsafe(messages.put_nowait, item)
                if item is None:
                    return

    threading.Thread(target=read_messages, name="crawl-child-reader", daemon=True).start()

    async def forward_stop() -> None:
        if stop is not None:
            await stop.wait()
            stop_flag.set()

    forwarder = asyncio.create_task(forward_stop())
    try:
        while True:
            message = await messages.get()
            if message is None:
                await asyncio.to_thread(process.join, _CHILD_EXIT_WAIT)
                raise DocScraperError(
                    f"the crawl process for {', '.join(site_keys)} exited unexpectedly "
                    f"(exit code {process.exitcode}); see the server log. Pages already crawled are "
                    "kept: crawl_site with resume: true continues the crawl"
                )
            kind = message[0]
            if kind == "progress" and progress is not None:
                progress(message[1])
            elif kind == "done":
                return list(message[1])
            elif kind == "error":
                raise DocScraperError(str(message[1]))
            elif kind == "crash":
                raise RuntimeError(str(message[1]))
    except asyncio.CancelledError:
        stop_flag.set()
        raise
    finally:
        forwarder.cancel()
        # The outcome is known; the child exits on its own (or is made to) in the background.
        reaper = asyncio.ensure_future(asyncio.to_thread(_reap, process))
        _REAPERS.add(reaper)
        reaper.add_done_callback(_REAPERS.discard)


def _child_context() -> Any:
    """Forkserver where there is one: it imports the crawl engine once, then forks each crawl
    from that clean, single-threaded process in milliseconds. Elsewhere spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["doc_scraper.api", "doc_scraper.engine", "doc_scraper.jobs"])
    return ctx


def _reap(process: multiprocessing.process.BaseProcess) -> None:
    """Wait for a child that was asked to stop; terminate, then kill, one that lingers."""
    process.join(_CHILD_EXIT_WAIT)
    if process.is_alive():
        logger.warning("job.child_terminated", extra={"pid": process.pid})
        process.terminate()
        process.join(5.0)
    if process.is_alive():
        process.kill()
        process.join(5.0)


def _child_main(
    target: CrawlFunction | None,
    config: Config,
    site_keys: list[str],
    mode: str,
    stop_flag: Any,
    sender: Any,
    level: str,
    json_logs: bool,
    server_pid: int,
) -> None:
    """The child process: run the crawl, report progress and the outcome through ``sender``."""
    import signal

    from doc_scraper.log import setup_logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when a crawl stops
    with contextlib.suppress(OSError):
        os.nice(CHILD_NICE)
    setup_logging(level, json_lines=json_logs)
    code = 0
    try:
        summaries = asyncio.run(_child_crawl(target, config, site_keys, mode, stop_flag, sender, server_pid))
        _send(sender, ("done", summaries))
    except DocScraperError as exc:
        _send(sender, ("error", str(exc)))
    except BaseException as exc:
        logger.exception("job.child_crashed", extra={"sites": ",".join(site_keys)})
        _send(sender, ("crash", f"{type(exc).__name__}: {exc}"))
        code = 1
    finally:
        sender.close()
    _shutdown_parse_pool()
    sys.exit(code)


def _shutdown_parse_pool() -> None:
    """Stop the engine's parse pool now, so the interpreter exits promptly and cleanly."""
    import sys as _sys

    engine = _sys.modules.get("doc_scraper.engine")
    if engine is not None:  # only when a crawl ran in this process
        engine.shutdown_pool()


def _send(sender: Any, message: tuple[Any, ...]) -> bool:
    """Send to the server; False if it is gone (its end of the pipe is closed)."""
    try:
        sender.send(message)
    except (OSError, ValueError):
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _child_crawl(
    target: CrawlFunction | None,
    config: Config,
    site_keys: list[str],
    mode: str,
    stop_flag: Any,
    sender: Any,
    server_pid: int,
) -> list[CrawlSummary]:
    if target is None:
        from doc_scraper.api import crawl_sites

        target = crawl_sites
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    # SIGTERM (from _reap, or because the server died) asks for a graceful, resumable stop.
    with contextlib.suppress(NotImplementedError, RuntimeError):
        import signal

        loop.add_signal_handler(signal.SIGTERM, stop.set)

    def request_stop() -> None:
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(stop.set)

    def watch_stop() -> None:
        # A stop request from the server, or the server gone (killed): stop gracefully either way,
        # so no crawl outlives its server and the state stays resumable.
        while not stop_flag.wait(1.0):
            if not _alive(server_pid):
                logger.warning("job.server_gone", extra={"server_pid": server_pid})
                break
        request_stop()

    threading.Thread(target=watch_stop, name="crawl-stop-watch", daemon=True).start()

    def on_progress(item: CrawlProgress) -> None:
        if not _send(sender, ("progress", item)):
            request_stop()

    return await target(config, site_keys, mode=mode, stop=stop, progress=on_progress)
