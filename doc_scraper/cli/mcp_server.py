"""``doc-scraper mcp-server``: serve the crawled docs to coding agents over MCP (stdio).

stdout carries the protocol, so everything else (logs, errors) goes to stderr.

Test hook: when ``DOC_SCRAPER_MCP_TEST_CRAWL`` is set to ``module:function`` or
``path/to/file.py:function``, that coroutine function replaces
``api.crawl_sites`` for crawl jobs. Only the test suite sets it, to drive the
real stdio server without the crawl engine.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from doc_scraper.cli._flags import add_config_flag, add_log_flags
from doc_scraper.config.load import load_config
from doc_scraper.errors import UsageError
from doc_scraper.log import setup_logging

if TYPE_CHECKING:
    import argparse

    from doc_scraper.config.schema import Config
    from doc_scraper.jobs import CrawlFunction

HELP = "serve the crawled docs over MCP on stdio (11 tools: search, read, crawl jobs, freshness, diff)"
TEST_CRAWL_ENV = "DOC_SCRAPER_MCP_TEST_CRAWL"
logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_flag(parser)
    add_log_flags(parser)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    setup_logging(args.loglevel, json_lines=args.json_logs or config.log_format == "json")
    crawl = _test_crawl_function()
    asyncio.run(serve(config, crawl=crawl))
    return 0


async def serve(config: Config, *, crawl: CrawlFunction | None = None) -> None:
    """Run the MCP server on this process's stdin/stdout until the client disconnects."""
    # Imported here: the mcp SDK is heavy and only this command needs it.
    from doc_scraper.mcp_tools import build_server

    server = build_server(config, crawl=crawl)
    logger.info("mcp.serving", extra={"transport": "stdio", "config_path": config.path})
    await server.run_stdio_async()


def _test_crawl_function() -> CrawlFunction | None:
    spec = os.environ.get(TEST_CRAWL_ENV, "").strip()
    if not spec:
        return None
    target, _, name = spec.rpartition(":")
    if not target or not name:
        raise UsageError(f"{TEST_CRAWL_ENV}={spec!r}: expected module:function or path.py:function")
    if target.endswith(".py"):
        file_spec = importlib.util.spec_from_file_location("_doc_scraper_test_crawl", Path(target))
        if file_spec is None or file_spec.loader is None:
            raise UsageError(f"{TEST_CRAWL_ENV}: cannot load {target}")
        module = importlib.util.module_from_spec(file_spec)
        file_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    logger.warning("mcp.test_crawl_hook", extra={"crawl_function": spec})
    return cast("CrawlFunction", getattr(module, name))
