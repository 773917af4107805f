"""Crawl the shared corpus sites over loopback and check what the crawl issue asks.

    python benchmarks/check_crawls.py [--sites python-3.11,mkdocs,npm-docusaurus] [--skip-faults]

1. Each site served by docserve (sitemap on, one robots-disallowed path): pages written
   against SITE.json page_count, frontmatter on every file, pages.jsonl ending in exactly
   one crawl_meta, llms.txt listing every page, the disallowed path never requested.
2. Politeness: peak per-host concurrency <= max_requests_per_host, and with
   delay_per_host 200ms no two requests closer than the delay minus jitter.
3. Faults: 10% injected 503s, then a 20 requests/s rate limit (429 + Retry-After):
   every page still written, retries counted; a 404 reported and not written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CORPUS, VENV_BIN, docserve, need_shared, run_measured, stats, table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from doc_scraper.write.files import parse_frontmatter

CONFIG = """\
output_base_dir: {work}/out
state_dir: {work}/state
num_workers: 8
max_requests: 16
max_requests_per_host: {per_host}
delay_jitter: {jitter}
max_retries: 6
initial_retry_delay: 100ms
max_retry_delay: 5s
http_client_settings:
  allow_private_networks: true
sites:
  s:
    start_urls: ["{start}"]
    allowed_domain: 127.0.0.1
    allowed_path_prefix: {prefix}
    delay_per_host: {delay}
"""


def crawl(
    work: Path, start: str, prefix: str, *, per_host: int = 4, delay: str = "0s", jitter: float = 0.5
) -> tuple[dict[str, Any], str]:
    cfg = work / "config.yaml"
    cfg.write_text(
        CONFIG.format(work=work, start=start, prefix=prefix, per_host=per_host, delay=delay, jitter=jitter)
    )
    m = run_measured(
        [
            str(VENV_BIN / "doc-scraper"),
            "crawl",
            "-config",
            str(cfg),
            "-site",
            "s",
            "-full",
            "-loglevel",
            "error",
            "-no-progress",
        ]
    )
    row = {}
    for line in m.stderr_tail.splitlines():
        parts = line.split()
        if parts and parts[0] == "s" and len(parts) >= 11:
            keys = ["pages", "added", "changed", "unchanged", "removed", "errors", "retries", "js"]
            row = dict(zip(keys, (int(x) for x in parts[2:10]), strict=True))
    row["rc"] = m.returncode
    row["wall s"] = round(m.wall_s, 1)
    skipped = re.search(r"skipped: (.*)", m.stderr_tail)
    row["skipped"] = skipped.group(1) if skipped else ""
    return row, m.stderr_tail


def check_output(work: Path) -> dict[str, Any]:
    site = work / "out" / "s"
    files = sorted(site.rglob("*.md"))
    bad_frontmatter = 0
    for f in files:
        fields, _ = parse_frontmatter(f.read_text(encoding="utf-8"))
        if not {"title", "url", "crawled_at", "content_hash", "depth"} <= set(fields):
            bad_frontmatter += 1
    lines = (site / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    kinds = [r["record_type"] for r in records]
    urls = [r["url"] for r in records if r["record_type"] == "page"]
    llms = (site / "llms.txt").read_text(encoding="utf-8")
    return {
        "md files": len(files),
        "frontmatter ok": len(files) - bad_frontmatter,
        "jsonl pages": len(urls),
        "crawl_meta count": kinds.count("crawl_meta"),
        "crawl_meta last": kinds[-1] == "crawl_meta",
        "llms.txt lists all": all(f"]({u})" in llms for u in urls),
        "urls sorted": urls == sorted(urls),
    }


def main() -> int:
    need_shared()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sites", default="python-3.11,mkdocs,npm-docusaurus")
    ap.add_argument("--skip-faults", action="store_true")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for name in args.sites.split(","):
        corpus = CORPUS / name
        meta = json.loads((corpus / "SITE.json").read_text())
        mount = "/" + (meta.get("base_path") or f"/{name}/").strip("/") + "/"
        disallow = mount + "genindex.html" if name == "python-3.11" else mount + "search.html"
        with docserve("--site", f"{name}={corpus}", "--sitemap", "--robots-disallow", disallow) as ready:
            info = ready["sites"][name]
            prefix = "/" + info["url"].split("/", 3)[3]
            with tempfile.TemporaryDirectory() as tmp:
                stats(info["stats_url"], reset=True)
                summary, _tail = crawl(Path(tmp), info["start_url"], prefix)
                served = stats(info["stats_url"])
                out = check_output(Path(tmp))
            rows.append(
                {
                    "site": name,
                    "page_count": meta["page_count"],
                    **summary,
                    **out,
                    "disallowed requested": served.get("paths", {}).get(disallow, 0),
                    "max concurrent": served.get("max_concurrent_requests"),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("\n### Corpus crawls (docserve --sitemap, one robots-disallowed path)\n")
    print(
        table(
            rows,
            [
                "site",
                "page_count",
                "pages",
                "md files",
                "frontmatter ok",
                "jsonl pages",
                "crawl_meta count",
                "crawl_meta last",
                "llms.txt lists all",
                "urls sorted",
                "errors",
                "disallowed requested",
                "max concurrent",
                "skipped",
                "wall s",
                "rc",
            ],
        )
    )

    # 2. Politeness on mkdocs: 2 per host, 200 ms delay, jitter 0.25 -> gaps >= 150 ms.
    corpus = CORPUS / "mkdocs"
    with docserve("--site", f"mkdocs={corpus}", "--latency-ms", "20") as ready:
        info = ready["sites"]["mkdocs"]
        prefix = "/" + info["url"].split("/", 3)[3]
        with tempfile.TemporaryDirectory() as tmp:
            stats(info["stats_url"], reset=True)
            summary, _ = crawl(Path(tmp), info["start_url"], prefix, per_host=2, delay="200ms", jitter=0.25)
            served = stats(info["stats_url"])
    print("\n### Politeness (mkdocs, max_requests_per_host 2, delay_per_host 200ms, jitter 0.25)\n")
    print(
        f"pages {summary.get('pages')}; docserve max concurrent requests "
        f"{served.get('max_concurrent_requests')} (limit 2); min gap between requests "
        f"{served.get('min_gap_ms')} ms (floor 150 ms = 200 ms - 25%); rc {summary['rc']}"
    )

    if args.skip_faults:
        return 0
    fault_rows = []
    corpus = CORPUS / "npm-docusaurus"
    for label, flags in (
        ("10% 503s", ["--fail-rate", "0.1", "--fail-status", "503", "--seed", "7"]),
        ("20 req/s rate limit", ["--rate-limit-rps", "20"]),
    ):
        with docserve("--site", f"npm-docusaurus={corpus}", "--sitemap", *flags) as ready:
            info = ready["sites"]["npm-docusaurus"]
            prefix = "/" + info["url"].split("/", 3)[3]
            with tempfile.TemporaryDirectory() as tmp:
                stats(info["stats_url"], reset=True)
                summary, _ = crawl(Path(tmp), info["start_url"], prefix)
                served = stats(info["stats_url"])
                out = check_output(Path(tmp))
        fault_rows.append(
            {
                "faults": label,
                **summary,
                "md files": out["md files"],
                "served 503": served["by_status"].get("503", 0),
                "served 429": served["by_status"].get("429", 0),
            }
        )
    print("\n### Faults (npm-docusaurus, 96 html files: 95 pages + 404.html)\n")
    print(
        table(
            fault_rows,
            [
                "faults",
                "pages",
                "md files",
                "retries",
                "errors",
                "served 503",
                "served 429",
                "skipped",
                "wall s",
                "rc",
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
