"""Extraction benchmark: parse_page over a saved docs site, for extract_eval and speed.

Writes ``OUT/<relpath>.md`` (frontmatter ``url`` + ``title``) for every page of
``CORPUS/site``, with the URL the page has when docserve serves it, then prints
CPU pages/s (one core) of parse_page and, with ``--baselines``, in the same run:
plain markdownify, readability + markdownify and trafilatura on the same pages,
and the issue's reference steps on the pages' content regions (lxml parse only,
markdownify-rs only, markdownify only). The reference steps give the machine
factor: the issue measured 790 (lxml) and 930 (markdownify-rs) pages/s on its
machine, so parse_page is also shown scaled to that machine.

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

    Step = tuple[Callable[[str, bytes], object], list[tuple[str, bytes]]]  # a function and its inputs


# The reference machine: lxml parse and markdownify-rs on the same 60 main regions.
REFERENCE_LXML = 790
REFERENCE_RS = 930
REF_LXML = "ref: lxml parse only (main region)"
REF_RS = "ref: markdownify-rs only (main region)"


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
    return cpu_rates({"": (fn, pages)}, repeat)[""]


def cpu_rates(steps: dict[str, Step], rounds: int) -> dict[str, float]:
    """Pages per CPU-second of each step, best of ``rounds`` passes taken in turn.

    Alternating the steps exposes them to the same machine conditions, so the ratios between
    them (the machine factor) hold even when other load comes and goes.
    """
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(max(rounds, 1)):
        for name, (fn, items) in steps.items():
            start = time.process_time()
            for rel, body in items:
                fn(rel, body)
            best[name] = min(best[name], time.process_time() - start)
    return {name: len(steps[name][1]) / spent if spent else float("inf") for name, spent in best.items()}


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
        help="also time markdownify, readability+markdownify, trafilatura and the reference steps",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="time only the reference steps on the pages' main regions (machine factor)",
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

    ours_name = f"parse_page ({args.converter})"
    timed: dict[str, Step] = {}
    if args.speed_only:
        ours(args.converter)(*pages[0])  # warm caches
        timed[ours_name] = (ours(args.converter), pages)
    if args.baselines or args.reference:
        timed.update(reference_steps(pages))
    # ours and the fast reference steps in turn, so the machine factor compares like with like
    rates.update(cpu_rates(timed, max(args.repeat, 3)))
    if args.compare_converters:
        for conv in CONVERTERS:
            if conv != args.converter:
                rates[f"parse_page ({conv})"] = cpu_rate(ours(conv), pages, args.repeat)
    if args.baselines or args.reference:
        rates["ref: markdownify only (main region)"] = cpu_rate(
            markdownify_region(pages), main_regions(pages), 1
        )
    if args.baselines:
        rates.update(baseline_rates(pages))
    for name, rate in rates.items():
        print(f"{name:40s} {rate:8.1f} pages/s (CPU, one core)")
    print_ratios(rates, ours_name)
    return 0


def baseline_rates(pages: list[tuple[str, bytes]]) -> dict[str, float]:
    """Whole-page extractors others would use instead of ours."""
    import markdownify
    import trafilatura
    from readability import Document

    def plain(rel: str, body: bytes) -> object:
        return markdownify.markdownify(body.decode("utf-8", "replace"))

    def readability_md(rel: str, body: bytes) -> object:
        return markdownify.markdownify(Document(body.decode("utf-8", "replace")).summary(html_partial=True))

    def traf(rel: str, body: bytes) -> object:
        return trafilatura.extract(body.decode("utf-8", "replace"), output_format="markdown")

    return {
        "markdownify (whole page)": cpu_rate(plain, pages, 1),
        "readability + markdownify": cpu_rate(readability_md, pages, 1),
        "trafilatura (markdown)": cpu_rate(traf, pages, 1),
    }


def main_regions(pages: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Each page's main region (role=main) as HTML: the input of the issue's reference steps."""
    import lxml.html

    regions: list[tuple[str, bytes]] = []
    for rel, body in pages:
        main = lxml.html.document_fromstring(body).find(".//*[@role='main']")
        if main is not None:
            regions.append((rel, lxml.html.tostring(main)))
    return regions


def reference_steps(pages: list[tuple[str, bytes]]) -> dict[str, Step]:
    """The issue's fast reference steps: lxml parse only, markdownify-rs only, on the main regions."""
    import lxml.html
    import markdownify_rs

    regions = main_regions(pages)
    texts = {rel: region.decode() for rel, region in regions}
    size = sum(len(region) for _, region in regions) / 1e6
    print(f"reference steps: {len(regions)} main regions, {size:.1f} MB of HTML")
    return {
        REF_LXML: (lambda r, b: lxml.html.fromstring(b), regions),
        REF_RS: (lambda r, b: markdownify_rs.markdownify(texts[r]), regions),
    }


def markdownify_region(pages: list[tuple[str, bytes]]) -> Callable[[str, bytes], object]:
    """The issue's slow reference step: markdownify on a main region."""
    import markdownify

    return lambda r, b: markdownify.markdownify(b.decode())


def print_ratios(rates: dict[str, float], ours_name: str) -> None:
    """Ours against plain markdownify, and scaled to the issue's machine by each reference step."""
    ours = rates.get(ours_name)
    if not ours:
        return
    plain = rates.get("markdownify (whole page)")
    if plain:
        print(f"{ours_name} / plain markdownify: {ours / plain:.1f}x")
    for ref_name, there in ((REF_LXML, REFERENCE_LXML), (REF_RS, REFERENCE_RS)):
        here = rates.get(ref_name)
        if here:
            factor = there / here
            print(
                f"machine factor by '{ref_name}': {factor:.2f} (issue's machine {there}/s, here {here:.0f}/s)"
                f" -> {ours_name} scaled: {ours * factor:.0f} pages/s"
            )


if __name__ == "__main__":
    sys.exit(main())
