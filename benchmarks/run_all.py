"""`make bench`: every benchmark, one after another, each beside its baseline.

    python benchmarks/run_all.py [--only crawl,extract,search,incremental,memory,mcp,semantic] [--quick]

Needs ../shared (corpus, docserve) next to the checkout, or DOC_SCRAPER_SHARED.
--quick runs the smaller variants (one latency, smaller synthetic sites).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import CORPUS, need_shared  # noqa: E402

PY = sys.executable


def steps(quick: bool) -> dict[str, list[list[str]]]:
    python_corpus = str(CORPUS / "python-3.11")
    return {
        "crawl": [[PY, str(HERE / "bench_crawl.py"), "--latency", "0" if quick else "0,50"]],
        "extract": [
            [
                PY,
                str(HERE / "bench_extract.py"),
                "--corpus",
                python_corpus,
                "--speed-only",
                "--glob",
                "library/*.html",
                "--limit",
                "60",
                "--baselines",
            ]
        ],
        "search": [
            [
                PY,
                str(HERE / "bench_search.py"),
                "build",
                "--state",
                "/tmp/bench-search-worker",
                "--extractor",
                "worker",
            ],
            [PY, str(HERE / "bench_search.py"), "latency", "--state", "/tmp/bench-search-worker"],
        ],
        "incremental": [[PY, str(HERE / "bench_incremental.py")]],
        "memory": [[PY, str(HERE / "bench_memory.py"), "--sizes", "2000,10000" if quick else "20000,100000"]],
        # needs a crawled python-3.11 config and its docs server: see bench_mcp.py's docstring
        "mcp": [],
        "semantic": [[PY, str(HERE / "bench_semantic.py")]],
    }


def main() -> int:
    need_shared()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="crawl,extract,search,incremental,memory,semantic")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    plan = steps(args.quick)
    failed = []
    for name in args.only.split(","):
        for cmd in plan[name]:
            script = Path(cmd[1])
            if not script.exists():
                print(f"\n## {name}: {script.name} not present, skipped", flush=True)
                continue
            print(
                f"\n## {name}: {' '.join(Path(c).name if c.startswith('/') else c for c in cmd[1:])}",
                flush=True,
            )
            t0 = time.monotonic()
            code = subprocess.call(cmd)
            print(f"({name} took {time.monotonic() - t0:.0f}s, exit {code})", flush=True)
            if code:
                failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
