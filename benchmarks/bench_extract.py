"""Extraction benchmark: parse_page over a saved docs site, for extract_eval and speed.

Writes ``OUT/<relpath>.md`` (frontmatter ``url`` + ``title``) for every page of
``CORPUS/site``, with the URL the page has when docserve serves it, then prints
CPU pages/s (one core) of parse_page and, with ``--baselines``, of plain
markdownify, readability + markdownify and trafilatura on the same pages.

    .venv/bin/python benchmarks/bench_extract.py --corpus ../shared/corpus/python-3.11 --out /tmp/x-py
    python3 ../shared/tools/extract_eval.py --output /tmp/x-py --corpus ../shared/corpus/python-3.11
    .venv/bin/python benchmarks/bench_extract.py --corpus ../shared/corpus/python-3.11 \
        --speed-only --glob 'library/*.html' --limit 60 --baselines
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from doc_scraper.convert.markdown import CONVERTERS, DEFAULT_CONVERTER
from doc_scraper.errors import ExtractError
from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page

if TYPE_CHECKING:
    from collections.abc import Callable


def page_url(root: str, rel: str) -> str:
    if rel == "index.html":
        return root
    if rel.endswith("/index.html"):
        return root + rel[: -len("index.html")]
    return root + rel


def load_pages(corpus: Path, glob: str, limit: int) -> tuple[str, list[tuple[str, bytes]]]:
    site = json.loads((corpus / "SITE.json").read_text())
    base_path = site.get("base_path") or f"/{site['name']}/"
    pages = [
        (path.relative_to(corpus / "site").as_posix(), path.read_bytes())
        for path in sorted((corpus / "site").glob(glob))
        if path.is_file() and path.suffix == ".html"
    ]
    if limit:
        pages = pages[:limit]
    return base_path, pages


def cpu_rate(fn: Callable[[str, bytes], object], pages: list[tuple[str, bytes]], repeat: int) -> float:
    """Pages per CPU-second of the best of ``repeat`` passes (other load on the machine only slows)."""
    best = float("inf")
    for _ in range(max(repeat, 1)):
        start = time.process_time()
        for rel, body in pages:
            fn(rel, body)
        best = min(best, time.process_time() - start)
    return len(pages) / best if best else float("inf")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, type=Path, help="shared/corpus/<name> folder")
    ap.add_argument("--out", type=Path, help="write Markdown files here")
    ap.add_argument("--host", default="http://127.0.0.1:8000", help="scheme://host:port of the URLs")
    ap.add_argument("--glob", default="**/*.html", help="pages to use, relative to site/")
    ap.add_argument("--limit", type=int, default=0, help="first N pages only")
    ap.add_argument("--selector", default="auto", help="content_selector")
    ap.add_argument("--converter", default=DEFAULT_CONVERTER, choices=CONVERTERS)
    ap.add_argument("--speed-only", action="store_true", help="time only, write nothing")
    ap.add_argument("--repeat", type=int, default=1, help="timing passes")
    ap.add_argument(
        "--baselines",
        action="store_true",
        help="also time markdownify, readability+markdownify and trafilatura",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="time BASELINES.md's reference steps on the pages' main regions (calibration)",
    )
    ap.add_argument(
        "--compare-converters",
        action="store_true",
        help="time parse_page with every converter behind the same DOM preparation",
    )
    args = ap.parse_args(argv)

    base_path, pages = load_pages(args.corpus, args.glob, args.limit)
    root = args.host.rstrip("/") + base_path
    options = ExtractOptions(content_selector=args.selector)
    print(f"pages: {len(pages)}  html MB: {sum(len(b) for _, b in pages) / 1e6:.1f}  root: {root}")

    rates: dict[str, float] = {}
    if not args.speed_only:
        frameworks: Counter[str] = Counter()
        failures = 0
        spent = 0.0
        for rel, body in pages:
            url = page_url(root, rel)
            try:
                start = time.process_time()
                page = parse_page(body, url, options, converter=args.converter)
                spent += time.process_time() - start
            except ExtractError as exc:
                failures += 1
                print(f"error: {exc}", file=sys.stderr)
                continue
            frameworks[f"{page.detection.framework}/{page.detection.confidence}"] += 1
            if args.out:
                target = args.out / (rel[: -len(".html")] + ".md")
                target.parent.mkdir(parents=True, exist_ok=True)
                title = json.dumps(page.title, ensure_ascii=False)
                target.write_text(
                    f"---\nurl: {url}\ntitle: {title}\n---\n\n{page.markdown}", encoding="utf-8"
                )
        print("detection:", dict(frameworks), "errors:", failures)
        rates[f"parse_page ({args.converter}), writing pass"] = len(pages) / spent if spent else 0.0

    def ours(conv: str) -> Callable[[str, bytes], object]:
        return lambda rel, body: parse_page(body, page_url(root, rel), options, converter=conv)

    if args.speed_only:
        ours(args.converter)(*pages[0])  # warm caches
        rates[f"parse_page ({args.converter})"] = cpu_rate(ours(args.converter), pages, args.repeat)
    if args.compare_converters:
        for conv in CONVERTERS:
            if conv != args.converter:
                rates[f"parse_page ({conv})"] = cpu_rate(ours(conv), pages, args.repeat)
    if args.baselines:
        import markdownify
        import trafilatura
        from readability import Document

        def plain(rel: str, body: bytes) -> object:
            return markdownify.markdownify(body.decode("utf-8", "replace"))

        def readability_md(rel: str, body: bytes) -> object:
            return markdownify.markdownify(
                Document(body.decode("utf-8", "replace")).summary(html_partial=True)
            )

        def traf(rel: str, body: bytes) -> object:
            return trafilatura.extract(body.decode("utf-8", "replace"), output_format="markdown")

        rates["markdownify (whole page)"] = cpu_rate(plain, pages, 1)
        rates["readability + markdownify"] = cpu_rate(readability_md, pages, 1)
        rates["trafilatura (markdown)"] = cpu_rate(traf, pages, 1)
    if args.reference:
        import lxml.html
        import markdownify
        import markdownify_rs

        regions: list[tuple[str, bytes]] = []
        for rel, body in pages:
            main = lxml.html.document_fromstring(body).find(".//*[@role='main']")
            if main is not None:
                regions.append((rel, lxml.html.tostring(main)))
        texts = {rel: region.decode() for rel, region in regions}
        rates["ref: lxml parse of main regions"] = cpu_rate(lambda r, b: lxml.html.fromstring(b), regions, 3)
        rates["ref: markdownify-rs of main regions"] = cpu_rate(
            lambda r, b: markdownify_rs.markdownify(texts[r]), regions, 3
        )
        rates["ref: markdownify of main regions"] = cpu_rate(
            lambda r, b: markdownify.markdownify(texts[r]), regions, 1
        )
    for name, rate in rates.items():
        print(f"{name:38s} {rate:8.1f} pages/s (CPU, one core)")
    ref = rates.get("ref: lxml parse of main regions")
    if ref and f"parse_page ({args.converter})" in rates:
        scaled = rates[f"parse_page ({args.converter})"] * 790 / ref
        print(f"parse_page scaled to BASELINES.md's machine (region parse 790/s there): {scaled:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
