"""``IndexWriter``: the one thread that writes the index, fed by a queue.

The engine awaits ``upsert_page`` and friends; each call becomes a job on the
writer thread, and the awaited future resolves once the job's transaction has
committed, so the event loop never blocks on SQLite. Jobs that queue up while
a transaction runs are committed together (each in its own savepoint, so one
failing job does not undo the others).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from doc_scraper.errors import StateError
from doc_scraper.index import history, pages
from doc_scraper.index.db import open_connection

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from doc_scraper.models import PageRecord, Section

logger = logging.getLogger(__name__)

_MAX_BATCH = 64  # jobs committed in one transaction at most


@dataclass(slots=True)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


class IndexWriter:
    """Owns the writer thread and its connection to ``index.db``."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._conn: apsw.Connection | None = None
        self._open_error: BaseException | None = None
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="index-writer", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, db_path: Path) -> IndexWriter:
        """Start the writer thread; it opens (creating and migrating) the index.

        Nothing here touches the disk, so it is safe to call on the event loop;
        a database that cannot be opened fails every call with its StateError.
        """
        return cls(Path(db_path))

    # -------------------------------------------------------------- public API

    async def begin_crawl(self, site_key: str, mode: str, started_at: str, *, fresh: bool) -> int:
        """Record a crawl start; ``fresh`` writes into a new staging generation."""
        result = await self._submit(_begin, site_key, mode, started_at, fresh)
        return int(result)

    async def upsert_page(
        self, crawl_id: int, site_key: str, record: PageRecord, sections: Sequence[Section]
    ) -> None:
        await self._submit(_upsert, crawl_id, site_key, record, tuple(sections))

    async def touch_page(self, crawl_id: int, site_key: str, url: str, crawled_at: str) -> None:
        """Carry an unchanged page into this crawl's generation."""
        await self._submit(_touch, crawl_id, site_key, url, crawled_at)

    async def remove_pages(self, crawl_id: int, site_key: str, urls: Sequence[str]) -> None:
        await self._submit(_remove, crawl_id, site_key, tuple(urls))

    async def finish_crawl(
        self, crawl_id: int, ended_at: str, summary: dict[str, int], *, commit: bool, retention: int
    ) -> None:
        """Close a crawl; ``commit=True`` makes its pages live, ``False`` keeps staging for a resume."""
        await self._submit(_finish, crawl_id, ended_at, dict(summary), commit, retention)

    async def close(self) -> None:
        """Finish queued jobs, stop the thread and close the connection."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    # -------------------------------------------------------------- machinery

    def _submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        if self._closed:
            raise StateError(str(self.db_path), "the index writer is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.put(_Job(fn, args, loop, future))
        return future

    def _run(self) -> None:
        try:
            self._conn = open_connection(self.db_path)
        except StateError as exc:
            self._open_error = exc
            logger.error("index.open_failed", extra={"db_path": str(self.db_path), "error": str(exc)})
        stop = False
        try:
            while not stop:
                job = self._queue.get()
                if job is None:
                    break
                batch = [job]
                while len(batch) < _MAX_BATCH:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        stop = True
                        break
                    batch.append(more)
                self._run_batch(batch)
        finally:
            try:
                if self._conn is not None:
                    self._conn.close()
            except apsw.Error:
                logger.exception("index.close_failed", extra={"db_path": str(self.db_path)})

    def _run_batch(self, batch: list[_Job]) -> None:
        outcomes: list[tuple[_Job, Any, BaseException | None]] = []
        conn = self._conn
        if conn is None:
            failure: BaseException = self._open_error or StateError(str(self.db_path), "index not open")
            for job in batch:
                with contextlib.suppress(RuntimeError):
                    job.loop.call_soon_threadsafe(_resolve, job.future, None, failure)
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    outcomes.append((job, job.fn(conn, *job.args), None))
                    conn.execute("RELEASE job")
                except Exception as exc:
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    outcomes.append((job, None, self._map_error(exc)))
            conn.execute("COMMIT")
        except apsw.Error as exc:
            logger.exception("index.write_failed", extra={"db_path": str(self.db_path), "jobs": len(batch)})
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            mapped = self._map_error(exc)
            outcomes = [(job, None, mapped) for job in batch]
        for job, result, error in outcomes:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this job any more
                job.loop.call_soon_threadsafe(_resolve, job.future, result, error)

    def _map_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, apsw.Error):
            err = StateError(str(self.db_path), f"index write failed: {exc}")
            err.__cause__ = exc
            return err
        return exc


def _resolve(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


# Jobs: each runs on the writer thread, inside the batch transaction.


def _begin(conn: apsw.Connection, site_key: str, mode: str, started_at: str, fresh: bool) -> int:
    return history.begin_crawl(conn, site_key, mode, started_at, fresh=fresh)


def _upsert(
    conn: apsw.Connection, crawl_id: int, site_key: str, record: PageRecord, sections: tuple[Section, ...]
) -> None:
    crawl_site, generation, _ = history.crawl_target(conn, crawl_id)
    _check_site(crawl_id, crawl_site, site_key)
    pages.upsert_page(conn, crawl_id, site_key, generation, record, sections)


def _touch(conn: apsw.Connection, crawl_id: int, site_key: str, url: str, crawled_at: str) -> None:
    crawl_site, generation, live = history.crawl_target(conn, crawl_id)
    _check_site(crawl_id, crawl_site, site_key)
    if not pages.touch_page(conn, crawl_id, site_key, generation, live, url, crawled_at):
        logger.warning("index.touch_missing", extra={"site_key": site_key, "url": url})


def _remove(conn: apsw.Connection, crawl_id: int, site_key: str, urls: tuple[str, ...]) -> None:
    crawl_site, generation, _ = history.crawl_target(conn, crawl_id)
    _check_site(crawl_id, crawl_site, site_key)
    pages.remove_pages(conn, site_key, generation, urls)


def _finish(
    conn: apsw.Connection, crawl_id: int, ended_at: str, summary: dict[str, int], commit: bool, retention: int
) -> None:
    history.finish_crawl(conn, crawl_id, ended_at, summary, commit=commit, retention=retention)


def _check_site(crawl_id: int, crawl_site: str, site_key: str) -> None:
    if crawl_site != site_key:
        raise ValueError(f"crawl {crawl_id} belongs to site {crawl_site!r}, not {site_key!r}")
