"""Crawl state in LevelDB (plyvel): the frontier, the seen set and per-page state.

One store per site, at ``<state_dir>/<site_key>/``. The API is synchronous and
meant to be driven from one dedicated thread (the engine's store executor).

Key space (all bytes; ``gen`` is a 4-byte generation, see ``reset_for_incremental``)::

    q: gen depth(4) band(1) seq(8) -> url        frontier: shallowest first, then priority, then FIFO
    s: gen url                     -> queue key  seen marker; empty value once the url left the queue
    p: url                         -> JSON       PageState
    m: name                        -> ascii      meta: schema, gen, seq, queued, run, mode, status, ...

Crash safety: a queue entry is deleted only by ``complete``, in the same
WriteBatch that writes the page state and enqueues the page's new links. A
WriteBatch is one checksummed log record, so after a SIGKILL either all of it
is there or none of it: the page is redone or it is done, never lost, never
fetched twice. ``claim`` only marks entries in-flight in memory.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import struct
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import plyvel

from doc_scraper.errors import StateError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1

PageStatus = Literal["ok", "failed", "skipped", "not_modified", "gone", "shell"]
# (url, depth) or (url, depth, priority); priority -128..127, higher is claimed first within a depth.
QueueItem = tuple[str, int] | tuple[str, int, int]

_Q = b"q:"
_S = b"s:"
_P = b"p:"
_M = b"m:"
_GEN = struct.Struct(">I")
_QTAIL = struct.Struct(">IBQ")  # depth, band, seq
_CHUNK = 2000  # items per WriteBatch in bulk operations: bounds memory, Python and C++

_FULL_HINT = "run the crawl again with --full to delete and rebuild the crawl state"


@dataclass(frozen=True, slots=True)
class PageState:
    """What the last crawl learned about one URL."""

    url: str
    status: PageStatus
    error: str = ""  # error class, e.g. "HTTP_404", "timeout"
    depth: int = 0
    content_hash: str = ""  # SHA-256 hex of the extracted region
    etag: str = ""
    last_modified: str = ""
    links: tuple[str, ...] = ()  # absolute outgoing URLs
    output_path: str = ""  # relative to the site output folder
    fetched_at: str = ""  # RFC 3339, UTC
    title: str = ""
    http_status: int = 0
    crawl_run: int = 0  # run that last wrote this state; 0 = "the current run" when passed to complete()

    def to_json(self) -> bytes:
        data = asdict(self)
        data["links"] = list(self.links)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> PageState:
        data = json.loads(raw)
        if not isinstance(data, dict) or "url" not in data:
            raise ValueError("not a page state object")
        known = {f.name for f in fields(cls)}
        # Unknown keys come from a newer writer; dropping them keeps old code reading new state.
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        kwargs["links"] = tuple(kwargs.get("links", ()))
        return cls(**kwargs)


def utc_now() -> str:
    """The current time as RFC 3339 UTC with a ``Z``, second precision."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes([stripped[-1] + 1])


def _decode_error(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    return arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg)


class _CorruptValueError(ValueError):
    """A stored value that cannot be decoded (mapped to StateError by ``_guard``)."""


def _decode_state(raw: bytes) -> PageState:
    try:
        return PageState.from_json(raw)
    except (ValueError, TypeError) as exc:
        raise _CorruptValueError(f"unreadable page state: {exc}") from exc


_LEVELDB_FILE = re.compile(r"(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp))")


def _wipe(path: Path) -> None:
    """Delete a LevelDB directory, refusing anything that holds other files."""
    if path.is_dir():
        strangers = [p.name for p in path.iterdir() if not _LEVELDB_FILE.fullmatch(p.name)]
        if strangers:
            raise StateError(
                str(path),
                f"not deleting: it holds files that are not crawl state ({', '.join(sorted(strangers)[:3])})",
            )
        shutil.rmtree(path)
    else:
        path.unlink()
    logger.info("store.wiped", extra={"path": str(path)})


def _damaged(path: Path, detail: str, *, what: str = "crawl state is damaged") -> StateError:
    return StateError(str(path), f"{what} ({detail}); {_FULL_HINT}")


class CrawlStore:
    """The on-disk frontier, seen set and page states of one site."""

    def __init__(self, db: Any, path: Path) -> None:
        self._db = db
        self.path = path
        self._lock = threading.Lock()
        self._inflight: dict[str, bytes] = {}  # url -> queue key; bounded by concurrency
        self._gen = 0
        self._seq = 0
        self._queued = 0
        self._run = 0
        self._cursor = b""  # every current-generation queue key below it is in-flight or deleted

    # -- opening and closing ------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, create: bool = True, fresh: bool = False) -> CrawlStore:
        """Open (or create) the store at ``path``; ``fresh`` deletes any existing state first.

        Raises StateError if another process holds the directory, if the state
        is damaged (the message names ``--full``), or if it is missing and
        ``create`` is false.
        """
        if fresh and path.exists():
            # Opening first proves no other process holds the lock; a damaged store may go.
            try:
                cls._open_db(path, create=False).close()
            except StateError as exc:
                if "in use" in str(exc):
                    raise
            _wipe(path)
        if create or fresh:
            path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(cls._open_db(path, create=create or fresh), path)
        try:
            store._load_meta()
            store._purge_other_generations()
        except BaseException:
            store.close()
            raise
        logger.debug("store.opened", extra={"path": str(path), "queued": store._queued, "run": store._run})
        return store

    @staticmethod
    def _open_db(path: Path, *, create: bool) -> Any:
        if not create and not path.is_dir():
            raise StateError(str(path), "no crawl state here; run a crawl first")
        try:
            return plyvel.DB(
                str(path),
                create_if_missing=create,
                paranoid_checks=True,
                bloom_filter_bits=10,  # most seen-set lookups are for URLs not yet seen
                max_open_files=128,  # parallel sites each hold a store; stay far below ulimit -n
            )
        except plyvel.CorruptionError as exc:
            raise _damaged(path, _decode_error(exc)) from exc
        except plyvel.Error as exc:
            text = _decode_error(exc)
            if isinstance(exc, plyvel.IOError) and "lock " in text and "No such file" not in text:
                raise StateError(
                    str(path),
                    "in use by another doc-scraper process (LevelDB lock held); "
                    "wait for it to finish or stop it",
                ) from exc
            if "does not exist" in text or "No such file" in text:
                raise StateError(str(path), "no crawl state here; run a crawl first") from exc
            raise _damaged(path, text, what="cannot open crawl state") from exc

    def close(self) -> None:
        if not self._db.closed:
            self._db.close()

    def __enter__(self) -> CrawlStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Map LevelDB and decoding failures met while reading to StateError."""
        try:
            yield
        except plyvel.CorruptionError as exc:
            raise _damaged(self.path, _decode_error(exc)) from exc
        except plyvel.IOError as exc:
            raise _damaged(self.path, _decode_error(exc), what="cannot use crawl state") from exc
        except _CorruptValueError as exc:
            raise _damaged(self.path, str(exc)) from exc

    # -- meta ---------------------------------------------------------------------------------

    def _meta_get(self, name: str) -> str | None:
        raw = self._db.get(_M + name.encode())
        if raw is None:
            return None
        try:
            return bytes(raw).decode()
        except UnicodeDecodeError as exc:
            raise _CorruptValueError(f"meta key {name!r} is not text") from exc

    def _meta_int(self, name: str) -> int:
        value = self._meta_get(name)
        if value is None or not value.isdigit():
            raise _CorruptValueError(f"meta key {name!r} is {value!r}, not a number")
        return int(value)

    def _load_meta(self) -> None:
        with self._guard():
            schema = self._meta_get("schema")
            if schema is None:
                with self._db.iterator(include_value=False) as it:
                    if next(it, None) is not None:
                        raise _CorruptValueError("schema version is missing")
                with self._db.write_batch(transaction=True) as wb:
                    wb.put(_M + b"schema", str(SCHEMA_VERSION).encode())
                    for name in (b"gen", b"seq", b"queued", b"run"):
                        wb.put(_M + name, b"0")
            schema_version = self._meta_int("schema")
            if schema_version > SCHEMA_VERSION:
                raise StateError(
                    str(self.path),
                    f"crawl state has schema {schema_version}, "
                    f"newer than this doc-scraper ({SCHEMA_VERSION}); "
                    f"upgrade doc-scraper or {_FULL_HINT}",
                )
            self._gen = self._meta_int("gen")
            self._seq = self._meta_int("seq")
            self._queued = self._meta_int("queued")
            self._run = self._meta_int("run")
        self._cursor = self._qprefix()

    def meta(self) -> dict[str, Any]:
        """Schema, run number, mode, status, timestamps and counters, for status lines."""
        with self._guard():
            return {
                "schema": self._meta_int("schema"),
                "run": self._run,
                "mode": self._meta_get("mode") or "",
                "status": self._meta_get("status") or "",
                "started_at": self._meta_get("started_at") or "",
                "finished_at": self._meta_get("finished_at") or "",
                "queued": self._queued,
                "in_flight": len(self._inflight),
                "generation": self._gen,
            }

    @property
    def run(self) -> int:
        """The current run number (0 before the first ``begin_run``)."""
        return self._run

    def begin_run(self, mode: str) -> int:
        """Start a new run: increment the run number, record ``mode``, status "running"."""
        with self._lock, self._guard():
            run = self._run + 1
            with self._db.write_batch(transaction=True) as wb:
                wb.put(_M + b"run", str(run).encode())
                wb.put(_M + b"mode", mode.encode())
                wb.put(_M + b"status", b"running")
                wb.put(_M + b"started_at", utc_now().encode())
                wb.delete(_M + b"finished_at")
            self._run = run
        logger.info("store.run_started", extra={"path": str(self.path), "run": run, "mode": mode})
        return run

    def finish_run(self, status: str = "complete") -> None:
        with self._lock, self._guard(), self._db.write_batch(transaction=True, sync=True) as wb:
            # sync: the end of a run is rare and marks the state as a finished baseline.
            wb.put(_M + b"status", status.encode())
            wb.put(_M + b"finished_at", utc_now().encode())
        logger.info("store.run_finished", extra={"path": str(self.path), "run": self._run, "status": status})

    # -- keys ---------------------------------------------------------------------------------

    def _qprefix(self, gen: int | None = None) -> bytes:
        return _Q + _GEN.pack(self._gen if gen is None else gen)

    def _skey(self, url: str, gen: int | None = None) -> bytes:
        return _S + _GEN.pack(self._gen if gen is None else gen) + url.encode()

    @staticmethod
    def _depth_of(qkey: bytes) -> int:
        depth: int = _QTAIL.unpack_from(qkey, len(_Q) + _GEN.size)[0]
        return depth

    # -- frontier -----------------------------------------------------------------------------

    def _enqueue_chunk(
        self,
        wb: Any,
        items: Iterable[QueueItem],
        gen: int,
        local: set[bytes],
        added: list[str],
        *,
        force: bool = False,
    ) -> int:
        """Put each unseen item into ``wb`` (seen marker + queue entry); returns how many.

        ``local`` holds seen keys written to ``wb`` but not yet visible to ``get``.
        """
        count = 0
        qprefix = self._qprefix(gen)
        sprefix = _S + _GEN.pack(gen)
        get, put, pack = self._db.get, wb.put, _QTAIL.pack
        seq, cursor = self._seq, self._cursor
        current = gen == self._gen
        try:
            for item in items:
                url, depth = item[0], item[1]
                priority = item[2] if len(item) > 2 else 0
                if not -128 <= priority <= 127 or depth < 0:
                    raise ValueError(f"{url}: depth {depth} / priority {priority} out of range")
                ubytes = url.encode()
                skey = sprefix + ubytes
                if not force and (skey in local or get(skey) is not None):
                    continue
                seq += 1
                qkey = qprefix + pack(depth, 127 - priority, seq)
                put(qkey, ubytes)
                put(skey, qkey)
                local.add(skey)
                added.append(url)
                count += 1
                if current and qkey < cursor:
                    cursor = qkey
        finally:
            # Callers restore both if the batch is then not written.
            self._seq, self._cursor = seq, cursor
        return count

    def _write(self, wb: Any, queued: int, *, sync: bool = False) -> None:
        # sync=False: the record reaches the OS with write() before Write() returns, so it
        # survives the process being killed (SIGKILL, OOM); only power loss or a kernel crash
        # can drop the last writes, which is not what we promise. sync=True costs an fsync
        # per page (~ms each).
        wb.put(_M + b"seq", str(self._seq).encode())
        wb.put(_M + b"queued", str(queued).encode())
        wb.write()
        self._queued = queued

    def add(self, items: Iterable[QueueItem]) -> list[str]:
        """Mark each unseen ``(url, depth[, priority])`` seen and enqueue it; returns the new URLs.

        Written in WriteBatches of a few thousand items: a kill part-way keeps a
        prefix of the items. Adding is idempotent, so the engine re-seeds on resume.
        """
        added: list[str] = []
        it = iter(items)
        with self._lock, self._guard():
            while True:
                chunk = [item for _, item in zip(range(_CHUNK), it, strict=False)]
                if not chunk:
                    break
                seq, cursor = self._seq, self._cursor
                wb = self._db.write_batch()
                try:
                    n = self._enqueue_chunk(wb, chunk, self._gen, set(), added)
                    if n:
                        self._write(wb, self._queued + n)
                except BaseException:
                    self._seq, self._cursor = seq, cursor
                    raise
        return added

    def claim(self, n: int) -> list[tuple[str, int]]:
        """Take up to ``n`` queued ``(url, depth)`` pairs, shallowest first, FIFO within a depth.

        Nothing is removed from disk: claimed URLs are only marked in-flight in
        this process, so after a crash they are simply still queued.
        """
        claimed: list[tuple[str, int]] = []
        if n <= 0:
            return claimed
        with self._lock, self._guard():
            last = None
            stop = _prefix_end(self._qprefix())
            with self._db.iterator(start=self._cursor, stop=stop) as it:
                for qkey, raw in it:
                    last = qkey
                    url = bytes(raw).decode()
                    if url in self._inflight:
                        continue
                    self._inflight[url] = qkey
                    claimed.append((url, self._depth_of(qkey)))
                    if len(claimed) >= n:
                        break
            if last is not None:
                self._cursor = last + b"\x00"
        return claimed

    def release(self, url: str) -> None:
        """Give a claimed URL back without completing it (it will be claimed again)."""
        with self._lock:
            qkey = self._inflight.pop(url, None)
            if qkey is not None and qkey < self._cursor:
                self._cursor = qkey

    def complete(self, url: str, state: PageState, new_links: Iterable[QueueItem] = ()) -> list[str]:
        """Record ``state``, drop ``url`` from the queue and enqueue unseen links, atomically.

        One WriteBatch, so a kill leaves either the page redone or the page
        done with its links queued. A ``state.crawl_run`` of 0 is stamped with
        the current run. Returns the newly added link URLs.
        """
        if state.url != url:
            raise ValueError(f"{url}: page state is for {state.url}")
        if state.crawl_run == 0 and self._run:
            state = replace(state, crawl_run=self._run)
        added: list[str] = []
        with self._lock, self._guard():
            skey = self._skey(url)
            qkey = self._inflight.get(url)
            if qkey is None:
                raw = self._db.get(skey)
                qkey = bytes(raw) if raw else None
            seq, cursor = self._seq, self._cursor
            wb = self._db.write_batch()
            try:
                wb.put(_P + url.encode(), state.to_json())
                wb.put(skey, b"")
                queued = self._queued
                if qkey is not None:
                    wb.delete(qkey)
                    queued -= 1
                queued += self._enqueue_chunk(wb, new_links, self._gen, {skey}, added)
                self._write(wb, queued)
            except BaseException:
                self._seq, self._cursor = seq, cursor
                raise
            self._inflight.pop(url, None)
        return added

    def requeue(self, url: str, depth: int, priority: int = 0) -> bool:
        """Queue ``url`` again even if seen (no-op if it is queued); returns whether it was queued."""
        with self._lock, self._guard():
            skey = self._skey(url)
            if self._db.get(skey):  # a non-empty marker holds its queue key
                return False
            seq, cursor = self._seq, self._cursor
            wb = self._db.write_batch()
            try:
                self._enqueue_chunk(wb, [(url, depth, priority)], self._gen, set(), [], force=True)
                self._write(wb, self._queued + 1)
            except BaseException:
                self._seq, self._cursor = seq, cursor
                raise
        return True

    def reset_for_incremental(self, start: Iterable[QueueItem]) -> int:
        """Empty the queue and the seen set (page states stay), then enqueue ``start``.

        The new frontier is built in a new generation and switched to with one
        write, so a kill part-way leaves the old frontier intact; the old
        generation is then deleted in batches. ``start`` may stream from
        ``iter_states()``. Returns how many URLs were queued.
        """
        with self._lock, self._guard():
            gen = self._gen + 1
            self._purge_generation(gen)  # leftovers of an earlier interrupted reset
            it = iter(start)
            queued = 0
            local: set[bytes] = set()
            while True:
                chunk = [item for _, item in zip(range(_CHUNK), it, strict=False)]
                if not chunk:
                    break
                with self._db.write_batch(transaction=True) as wb:
                    queued += self._enqueue_chunk(wb, chunk, gen, local, [])
                    wb.put(_M + b"seq", str(self._seq).encode())
                local.clear()  # written, so visible to get() from now on
            with self._db.write_batch(transaction=True) as wb:
                wb.put(_M + b"gen", str(gen).encode())
                wb.put(_M + b"queued", str(queued).encode())
            old, self._gen, self._queued = self._gen, gen, queued
            self._inflight.clear()
            self._cursor = self._qprefix()
            self._purge_generation(old)
        logger.info("store.reset", extra={"path": str(self.path), "queued": queued, "generation": gen})
        return queued

    def _purge_generation(self, gen: int) -> None:
        for prefix in (_Q, _S):
            start = prefix + _GEN.pack(gen)
            self._delete_range(start, _prefix_end(start))

    def _purge_other_generations(self) -> None:
        with self._guard():
            for prefix in (_Q, _S):
                self._delete_range(prefix, prefix + _GEN.pack(self._gen))
                self._delete_range(prefix + _GEN.pack(self._gen + 1), _prefix_end(prefix))

    def _delete_range(self, start: bytes, stop: bytes) -> None:
        while True:
            with self._db.iterator(start=start, stop=stop, include_value=False) as it:
                keys = [key for _, key in zip(range(_CHUNK * 5), it, strict=False)]
            if not keys:
                return
            with self._db.write_batch(transaction=True) as wb:
                for key in keys:
                    wb.delete(key)
            start = keys[-1] + b"\x00"

    # -- reading ------------------------------------------------------------------------------

    def get(self, url: str) -> PageState | None:
        with self._guard():
            raw = self._db.get(_P + url.encode())
            return None if raw is None else _decode_state(raw)

    def seen(self, url: str) -> bool:
        with self._guard():
            return self._db.get(self._skey(url)) is not None

    def queued_count(self) -> int:
        """URLs in the queue on disk, in-flight ones included (a counter, no scan)."""
        return self._queued

    def inflight_count(self) -> int:
        return len(self._inflight)

    def pending(self) -> bool:
        """Whether any URL is still queued (claimed or not)."""
        return self._queued > 0

    def iter_states(self) -> Iterator[PageState]:
        """Every page state, in URL order, streamed from a LevelDB snapshot."""
        with self._guard(), self._db.iterator(prefix=_P, include_key=False) as it:
            for raw in it:
                yield _decode_state(raw)

    def states_page(self, after: str = "", limit: int = 500) -> list[PageState]:
        """Up to ``limit`` page states with URLs after ``after``: iter_states in chunks for async callers."""
        start = _P + after.encode() + (b"\x00" if after else b"")
        with self._guard(), self._db.iterator(start=start, stop=_prefix_end(_P), include_key=False) as it:
            return [_decode_state(raw) for _, raw in zip(range(limit), it, strict=False)]

    def iter_queue(self) -> Iterator[tuple[str, int]]:
        """Every queued ``(url, depth)`` in claim order (diagnostics and tests)."""
        prefix = self._qprefix()
        with self._guard(), self._db.iterator(prefix=prefix) as it:
            for qkey, raw in it:
                yield bytes(raw).decode(), self._depth_of(qkey)

    def delete_state(self, url: str) -> bool:
        """Forget a page's state (pruning); returns whether there was one."""
        with self._lock, self._guard():
            key = _P + url.encode()
            if self._db.get(key) is None:
                return False
            self._db.delete(key)
            return True
