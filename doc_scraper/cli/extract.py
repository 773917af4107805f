"""``doc-scraper extract FILE|-``: convert one saved HTML page to Markdown, as a crawl would."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from doc_scraper.cli._flags import add_flag
from doc_scraper.errors import EmptyShellError, UsageError
from doc_scraper.models import ExtractOptions

if TYPE_CHECKING:
    import argparse

HELP = "convert one saved HTML page to Markdown (framework detection included)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="HTML file to convert, or - for standard input")
    add_flag(
        parser,
        "url",
        metavar="URL",
        help="URL the page was fetched from; relative links resolve against it (default: file URL)",
    )
    add_flag(
        parser,
        "selector",
        default="auto",
        metavar="CSS",
        help="content selector, or auto to detect the framework (default: auto)",
    )
    add_flag(parser, "charset", metavar="NAME", help="charset the server declared (default: sniffed)")
    add_flag(
        parser,
        "json",
        action="store_true",
        help="print JSON: detected framework, confidence, selector, title, links and the Markdown",
    )


def _read(name: str) -> tuple[bytes, str]:
    if name == "-":
        return sys.stdin.buffer.read(), "http://localhost/"
    path = Path(name)
    try:
        return path.read_bytes(), path.resolve().as_uri()
    except OSError as exc:
        raise UsageError(
            f"extract: cannot read {name}: {exc.strerror}; give an existing HTML file or -"
        ) from exc


def run(args: argparse.Namespace) -> int:
    # The worker is what the crawl engine runs in its process pool: same code path here.
    from doc_scraper import api

    body, default_url = _read(args.file)
    url = args.url or default_url
    options = ExtractOptions(content_selector=args.selector or "auto")
    page = api.extract_page(body, url, options, charset=args.charset)
    if args.json:
        out = {
            "url": page.url,
            "title": page.title,
            "framework": page.detection.framework,
            "confidence": page.detection.confidence,
            "source": page.detection.source,
            "selector": page.detection.selector,
            "generator": page.detection.generator,
            "needs_javascript": page.needs_javascript,
            "canonical": page.canonical,
            "noindex": page.noindex,
            "headings": list(page.headings),
            "links": list(page.links),
            "images": list(page.images),
            "sections": [asdict(s) for s in page.sections],
            "content_hash": page.content_hash,
            "markdown": page.markdown,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if page.needs_javascript:
        raise EmptyShellError(
            url, f"client-rendered page ({page.detection.framework}): its content needs JavaScript rendering"
        )
    sys.stdout.write(page.markdown)
    return 0
