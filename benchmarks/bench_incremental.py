"""Incremental re-crawl: what an unchanged site costs, and whether edits are counted right.

    python benchmarks/bench_incremental.py [--site python-3.11] [--edit-site mkdocs]

1. Full crawl of SITE served by docserve, then an incremental re-crawl of the
   unchanged site: share of page requests answered 304, response body bytes and
   wall time of the re-crawl against the full crawl (same run).
2. On a copy of EDIT-SITE: 3 pages edited, 2 deleted, 1 added (linked from the
   start page); the incremental re-crawl must report exactly 3 changed,
   2 removed, 1 added, and output, JSONL and index must agree.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CORPUS, VENV_BIN, docserve, need_shared, run_measured, stats, table

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
"""


def crawl(work: Path, *flags: str) -> tuple[float, float, int, str]:
    cmd = [
        str(VENV_BIN / "doc-scraper"),
        "crawl",
        "-config",
        str(work / "config.yaml"),
        "-site",
        "bench",
        "-loglevel",
        "error",
        "-no-progress",
        *flags,
    ]
    m = run_measured(cmd)
    return m.wall_s, m.cpu_s, m.returncode, m.stderr_tail


def summary_row(tail: str) -> dict[str, int]:
    """Parse the summary table line for site 'bench'."""
    for line in tail.splitlines():
        parts = line.split()
        if parts and parts[0] == "bench" and len(parts) >= 11:
            keys = ["pages", "added", "changed", "unchanged", "removed", "errors", "retries", "js"]
            return dict(zip(keys, (int(x) for x in parts[2:10]), strict=True))
    return {}


def unchanged_site(site: str, work: Path) -> list[dict[str, Any]]:
    corpus = CORPUS / site
    rows: list[dict[str, Any]] = []
    with docserve("--site", f"{site}={corpus}", "--sitemap") as ready:
        info = ready["sites"][site]
        prefix = "/" + info["url"].split("/", 3)[3]
        (work / "config.yaml").write_text(CONFIG.format(work=work, start=info["start_url"], prefix=prefix))
        stats(info["stats_url"], reset=True)
        full_wall, full_cpu, rc, tail = crawl(work, "-full")
        full = stats(info["stats_url"], reset=True)
        assert rc == 0, tail
        inc_wall, inc_cpu, rc, tail = crawl(work, "-incremental")
        inc = stats(info["stats_url"])
        assert rc == 0, tail
    pages_inc = sum(v for k, v in inc["by_status"].items())
    for name, wall, cpu, served in (
        ("full", full_wall, full_cpu, full),
        ("incremental", inc_wall, inc_cpu, inc),
    ):
        by = served["by_status"]
        rows.append(
            {
                "crawl": name,
                "requests": sum(by.values()),
                "200": by.get("200", 0),
                "304": by.get("304", 0),
                "body MB": served["bytes_sent"] / 2**20,
                "wall s": wall,
                "CPU s": cpu,
            }
        )
    share_304 = inc["by_status"].get("304", 0) / max(1, pages_inc)
    print(f"\n### Incremental re-crawl of unchanged {site}\n")
    print(table(rows, ["crawl", "requests", "200", "304", "body MB", "wall s", "CPU s"]))
    body_share = inc["bytes_sent"] / full["bytes_sent"]
    print(
        f"\n304 share of re-crawl requests: {share_304:.3%}; body bytes {body_share:.2%}"
        f" of the full crawl; wall time {inc_wall / full_wall:.1%} of the full crawl"
    )
    return rows


def _edit(html: str, marker: str) -> str:
    # Insert a paragraph at the start of the main content region.
    return re.sub(r'(<div[^>]*role="main"[^>]*>)', r"\1<p>" + marker + "</p>", html, count=1)


def edited_site(site: str, work: Path) -> dict[str, Any]:
    tree = work / "site"
    shutil.copytree(CORPUS / site / "site", tree)
    # The new page is linked from nowhere: the sitemap is how the re-crawl finds it.
    with docserve("--site", f"{site}={tree}", "--sitemap") as ready:
        info = ready["sites"][site]
        prefix = "/" + info["url"].split("/", 3)[3]
        (work / "config.yaml").write_text(CONFIG.format(work=work, start=info["start_url"], prefix=prefix))
        _, _, rc, tail = crawl(work, "-full")
        assert rc == 0, tail
        before = summary_row(tail)
        edits = ["user-guide/cli.html", "user-guide/installation.html", "dev-guide/api.html"]
        deletes = ["about/contributing.html", "dev-guide/translations.html"]
        for rel in edits:
            p = tree / rel
            p.write_text(_edit(p.read_text(encoding="utf-8"), f"Edited for the benchmark: {rel}"))
        for rel in deletes:
            (tree / rel).unlink()
        (tree / "brand-new.html").write_text(
            "<html><head><title>Brand new</title></head><body><div role='main' class='col-md-9'>"
            "<h1>Brand new page</h1><p>" + "Added after the first crawl. " * 20 + "</p></div></body></html>"
        )
        _, _, rc, tail = crawl(work, "-incremental")
        assert rc == 0, tail
        after = summary_row(tail)
    out = work / "out" / "bench"
    files = {str(p.relative_to(out)) for p in out.rglob("*.md")}
    records = [json.loads(x) for x in (out / "pages.jsonl").read_text().splitlines()]
    page_records = [r for r in records if r["record_type"] == "page"]
    db = sqlite3.connect(str(work / "state" / "index.db"))
    try:
        indexed = {row[0] for row in db.execute("SELECT url FROM pages WHERE site_key='bench'")}
    except sqlite3.Error:
        indexed = set()
    db.close()
    jsonl_urls = {r["url"] for r in page_records}
    result = {
        "first crawl": before,
        "re-crawl": after,
        "md files": len(files),
        "jsonl pages": len(page_records),
        "index pages": len(indexed),
        "index == jsonl": indexed == jsonl_urls,
        "deleted gone": not any(d.replace(".html", ".md") in files for d in deletes),
        "added present": "brand-new.md" in files,
    }
    print(f"\n### {site} copy with 3 pages edited, 2 deleted, 1 added (listed in the sitemap only)\n")
    print(json.dumps(result, indent=2))
    return result


def main() -> int:
    need_shared()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default="python-3.11")
    ap.add_argument("--edit-site", default="mkdocs")
    ap.add_argument("--skip-unchanged", action="store_true")
    args = ap.parse_args()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-inc-") as tmp:
        if not args.skip_unchanged:
            (Path(tmp) / "a").mkdir()
            unchanged_site(args.site, Path(tmp) / "a")
        (Path(tmp) / "b").mkdir()
        edited_site(args.edit_site, Path(tmp) / "b")
    print(f"\n(bench_incremental took {time.monotonic() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
