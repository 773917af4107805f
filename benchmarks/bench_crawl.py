"""Crawl a corpus site over loopback: doc-scraper beside wget -r and a Scrapy spider.

    python benchmarks/bench_crawl.py [--site python-3.11] [--latency 0,50] [--only ours,wget,scrapy]

Prints wall time, pages/s, client CPU seconds (the parse pool included), the
largest process's peak RSS and the whole tree's peak RSS, plus what docserve
saw (requests, peak concurrency).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CORPUS, ROOT, VENV_BIN, docserve, need_shared, run_measured, stats, table

CONFIG = """\
output_base_dir: {work}/out
state_dir: {work}/state
num_workers: 16
max_requests: 16
max_requests_per_host: 16
http_client_settings:
  allow_private_networks: true
sites:
  bench:
    start_urls: ["{start}"]
    allowed_domain: 127.0.0.1
    allowed_path_prefix: {prefix}
    content_selector: auto
"""


def crawl_ours(start: str, prefix: str, work: Path) -> tuple[list[str], Path]:
    cfg = work / "config.yaml"
    cfg.write_text(CONFIG.format(work=work, start=start, prefix=prefix), encoding="utf-8")
    return [
        str(VENV_BIN / "doc-scraper"),
        "crawl",
        "-config",
        str(cfg),
        "-site",
        "bench",
        "-full",
        "-loglevel",
        "error",
        "-no-progress",
    ], work / "out" / "bench"


def main() -> int:
    need_shared()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default="python-3.11")
    ap.add_argument("--latency", default="0,50", help="added server latency in ms, comma-separated")
    ap.add_argument("--only", default="ours,wget,scrapy")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    corpus = CORPUS / args.site
    meta = json.loads((corpus / "SITE.json").read_text())
    rows: list[dict[str, Any]] = []
    for latency in [int(x) for x in args.latency.split(",")]:
        with docserve("--site", f"{args.site}={corpus}", "--latency-ms", str(latency)) as ready:
            info = ready["sites"][args.site]
            start, stats_url = info["start_url"], info["stats_url"]
            prefix = "/" + info["url"].split("/", 3)[3]
            for name in args.only.split(","):
                work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
                try:
                    if name == "ours":
                        cmd, out = crawl_ours(start, prefix, work)
                    elif name == "wget":
                        if not shutil.which("wget"):
                            continue
                        cmd, out = ["wget", "-r", "-np", "-q", "-l", "inf", "-P", str(work), start], work
                    elif name == "scrapy":
                        cmd = [
                            str(VENV_BIN / "scrapy"),
                            "runspider",
                            str(ROOT / "benchmarks" / "scrapy_spider.py"),
                            "-a",
                            f"start={start}",
                            "-s",
                            "CONCURRENT_REQUESTS=16",
                            "-s",
                            "CONCURRENT_REQUESTS_PER_DOMAIN=16",
                        ]
                        out = work
                    else:
                        raise SystemExit(f"unknown crawler {name}")
                    stats(stats_url, reset=True)
                    m = run_measured(cmd, cwd=work)
                    served = stats(stats_url)
                    pages = (
                        sum(1 for _ in out.rglob("*.md"))
                        if name == "ours"
                        else served.get("by_status", {}).get("200", 0)
                    )
                    rows.append(
                        {
                            "crawler": name,
                            "latency ms": latency,
                            "pages": pages,
                            "wall s": m.wall_s,
                            "pages/s": pages / m.wall_s if m.wall_s else 0.0,
                            "CPU s": m.cpu_s,
                            "peak RSS MB": m.peak_rss_mb,
                            "tree RSS MB": m.peak_tree_mb,
                            "max concurrent": served.get("max_concurrent_requests", ""),
                            "rc": m.returncode,
                        }
                    )
                    if m.returncode != 0:
                        print(f"{name}: exit {m.returncode}\n{m.stderr_tail}", file=sys.stderr)
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    print(f"\n### Crawl of {args.site} ({meta.get('page_count')} pages) over loopback\n")
    print(
        table(
            rows,
            [
                "crawler",
                "latency ms",
                "pages",
                "wall s",
                "pages/s",
                "CPU s",
                "peak RSS MB",
                "tree RSS MB",
                "max concurrent",
                "rc",
            ],
        )
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
