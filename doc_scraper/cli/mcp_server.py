"""``doc-scraper mcp-server``: serve the crawled docs to coding agents over MCP (stdio).

stdout carries the protocol, so everything else (logs, errors) goes to stderr.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from doc_scraper.cli._flags import add_config_flag, add_log_flags
from doc_scraper.config.load import load_config
from doc_scraper.log import setup_logging

if TYPE_CHECKING:
    import argparse

    from doc_scraper.config.schema import Config
    from doc_scraper.jobs import CrawlFunction

HELP = "serve the crawled docs over MCP on stdio (11 tools: search, read, crawl jobs, freshness, diff)"
logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_flag(parser)
    add_log_flags(parser)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    setup_logging(args.loglevel, json_lines=args.json_logs or config.log_format == "json")
    asyncio.run(serve(config))
    return 0


async def serve(config: Config, *, crawl: CrawlFunction | None = None) -> None:
    """Run the MCP server on this process's stdin/stdout until the client disconnects."""
    # Imported here: the mcp SDK is heavy and only this command needs it.
    from doc_scraper.mcp_tools import build_server

    server = build_server(config, crawl=crawl)
    logger.info("mcp.serving", extra={"transport": "stdio", "config_path": config.path})
    await server.run_stdio_async()
