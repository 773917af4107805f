"""The only orchestrator: scheduler -> fetcher -> worker -> write/index -> frontier.

``run_crawls`` builds the process-wide shared pieces (HTTP session, global and
per-host limits, robots cache, process pool, index writer) and runs one
``SiteCrawl`` per site inside a TaskGroup. A ``SiteCrawl``:

1. lays out its folders (a fresh crawl builds in ``<key>.staging`` beside the
   live output and state, and is swapped in only when it finishes);
2. seeds the LevelDB frontier (start URLs, sitemaps; incremental runs start
   from the start URLs and reach known pages through 304s' stored links);
3. runs ``num_workers`` workers that claim URLs from the store, fetch them
   (conditionally when validators are known), parse them in the process pool,
   write Markdown + JSONL + index, and commit the page state together with the
   newly found links in one store batch;
4. finalises: prunes pages it can prove are gone, rewrites pages.jsonl (sorted,
   one crawl_meta), llms.txt, commits the index generation and swaps folders;
5. when the semantic extra is installed (and ``embeddings`` is not ``off``),
   embeds the sections that have no vector yet, in a worker thread, in rounds
   that each commit: a stop or a failure leaves the index searchable and the
   next crawl continues where it ended. It never fails the crawl.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import concurrent.futures.process
import contextlib
import ctypes
import functools
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from doc_scraper.config.schema import EMBEDDINGS_CHOICES
from doc_scraper.errors import (
    BlockedError,
    DocScraperError,
    EmbeddingError,
    ExtractError,
    FetchError,
    HTTPStatusError,
    StateError,
    TooLargeError,
)
from doc_scraper.fetch.fetcher import Fetcher
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.session import make_session
from doc_scraper.frontier.robots import RobotsCache
from doc_scraper.frontier.scope import Scope
from doc_scraper.frontier.sitemaps import discover_sitemaps
from doc_scraper.frontier.store import CrawlStore, PageState, PageStatus
from doc_scraper.index import embed
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import (
    CrawlProgress,
    CrawlSummary,
    ExtractOptions,
    FetchResult,
    PageOutcome,
    PageRecord,
    ParsedPage,
)
from doc_scraper.stats import Stats
from doc_scraper.urls import host_key, normalize_url, origin
from doc_scraper.worker import parse_page
from doc_scraper.write.files import atomic_write_bytes, relativize_links, write_page
from doc_scraper.write.images import image_allowed, image_filename
from doc_scraper.write.jsonl import PART_SUFFIX, JsonlAppender, finalize_jsonl
from doc_scraper.write.llms_txt import write_llms_files

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from doc_scraper.config.schema import Config, SiteConfig

logger = logging.getLogger(__name__)

T = TypeVar("T")

STAGING = ".staging"
OLD = ".old"
GONE_STATUSES = (404, 410)
_PROGRESS_EVERY = 0.5  # seconds between progress callbacks
EMBED_ROUND = 512  # sections embedded per committed round: what a stop or failure can lose
EMBED_CHUNK = 256  # texts per model call between checks for a stop request


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_POOL: concurrent.futures.ProcessPoolExecutor | None = None


def parse_pool() -> concurrent.futures.ProcessPoolExecutor:
    """The process pool that parses and converts pages, started once per process.

    Spawned (not forked): the parent runs store and index threads that a fork
    would copy mid-operation. Reused across crawls so watch and MCP jobs do not
    pay the start-up again.
    """
    global _POOL
    if _POOL is None:
        ctx = multiprocessing.get_context("spawn")
        workers = max(1, min(os.cpu_count() or 1, 4))
        _POOL = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),)
        )
        atexit.register(_POOL.shutdown, wait=False, cancel_futures=True)
    return _POOL


def _die_with_parent(parent_pid: int) -> None:
    """In a pool worker: exit when the crawler dies, even by SIGKILL (Linux prctl)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:  # the parent died while this worker was starting
        os._exit(0)
    # Ctrl-C reaches the whole process group; the parent decides how to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def shutdown_pool() -> None:
    """Stop the shared parse pool now (a short-lived crawl process is exiting)."""
    global _POOL
    if _POOL is not None:
        _POOL.shutdown(wait=True, cancel_futures=True)
        _POOL = None


def reset_parse_pool(
    broken: concurrent.futures.ProcessPoolExecutor,
) -> concurrent.futures.ProcessPoolExecutor:
    """Replace a broken pool (a worker was killed, e.g. by the OOM killer)."""
    global _POOL
    if _POOL is broken:
        _POOL = None
        broken.shutdown(wait=False, cancel_futures=True)
    return parse_pool()


class Shared:
    """Pieces every site in one process shares, so limits hold across sites."""

    def __init__(self, config: Config, *, embeddings: str | None = None) -> None:
        self.config = config
        self.embeddings = embeddings  # "auto" | "off" | None: each site's config decides
        self.limits = HostLimits.from_config(config)
        self.session = make_session(config)
        self.fetcher = Fetcher.from_config(config, self.session, self.limits)
        self.host_delays: dict[str, float] = {}  # host_key -> the configured per-host delay
        self.robots = RobotsCache(self.polite_fetch_bytes)
        self.pool = parse_pool()
        self.index_path = Path(config.state_dir) / "index.db"
        self.index = IndexWriter.open(self.index_path)

    async def polite_fetch_bytes(self, url: str, **kwargs: Any) -> FetchResult:
        """robots.txt and sitemaps keep the host's delay too: they are requests like any other."""
        kwargs.setdefault("delay", self.host_delays.get(host_key(url), 0.0))
        return await self.fetcher.fetch_bytes(url, **kwargs)

    async def parse(self, body: bytes, url: str, options: ExtractOptions, charset: str | None) -> ParsedPage:
        """Parse in the process pool; a pool broken by a dying worker is replaced once."""
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            try:
                return await loop.run_in_executor(self.pool, parse_page, body, url, options, charset)
            except concurrent.futures.process.BrokenProcessPool:
                logger.error("pool.broken", extra={"url": url, "attempt": attempt})
                if attempt == 2:
                    raise
                self.pool = reset_parse_pool(self.pool)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await self.index.close()
        await self.session.close()


async def run_crawls(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
    embeddings: str | None = None,
) -> list[CrawlSummary]:
    """Crawl ``site_keys`` concurrently; one summary per site, in the given order.

    ``embeddings`` ("auto" or "off") overrides the config for the embedding step.
    """
    if embeddings is not None and embeddings not in EMBEDDINGS_CHOICES:
        raise DocScraperError(
            f"embeddings must be one of {', '.join(EMBEDDINGS_CHOICES)}, got {embeddings!r}"
        )
    unknown = [k for k in site_keys if k not in config.sites]
    if unknown:
        raise DocScraperError(
            f"unknown site key(s): {', '.join(unknown)}; available: {', '.join(sorted(config.sites))}"
        )
    stop = stop or asyncio.Event()
    # The loop thread makes many short syscalls while store, index and pool threads run
    # Python; with the default 5 ms GIL switch interval each of them can stall for ms.
    sys.setswitchinterval(min(sys.getswitchinterval(), 0.0005))
    await asyncio.to_thread(Path(config.state_dir).mkdir, parents=True, exist_ok=True)
    shared = Shared(config, embeddings=embeddings)
    crawls = [SiteCrawl(config, config.sites[key], shared, mode, stop, progress) for key in site_keys]
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(crawl.run()) for crawl in crawls]
    finally:
        await shared.close()
    return [task.result() for task in tasks]


class SiteCrawl:
    """One site's crawl from layout to finalisation."""

    def __init__(
        self,
        config: Config,
        site: SiteConfig,
        shared: Shared,
        mode: str,
        stop: asyncio.Event,
        progress: Callable[[CrawlProgress], None] | None,
    ) -> None:
        self.config = config
        self.site = site
        self.shared = shared
        self.requested_mode = mode
        self.mode = mode
        self.stop = stop
        self.progress_cb = progress
        self.scope = Scope.from_site(site, config)
        self.options = ExtractOptions(
            content_selector=site.content_selector,
            link_selectors=site.link_extraction_selectors,
            respect_nofollow=site.respect_nofollow,
        )
        self.stats = Stats()
        self.started_at = utc_now()
        self.t0 = time.monotonic()
        name = site.key  # validated as [A-Za-z0-9][A-Za-z0-9_.-]*: safe as a folder name
        self.out_live = Path(config.output_base_dir) / name
        self.state_live = Path(config.state_dir) / name
        self.out_dir = self.out_live
        self.state_path = self.state_live
        self.staged = False
        self._store_exec = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"store-{name}"
        )
        self.store: CrawlStore | None = None
        self.appender: JsonlAppender | None = None
        self.crawl_id = 0
        self.run_no = 0
        self.in_flight = 0
        self.wakeup = asyncio.Event()
        self.pages_done = 0
        self.budget_hit = False
        self.cut_short = False  # a limit stopped the crawl before it saw everything
        self.pages_total = 0
        # Docs pages repeat the same navigation links on every page: normalise and
        # scope-check each distinct link once (bounded, so memory stays flat).
        self._classify = functools.lru_cache(maxsize=20_000)(self._classify_uncached)
        self._images: dict[str, str] = {}  # image URL -> saved path, this run
        self._contents_seen: set[int] = set()
        self._paths_seen: set[int] = set()

    # -- store thread -------------------------------------------------------
    async def _db(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._store_exec, fn, *args)

    # -- 1. layout ----------------------------------------------------------
    def _recover_swap(self) -> None:
        """Finish or undo a swap that a crash interrupted."""
        for live in (self.out_live, self.state_live):
            old = live.with_name(live.name + OLD)
            if old.exists():
                if live.exists():
                    shutil.rmtree(old, ignore_errors=True)
                else:
                    old.rename(live)

    def _layout(self) -> None:
        self._recover_swap()
        out_staging = self.out_live.with_name(self.out_live.name + STAGING)
        state_staging = self.state_live.with_name(self.state_live.name + STAGING)
        mode = self.requested_mode
        has_staging = state_staging.exists() and out_staging.exists()
        if mode in ("resume", "incremental") and has_staging:
            self.mode = "resume"
            self.staged = True
        elif mode in ("resume", "incremental") and self.state_live.exists():
            self.mode = mode
        else:
            self.mode = "full"
            self.staged = True
            for path in (out_staging, state_staging):
                if path.exists():
                    shutil.rmtree(path)
        if self.staged:
            self.out_dir, self.state_path = out_staging, state_staging
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.state_path.parent.mkdir(parents=True, exist_ok=True)

    # -- main ---------------------------------------------------------------
    async def run(self) -> CrawlSummary:
        try:
            await asyncio.to_thread(self._layout)
            self.store = await self._db(CrawlStore.open, self.state_path)
        except (StateError, OSError) as exc:
            self._store_exec.shutdown(wait=False)
            return self._summary(ok=False, error=str(exc))
        for start in self.site.start_urls:
            key = host_key(start)
            self.shared.host_delays[key] = max(
                self.shared.host_delays.get(key, 0.0), self.site.delay_per_host
            )
        logger.info(
            "crawl.started", extra={"site": self.site.key, "mode": self.mode, "output": str(self.out_live)}
        )
        error = ""
        interrupted = False
        try:
            self.crawl_id = await self.shared.index.begin_crawl(
                self.site.key, self.mode, self.started_at, fresh=self.mode == "full"
            )
            await self._seed()
            self.appender = JsonlAppender(self._jsonl_path().with_name(self._jsonl_path().name + PART_SUFFIX))
            timeout = self.config.global_crawl_timeout or None
            try:
                async with asyncio.timeout(timeout):
                    await self._run_workers()
            except TimeoutError:
                error = f"global_crawl_timeout ({self.config.global_crawl_timeout:g}s) reached"
                interrupted = True
            interrupted = interrupted or self.stop.is_set()
            return await self._finish(interrupted=interrupted, error=error)
        except asyncio.CancelledError:
            await asyncio.shield(self._flush())
            raise
        except DocScraperError as exc:
            await self._flush()
            return self._summary(ok=False, error=str(exc))
        finally:
            await self._close_store()

    def _jsonl_path(self) -> Path:
        # The JSONL is the source of llms.txt and of incremental finalisation, so it
        # is always kept; with enable_jsonl_output: false it is a hidden file.
        name = self.site.jsonl_output_filename
        return self.out_dir / (name if self.site.enable_jsonl_output else "." + name)

    async def _flush(self) -> None:
        if self.appender is not None:
            self.appender.close()
            self.appender = None

    async def _close_store(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            await self._db(store.close)
        self._store_exec.shutdown(wait=True)

    # -- 2. seeding ---------------------------------------------------------
    async def _seed(self) -> None:
        assert self.store is not None
        store = self.store
        if self.mode == "resume":
            # Same run number: pages done before the interruption count as seen in this run.
            self.run_no = store.run or await self._db(store.begin_run, "resume")
            return
        self.run_no = await self._db(store.begin_run, self.mode)
        seeds: list[tuple[str, int]] = []
        for url in self.site.start_urls:
            norm = normalize_url(url, self.site.keep_query_params)
            reason = self.scope.check(norm, 0)
            if reason:
                logger.warning(
                    "seed.out_of_scope", extra={"site": self.site.key, "url": url, "reason": reason}
                )
                continue
            seeds.append((norm, 0))
        if not seeds:
            raise DocScraperError(
                f"sites.{self.site.key}.start_urls: no start URL is inside allowed_domain "
                f"{self.site.allowed_domain!r} and allowed_path_prefix {self.site.allowed_path_prefix!r}"
            )
        if self.mode == "incremental":
            await self._db(store.reset_for_incremental, seeds)
        else:
            await self._db(store.add, seeds)
        if self.site.use_sitemaps and (self.site.max_depth == 0 or self.site.max_depth > 1):
            await self._seed_sitemaps()

    async def _seed_sitemaps(self) -> None:
        assert self.store is not None
        start = self.site.start_urls[0]
        try:
            rules = await self.shared.robots.rules_for(start, self.site.user_agent)
            declared = list(rules.sitemaps)
            urls = await discover_sitemaps(
                self.shared.polite_fetch_bytes, origin(start), declared, user_agent=self.site.user_agent
            )
        except (FetchError, OSError) as exc:
            logger.info("sitemap.unavailable", extra={"site": self.site.key, "error": str(exc)})
            return
        items = []
        for entry in urls:
            norm = normalize_url(entry.url, self.site.keep_query_params)
            if self.scope.check(norm, 1) is None:
                items.append((norm, 1))
        if items:
            added = await self._db(self.store.add, items)
            self.stats.inc("sitemap/urls", len(items))
            logger.info(
                "sitemap.seeded", extra={"site": self.site.key, "urls": len(items), "new": len(added)}
            )

    # -- 3. workers ---------------------------------------------------------
    async def _run_workers(self) -> None:
        buffer: list[tuple[str, int]] = []
        lock = asyncio.Lock()
        done = asyncio.Event()

        async def next_url() -> tuple[str, int] | None:
            assert self.store is not None
            while True:
                if self.stop.is_set() or self.budget_hit:
                    return None
                async with lock:
                    if not buffer:
                        batch = await self._db(self.store.claim, max(4, self.config.num_workers * 2))
                        buffer.extend(reversed(batch))
                    if buffer:
                        self.in_flight += 1
                        return buffer.pop()
                    if self.in_flight == 0:
                        done.set()
                        return None
                    self.wakeup.clear()
                # Others are still working: they may add links. Wait for one to finish.
                waiter = asyncio.ensure_future(self.wakeup.wait())
                stopper = asyncio.ensure_future(self.stop.wait())
                try:
                    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                    stopper.cancel()
                if done.is_set():
                    return None

        async def worker() -> None:
            while (item := await next_url()) is not None:
                url, depth = item
                try:
                    await self._process(url, depth)
                finally:
                    self.in_flight -= 1
                    self.pages_done += 1
                    self.wakeup.set()

        ticker = asyncio.create_task(self._tick())
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(max(1, self.config.num_workers)):
                    group.create_task(worker())
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            self._report_progress()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(_PROGRESS_EVERY)
            self._report_progress()

    def _report_progress(self) -> None:
        if self.progress_cb is None or self.store is None:
            return
        try:
            queued = self.store.queued_count()
        except Exception:  # the store may be mid-close; progress is best effort
            queued = 0
        self.progress_cb(
            CrawlProgress(
                site_key=self.site.key,
                pages_done=self.pages_done,
                pages_queued=queued,
                pages_failed=self.stats.get("outcome/failed"),
                elapsed_s=time.monotonic() - self.t0,
            )
        )

    # -- one page -----------------------------------------------------------
    async def _process(self, url: str, depth: int) -> None:
        timeout = self.config.per_page_timeout or None
        try:
            async with asyncio.timeout(timeout):
                outcome = await self._process_page(url, depth)
        except TimeoutError:
            outcome = PageOutcome(url, "failed", depth, error="per_page_timeout")
            await self._complete(url, depth, status="failed", error="per_page_timeout")
        except (DocScraperError, OSError, ValueError) as exc:
            logger.warning("page.error", extra={"site": self.site.key, "url": url, "error": str(exc)})
            outcome = PageOutcome(url, "failed", depth, error=type(exc).__name__)
            await self._complete(url, depth, status="failed", error=type(exc).__name__)
        except Exception as exc:
            # A bug (ours or a library's) on one page must not stop the crawl: log it loudly.
            logger.exception("page.crashed", extra={"site": self.site.key, "url": url})
            outcome = PageOutcome(url, "failed", depth, error=type(exc).__name__)
            await self._complete(url, depth, status="failed", error=f"crash_{type(exc).__name__}")
        self.stats.inc(f"outcome/{outcome.kind}")
        if outcome.error:
            self.stats.inc(f"error/{outcome.error}")
        if self.site.max_pages and self.stats.get("fetch/pages") >= self.site.max_pages:
            if not self.budget_hit:
                logger.warning(
                    "crawl.budget_reached", extra={"site": self.site.key, "max_pages": self.site.max_pages}
                )
            self.budget_hit = True
            self.cut_short = True

    async def _complete(
        self,
        url: str,
        depth: int,
        *,
        status: PageStatus,
        error: str = "",
        prior: PageState | None = None,
        links: tuple[str, ...] = (),
        new_links: list[tuple[str, int]] | None = None,
        **fields: Any,
    ) -> None:
        assert self.store is not None
        if status in ("failed", "skipped") and _is_live(prior) and error in _KEEP_ON:
            # A page we already have failed now: that is no proof it is gone. Keep it
            # (so it is not pruned) and go on through its stored links.
            assert prior is not None
            status = prior.status
            new_links = [*(new_links or []), *self._follow(prior.links, depth)]
            self.stats.inc(f"kept/{error.split('_', 1)[0]}")
        base = prior or PageState(url=url, status=status, depth=depth)
        state = replace(
            base,
            url=url,
            status=status,
            error=error,
            depth=depth,
            links=links or base.links,
            fetched_at=utc_now(),
            crawl_run=self.run_no,
            **fields,
        )
        await self._db(self.store.complete, url, state, new_links or [])

    def _classify_uncached(self, link: str) -> tuple[str, str | None]:
        try:
            norm = normalize_url(link, self.site.keep_query_params)
        except ValueError:
            return link, "invalid"
        return norm, self.scope.check_target(norm)

    def _follow(self, links: tuple[str, ...], depth: int) -> list[tuple[str, int]]:
        """In-scope links one level down, normalised; depth-limit skips are counted."""
        child = depth + 1
        max_depth = self.site.max_depth
        out: list[tuple[str, int]] = []
        seen: set[str] = set()
        for link in links:
            norm, reason = self._classify(link)
            if norm in seen:
                continue
            seen.add(norm)
            if reason is None and max_depth and child >= max_depth:
                reason = "depth"
            if reason is None:
                out.append((norm, child))
            elif reason == "depth":
                self.cut_short = True
                self.stats.inc("skipped/depth")
            elif reason in ("url_length", "path_depth", "repetition"):
                self.stats.inc(f"skipped/trap_{reason}")
        return out

    async def _process_page(self, url: str, depth: int) -> PageOutcome:
        assert self.store is not None
        site = self.site
        prior = await self._db(self.store.get, url)
        reason = self.scope.check(url, depth)
        if reason:
            self.stats.inc(f"skipped/{reason}")
            await self._complete(url, depth, status="skipped", error=f"scope_{reason}", prior=prior)
            return PageOutcome(url, "skipped", depth, error=f"scope_{reason}")
        rules = await self.shared.robots.rules_for(url, site.user_agent)
        if not rules.can_fetch(url, site.user_agent):
            self.stats.inc("skipped/robots")
            await self._complete(url, depth, status="skipped", error="robots", prior=prior)
            return PageOutcome(url, "skipped", depth, error="robots")
        crawl_delay = rules.crawl_delay(site.user_agent)
        if crawl_delay:
            # A floor under the jittered delay, kept by the limiter for every request to the host.
            self.shared.limits.set_floor_delay(host_key(url), crawl_delay)
        known_ok = (
            prior is not None
            and self.mode != "full"
            and (prior.status in ("ok", "not_modified") or prior.error.startswith(("duplicate", "canonical")))
        )
        self.stats.inc("fetch/pages")
        try:
            result = await self.shared.fetcher.fetch(
                url,
                user_agent=site.user_agent,
                delay=site.delay_per_host,
                etag=(prior.etag or None) if known_ok and prior else None,
                last_modified=(prior.last_modified or None) if known_ok and prior else None,
                max_bytes=self.config.max_page_size_bytes,
                check_redirect=self._check_redirect,
            )
        except HTTPStatusError as exc:
            self.stats.inc(f"fetch/status/{exc.status}")
            if exc.status in GONE_STATUSES:
                await self._remove_known(url, prior)
                await self._complete(
                    url, depth, status="gone", error=f"HTTP_{exc.status}", prior=prior, http_status=exc.status
                )
                logger.warning("page.not_found", extra={"site": site.key, "url": url, "status": exc.status})
                # A broken link is reported, but it is not a fetch failure: it does not block pruning.
                was_page = (
                    prior is not None and prior.status in ("ok", "not_modified") and bool(prior.output_path)
                )
                return PageOutcome(
                    url, "removed" if was_page else "broken", depth, exc.status, error=f"HTTP_{exc.status}"
                )
            await self._complete(
                url, depth, status="failed", error=f"HTTP_{exc.status}", prior=prior, http_status=exc.status
            )
            logger.warning("page.failed", extra={"site": site.key, "url": url, "status": exc.status})
            return PageOutcome(url, "failed", depth, exc.status, error=f"HTTP_{exc.status}")
        except BlockedError as exc:
            self.stats.inc(f"skipped/{exc.reason}")
            await self._complete(url, depth, status="skipped", error=exc.reason, prior=prior)
            return PageOutcome(url, "skipped", depth, error=exc.reason)
        except TooLargeError:
            self.stats.inc("skipped/too_large")
            await self._complete(url, depth, status="skipped", error="too_large", prior=prior)
            return PageOutcome(url, "skipped", depth, error="too_large")
        except FetchError as exc:
            kind = type(exc).__name__
            logger.warning("page.failed", extra={"site": site.key, "url": url, "error": str(exc)})
            await self._complete(url, depth, status="failed", error=kind, prior=prior)
            return PageOutcome(url, "failed", depth, error=kind)
        # attempts counts one per redirect hop too; only the repeats are retries.
        self.stats.inc("fetch/retries", max(0, result.attempts - 1 - len(result.redirects)))
        self.stats.inc(f"fetch/status/{result.status}")

        if result.status == 304 and prior is not None and prior.status == "skipped":
            # Still the duplicate it was: nothing to do.
            self.stats.inc(f"skipped/{prior.error}")
            await self._complete(url, depth, status="skipped", error=prior.error, prior=prior)
            return PageOutcome(url, "skipped", depth, 304, error=prior.error)
        if result.status == 304 and prior is not None:
            self._claim_content("", prior.output_path, url)
            new_links = self._follow(prior.links, depth)
            await self._complete(url, depth, status="ok", prior=prior, new_links=new_links)
            await self.shared.index.touch_page(self.crawl_id, site.key, url, utc_now())
            return PageOutcome(url, "not_modified", depth, 304)

        final = normalize_url(result.final_url, site.keep_query_params)
        if final != url:
            # The redirect target is the page's real address; count it once.
            claimed = await self._db(self._claim_alias, final, depth)
            if not claimed:
                await self._complete(url, depth, status="skipped", error="duplicate_redirect", prior=prior)
                return PageOutcome(url, "skipped", depth, error="duplicate_redirect")
        if not _is_html(result.content_type):
            self.stats.inc("skipped/non_html")
            await self._complete(url, depth, status="skipped", error="non_html", prior=prior)
            return PageOutcome(url, "skipped", depth, error="non_html")

        try:
            parsed = await self.shared.parse(result.body, final, self.options, result.charset)
        except ExtractError as exc:
            await self._complete(url, depth, status="failed", error="extract", prior=prior)
            logger.warning("page.extract_failed", extra={"site": site.key, "url": url, "error": str(exc)})
            return PageOutcome(url, "failed", depth, error="extract")
        validators: dict[str, Any] = {
            "etag": result.headers.get("etag", ""),
            "last_modified": result.headers.get("last-modified", ""),
            "http_status": result.status,
        }
        relpath = self.scope.relpath(final)
        duplicate = self._duplicate_reason(parsed, final, depth, relpath or "")
        if duplicate:
            # Validators kept: the next incremental run asks for this URL conditionally too.
            self.stats.inc(f"skipped/{duplicate}")
            await self._complete(
                url,
                depth,
                status="skipped",
                error=duplicate,
                prior=prior,
                new_links=self._canonical_link(parsed, final, depth),
                **validators,
            )
            return PageOutcome(url, "skipped", depth, result.status, error=duplicate)
        new_links = self._follow(parsed.links, depth)
        if parsed.needs_javascript:
            logger.warning(
                "page.needs_javascript",
                extra={"site": site.key, "url": final, "framework": parsed.detection.framework},
            )
            await self._complete(
                url,
                depth,
                status="shell",
                error="needs_javascript",
                prior=prior,
                links=parsed.links,
                new_links=new_links,
                **validators,
            )
            return PageOutcome(url, "shell", depth, result.status, error="needs_javascript")

        if relpath is None:
            await self._complete(url, depth, status="skipped", error="unmappable", prior=prior)
            return PageOutcome(url, "skipped", depth, error="unmappable")
        unchanged = (
            prior is not None
            and prior.content_hash == parsed.content_hash
            and prior.output_path == relpath
            and (self.out_dir / relpath).exists()
        )
        fields: dict[str, Any] = {
            "content_hash": parsed.content_hash,
            "output_path": relpath,
            "title": parsed.title,
            **validators,
        }
        if unchanged:
            await self._complete(
                url, depth, status="ok", prior=prior, links=parsed.links, new_links=new_links, **fields
            )
            await self.shared.index.touch_page(self.crawl_id, site.key, final, utc_now())
            return PageOutcome(url, "unchanged", depth, result.status)

        record = PageRecord(
            url=final,
            title=parsed.title,
            content=parsed.markdown,
            content_hash=parsed.content_hash,
            crawled_at=utc_now(),
            depth=depth,
            headings=parsed.headings,
            links=parsed.links,
            images=parsed.images,
            path=relpath,
        )
        images = await self._download_images(parsed.images)
        await asyncio.to_thread(self._write_files, record, images)
        await self.shared.index.upsert_page(self.crawl_id, site.key, record, parsed.sections)
        await self._complete(
            url, depth, status="ok", prior=prior, links=parsed.links, new_links=new_links, **fields
        )
        kind = (
            "changed"
            if prior is not None and prior.status in ("ok", "not_modified") and prior.content_hash
            else "added"
        )
        logger.debug("page.written", extra={"site": site.key, "url": final, "path": relpath})
        return PageOutcome(url, kind, depth, result.status)

    def _canonical_link(self, parsed: ParsedPage, final: str, depth: int) -> list[tuple[str, int]]:
        """The page's in-scope canonical URL when it names another page, else nothing."""
        if not parsed.canonical:
            return []
        norm, reason = self._classify(parsed.canonical)
        if reason is not None or norm == final:
            return []
        return [(norm, depth)]

    def _claim_content(self, content_hash: str, relpath: str, url: str) -> str:
        """Record that ``url`` holds this content and output path in this run.

        Returns "duplicate_content" or "duplicate_path" if another URL already
        does (``/guide/`` and ``/guide/index.html``, or a lenient server answering
        ``/page/`` with page.html), else "". Keys are 64-bit hashes: flat memory.
        """
        # A URL is processed once per run, so "seen before" means "another URL".
        del url
        if content_hash and len(content_hash) >= 16:
            key = int(content_hash[:16], 16)
            if key in self._contents_seen:
                return "duplicate_content"
            self._contents_seen.add(key)
        if relpath:
            # casefold: API.md and api.md are one file on macOS and Windows; never overwrite.
            key = hash(relpath.casefold())
            if key in self._paths_seen:
                return "duplicate_path"
            self._paths_seen.add(key)
        return ""

    def _duplicate_reason(self, parsed: ParsedPage, final: str, depth: int, relpath: str) -> str:
        if self._canonical_link(parsed, final, depth):
            return "canonical_elsewhere"
        if parsed.needs_javascript or not parsed.markdown.strip():
            return ""
        # text_hash ignores link targets (computed in the worker, off the event loop).
        return self._claim_content(parsed.text_hash, relpath, final)

    def _check_redirect(self, target: str) -> str | None:
        """Refuse a redirect hop out of scope, or to a page this crawl already has."""
        norm = normalize_url(target, self.site.keep_query_params)
        reason = self.scope.check_target(norm)
        if reason is None and self.store is not None and self.store.seen(norm):
            # A LevelDB point read (microseconds): cheaper than fetching the page twice.
            return "duplicate_redirect"
        return reason

    def _claim_alias(self, final: str, depth: int) -> bool:
        """On the store thread: True if ``final`` was not seen before (now it is)."""
        assert self.store is not None
        if self.store.seen(final):
            state = self.store.get(final)
            # Seen but never processed (queued): take it over, drop its queue entry.
            if state is None:
                self.store.complete(final, self._alias_state(final, depth), [])
                return True
            # Processed in an earlier run (incremental): ours again; in this run: a duplicate.
            return state.crawl_run != self.run_no
        self.store.complete(final, self._alias_state(final, depth), [])
        return True

    def _alias_state(self, final: str, depth: int) -> PageState:
        # The target of a redirect: its content is recorded under the URL that redirected.
        return PageState(
            url=final,
            status="skipped",
            error="alias",
            depth=depth,
            crawl_run=self.run_no,
            fetched_at=utc_now(),
        )

    def _write_files(self, record: PageRecord, images: dict[str, str]) -> None:
        remote_images = set(record.images)

        def local(url: str) -> str | None:
            if url in images:
                return images[url]
            if url in remote_images:  # an image not downloaded keeps its URL, never a .md path
                return None
            norm, reason = self._classify(url)  # only pages in scope get a local .md path
            return self.scope.relpath(norm) if reason is None else None

        body = relativize_links(record.content, record.path, local)
        write_page(self.out_dir, record, body)
        if self.appender is not None:
            self.appender.append(record)

    async def _download_images(self, urls: tuple[str, ...]) -> dict[str, str]:
        """Opt-in (``skip_images: false``): fetch the page's images into ``images/``.

        Returns image URL -> path under the site folder for those we have; the
        others keep their remote URL. Same guarded, polite fetcher as pages.
        """
        site = self.site
        if site.skip_images or not urls:
            return {}
        limit = asyncio.Semaphore(max(1, self.config.num_image_workers))
        found: dict[str, str] = {}

        async def one(url: str) -> None:
            if url in self._images:
                found[url] = self._images[url]
                return
            if not image_allowed(url, site.allowed_image_domains, site.disallowed_image_domains):
                self.stats.inc("images/filtered")
                return
            async with limit:
                rules = await self.shared.robots.rules_for(url, site.user_agent)
                if not rules.can_fetch(url, site.user_agent):
                    self.stats.inc("images/robots")
                    return
                try:
                    result = await self.shared.fetcher.fetch_bytes(
                        url,
                        user_agent=site.user_agent,
                        delay=site.delay_per_host,
                        max_bytes=site.max_image_size_bytes or self.config.max_page_size_bytes,
                    )
                except FetchError as exc:
                    self.stats.inc("images/failed")
                    logger.info("image.skipped", extra={"site": site.key, "url": url, "error": str(exc)})
                    return
            if result.status != 200 or not result.content_type.startswith("image/"):
                self.stats.inc("images/failed")
                return
            rel = "images/" + image_filename(url, result.content_type)
            await asyncio.to_thread(atomic_write_bytes, self.out_dir / rel, result.body)
            self.stats.inc("images/saved")
            self._images[url] = found[url] = rel

        await asyncio.gather(*(one(u) for u in dict.fromkeys(urls)))
        return found

    async def _remove_known(self, url: str, prior: PageState | None) -> None:
        """A page that now answers 404/410 leaves the output and the index."""
        if prior is None or not prior.output_path:
            return
        with contextlib.suppress(FileNotFoundError):
            (self.out_dir / prior.output_path).unlink()
        await self.shared.index.remove_pages(self.crawl_id, self.site.key, [url])

    # -- 4. finish ----------------------------------------------------------
    def _can_prune(self) -> bool:
        """Pruning needs a crawl that saw everything it would normally see."""
        return not (
            self.stop.is_set()
            or self.cut_short
            or self.stats.get("outcome/failed") > 0
            or self.stats.get("kept/robots") > 0
        )

    def _collect_gone(self, prune: bool) -> tuple[int, list[tuple[str, str]]]:
        """On the store thread: how many pages stay, and (url, path) of those pruned now."""
        assert self.store is not None
        live = 0
        gone: list[tuple[str, str]] = []
        for state in self.store.iter_states():
            if not _is_live(state):
                continue
            if prune and state.crawl_run != self.run_no:
                gone.append((state.url, state.output_path))
            else:
                live += 1
        for url, _path in gone:
            known = self.store.get(url)
            if known is not None:
                self.store.complete(url, replace(known, status="gone", error="pruned"), [])
        return live, gone

    def _live_urls(self) -> Iterator[str]:
        """On the store thread: the URLs of every page in the output, in URL order (streamed)."""
        assert self.store is not None
        for state in self.store.iter_states():
            if _is_live(state):
                yield state.url

    def _write_jsonl(self, jsonl: Path, sources: list[Path], meta: dict[str, Any]) -> int:
        # On the store thread, so the URL list streams from LevelDB instead of living in memory.
        return finalize_jsonl(jsonl, sources, self._live_urls(), meta)

    async def _finish(self, *, interrupted: bool, error: str) -> CrawlSummary:
        assert self.store is not None
        await self._flush()
        if self.budget_hit:
            # Report the budget like the other limits: URLs it left unfetched (at least 1).
            self.stats.inc("skipped/max_pages", max(1, await self._db(self.store.queued_count)))
        logger.info("crawl.finalizing", extra={"site": self.site.key, "interrupted": interrupted})
        if interrupted:
            await self._end_index_crawl(utc_now(), commit=False)
            logger.warning(
                "crawl.interrupted",
                extra={"site": self.site.key, "resume": f"doc-scraper crawl -site {self.site.key} -resume"},
            )
            return self._summary(ok=False, interrupted=True, error=error or "interrupted")
        prune = self.mode != "full" and self._can_prune()
        live, gone = await self._db(self._collect_gone, prune)
        if self.mode == "full" and not live:
            await self._end_index_crawl(utc_now(), commit=False)
            return self._summary(
                ok=False,
                error="crawl completed with zero successful pages; "
                "check start_urls, scope and the logs above",
            )
        for _url, path in gone:
            with contextlib.suppress(FileNotFoundError):
                (self.out_dir / path).unlink()
        if gone:
            await self.shared.index.remove_pages(self.crawl_id, self.site.key, [u for u, _ in gone])
            self.stats.inc("outcome/pruned", len(gone))
        ended = utc_now()
        jsonl = self._jsonl_path()
        part = jsonl.with_name(jsonl.name + PART_SUFFIX)
        meta = {
            "site_key": self.site.key,
            "allowed_domain": self.site.allowed_domain,
            "crawl_started_at": self.started_at,
            "crawl_ended_at": ended,
            "mode": self.mode,
            **{k: v for k, v in self._counts().items() if k != "pages"},
        }
        pages = await self._db(self._write_jsonl, jsonl, [jsonl, part], meta)
        part.unlink(missing_ok=True)
        await asyncio.to_thread(
            write_llms_files, self.out_dir, jsonl, self.site.key, self.site.allowed_domain
        )
        self.pages_total = pages
        await self._db(self.store.finish_run, "complete")
        await self._end_index_crawl(ended, commit=True)
        if self.staged:
            await self._close_store()
            await asyncio.to_thread(self._swap)
        summary = self._summary(ok=True, ended_at=ended)
        logger.info(
            "crawl.finished",
            extra={"site": self.site.key, **self._counts(), "seconds": round(summary.duration_s, 2)},
        )
        await self._embed()
        return summary

    # -- 5. embeddings -------------------------------------------------------
    def _embeddings_setting(self) -> str:
        return self.shared.embeddings or self.site.embeddings

    async def _embed(self) -> None:
        """Embed the sections without a vector (this crawl's new and changed ones); never raises."""
        site = self.site.key
        if self._embeddings_setting() == "off" or not await asyncio.to_thread(embed.semantic_available):
            return
        cancelled = threading.Event()

        def stopped() -> bool:
            # Read from the embedding thread: a stop request (first SIGINT) or a cancelled task ends it.
            return cancelled.is_set() or self.stop.is_set()

        t0 = time.monotonic()
        try:
            embedder = await asyncio.to_thread(embed.load_embedder)
            logger.info("index.embed.started", extra={"site": site, "model": embedder.model_id})
            stats = await asyncio.to_thread(_embed_pass, self.shared.index_path, embedder, stopped)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        except Exception as exc:
            seconds = round(time.monotonic() - t0, 2)
            if stopped():
                logger.info("index.embed.stopped", extra={"site": site, "seconds": seconds})
            else:
                # The lexical index is committed and good: a failed embedding costs only dense search.
                logger.warning(
                    "index.embed.failed",
                    extra={"site": site, "error": f"{type(exc).__name__}: {exc}", "seconds": seconds},
                    exc_info=not isinstance(exc, DocScraperError),  # not ours: keep the traceback
                )
            return
        if stats is None:
            logger.info(
                "index.embed.stopped", extra={"site": site, "seconds": round(time.monotonic() - t0, 2)}
            )
            return
        logger.info(
            "index.embed.done",
            extra={
                "site": site,
                "model": stats.model_id,
                "embedded": stats.embedded,
                "reused": stats.reused,
                "pruned": stats.pruned,
                "model_changed": stats.model_changed,
                "seconds": round(time.monotonic() - t0, 2),
            },
        )

    async def _end_index_crawl(self, ended: str, *, commit: bool) -> None:
        """Record the crawl in the index; ``commit`` makes its generation live (else kept for resume)."""
        await self.shared.index.finish_crawl(
            self.crawl_id, ended, self._counts(), commit=commit, retention=self.config.crawl_history_retention
        )

    def _swap(self) -> None:
        """Staging -> live for output and state, with .old as the crash-safe middle step."""
        for live, staging in ((self.state_live, self.state_path), (self.out_live, self.out_dir)):
            old = live.with_name(live.name + OLD)
            if old.exists():
                shutil.rmtree(old)
            if live.exists():
                live.rename(old)
            staging.rename(live)
            if old.exists():
                shutil.rmtree(old)
        self.out_dir, self.state_path = self.out_live, self.state_live

    def _counts(self) -> dict[str, int]:
        s = self.stats
        return {
            "pages": self.pages_total,
            "added": s.get("outcome/added"),
            "changed": s.get("outcome/changed"),
            "unchanged": s.get("outcome/unchanged") + s.get("outcome/not_modified"),
            "removed": s.get("outcome/removed") + s.get("outcome/pruned"),
            "failed": s.get("outcome/failed") + s.get("outcome/broken"),
            "retries": s.get("fetch/retries"),
            "needs_javascript": s.get("outcome/shell"),
        }

    def _summary(
        self, *, ok: bool, error: str = "", interrupted: bool = False, ended_at: str = ""
    ) -> CrawlSummary:
        c = self._counts()
        return CrawlSummary(
            site_key=self.site.key,
            ok=ok,
            mode=self.mode,
            started_at=self.started_at,
            ended_at=ended_at or utc_now(),
            pages=c["pages"],
            added=c["added"],
            changed=c["changed"],
            unchanged=c["unchanged"],
            removed=c["removed"],
            failed=c["failed"],
            retries=c["retries"],
            needs_javascript=c["needs_javascript"],
            skipped=self.stats.prefixed("skipped"),
            duration_s=time.monotonic() - self.t0,
            interrupted=interrupted,
            error=error,
            output_dir=str(self.out_live),
        )


_EMBED_LOCK = threading.Lock()  # one embedding pass per process at a time: the model uses every core


class _StoppableEmbedder:
    """An embedder that checks for a stop request between chunks of a round.

    ``embed_pending_sync`` commits each round; raising here ends the pass with
    every earlier round kept, and the next pass starts with what is left.
    """

    def __init__(self, inner: embed.Embedder, stopped: Callable[[], bool]) -> None:
        self._inner = inner
        self._stopped = stopped

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    def embed(self, texts: Sequence[str]) -> list[Any]:
        # Length-sorted chunks, so the model's own batches stay evenly padded.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows: list[Any] = [None] * len(texts)
        for start in range(0, len(order), EMBED_CHUNK):
            if self._stopped():
                raise EmbeddingError("embedding stopped on request; the next crawl continues it")
            chunk = order[start : start + EMBED_CHUNK]
            for i, row in zip(chunk, self._inner.embed([texts[i] for i in chunk]), strict=True):
                rows[i] = row
        return rows


def _embed_pass(
    db_path: Path, embedder: embed.Embedder, stopped: Callable[[], bool]
) -> embed.EmbedStats | None:
    """One embedding pass over ``db_path``, after any pass already running (None: stopped while waiting)."""
    while not _EMBED_LOCK.acquire(timeout=0.2):
        if stopped():
            return None
    try:
        return embed.embed_pending_sync(
            db_path, _StoppableEmbedder(embedder, stopped), round_size=EMBED_ROUND
        )
    finally:
        _EMBED_LOCK.release()


# Errors after which a known page keeps its previous output.
_KEEP_ON = frozenset(
    {
        "robots",
        "too_large",
        "non_html",
        "extract",
        "per_page_timeout",
        "FetchTimeout",
        "ConnectError",
        "FetchError",
        "HTTP_401",
        "HTTP_403",
        "HTTP_429",
        "HTTP_500",
        "HTTP_502",
        "HTTP_503",
        "HTTP_504",
    }
)


def _is_live(state: PageState | None) -> bool:
    return state is not None and state.status in ("ok", "not_modified") and bool(state.output_path)


def _is_html(content_type: str) -> bool:
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct in ("text/html", "application/xhtml+xml", "")
