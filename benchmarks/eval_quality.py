"""`make eval`: crawl the shared corpus with `content_selector: auto`, then score it.

    python benchmarks/eval_quality.py [--sites python-3.11,npm-docusaurus] [--no-search]

Extraction: ../shared/tools/extract_eval.py on each crawl's Markdown (gold: the
sites' own sources). Search: ../shared/tools/search_eval.py on the python-3.11
index through the real CLI (`doc-scraper search --json`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CORPUS, SHARED, VENV_BIN, docserve, need_shared

CONFIG = """\
output_base_dir: {work}/out
state_dir: {work}/state
num_workers: 16
max_requests: 16
max_requests_per_host: 16
http_client_settings:
  allow_private_networks: true
sites:
  s:
    start_urls: ["{start}"]
    allowed_domain: 127.0.0.1
    allowed_path_prefix: {prefix}
    content_selector: auto
"""


def crawl(name: str, work: Path) -> None:
    with docserve("--site", f"{name}={CORPUS / name}", "--sitemap") as ready:
        info = ready["sites"][name]
        prefix = "/" + info["url"].split("/", 3)[3]
        (work / "config.yaml").write_text(CONFIG.format(work=work, start=info["start_url"], prefix=prefix))
        subprocess.run(
            [
                str(VENV_BIN / "doc-scraper"),
                "crawl",
                "-config",
                str(work / "config.yaml"),
                "-site",
                "s",
                "-full",
                "-loglevel",
                "error",
                "-no-progress",
            ],
            check=True,
        )


def main() -> int:
    need_shared()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sites", default="python-3.11,npm-docusaurus")
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--keep", help="keep crawl output under this folder")
    args = ap.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="doc-scraper-eval-"))
    for name in args.sites.split(","):
        work = root / name
        work.mkdir(parents=True, exist_ok=True)
        crawl(name, work)
        meta = json.loads((CORPUS / name / "SITE.json").read_text())
        site_root = meta.get("base_path") or f"/{name}/"
        print(f"\n## extract_eval {name}", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(SHARED / "tools" / "extract_eval.py"),
                "--output",
                str(work / "out" / "s"),
                "--corpus",
                str(CORPUS / name),
                "--site-root",
                site_root,
            ],
            check=False,
        )
        if name == "python-3.11" and not args.no_search:
            print("\n## search_eval python-3.11 (lexical)", flush=True)
            exe = VENV_BIN / "doc-scraper"
            cmd = f"{exe} search -config {work / 'config.yaml'} --json -limit {{limit}} {{query}}"
            subprocess.run(
                [
                    sys.executable,
                    str(SHARED / "tools" / "search_eval.py"),
                    str(SHARED / "eval" / "search-python.jsonl"),
                    "--cmd",
                    cmd,
                    "--strip-prefix",
                    "/python-3.11/",
                ],
                check=False,
            )
    print(f"\n(crawl output under {root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
