"""The ``watch`` scheduler: re-crawl sites incrementally, each on a fixed interval.

State lives in ``<state_dir>/watch_state.json`` (written atomically after every
batch), so a restarted watcher only runs the sites that are due. A site is due
when it never ran, when its last run was interrupted, or when its last run
started at least ``interval`` seconds ago. Due sites run together in one batch;
one site's failure is recorded and retried an interval later, it never stops
the others. Setting the stop event ends the running batch gracefully (the
crawl function receives the same event and leaves the crawl resumable) and
returns from :meth:`WatchScheduler.run`.

The clock and the crawl function are injected, so tests run without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doc_scraper.errors import DocScraperError, StateError
from doc_scraper.models import CrawlSummary

if TYPE_CHECKING:
    from doc_scraper.config.schema import Config

logger = logging.getLogger(__name__)

WATCH_STATE_FILENAME = "watch_state.json"
WATCH_LOCK_FILENAME = "watch.lock"
STATE_VERSION = 1
# The scheduler wakes at least this often to re-check the clock (a laptop that slept, a clock
# that jumped); between wake-ups it sleeps until the next site is due.
MIN_TICK_S = 60.0
MAX_TICK_S = 600.0

CrawlFn = Callable[[list[str], asyncio.Event], Awaitable[list[CrawlSummary]]]
NowFn = Callable[[], float]
SleepFn = Callable[[float, asyncio.Event], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SiteRunState:
    """How a site's last watched run went."""

    last_run_time: str = ""  # RFC 3339 UTC of the run's start; "" = never ran
    last_run_success: bool = False
    pages_processed: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    failed: int = 0
    duration_s: float = 0.0
    interrupted: bool = False  # stopped by a signal: due again at the next start
    error_message: str = ""
    runs: int = 0
    consecutive_failures: int = 0


@dataclass(frozen=True, slots=True)
class WatchState:
    """The whole ``watch_state.json``: per-site run states."""

    sites: dict[str, SiteRunState] = field(default_factory=dict)
    updated_at: str = ""


# ---------------------------------------------------------------- time helpers


def format_time(epoch: float) -> str:
    """Epoch seconds -> RFC 3339 UTC with seconds precision (``2026-01-02T03:04:05Z``)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float | None:
    """RFC 3339 text -> epoch seconds; None for "" or text that is not a time."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


async def real_sleep(seconds: float, stop: asyncio.Event) -> None:
    """Sleep ``seconds`` or until ``stop`` is set, whichever comes first."""
    if seconds <= 0 or stop.is_set():
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


# ---------------------------------------------------------------- persistence


def watch_state_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / WATCH_STATE_FILENAME


def load_watch_state(path: str | Path) -> WatchState:
    """Read ``watch_state.json``; a missing file is an empty state.

    Unknown fields are ignored (a newer version may add some); a file that is not
    JSON raises ``StateError`` naming the file and the fix.
    """
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return WatchState()
    except OSError as exc:
        raise StateError(str(file), f"cannot read the watch state: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise StateError(
            str(file),
            f"not valid JSON ({exc.msg}, line {exc.lineno}); delete it to reschedule every site now",
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("sites", {}), dict):
        raise StateError(str(file), "not a watch state object; delete it to reschedule every site now")
    known = set(SiteRunState.__dataclass_fields__)
    sites: dict[str, SiteRunState] = {}
    for key, entry in data.get("sites", {}).items():
        if not isinstance(entry, dict):
            continue
        values = {name: value for name, value in entry.items() if name in known}
        try:
            sites[str(key)] = _coerce_site_state(values)
        except (TypeError, ValueError):
            logger.warning("watch.state_entry_ignored", extra={"site": key, "path": str(file)})
    return WatchState(sites=sites, updated_at=str(data.get("updated_at", "")))


def _coerce_site_state(values: dict[str, Any]) -> SiteRunState:
    defaults = SiteRunState()
    out: dict[str, Any] = {}
    for name, value in values.items():
        default = getattr(defaults, name)
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise TypeError(name)
            out[name] = value
        elif isinstance(default, int):
            out[name] = int(value)
        elif isinstance(default, float):
            out[name] = float(value)
        else:
            out[name] = str(value)
    return SiteRunState(**out)


def save_watch_state(path: str | Path, state: WatchState) -> None:
    """Write the state atomically: a temp file in the same folder, fsync, then ``os.replace``."""
    file = Path(path)
    payload = {
        "version": STATE_VERSION,
        "updated_at": state.updated_at,
        "sites": {key: asdict(entry) for key, entry in sorted(state.sites.items())},
    }
    text = json.dumps(payload, indent=2, sort_keys=False) + "\n"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".watch_state.", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            Path(tmp).replace(file)
        except BaseException:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
            raise
    except OSError as exc:
        raise StateError(str(file), f"cannot write the watch state: {exc.strerror or exc}") from exc


@contextlib.contextmanager
def watch_lock(state_dir: str | Path) -> Iterator[Path]:
    """Hold ``<state_dir>/watch.lock`` so two watchers never share one schedule."""
    import fcntl

    path = Path(state_dir) / WATCH_LOCK_FILENAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StateError(str(path), f"cannot create the watch lock: {exc.strerror or exc}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StateError(
                str(path),
                "another watch is running with this state_dir; stop it first or use another state_dir",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        os.close(fd)  # closing releases the lock


# ---------------------------------------------------------------- scheduler


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One line of the logged schedule."""

    site_key: str
    last_run: str  # "" = never
    last_success: bool
    next_run: str
    due: bool


class WatchScheduler:
    """Run ``crawl`` for every due site, then sleep until the next one is due."""

    def __init__(
        self,
        site_keys: list[str],
        interval_s: float,
        state_path: str | Path,
        crawl: CrawlFn,
        *,
        now: NowFn = time.time,
        sleep: SleepFn = real_sleep,
    ) -> None:
        if not site_keys:
            raise ValueError("watch needs at least one site key")
        if not interval_s > 0:
            raise ValueError(f"interval must be positive, got {interval_s}")
        self.site_keys = list(dict.fromkeys(site_keys))
        self.interval_s = float(interval_s)
        self.state_path = Path(state_path)
        self._crawl = crawl
        self._now = now
        self._sleep = sleep
        self.state = load_watch_state(self.state_path)
        self.batches = 0

    # -- schedule arithmetic

    def next_run_at(self, key: str) -> float:
        """When ``key`` is next due (epoch seconds); ``-inf`` when it never ran or was interrupted."""
        entry = self.state.sites.get(key)
        if entry is None or entry.interrupted:
            return float("-inf")
        last = parse_time(entry.last_run_time)
        if last is None:
            return float("-inf")
        return last + self.interval_s

    def due_sites(self, now: float | None = None) -> list[str]:
        at = self._now() if now is None else now
        return [key for key in self.site_keys if self.next_run_at(key) <= at]

    def schedule(self, now: float | None = None) -> list[ScheduleEntry]:
        at = self._now() if now is None else now
        entries = []
        for key in self.site_keys:
            state = self.state.sites.get(key, SiteRunState())
            next_at = self.next_run_at(key)
            entries.append(
                ScheduleEntry(
                    site_key=key,
                    last_run=state.last_run_time,
                    last_success=state.last_run_success,
                    next_run=format_time(max(next_at, at)),
                    due=next_at <= at,
                )
            )
        return entries

    def tick_s(self) -> float:
        """The longest sleep between clock checks: interval/10, clamped to [1 min, 10 min]."""
        return min(max(self.interval_s / 10, MIN_TICK_S), MAX_TICK_S)

    def log_schedule(self) -> None:
        for entry in self.schedule():
            logger.info(
                "watch.schedule",
                extra={
                    "site": entry.site_key,
                    "last_run": entry.last_run or "never",
                    "last_success": entry.last_success,
                    "next_run": entry.next_run,
                    "due": entry.due,
                },
            )

    # -- running

    async def run(self, stop: asyncio.Event) -> None:
        """Loop until ``stop`` is set: run due sites, save, log the schedule, sleep."""
        logger.info(
            "watch.started",
            extra={
                "sites": ",".join(self.site_keys),
                "interval_s": self.interval_s,
                "state": str(self.state_path),
            },
        )
        self.log_schedule()
        while not stop.is_set():
            due = self.due_sites()
            if due:
                await self.run_batch(due, stop)
                if stop.is_set():
                    break
                self.log_schedule()
            wait = min(self._seconds_until_next_due(), self.tick_s())
            await self._sleep(max(wait, 0.0), stop)
        logger.info("watch.stopped", extra={"sites": ",".join(self.site_keys)})

    def _seconds_until_next_due(self) -> float:
        now = self._now()
        return min(self.next_run_at(key) for key in self.site_keys) - now

    async def run_batch(self, keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        """Crawl ``keys`` once, record every result and save the state."""
        started = self._now()
        self.batches += 1
        logger.info("watch.batch_started", extra={"sites": ",".join(keys), "batch": self.batches})
        summaries = await self._crawl_isolated(keys, stop)
        by_key = {summary.site_key: summary for summary in summaries}
        sites = dict(self.state.sites)
        for key in keys:
            summary = by_key.get(key)
            if summary is None:
                summary = _failed(key, RuntimeError("the crawl returned no result for this site"))
            sites[key] = self._record(sites.get(key, SiteRunState()), summary, started, stop.is_set())
        self.state = WatchState(sites=sites, updated_at=format_time(self._now()))
        save_watch_state(self.state_path, self.state)
        return [by_key.get(key) or CrawlSummary(site_key=key, ok=False, mode="incremental") for key in keys]

    async def _crawl_isolated(self, keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        """Crawl the batch together; if that raises, crawl each site alone so one cannot sink the rest."""
        try:
            return list(await self._crawl(keys, stop))
        except DocScraperError as exc:
            if len(keys) == 1:
                return [_failed(keys[0], exc)]
            logger.warning(
                "watch.batch_failed", extra={"sites": ",".join(keys), "error": str(exc), "retry": "per site"}
            )
        except Exception as exc:
            # A bug in one site's crawl must not end a long-running watcher; it is logged with its traceback.
            logger.exception("watch.batch_crashed", extra={"sites": ",".join(keys)})
            if len(keys) == 1:
                return [_failed(keys[0], exc)]
        results: list[CrawlSummary] = []
        for key in keys:
            if stop.is_set():
                break
            try:
                results.extend(await self._crawl([key], stop))
            except Exception as exc:
                if not isinstance(exc, DocScraperError):
                    logger.exception("watch.site_crashed", extra={"site": key})
                results.append(_failed(key, exc))
        return results

    def _record(
        self, old: SiteRunState, summary: CrawlSummary, started: float, stopping: bool
    ) -> SiteRunState:
        if summary.interrupted or (stopping and not summary.ok and not summary.error):
            # Keep the last complete run as the reference: the site is due again at the next start.
            logger.info("watch.site_interrupted", extra={"site": summary.site_key, "pages": summary.pages})
            return replace(old, interrupted=True, error_message="interrupted; resumes at the next start")
        ok = summary.ok
        entry = SiteRunState(
            last_run_time=format_time(started),
            last_run_success=ok,
            pages_processed=summary.pages,
            added=summary.added,
            changed=summary.changed,
            removed=summary.removed,
            failed=summary.failed,
            duration_s=round(summary.duration_s, 3),
            interrupted=False,
            error_message="" if ok else (summary.error or "crawl failed"),
            runs=old.runs + 1,
            consecutive_failures=0 if ok else old.consecutive_failures + 1,
        )
        fields = {
            "site": summary.site_key,
            "ok": ok,
            "pages": summary.pages,
            "added": summary.added,
            "changed": summary.changed,
            "removed": summary.removed,
            "next_run": format_time(started + self.interval_s),
        }
        if ok:
            logger.info("watch.site_finished", extra=fields)
        else:
            logger.error("watch.site_failed", extra={**fields, "error": entry.error_message})
        return entry


def _failed(key: str, exc: BaseException) -> CrawlSummary:
    message = str(exc) or type(exc).__name__
    return CrawlSummary(site_key=key, ok=False, mode="incremental", error=message)


def api_crawl_fn(config: Config) -> CrawlFn:
    """The production crawl function: ``api.crawl_sites`` in incremental mode."""

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        from doc_scraper.api import crawl_sites

        return await crawl_sites(config, keys, mode="incremental", stop=stop)

    return crawl
