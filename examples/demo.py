"""`make run`: serve the bundled docs site on loopback, crawl it, show the result, search it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve import serve_folder  # noqa: E402

WORK = HERE.parent / ".run"
CONFIG = """\
# Written by examples/demo.py for `make run`.
output_base_dir: {work}/crawled_docs
state_dir: {work}/crawler_state
http_client_settings:
  allow_private_networks: true   # the example site is served on 127.0.0.1
sites:
  mkdocs_example:
    start_urls: ["{url}index.html"]
    allowed_domain: 127.0.0.1
    content_selector: auto
"""


def doc_scraper(*args: str) -> None:
    cmd = [sys.executable, "-m", "doc_scraper", *args]
    print("$ doc-scraper " + " ".join(args), flush=True)
    subprocess.run(cmd, check=True)


def main() -> int:
    shutil.rmtree(WORK, ignore_errors=True)  # a fresh demo every time
    WORK.mkdir()
    config = WORK / "config.yaml"
    with serve_folder(HERE / "mkdocs-site") as url:
        config.write_text(CONFIG.format(work=WORK, url=url), encoding="utf-8")
        print(f"Serving examples/mkdocs-site at {url}", flush=True)
        doc_scraper("crawl", "-config", str(config), "-site", "mkdocs_example", "-full", "-loglevel", "warn")
    out = WORK / "crawled_docs" / "mkdocs_example"
    pages = sorted(p.relative_to(out) for p in out.rglob("*.md"))
    print(f"\nMarkdown written to {out} ({len(pages)} pages), e.g.:")
    for page in pages[:6]:
        print(f"  {page}")
    print("\nllms.txt (first lines):")
    for line in (out / "llms.txt").read_text(encoding="utf-8").splitlines()[:10]:
        print("  " + line)
    print()
    doc_scraper("search", "-config", str(config), "-limit", "3", "deploy to GitHub Pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
