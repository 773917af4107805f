"""llms.txt (a manifest of pages) and llms-full.txt (every page's Markdown)."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from doc_scraper.write.jsonl import iter_pages

if TYPE_CHECKING:
    from pathlib import Path


def _escape_title(title: str) -> str:
    title = " ".join(title.split())
    return title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def write_llms_files(site_dir: Path, jsonl_path: Path, site_key: str, domain: str) -> int:
    """Regenerate both files from the finished JSONL, streaming; returns the page count.

    The page list goes to a temporary file first because the header states the
    count: memory stays flat however many pages there are.
    """
    index_tmp = site_dir / "llms.txt.tmp"
    lines_tmp = site_dir / "llms.txt.lines.tmp"
    full_tmp = site_dir / "llms-full.txt.tmp"
    count = 0
    with open(lines_tmp, "w", encoding="utf-8") as lines, open(full_tmp, "w", encoding="utf-8") as full:
        full.write(f"# {site_key}\n\n> Full crawled content from {domain}.\n\n")
        for page in iter_pages(jsonl_path):
            title = str(page.get("title") or page["url"])
            lines.write(f"- [{_escape_title(title)}]({page['url']})\n")
            full.write(f"---\n\n# {' '.join(title.split())}\n\nURL: {page['url']}\n\n")
            full.write(str(page.get("content", "")).rstrip("\n") + "\n\n")
            count += 1
    with open(index_tmp, "w", encoding="utf-8") as idx, open(lines_tmp, encoding="utf-8") as lines:
        idx.write(f"# {site_key}\n\n> Crawled documentation from {domain}. {count} pages.\n\n## Pages\n\n")
        if count:
            shutil.copyfileobj(lines, idx)
        else:
            idx.write("_No pages were successfully crawled._\n")
    lines_tmp.unlink()
    os.replace(index_tmp, site_dir / "llms.txt")
    os.replace(full_tmp, site_dir / "llms-full.txt")
    return count
