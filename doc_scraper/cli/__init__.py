"""Command-line entry point: ``doc-scraper <command> [flags]``.

Each command is a module here exposing ``HELP`` (one line), ``add_arguments(parser)``
and ``run(args) -> int``. ``main`` maps our errors to messages and exit codes:
usage errors exit 2, every other ``DocScraperError`` exits 1, interrupts 130.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING

from doc_scraper import __version__
from doc_scraper.errors import ConfigError, DocScraperError, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

# command name -> (module under doc_scraper.cli, one-line help). The help lives here
# so `doc-scraper -h` and the parser for one command import only that command's module
# (search must start fast; mcp-server and add pull in heavy libraries).
COMMANDS: dict[str, tuple[str, str]] = {
    "crawl": ("crawl", "crawl sites from the config into Markdown, JSONL, llms.txt and the search index"),
    "watch": ("watch", "re-crawl sites incrementally on a schedule (e.g. -all-sites -interval 24h)"),
    "add": ("add", "probe a docs site and add it to the config (framework, scope, selector, preview)"),
    "search": ("search", 'search crawled docs offline (ranked sections; FTS5: "phrase", OR, prefix*)'),
    "extract": ("extract", "convert one saved HTML page to Markdown (framework detection included)"),
    "config": ("config", "validate the config file or list its sites (config validate | config list)"),
    "run": ("run", 'run one JSON task from stdin, e.g. {"command": "crawl", "site": "my_docs"}'),
    "mcp-server": ("mcp_server", "serve the crawled docs over MCP on stdio (11 tools for agents)"),
    "version": ("version", "print the doc-scraper version"),
}

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() owns the exit code."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _load(name: str) -> ModuleType:
    return importlib.import_module(f"doc_scraper.cli.{COMMANDS[name][0]}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (all of them when None)."""
    parser = _Parser(
        prog="doc-scraper",
        description="Crawl documentation sites into clean, searchable Markdown for coding agents.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_module, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if command is None or name == command:
            module = _load(name)
            module.add_arguments(cmd)
            cmd.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in ("-version", "--version"):
        args_list = ["version"]
    debug = "--debug" in args_list
    try:
        chosen = next((a for a in args_list if not a.startswith("-")), None)
        parser = build_parser(chosen if chosen in COMMANDS else None)
        if not args_list:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        args = parser.parse_args(args_list)
        if not getattr(args, "_module", None):
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        return int(args._module.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except UsageError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, DocScraperError) as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def version_string() -> str:
    return f"doc-scraper {__version__}"
