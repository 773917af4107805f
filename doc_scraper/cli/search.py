"""``doc-scraper search QUERY...``: ranked search over crawled docs, offline.

Flags may come before or after the query words; ``--`` ends flags. ``-mode``
picks lexical (FTS5), dense (embeddings) or hybrid (both fused); by default a
search is hybrid when the semantic extra is installed and the index has
embeddings, else lexical. The mode that answered goes to stderr (``mode: hybrid``)
and, with ``-json``, into every result. Imports stay lazy: only the config loader and
the index reader load, so a search starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from doc_scraper.cli._flags import add_config_flag, add_flag
from doc_scraper.errors import UsageError

if TYPE_CHECKING:
    from doc_scraper.index.search import SearchResult

HELP = 'search crawled docs offline (BM25 over sections, hybrid with embeddings; "phrase", OR, prefix*)'
DEFAULT_LIMIT = 10
MODES = ("auto", "lexical", "dense", "hybrid")

# flag -> (dest, takes a value)
_TRAILING_FLAGS = {
    "config": ("config", True),
    "site": ("site", True),
    "limit": ("limit", True),
    "json": ("json", False),
    "mode": ("mode", True),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_flag(parser)
    add_flag(parser, "site", metavar="KEY", help="search one site only (default: every site)")
    add_flag(parser, "limit", default=str(DEFAULT_LIMIT), metavar="N", help="results to show (default: 10)")
    add_flag(parser, "json", action="store_true", help="print results as a JSON array")
    add_flag(
        parser,
        "mode",
        default="auto",
        metavar="MODE",
        help="lexical, dense or hybrid (default auto: hybrid when the semantic extra is installed "
        "and the index has embeddings, else lexical)",
    )
    parser.add_argument(
        "query",
        nargs=argparse.REMAINDER,
        metavar="QUERY",
        help="search terms; flags may follow them, -- ends flags",
    )


def _split_trailing_flags(args: argparse.Namespace) -> list[str]:
    """Apply flags written after the query words; return the query words."""
    words: list[str] = []
    items = list(args.query or [])
    flags_done = False
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if flags_done:
            words.append(item)
            continue
        if item == "--":
            flags_done = True
            continue
        name, eq, value = item.lstrip("-").partition("=")
        if (
            item.startswith("-")
            and name in _TRAILING_FLAGS
            and item.lstrip("-")
            and len(item) - len(item.lstrip("-")) <= 2
        ):
            dest, takes_value = _TRAILING_FLAGS[name]
            if not takes_value:
                setattr(args, dest, True)
                continue
            if not eq:
                if i >= len(items):
                    raise UsageError(f"search: flag -{name} needs a value")
                value = items[i]
                i += 1
            setattr(args, dest, value)
            continue
        words.append(item)
    return words


def _limit(raw: Any) -> int:
    try:
        limit = int(raw)
    except (TypeError, ValueError):
        raise UsageError(f"search: -limit must be a whole number > 0, got {raw!r}") from None
    if limit <= 0:
        raise UsageError(f"search: -limit must be > 0, got {limit}")
    return limit


def _mode(raw: Any) -> str | None:
    mode = str(raw or "auto").strip().lower()
    if mode not in MODES:
        raise UsageError(f"search: -mode must be one of {', '.join(MODES)}, got {raw!r}")
    return None if mode == "auto" else mode


def run(args: argparse.Namespace) -> int:
    from doc_scraper.config.load import load_config

    words = _split_trailing_flags(args)
    query = " ".join(words).strip()
    if not query:
        raise UsageError("search: give a query, e.g. doc-scraper search asyncio.TaskGroup")
    limit = _limit(args.limit)
    mode = _mode(args.mode)
    config = load_config(args.config)
    from doc_scraper import api

    answer = api.answer_query(config, query, site_key=args.site or None, limit=limit, mode=mode)
    print(f"mode: {answer.mode}", file=sys.stderr)
    if args.json:
        print(json.dumps([_as_json(r, answer.mode) for r in answer.results], ensure_ascii=False, indent=1))
    else:
        _print_text(answer.results)
    return 0


def _as_json(result: SearchResult, mode: str) -> dict[str, Any]:
    return {
        "site_key": result.site_key,
        "url": result.url,
        "anchor": result.anchor,
        "title": result.title,
        "heading_path": " > ".join(result.heading_path),
        "snippet": result.snippet,
        "score": result.score,
        "crawled_at": result.crawled_at,
        "mode": mode,
    }


def _print_text(results: list[SearchResult]) -> None:
    if not results:
        print("no results", file=sys.stderr)
        return
    for number, result in enumerate(results, 1):
        path = list(result.heading_path)
        if path and path[0] == result.title:
            path = path[1:]
        heading = "  >  ".join([result.title, *path]) if path else result.title
        link = f"{result.url}#{result.anchor}" if result.anchor else result.url
        print(f"{number}. {heading}  ({result.site_key})")
        print(f"   {link}")
        if result.snippet:
            print(f"   {result.snippet}")
        print()
