"""Build a search index straight from the python-3.11 corpus and measure search.

    .venv/bin/python benchmarks/bench_search.py build --state /tmp/bench-search
    .venv/bin/python benchmarks/bench_search.py latency --state /tmp/bench-search
    .venv/bin/python benchmarks/bench_search.py eval --state /tmp/bench-search   # in-process metrics

``build`` parses every HTML page with ``doc_scraper.worker.parse_page`` when it
exists (``--extractor worker``), else with a quick lxml extraction of Sphinx's
``div[role=main]`` (``--extractor quick``), and feeds ``IndexWriter``. It also
writes ``config.yaml`` into the state folder so the CLI can be pointed at it:

    python3 /work/shared/tools/search_eval.py /work/shared/eval/search-python.jsonl \\
        --cmd '.venv/bin/python -m doc_scraper search -config /tmp/bench-search/config.yaml \\
               --json -limit {limit} {query}' --strip-prefix /python-3.11/
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from search_metrics import percentile, score_query  # noqa: E402

from doc_scraper.convert.sections import split_sections  # noqa: E402
from doc_scraper.index.reader import IndexReader  # noqa: E402
from doc_scraper.index.writer import IndexWriter  # noqa: E402
from doc_scraper.models import SECTION_END, SECTION_MARK, PageRecord, Section, SectionMark  # noqa: E402

CORPUS = Path("/work/shared/corpus/python-3.11/site")
EVAL = Path("/work/shared/eval/search-python.jsonl")
BASE_URL = "http://127.0.0.1:8000/python-3.11/"
SITE_KEY = "python"
SKIP = ("genindex", "search.html", "py-modindex.html", "_static/", "_sources/", "_downloads/")


def quick_parse(html: bytes, url: str) -> tuple[str, str, tuple[Section, ...]]:
    """Title, Markdown and sections of a Sphinx page (a stand-in for worker.parse_page)."""
    import lxml.html
    import markdownify_rs

    root = lxml.html.fromstring(html)
    mains = root.xpath('//div[@role="main"]')
    main = mains[0] if mains else root.find("body")
    for link in main.xpath('.//a[contains(@class, "headerlink")]'):
        link.drop_tree()
    marks: list[SectionMark] = []

    def add_marker(el: lxml.html.HtmlElement, mark: SectionMark) -> None:
        marker = lxml.html.Element("p")
        marker.text = f"{SECTION_MARK}{len(marks)}{SECTION_END}"
        el.addprevious(marker)
        marks.append(mark)

    heading_level = 1
    for el in list(main.iter()):
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            parent = el.getparent()
            anchor = (
                parent.get("id", "") if parent is not None and parent.tag == "section" else el.get("id", "")
            )
            heading_level = int(tag[1])
            add_marker(el, SectionMark(anchor or "", "heading", heading_level, el.text_content().strip()))
        elif tag == "dt" and el.get("id"):
            depth = len(el.xpath("ancestor::dl"))
            name = "".join(
                el.xpath('.//*[contains(@class,"descclassname") or contains(@class,"descname")]//text()')
            )
            add_marker(
                el,
                SectionMark(
                    el.get("id", ""),
                    "definition",
                    min(heading_level + depth, 9),
                    name.strip() or el.get("id", ""),
                ),
            )
    titles = root.xpath("//title/text()")
    title = titles[0].split(" — Python")[0].strip() if titles else url
    body = lxml.html.tostring(main, encoding="unicode")
    marked = markdownify_rs.markdownify(body, heading_style="atx")
    markdown, sections = split_sections(marked, marks, title)
    return title, markdown, sections


def _parse(path: Path, url: str, extractor: str) -> tuple[str, str, tuple[Section, ...]]:
    html = path.read_bytes()
    if extractor == "worker":
        from doc_scraper import worker
        from doc_scraper.models import ExtractOptions

        page = worker.parse_page(html, url, ExtractOptions())
        return page.title, page.markdown, page.sections
    return quick_parse(html, url)


def prepare(state: Path) -> list[Path]:
    """Empty the state folder's index, write a config for the CLI, list the pages to index."""
    state.mkdir(parents=True, exist_ok=True)
    db = state / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    (state / "config.yaml").write_text(
        f"state_dir: {state}\noutput_base_dir: {state / 'out'}\nsites:\n  {SITE_KEY}:\n"
        f"    start_urls: ['{BASE_URL}index.html']\n    allowed_domain: 127.0.0.1\n"
        "    content_selector: auto\n",
        encoding="utf-8",
    )
    return sorted(p for p in CORPUS.rglob("*.html") if not any(s in str(p.relative_to(CORPUS)) for s in SKIP))


async def build(state: Path, extractor: str, fresh_parse: bool) -> None:
    files = prepare(state)
    db = state / "index.db"
    t0 = time.perf_counter()
    writer = IndexWriter.open(db)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    crawl = await writer.begin_crawl(SITE_KEY, "full", now, fresh=True)
    n_sections = 0
    parse_s = 0.0
    cache_file = state / f"parsed-{extractor}.pickle"
    cache: dict[str, tuple[str, str, tuple[Section, ...]]] = {}
    if cache_file.exists() and not fresh_parse:
        cache = pickle.loads(cache_file.read_bytes())
    for path in files:
        rel = path.relative_to(CORPUS).as_posix()
        url = BASE_URL + rel
        p0 = time.perf_counter()
        if url not in cache:
            cache[url] = _parse(path, url, extractor)
        title, markdown, sections = cache[url]
        parse_s += time.perf_counter() - p0
        n_sections += len(sections)
        record = PageRecord(
            url=url,
            title=title,
            content=markdown,
            content_hash=hashlib.sha256(markdown.encode()).hexdigest(),
            crawled_at=now,
            depth=rel.count("/"),
            path=rel.replace(".html", ".md"),
        )
        await writer.upsert_page(crawl, SITE_KEY, record, sections)
    await writer.finish_crawl(
        crawl, now, {"pages": len(files), "added": len(files)}, commit=True, retention=10
    )
    await writer.close()
    cache_file.write_bytes(pickle.dumps(cache))
    total = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "pages": len(files),
                "sections": n_sections,
                "parse_s": round(parse_s, 1),
                "index_s": round(total - parse_s, 1),
                "extractor": extractor,
            }
        )
    )


def latency(state: Path, rounds: int) -> None:
    """Warm in-process latency per query: wall clock and CPU time of this thread (steadier on a busy box)."""
    reader = IndexReader.open(state / "index.db")
    queries = [json.loads(line)["query"] for line in EVAL.read_text(encoding="utf-8").splitlines() if line]
    for q in queries:  # warm up
        reader.search(q, limit=10)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        for q in queries:
            w0, c0 = time.perf_counter(), time.thread_time()
            reader.search(q, limit=10)
            cpu.append((time.thread_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)

    print(
        json.dumps(
            {
                "queries": len(wall),
                "wall_p50_ms": percentile(wall, 0.5, 2),
                "wall_p95_ms": percentile(wall, 0.95, 2),
                "cpu_p50_ms": percentile(cpu, 0.5, 2),
                "cpu_p95_ms": percentile(cpu, 0.95, 2),
                "load_avg_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


def evaluate(state: Path, verbose: bool) -> None:
    """In-process version of search_eval's metrics (MRR@10, R@5, section hit@10) for quick iteration."""

    reader = IndexReader.open(state / "index.db")
    mrr = r5 = sec10 = ndcg = 0.0
    n_sec = 0
    rows = [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line]
    for q in rows:
        results = reader.search(q["query"], limit=10)
        keys = [r.url.removeprefix(BASE_URL) for r in results]
        score = score_query(q, keys, [r.anchor for r in results])
        rank = score.rank
        mrr += 1 / rank if rank else 0
        r5 += 1 if rank and rank <= 5 else 0
        ndcg += score.ndcg
        if score.has_sections:
            n_sec += 1
            sec10 += score.sec10
            if verbose and not score.sec10:
                print(f"  sec-miss {q['id']} {q['query']!r}: gold {sorted(score.gold_sections)[:3]}")
                for k, res in list(zip(keys, results, strict=False))[:3]:
                    print(f"      {k}#{res.anchor}  {res.score:.2f}")
        if verbose and (not rank or rank > 1):
            gold = list(dict.fromkeys(r["path"] for r in q["relevant"]))
            print(f"  rank={rank} {q['id']} {q['query']!r}: gold {gold[:3]}")
            for k, res in list(zip(keys, results, strict=False))[:3]:
                print(f"      {k}#{res.anchor}  {res.score:.2f}")
    n = len(rows)
    print(
        json.dumps(
            {
                "n": n,
                "mrr10": round(mrr / n, 3),
                "r5": round(r5 / n, 3),
                "ndcg10": round(ndcg / n, 3),
                "sec10": round(sec10 / max(n_sec, 1), 3),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["build", "latency", "eval"])
    ap.add_argument("--state", type=Path, default=Path("/tmp/bench-search"))
    ap.add_argument("--extractor", choices=["quick", "worker"], default="quick")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reparse", action="store_true", help="ignore the cache of parsed pages")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.command == "build":
        asyncio.run(build(args.state, args.extractor, args.reparse))
    elif args.command == "latency":
        latency(args.state, args.rounds)
    else:
        evaluate(args.state, args.verbose)


if __name__ == "__main__":
    main()
