"""Crawl hostile sites end to end and check nothing real is lost.

    .venv/bin/python benchmarks/hostile_crawl.py [--site mkdocs] [--pages 200]

A. docserve serving a corpus site with 10% injected 503s and a rate limit: the
   crawl must write exactly the pages a fault-free crawl writes.
B. tests/docsite.py (docserve has no resets or traps): ``--pages`` pages with 10%
   503s, 10% connections reset mid-body, a rate limit and a calendar trap that
   links to the next month forever. A good crawl first; then a crawl aborted after
   a few pages must leave that output untouched; then a full crawl through the
   faults must write every real page, with the trap cut by max_pages.
Prints one line per check and the figures; exit code 1 if a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import CORPUS, docserve, need_shared, stats

from doc_scraper import api
from doc_scraper.config.load import config_from_dict
from tests.docsite import DocSite, ThreadedServer

if TYPE_CHECKING:
    from doc_scraper.config.schema import Config
    from doc_scraper.models import CrawlProgress, CrawlSummary

FAILED: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    print(f"  [{'ok' if ok else 'FAIL'}] {name}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(name)


def make_config(work: Path, start: str, prefix: str, **site: Any) -> Config:
    return config_from_dict(
        {
            "output_base_dir": str(work / "out"),
            "state_dir": str(work / "state"),
            "num_workers": 8,
            "max_requests_per_host": 4,
            "max_retries": 6,
            "initial_retry_delay": "20ms",
            "max_retry_delay": "200ms",
            "http_client_settings": {"allow_private_networks": True, "timeout": "10s"},
            "sites": {
                "s": {
                    "start_urls": [start],
                    "allowed_domain": "127.0.0.1",
                    "allowed_path_prefix": prefix,
                    **site,
                }
            },
        }
    )


def outputs(config: Config) -> dict[str, str]:
    root = Path(config.output_base_dir) / "s"
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*.md")}


async def crawl(config: Config, **kw: Any) -> tuple[CrawlSummary, float]:
    t0 = time.monotonic()
    [summary] = await api.crawl_sites(config, ["s"], **kw)
    return summary, time.monotonic() - t0


async def part_a(site: str) -> None:
    print(f"A. docserve {site}: 10% 503s, rate limit 5 rps")
    args = ("--site", f"{site}={CORPUS / site}", "--sitemap")
    with docserve(*args) as ready, tempfile.TemporaryDirectory() as tmp:
        info = ready["sites"][site]
        prefix = "/" + info["url"].split("/", 3)[3]
        clean_cfg = make_config(Path(tmp), info["start_url"], prefix)
        clean, t_clean = await crawl(clean_cfg)
        expected = set(outputs(clean_cfg))
    faults = ("--fail-rate", "0.1", "--fail-status", "503", "--rate-limit-rps", "5", "--seed", "3")
    with docserve(*args, *faults) as ready, tempfile.TemporaryDirectory() as tmp:
        info = ready["sites"][site]
        cfg = make_config(Path(tmp), info["start_url"], prefix)
        hostile, t_hostile = await crawl(cfg)
        got = set(outputs(cfg))
        served = stats(info["stats_url"])
    print(
        f"  clean: {clean.pages} pages in {t_clean:.1f}s; "
        f"hostile: {hostile.pages} pages in {t_hostile:.1f}s, {hostile.retries} retries; "
        f"docserve by_status {served.get('by_status')}, events {served.get('events')}"
    )
    check(
        "every page of the clean crawl written under faults",
        got == expected and bool(expected),
        f"{len(got)}/{len(expected)}; missing {sorted(expected - got)[:5]}",
    )
    check("no page failed", hostile.failed == 0, str(hostile.failed))


async def part_b(n: int) -> None:
    print(f"B. docsite: {n} pages, 10% 503s, 10% resets, rate limit 200 rps, calendar trap")
    docs = DocSite.linked(n)
    docs.pages["/docs/index.html"] = docs.pages["/docs/index.html"].replace(
        "</section>", '<a href="cal/2024/01">events</a></section>'
    )
    docs.trap_prefix = "/docs/cal/"
    budget = n + 1 + 100
    real = {"index.md"} | {f"p{i}.md" for i in range(n)}
    with ThreadedServer(docs) as base, tempfile.TemporaryDirectory() as tmp:
        cfg = make_config(Path(tmp), base + "/docs/index.html", "/docs", max_pages=budget, use_sitemaps=False)
        good, t_good = await crawl(cfg)
        before = outputs(cfg)
        check(
            "good crawl writes every real page", real <= set(before), f"{good.pages} pages in {t_good:.1f}s"
        )
        docs.fail_rate, docs.reset_rate, docs.rate_limit_rps, docs.seed = 0.1, 0.1, 200.0, 11
        docs.__post_init__()
        for i in range(n):
            docs.pages[f"/docs/p{i}.html"] = docs.pages[f"/docs/p{i}.html"].replace(
                "Content of", "New content of"
            )
        stop = asyncio.Event()

        def progress(p: CrawlProgress) -> None:
            if p.pages_done >= 20:
                stop.set()

        aborted, t_abort = await crawl(cfg, stop=stop, progress=progress)
        check("aborted crawl reports interruption", aborted.interrupted, f"after {t_abort:.1f}s")
        check("previous good output untouched after the abort", outputs(cfg) == before)
        docs.reset_counters()
        docs.faults.clear()
        summary, t_full = await crawl(cfg)
        after = outputs(cfg)
        cal = [f for f in after if f.startswith("cal/")]
        print(
            f"  full hostile crawl: {summary.pages} pages in {t_full:.1f}s, {summary.retries} retries, "
            f"faults {dict(docs.faults)}, skipped {summary.skipped}"
        )
        check(
            "every real page written with its new content",
            real <= set(after) and all("New content of" in after[f"p{i}.md"] for i in range(n)),
        )
        check(
            "trap bounded by max_pages and reported",
            len(cal) <= budget - len(real) + 8 and summary.skipped.get("max_pages", 0) > 0,
            f"{len(cal)} calendar pages",
        )
        check("no page failed", summary.failed == 0, str(summary.failed))


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default="mkdocs")
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    need_shared()
    await part_a(args.site)
    await part_b(args.pages)
    print("all checks passed" if not FAILED else f"FAILED: {FAILED}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
