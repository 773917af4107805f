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

# command name -> module under doc_scraper.cli
COMMANDS: dict[str, str] = {
    "crawl": "crawl",
    "watch": "watch",
    "add": "add",
    "search": "search",
    "extract": "extract",
    "config": "config",
    "run": "run",
    "mcp-server": "mcp_server",
    "version": "version",
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
    return importlib.import_module(f"doc_scraper.cli.{COMMANDS[name]}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="doc-scraper",
        description="Crawl documentation sites into clean, searchable Markdown for coding agents.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = _load(name)
        except ModuleNotFoundError:  # a command still being written; never in a release
            continue
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in ("-version", "--version"):
        args_list = ["version"]
    debug = "--debug" in args_list
    try:
        parser = build_parser()
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
