"""``doc-scraper add URL``: probe a docs site, propose a config entry, write it after confirmation.

Exit codes: 0 the entry was written, 1 an error (flags included: 2 is reserved for
"drafted, not written", so this command maps its own usage errors to 1), 2 a draft
was shown but not written (-dry-run, declined, or -json without -yes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from doc_scraper.cli._flags import add_config_flag, add_flag
from doc_scraper.config.load import load_config
from doc_scraper.config.schema import Config
from doc_scraper.errors import ConfigError, DocScraperError

if TYPE_CHECKING:
    from doc_scraper.discover.draft import Draft

logger = logging.getLogger(__name__)

HELP = "probe a docs site and add it to the config (framework, scope, selector, preview)"

EXIT_WRITTEN = 0
EXIT_ERROR = 1
EXIT_DRAFTED = 2
NEW_FILE_HEADER = "# doc-scraper configuration (created by `doc-scraper add`; see config.example.yaml)\n"
_UNKNOWN = "_add_unknown_args"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", nargs="?", help="the docs home page, e.g. https://docs.example.com/")
    add_config_flag(parser)
    add_flag(parser, "site", metavar="KEY", help="site key for the entry (default: from the host name)")
    add_flag(parser, "selector", metavar="CSS", help="content selector to use instead of the detected one")
    add_flag(parser, "depth", type=_depth, metavar="N", help="max_depth to use instead of the estimate")
    add_flag(parser, "yes", action="store_true", help="write without asking (for scripts)")
    add_flag(parser, "dry-run", action="store_true", help="show the draft, write nothing (exit 2)")
    add_flag(parser, "json", action="store_true", help="print the draft and result as JSON")
    add_flag(
        parser,
        "allow-private-networks",
        action="store_true",
        help="allow loopback/private addresses (default: the config's http_client_settings)",
    )
    add_flag(
        parser, "user-agent", metavar="UA", help="User-Agent for the probe (default: default_user_agent)"
    )
    add_flag(parser, "loglevel", default="warning", choices=["debug", "info", "warn", "warning", "error"])
    _errors_exit_1(parser)


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value}")
    return value


def _errors_exit_1(parser: argparse.ArgumentParser) -> None:
    """Report flag errors as ConfigError (exit 1): exit 2 means "drafted, not written" here.

    Unknown flags are kept aside instead of reaching the top-level parser (which would
    exit 2); ``run`` rejects them.
    """

    def error(message: str) -> NoReturn:
        raise ConfigError(f"doc-scraper add: {message}; see doc-scraper add -h")

    original = parser.parse_known_args

    def parse_known_args(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = original(args, namespace)
        setattr(parsed, _UNKNOWN, list(extras))
        return parsed, []

    parser.error = error  # type: ignore[method-assign]
    parser.parse_known_args = parse_known_args  # type: ignore[method-assign,assignment]


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except DocScraperError as exc:
        if getattr(args, "json", False):
            # Scripts reading stdout get an answer too; main() still prints the error and exits 1.
            print(json.dumps({"error": str(exc), "written": False}, ensure_ascii=False))
        raise


def _run(args: argparse.Namespace) -> int:
    # Imported here: the probe pulls in aiohttp and lxml, which every other command would pay for.
    from doc_scraper.discover.draft import draft_site
    from doc_scraper.log import setup_logging

    unknown = getattr(args, _UNKNOWN, [])
    if unknown:
        raise ConfigError(
            f"doc-scraper add: unrecognized arguments: {' '.join(unknown)}; see doc-scraper add -h"
        )
    if not args.url:
        raise ConfigError(
            "doc-scraper add: give the docs URL, e.g. doc-scraper add https://docs.example.com/"
        )
    if args.yes and args.dry_run:
        raise ConfigError("doc-scraper add: -yes and -dry-run contradict each other; choose one")
    setup_logging(args.loglevel)
    config_path = Path(args.config)
    config = load_config(config_path) if config_path.exists() else Config(sites={}, path=str(config_path))
    allow_private = bool(args.allow_private_networks or config.http_client_settings.allow_private_networks)
    probe_config = replace(
        config,
        http_client_settings=replace(config.http_client_settings, allow_private_networks=allow_private),
    )
    draft = asyncio.run(
        draft_site(
            args.url,
            probe_config,
            site_key=args.site,
            selector=args.selector,
            depth=args.depth,
            user_agent=args.user_agent,
        )
    )
    if (
        args.allow_private_networks
        and config_path.exists()
        and not config.http_client_settings.allow_private_networks
    ):
        draft = replace(
            draft,
            warnings=(
                *draft.warnings,
                f"{config_path} does not set http_client_settings.allow_private_networks: true, so crawling "
                "this private/loopback address will be refused; add that setting to crawl it",
            ),
        )
    return _decide(args, draft, config_path, allow_private)


def _decide(args: argparse.Namespace, draft: Draft, config_path: Path, allow_private: bool) -> int:
    interactive = sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    if args.dry_run:
        _show(args, draft, config_path, written=False)
        return EXIT_DRAFTED
    if args.yes:
        return _write(args, draft, config_path, allow_private)
    if args.json:
        _show(args, draft, config_path, written=False)
        return EXIT_DRAFTED
    _show(args, draft, config_path, written=False)
    if not interactive:
        raise ConfigError(
            "no terminal to confirm on: pass -yes to write the entry, or -dry-run to only show the draft"
        )
    answer = input(f"Add sites.{draft.site_key} to {config_path}? [y/N] ").strip().lower()
    if answer in ("y", "yes"):
        return _write(args, draft, config_path, allow_private, show=False)
    print("Not written.")
    return EXIT_DRAFTED


def _write(
    args: argparse.Namespace, draft: Draft, config_path: Path, allow_private: bool, *, show: bool = True
) -> int:
    from doc_scraper.discover.config_edit import add_site_to_file, added_comment

    header = NEW_FILE_HEADER
    if allow_private and args.allow_private_networks:
        header += "http_client_settings:\n  allow_private_networks: true\n"
    result = add_site_to_file(
        config_path, draft.site_key, draft.entry, comment=added_comment(draft.framework), new_file_text=header
    )
    logger.info("add.written", extra={"site": draft.site_key, "config_path": str(config_path)})
    if args.json:
        payload = draft.to_json(written=True, config_path=str(config_path))
        payload["lines"] = [result.first_line, result.last_line]
        payload["created"] = result.created
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_WRITTEN
    if show:
        from doc_scraper.discover.draft import render_text

        sys.stdout.write(render_text(draft, str(config_path)))
    verb = "Created" if result.created else "Updated"
    print(
        f"\n{verb} {config_path}: sites.{draft.site_key} at lines {result.first_line}-{result.last_line}.\n"
        f"Crawl it with: doc-scraper crawl -config {config_path} -site {draft.site_key}"
    )
    return EXIT_WRITTEN


def _show(args: argparse.Namespace, draft: Draft, config_path: Path, *, written: bool) -> None:
    if args.json:
        print(
            json.dumps(
                draft.to_json(written=written, config_path=str(config_path)), indent=2, ensure_ascii=False
            )
        )
    else:
        from doc_scraper.discover.draft import render_text

        sys.stdout.write(render_text(draft, str(config_path)))
        sys.stdout.flush()
