"""``doc-scraper watch``: re-crawl sites incrementally on an interval until interrupted."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
from typing import TYPE_CHECKING

from doc_scraper.cli._flags import add_config_flag, add_flag, add_log_flags, add_site_selection
from doc_scraper.config.durations import format_duration
from doc_scraper.config.load import load_config
from doc_scraper.errors import ConfigError
from doc_scraper.taskspec import DEFAULT_INTERVAL, check_interval
from doc_scraper.watch import WatchScheduler, api_crawl_fn, watch_lock, watch_state_path

if TYPE_CHECKING:
    import argparse

    from doc_scraper.config.schema import Config
    from doc_scraper.watch import CrawlFn

logger = logging.getLogger(__name__)

HELP = "re-crawl sites incrementally on a schedule (e.g. -all-sites -interval 24h) until interrupted"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_flag(parser)
    add_site_selection(parser)
    add_flag(
        parser,
        "interval",
        default=DEFAULT_INTERVAL,
        metavar="DURATION",
        help="time between runs of a site: 30m, 24h, 7d, 1d12h (default: 24h)",
    )
    add_log_flags(parser)
    # "-interval -1h" must reach our validation (exit 1, "must not be negative") instead of
    # argparse taking "-1h" for an unknown flag: let argparse treat "-<digit>..." as a value.
    parser._negative_number_matcher = re.compile(r"^-\d[\w.]*$")


def select_site_keys(args: argparse.Namespace, config: Config) -> list[str]:
    """-all-sites > -sites > -site, like crawl; unknown keys are a config error (exit 1)."""
    chosen = [flag for flag in ("all_sites", "sites", "site") if getattr(args, flag, None)]
    if not chosen:
        raise ConfigError("choose the sites to watch: -site KEY, -sites A,B or -all-sites")
    for ignored in chosen[1:]:
        logger.warning("cli.flag_ignored", extra={"flag": "-" + ignored.replace("_", "-"), "used": chosen[0]})
    if chosen[0] == "all_sites":
        keys = list(config.sites)
    elif chosen[0] == "sites":
        keys = [key.strip() for key in str(args.sites).split(",") if key.strip()]
        if not keys:
            raise ConfigError("-sites: give comma-separated site keys, e.g. -sites a,b")
    else:
        keys = [str(args.site)]
    unknown = [key for key in keys if key not in config.sites]
    if unknown:
        available = ", ".join(config.sites) or "none"
        raise ConfigError(f"site '{unknown[0]}' not found in {config.path}; available sites: {available}")
    return list(dict.fromkeys(keys))


def run(args: argparse.Namespace, *, crawl: CrawlFn | None = None) -> int:
    from doc_scraper.log import setup_logging

    interval = check_interval(args.interval)
    config = load_config(args.config)
    setup_logging(args.loglevel, json_lines=args.json_logs or config.log_format == "json")
    keys = select_site_keys(args, config)
    scheduler = WatchScheduler(
        keys, interval, watch_state_path(config.state_dir), crawl or api_crawl_fn(config)
    )
    logger.info("watch.interval", extra={"interval": format_duration(interval), "sites": ",".join(keys)})
    with watch_lock(config.state_dir):
        asyncio.run(_watch(scheduler))
    return 0


async def _watch(scheduler: WatchScheduler) -> None:
    """Run until SIGINT/SIGTERM; the first signal stops gracefully, a second one cancels."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    signals = (signal.SIGINT, signal.SIGTERM)

    def on_signal(signum: int) -> None:
        if stop.is_set():
            logger.warning("watch.forced_stop", extra={"signal": signal.Signals(signum).name})
            if task is not None:
                task.cancel()
            return
        logger.info("watch.stopping", extra={"signal": signal.Signals(signum).name})
        stop.set()

    installed = []
    for signum in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        await scheduler.run(stop)
    except asyncio.CancelledError:
        if not stop.is_set():
            raise
        # Forced by a second signal: the crawl's own cleanup ran in its finally blocks.
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
