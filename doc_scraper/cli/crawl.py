"""``doc-scraper crawl``: crawl one or more sites from the config."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from typing import TYPE_CHECKING

from doc_scraper import api
from doc_scraper.cli._flags import add_config_flag, add_flag, add_log_flags, add_site_selection
from doc_scraper.config.load import load_config
from doc_scraper.errors import ConfigError, DocScraperError
from doc_scraper.log import setup_logging

if TYPE_CHECKING:
    import argparse

    from doc_scraper.config.schema import Config
    from doc_scraper.models import CrawlProgress, CrawlSummary

HELP = "crawl sites from the config into Markdown, JSONL, llms.txt and the search index"
logger = logging.getLogger(__name__)

EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_flag(parser)
    add_site_selection(parser)
    add_flag(parser, "resume", action="store_true", help="continue an interrupted crawl from its state")
    add_flag(
        parser,
        "incremental",
        action="store_true",
        help="re-crawl with conditional requests; unchanged pages cost a 304 (implies -resume)",
    )
    add_flag(
        parser, "full", action="store_true", help="force a fresh full crawl (ignores enable_incremental)"
    )
    add_flag(parser, "no-progress", action="store_true", help="no live progress line on a terminal")
    add_log_flags(parser)


def select_sites(config: Config, args: argparse.Namespace) -> list[str]:
    """Resolve -site / -sites / -all-sites; unknown keys are an error listing the valid ones."""
    if args.all_sites:
        keys = sorted(config.sites)
    elif args.sites:
        keys = [k.strip() for k in args.sites.split(",") if k.strip()]
    elif args.site:
        keys = [args.site]
    else:
        # Exit 1 like the original (flag-parse errors exit 2): scripts rely on it.
        raise DocScraperError("one of -site KEY, -sites A,B or -all-sites is required")
    unknown = [k for k in keys if k not in config.sites]
    if unknown:
        raise ConfigError(
            f"site {', '.join(repr(k) for k in unknown)} not found in {config.path}. "
            f"Available sites: {', '.join(sorted(config.sites))}"
        )
    return keys


def crawl_mode(config: Config, args: argparse.Namespace, keys: list[str]) -> str:
    if args.incremental and args.full:
        raise DocScraperError("-incremental and -full cannot be used together; choose one")
    if args.full:
        return "full"
    if args.incremental or any(config.sites[k].enable_incremental for k in keys):
        return "incremental"
    if args.resume:
        return "resume"
    return "full"


class ProgressLine:
    """A live ``pages done/queued/failed, pages/s`` line on a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.latest: dict[str, CrawlProgress] = {}
        self.last_draw = 0.0

    def __call__(self, progress: CrawlProgress) -> None:
        self.latest[progress.site_key] = progress
        if not self.enabled or time.monotonic() - self.last_draw < 0.25:
            return
        self.last_draw = time.monotonic()
        parts = []
        for key, p in sorted(self.latest.items()):
            rate = p.pages_done / p.elapsed_s if p.elapsed_s > 0 else 0.0
            parts.append(
                f"{key}: {p.pages_done} done, {p.pages_queued} queued, {p.pages_failed} failed, "
                f"{rate:.1f} pages/s"
            )
        sys.stderr.write("\r\x1b[2K" + " | ".join(parts))
        sys.stderr.flush()

    def clear(self) -> None:
        if self.enabled and self.latest:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def print_summary(summaries: list[CrawlSummary], seconds: float) -> None:
    out = sys.stderr
    out.write(f"\nCrawl finished in {seconds:.1f}s\n")
    header = (
        f"{'site':<24} {'status':<11} {'pages':>6} {'added':>6} {'changed':>7} {'unchgd':>6} "
        f"{'removed':>7} {'errors':>6} {'retries':>7} {'js':>4} {'time':>7}"
    )
    out.write(header + "\n" + "-" * len(header) + "\n")
    for s in summaries:
        status = "ok" if s.ok else ("interrupted" if s.interrupted else "FAILED")
        out.write(
            f"{s.site_key:<24} {status:<11} {s.pages:>6} {s.added:>6} {s.changed:>7} {s.unchanged:>6} "
            f"{s.removed:>7} {s.failed:>6} {s.retries:>7} {s.needs_javascript:>4} {s.duration_s:>6.1f}s\n"
        )
        skipped = ", ".join(f"{k}={v}" for k, v in s.skipped.items() if v)
        if skipped:
            out.write(f"  skipped: {skipped}\n")
        if s.needs_javascript:
            out.write(f"  {s.needs_javascript} page(s) need JavaScript rendering and were not written\n")
        if s.error:
            out.write(f"  error: {s.error}\n")
        if s.ok:
            out.write(f"  output: {s.output_dir}\n")
        elif s.interrupted:
            out.write(f"  resume with: doc-scraper crawl -site {s.site_key} -resume\n")
    out.flush()


async def crawl_with_signals(
    config: Config, keys: list[str], mode: str, progress: ProgressLine | None
) -> tuple[list[CrawlSummary], bool]:
    """Run the crawl; first SIGINT/SIGTERM stops gracefully, the second cancels."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(api.crawl_sites(config, keys, mode=mode, stop=stop, progress=progress))
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            logger.warning(
                "crawl.stopping", extra={"hint": "finishing in-flight pages; signal again to abort"}
            )
            stop.set()
            loop.call_later(config.shutdown_grace, task.cancel)
        else:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        summaries = await task
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return summaries, signals > 0


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    setup_logging(args.loglevel, json_lines=args.json_logs or config.log_format == "json")
    keys = select_sites(config, args)
    mode = crawl_mode(config, args, keys)
    progress = ProgressLine(sys.stderr.isatty() and not args.no_progress and not args.json_logs)
    t0 = time.monotonic()
    try:
        summaries, signalled = asyncio.run(crawl_with_signals(config, keys, mode, progress))
    except asyncio.CancelledError:
        progress.clear()
        sys.stderr.write("aborted; the crawl state is kept: resume with -resume\n")
        return EXIT_INTERRUPTED
    progress.clear()
    print_summary(summaries, time.monotonic() - t0)
    if signalled or any(s.interrupted and not s.error.startswith("global") for s in summaries):
        return EXIT_INTERRUPTED
    return 0 if all(s.ok for s in summaries) else 1
